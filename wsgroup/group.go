package wsgroup

import (
	"context"

	"github.com/go-steal/steal/internal/sched"
)

// A Group is a collection of tasks working on subtasks that are part of the
// same overall task, run on a pool of worker goroutines.
//
// A zero Group is valid, has no limit on the number of active tasks, and
// does not cancel on error; it runs every task it was given even after a
// task failed (RunQueued), and a task's panic crashes the program
// (PanicCrash), as with errgroup. A Group must not be copied after first
// use.
type Group struct {
	_ noCopy
	s sched.Group
}

// noCopy makes go vet's copylocks check report copies of a Group.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

// WithContext returns a new Group and an associated Context derived from ctx.
//
// The derived Context is canceled the first time a function passed to Go
// returns a non-nil error or the first time Wait returns, whichever occurs
// first. Its cause (context.Cause) is that first error, or context.Canceled
// when Wait returns with no error. In PanicInWait mode a task's panic
// cancels it too, with a *PanicError as the cause.
func WithContext(ctx context.Context) (*Group, context.Context) {
	ctx, cancel := context.WithCancelCause(ctx)
	g := new(Group)
	g.s.SetContext(ctx, cancel)
	return g, ctx
}

// Wait blocks until all function calls from the Go method have returned,
// then returns the first non-nil error (if any) from them. In SkipQueued
// mode, when no function failed but functions were dropped because the
// group was canceled, it returns the cause of the context's cancellation. In PanicInWait mode, if a function panicked,
// Wait panics with a *PanicError instead of returning.
//
// Called inside a task of the same pool, Wait runs queued tasks while it
// waits instead of blocking the worker. Called elsewhere it blocks; for a
// Group that owns its pool, the pool's workers have exited when it returns.
func (g *Group) Wait() error {
	check(g, "Wait")
	return g.s.Wait()
}

// Go calls the given function on a worker of the group's pool.
//
// The first call to Go must happen before a Wait. Outside the pool, Go
// blocks until the task can be added without the number of active tasks
// exceeding the configured limit; inside a task it does not block (see the
// package documentation on limits).
//
// The first function in the group that returns a non-nil error will cancel
// the associated Context, if any. The error will be returned by Wait.
//
// In SkipQueued mode, once the group is canceled, Go drops f.
func (g *Group) Go(f func() error) {
	check(g, "Go")
	if f == nil {
		panic("wsgroup: Go called with a nil function")
	}
	g.s.Go(f, true)
}

// TryGo calls the given function on a worker of the group's pool only if
// the number of active tasks in the group is currently below the configured
// limit.
//
// The return value reports whether the task was queued: false when the
// limit is reached, and, in SkipQueued mode, once the group is canceled.
func (g *Group) TryGo(f func() error) bool {
	check(g, "TryGo")
	if f == nil {
		panic("wsgroup: TryGo called with a nil function")
	}
	return g.s.Go(f, false)
}

// SetLimit limits the number of active tasks in this group to at most n.
// A negative value indicates no limit. A limit of zero will prevent any new
// tasks from being added.
//
// Any subsequent call to the Go method outside the pool will block until it
// can add an active task without exceeding the configured limit. A pool
// owned by the group has at most n workers.
//
// The limit must not be modified while any tasks in the group are active;
// SetLimit panics with an error if it is.
func (g *Group) SetLimit(n int) {
	check(g, "SetLimit")
	g.s.SetLimit(n)
}

func check(g *Group, method string) {
	if g == nil {
		panic("wsgroup: " + method + " called on a nil *Group")
	}
}
