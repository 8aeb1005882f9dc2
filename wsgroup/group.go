package wsgroup

import (
	"context"
	"fmt"

	"github.com/go-steal/steal/internal/sched"
)

// A Group is a collection of tasks working on subtasks that are part of the
// same overall task, run on the worker goroutines that every Group of the
// process shares. A Group owns no goroutine: it is a count, a limit and
// the first error.
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
// group was canceled, it returns the cause of the context's cancellation.
// In PanicInWait mode, if a function panicked, Wait panics with a
// *PanicError instead of returning. The return of each function passed to
// Go synchronizes before the return (or the panic) of Wait.
//
// While it waits, Wait runs the group's own queued tasks that it can
// reach, on its own goroutine, instead of sleeping: inside a task, those
// in the worker's deque and the oldest of other workers'; elsewhere, those
// the calling goroutine submitted that no worker has taken yet. It runs no
// other group's task. See the package documentation (Waiting) for what a
// task run this way observes.
func (g *Group) Wait() error {
	check(g, "Wait")
	return g.s.Wait()
}

// Go calls the given function on a worker goroutine (or on the goroutine
// of a Wait of the group; see Wait). The call of Go synchronizes before
// the start of the function.
//
// The first call to Go must happen before a Wait. Outside a task, Go
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
	g.s.Go(f)
}

// TryGo calls the given function as Go does only if the number of active
// tasks in the group is currently below the configured limit. A TryGo that
// reports true synchronizes before the start of the function.
//
// The return value reports whether the task was queued: false when the
// limit is reached, and, in SkipQueued mode, once the group is canceled.
func (g *Group) TryGo(f func() error) bool {
	check(g, "TryGo")
	if f == nil {
		panic("wsgroup: TryGo called with a nil function")
	}
	return g.s.TryGo(f)
}

// SetLimit limits the number of active tasks in this group to at most n.
// A negative value indicates no limit. A limit of zero will prevent any new
// tasks from being added.
//
// Any subsequent call to the Go method outside a task will block until it
// can add an active task without exceeding the configured limit. At most n
// of the group's tasks execute at once. The limit sizes nothing: the
// workers are shared by every group.
//
// The limit must not be modified while any tasks in the group are active;
// SetLimit panics with an error if it is.
func (g *Group) SetLimit(n int) {
	check(g, "SetLimit")
	if active := g.s.SetLimit(n); active != 0 {
		panic(fmt.Errorf("wsgroup: modify limit while %v goroutines in the group are still active", active))
	}
}

func check(g *Group, method string) {
	if g == nil {
		panic("wsgroup: " + method + " called on a nil *Group")
	}
}
