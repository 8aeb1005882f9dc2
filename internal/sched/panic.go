package sched

import (
	"fmt"
	"os"
	"runtime/debug"
)

// fatalPanic ends the program for a task's panic the way the runtime ends it
// for an unrecovered one: the value, where the task ran, the panicking
// goroutine's stack (taken here, above the task's frames), exit status 2.
// It is used when frames of someone else's are suspended below the
// panicking task on its goroutine, where a plain panic could be recovered
// by them: other tasks on a worker (see worker.call), or the caller of a
// Wait that ran the task outside the pool (see callOutside).
func fatalPanic(v any, where string) {
	fmt.Fprintf(os.Stderr, "panic: %s [%s]\n\n%s", panicText(v), where, debug.Stack())
	os.Exit(2)
}

// What fatalPanic says of where the task ran.
const (
	onOtherTask = "in a task that ran on another task's goroutine"
	onWaiter    = "in a task that ran on the goroutine of a Wait of its group"
)

// panicText formats a panic value as the runtime's report does.
func panicText(v any) string {
	switch v := v.(type) {
	case nil:
		return "nil"
	case error:
		return v.Error()
	case fmt.Stringer:
		return v.String()
	case string:
		return v
	default:
		return fmt.Sprintf("%#v", v)
	}
}
