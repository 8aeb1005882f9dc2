package sched

import (
	"fmt"
	"os"
	"runtime/debug"
)

// fatalPanic ends the program for a task's panic the way the runtime ends it
// for an unrecovered one: the value, the panicking goroutine's stack (taken
// here, above the task's frames), exit status 2. It is used when tasks are
// suspended below the panicking task on its worker goroutine, where a
// plain panic could be recovered by one of them (see worker.call).
func fatalPanic(v any) {
	fmt.Fprintf(os.Stderr, "panic: %s [in a task that ran on another task's goroutine]\n\n%s", panicText(v), debug.Stack())
	os.Exit(2)
}

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
