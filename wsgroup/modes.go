package wsgroup

import (
	"fmt"
	"strings"
	"sync/atomic"
)

// A PanicMode says what happens when a task of a Group panics.
type PanicMode int

const (
	// PanicCrash, the default, lets a task's panic crash the program with
	// the panic value and the task's stack, as errgroup does.
	PanicCrash PanicMode = iota

	// PanicInWait recovers the first panic of the group's tasks, cancels
	// the group's context with a *PanicError as the cause, lets the other
	// tasks run to the end, and makes Wait panic with that *PanicError on
	// its caller's goroutine. Later panics in the group are recovered and
	// counted (PanicError.Later).
	PanicInWait
)

// A CancelMode says what happens to queued tasks once a Group is canceled:
// a task returned an error, a task's panic was recovered (PanicInWait), or
// the context made by WithContext was canceled through its parent.
type CancelMode int

const (
	// RunQueued, the default, runs every task, as errgroup does: tasks
	// queued before the cancellation still run (and see ctx.Done()).
	RunQueued CancelMode = iota

	// SkipQueued drops the tasks that have not started once the group is
	// canceled, and a Go (or TryGo) after that queues nothing. Wait then
	// returns the first error, or, when no task failed but tasks were
	// dropped, the cause of the context's cancellation.
	SkipQueued
)

// SetPanicMode sets what happens when a task of the group panics; see
// PanicMode. Like SetLimit, it must not be called while any tasks in the
// group are active, and panics if it is.
func (g *Group) SetPanicMode(m PanicMode) {
	check(g, "SetPanicMode")
	var wrap func(any, []byte, *atomic.Int64) error
	switch m {
	case PanicCrash:
	case PanicInWait:
		wrap = newPanicError
	default:
		panic(fmt.Sprintf("wsgroup: SetPanicMode called with unknown mode %d", int(m)))
	}
	if active := g.s.SetRecoverPanics(wrap); active != 0 {
		panic(fmt.Errorf("wsgroup: SetPanicMode called while %v tasks in the group are still active", active))
	}
}

// SetCancelMode sets what happens to queued tasks once the group is
// canceled; see CancelMode. Like SetLimit, it must not be called while any
// tasks in the group are active, and panics if it is.
func (g *Group) SetCancelMode(m CancelMode) {
	check(g, "SetCancelMode")
	var skip bool
	switch m {
	case RunQueued:
	case SkipQueued:
		skip = true
	default:
		panic(fmt.Sprintf("wsgroup: SetCancelMode called with unknown mode %d", int(m)))
	}
	if active := g.s.SetSkipQueued(skip); active != 0 {
		panic(fmt.Errorf("wsgroup: SetCancelMode called while %v tasks in the group are still active", active))
	}
}

// A PanicError is a task's panic, recovered by a Group in PanicInWait mode.
// It is the cause of the group's context cancellation and the value that
// Wait panics with.
type PanicError struct {
	// Value is the value the task panicked with.
	Value any
	// Stack is the stack of the goroutine the task ran on, taken when it
	// panicked (as runtime/debug.Stack formats it).
	Stack []byte

	later *atomic.Int64
}

func newPanicError(v any, stack []byte, later *atomic.Int64) error {
	return &PanicError{Value: v, Stack: stack, later: later}
}

// Later returns the number of panics in other tasks of the group after
// this one. They were recovered too; their values are not kept. When Wait
// panics, the count covers every task of the group so far; if the group is
// used again, panics of later tasks add to it.
func (e *PanicError) Later() int {
	if e.later == nil {
		return 0
	}
	return int(e.later.Load())
}

// Error reports the panic value, the number of later panics, if any, and
// the stack, so that a crash caused by Wait's panic shows where the task
// panicked.
func (e *PanicError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "wsgroup: task panicked: %v", e.Value)
	if n := e.Later(); n > 0 {
		fmt.Fprintf(&b, " (and %d later panics in the group, recovered)", n)
	}
	b.WriteString("\n\n")
	b.Write(e.Stack)
	return b.String()
}

// Unwrap returns the panic value if it is an error, and nil otherwise.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}
