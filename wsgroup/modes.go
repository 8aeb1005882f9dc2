package wsgroup

import (
	"fmt"
	"strings"
	"sync/atomic"
)

// A PanicMode says what happens when a task of a Group panics. The mode
// belongs to the group whose task panicked: a nested group in PanicCrash
// mode crashes the program even inside a task of a PanicInWait group, and a
// nested group in PanicInWait mode panics in its Wait, inside the outer
// task, where the outer group's mode applies. The values are also options
// of For, ForEach and Map (see [LoopOption]).
type PanicMode int

const (
	// PanicCrash, the default, lets a task's panic crash the program, as
	// errgroup does. The crash shows the panic value and the task's stack,
	// marked "[recovered, repanicked]": the worker intercepts the panic only
	// to tell it from runtime.Goexit, and raises it again at once, above the
	// task's frames. A task that ran on top of another task's stack (in that
	// task's Wait), or on the goroutine of a Wait outside the pool, must not
	// have its panic recovered by the frames below it, which under errgroup
	// run on another goroutine; the program ends instead as for an
	// unrecovered panic, with "panic: VALUE [in a task that ran on another
	// task's goroutine]" (or "[in a task that ran on the goroutine of a Wait
	// of its group]"), the stack, and exit status 2. VALUE is the Error or
	// String method's result for an error or a fmt.Stringer, the string
	// itself, or the value formatted with %#v.
	PanicCrash PanicMode = iota

	// PanicInWait recovers the group's tasks' panics. The first one becomes
	// a *PanicError holding the panic value and the task's stack; the
	// group's context is canceled with it as the cause; the other tasks go
	// on (queued ones run, unless the group is in SkipQueued mode); and when
	// they have all returned, Wait panics with the *PanicError on its
	// caller's goroutine. A panic takes precedence over errors: Wait panics
	// even if a task returned an error first (the context's cause stays that
	// error). Like the first error, the panic sticks to the group: a later
	// Wait panics again. Later panics in the group's tasks are recovered too
	// and counted ([PanicError.Later]).
	//
	// A recovered panic ends only its own task: if that task had started a
	// nested group and not yet waited for it, the nested group's tasks run
	// on with nobody waiting for them, as after any task that returns
	// without waiting, and may outlive the outer Wait.
	PanicInWait
)

// A CancelMode says what happens to queued tasks once a Group is canceled:
// a task returned an error, a task's panic was recovered (PanicInWait), or
// the context made by WithContext was canceled through its parent. A zero
// Group, which has no context, is canceled by its first error or recovered
// panic only.
//
// Cancellation is cooperative in both modes: nothing is interrupted,
// running tasks see ctx.Done(), and Wait returns once every task that
// started has returned.
type CancelMode int

const (
	// RunQueued, the default, runs every task, as errgroup does: tasks
	// queued before the cancellation still run (and see ctx.Done()). Each
	// errgroup task already has its goroutine when the group is canceled,
	// and may hold a defer close(ch) that another task waits for: skipping
	// it could hang the program.
	RunQueued CancelMode = iota

	// SkipQueued drops the tasks that have not started once the group is
	// canceled, and a Go after that queues nothing (TryGo reports false).
	// Wait then returns the first error, or, when no task failed but tasks
	// were dropped, the cause of the context's cancellation (see
	// [Group.Wait]). A worker checks the group when it takes a task, so a
	// task that passed the check a moment before the cancellation still
	// runs. Use it only for tasks that are safe to skip: a dropped task's
	// deferred calls never run.
	SkipQueued
)

// SetPanicMode sets what happens when a task of the group panics; see
// [PanicMode]. Like SetLimit, it must not be called while any tasks in the
// group are active, and panics with an error if it is. It panics if m is
// not PanicCrash or PanicInWait.
func (g *Group) SetPanicMode(m PanicMode) {
	setMode(g, "SetPanicMode", m, PanicCrash, PanicInWait, func(bool) int64 {
		return g.s.SetRecoverPanics(m.recoverer())
	})
}

// recoverer is what the scheduler recovers a task's panic with in mode m:
// newPanicError in PanicInWait mode, nil (the panic crashes) otherwise.
func (m PanicMode) recoverer() func(v any, stack []byte, later *atomic.Int64) error {
	if m == PanicInWait {
		return newPanicError
	}
	return nil
}

// SetCancelMode sets what happens to queued tasks once the group is
// canceled; see [CancelMode]. Like SetLimit, it must not be called while
// any tasks in the group are active, and panics with an error if it is. It
// panics if m is not RunQueued or SkipQueued.
func (g *Group) SetCancelMode(m CancelMode) {
	setMode(g, "SetCancelMode", m, RunQueued, SkipQueued, func(skip bool) int64 {
		return g.s.SetSkipQueued(skip)
	})
}

// setMode is SetPanicMode and SetCancelMode: m must be the default mode
// (off) or the other one (on); set applies it, telling whether it is on,
// unless tasks are active, and returns the number of active tasks it saw
// (0 when it applied the mode). Misuse panics name method.
func setMode[M ~int](g *Group, method string, m, off, on M, set func(on bool) int64) {
	if g == nil {
		panic("wsgroup: " + method + " called on a nil *Group")
	}
	if m != off && m != on {
		panic(fmt.Sprintf("wsgroup: %s called with unknown mode %d", method, int(m)))
	}
	if active := set(m == on); active != 0 {
		panic(fmt.Errorf("wsgroup: %s called while %v tasks in the group are still active", method, active))
	}
}

// A PanicError is a task's panic, recovered by a Group in PanicInWait mode.
// It is the value that Wait panics with, and the cause of the group's
// context cancellation unless an error canceled the context first.
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
