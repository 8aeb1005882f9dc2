package wsgroup

import (
	"context"
	"fmt"

	"github.com/go-steal/steal/internal/sched"
)

// A Group is a collection of tasks working on subtasks that are part of the
// same overall task. Its tasks run on the worker goroutines that every Group
// of the process shares (see the package documentation); a Group owns no
// goroutine: it is a count, a limit and the first error, so a service may
// make one per request.
//
// A zero Group is valid, has no limit on the number of active tasks, and
// does not cancel on error. It runs every task it was given, even after a
// task failed ([RunQueued]), and a task's panic crashes the program
// ([PanicCrash]), as with errgroup.
//
// A Group may be used again after Wait returns: Go adds tasks to wait for
// with the next Wait. Its first error, and its first recovered panic
// ([PanicInWait]), stay: every later Wait returns (or panics with) them.
// (A [SkipQueued] group made by WithContext is canceled by its first Wait,
// and so takes no task after it; see WithContext.)
// SetLimit, SetCancelMode and SetPanicMode may be called before the first
// Go, or between a Wait and the next Go, not while tasks are active.
//
// A Group must not be copied after first use (go vet reports copies).
// Every method panics, with a message that starts with "wsgroup:", when
// called on a nil *Group.
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
// first. Its cause ([context.Cause]) is that first error, or
// [context.Canceled] when Wait returns with no error. In [PanicInWait] mode
// the first recovered panic cancels it too, with its [*PanicError] as the
// cause, and in [SkipQueued] mode its cancellation (through its parent as
// well) is what makes the group drop its queued tasks; so a SkipQueued
// group made by WithContext takes no task after its first Wait.
//
// The first error (or recovered panic) is recorded as the group's, the one
// Wait returns, before the Context is canceled with it.
func WithContext(ctx context.Context) (*Group, context.Context) {
	ctx, cancel := context.WithCancelCause(ctx)
	g := new(Group)
	g.s.SetContext(ctx, cancel)
	return g, ctx
}

// Wait blocks until all function calls from the Go method have returned,
// then returns the first non-nil error (if any) from them. If no function
// returned an error but the group, in [SkipQueued] mode, dropped a function
// (or a Go refused one) because it was canceled, Wait returns the cause of
// the cancellation ([context.Cause] of the group's Context), since nil would
// say that every function ran; if nothing was dropped it returns nil even if
// the Context was canceled. In [PanicInWait] mode, if a function panicked,
// Wait panics with the [*PanicError] instead, after every function has
// returned, even if another function returned an error first. A later Wait
// returns the same error (or, in SkipQueued mode, the cause of the
// cancellation, once a Go was refused), or panics again. Wait cancels the Context made by
// WithContext, with [context.Canceled] as the cause when there was no error.
//
// While it waits, Wait runs queued tasks on its own goroutine instead of
// sleeping, but only tasks that it would wait for anyway: the group's own,
// and, inside a task, the tasks of any group that one of the group's
// running tasks is waiting for right now in a Wait of its own, and so on
// down such Waits. (When another worker has taken the group's last queued
// task and is running it, and that task has queued tasks of a nested
// group and waits for them, this Wait runs those, as a ForkJoinPool join
// helps the thief.) It never runs any other task, not even one that a task
// of the group queued but does not wait for: such a task may wait for
// something the caller of Wait does after Wait returns, and would deadlock
// under it.
//
// Inside a task, it runs such tasks from its worker's deque and the oldest
// of other workers' deques; when none is within reach it waits in its
// worker's place (with GOMAXPROCS above one) for up to about a
// millisecond, for the tasks running elsewhere to end or to queue more,
// and then blocks, and the blocked worker does not count against
// GOMAXPROCS meanwhile: another worker starts in its place for the tasks
// that are queued, or that come. On any other goroutine, it runs the
// group's own tasks that no worker has taken yet from the injector shard
// of this goroutine (where its Go calls put them), and a worker's oldest
// task when it is the group's, then spins briefly and blocks.
//
// A group may be waited for again after Wait returns, and reused, under
// sync.WaitGroup's rule, which errgroup inherits: a Go that starts the
// group again from no active task must come after every Wait for it has
// returned. Whether a task is one that a Wait waits for anyway is judged by
// that rule; a program that breaks it may see such a Go's task run by the
// Wait of an enclosing group, which then waits for it.
//
// A task run by a Wait runs on the goroutine of that Wait, and it shows:
//
//   - goroutine-specific state is the caller's: its goroutine id, its OS
//     thread (its profiler labels are those of the task's caller of Go
//     while the task runs, and the Wait caller's again afterwards, see
//     Go). A task that calls
//     [runtime.LockOSThread] must call [runtime.UnlockOSThread] before it
//     returns, or the lock stays with the caller (on a worker it stays with
//     the worker, which is as bad);
//   - [runtime.Goexit] in the task (t.FailNow calls it) ends the goroutine
//     the task runs on: the caller of a Wait outside the pool, or, inside a
//     task, that task and every task suspended below it on its worker's
//     goroutine (each counted as completed, their deferred calls run). Each
//     Wait so unwound first waits for the rest of its group's tasks, blocked,
//     and raises its group's recovered panic, if any ([PanicInWait]), into its
//     caller; the error it would have returned is lost;
//   - a panic in the task is never recovered by the frames below it on that
//     goroutine: in [PanicCrash] mode it ends the program (see [PanicCrash]).
//
// In the terminology of [the Go memory model], the return of each function
// passed to Go synchronizes before the return (or the panic) of the Wait
// that waits for it.
//
// [the Go memory model]: https://go.dev/ref/mem
func (g *Group) Wait() error {
	check(g, "wsgroup: Wait called on a nil *Group")
	return g.s.Wait()
}

// Go calls the given function in a new task: on one of the worker goroutines
// that every Group of the process shares, or on the goroutine of a Wait of
// the group (see Wait), never on a goroutine of its own.
//
// Profiles and traces see the function as they see errgroup's goroutine.
// It runs with the profiler labels that the goroutine calling Go wore at
// the call ([runtime/pprof.Do], [runtime/pprof.SetGoroutineLabels]), as a
// goroutine started by a go statement inherits its creator's, wherever it
// runs; its CPU samples carry them, and so do the tasks it gives in turn.
// When it returns, the goroutine that ran it wears its own labels again
// (none on a worker), whatever labels the function set, so none outlives
// the task. While the execution tracer runs ([runtime/trace.IsEnabled]),
// the function runs inside a trace region named after the function that
// called Go, such as "main.handle" or "main.handle.func1", tied to the
// trace task of the context given to WithContext, if it carries one. To
// name the region, each Go made while tracing reads its caller's stack;
// while tracing is off this costs nothing, and carrying the labels costs
// a task about two nanoseconds. Goroutine identity does not carry over:
// the function runs on a shared goroutine and its OS thread (see Wait for
// what that means for [runtime.LockOSThread] and [runtime.Goexit]).
//
// The first call to Go must happen before a Wait. Outside a task, Go blocks
// until the task can be added without the number of active tasks exceeding
// the configured limit (see SetLimit); while it blocks it runs no task.
// Inside a task (and in a task run by a Wait outside the pool), Go does not
// block at a positive limit, since the caller may hold a slot of the group
// itself: at the limit it sets the task aside and returns at once, and the task starts
// when a task of the group ends and frees a slot, the tasks set aside in
// the order they were set aside, which is when errgroup's blocked Go would
// have started it. So recursion under SetLimit completes, where errgroup's
// deadlocks. With a limit of zero, Go blocks for ever, inside a task too,
// as errgroup's does.
//
// The first function in the group that returns a non-nil error will cancel
// the associated Context, if any. The error will be returned by Wait.
// A function that calls [runtime.Goexit] ends as completed, with no error,
// and a fresh goroutine takes over its worker's queue (see Wait for what
// else Goexit ends). What a panic does is the group's [PanicMode].
//
// In [SkipQueued] mode, once the group is canceled, Go drops f, and a
// queued f that has not started when the group is canceled is dropped.
// Go panics if f is nil.
//
// In the terminology of [the Go memory model], the call of Go synchronizes
// before the start of f.
//
// [the Go memory model]: https://go.dev/ref/mem
func (g *Group) Go(f func() error) {
	check(g, "wsgroup: Go called on a nil *Group")
	if f == nil {
		panic("wsgroup: Go called with a nil function")
	}
	g.s.Go(f)
}

// TryGo calls the given function in a new task, as Go does, only if the
// number of active tasks in the group is currently below the configured
// limit. It never blocks, inside a task or outside.
//
// The return value reports whether the task was queued: false when the
// limit is reached and, in [SkipQueued] mode, once the group is canceled.
// TryGo panics if f is nil.
//
// In the terminology of [the Go memory model], a call of TryGo that reports
// true synchronizes before the start of f.
//
// [the Go memory model]: https://go.dev/ref/mem
func (g *Group) TryGo(f func() error) bool {
	check(g, "wsgroup: TryGo called on a nil *Group")
	if f == nil {
		panic("wsgroup: TryGo called with a nil function")
	}
	return g.s.TryGo(f)
}

// SetLimit limits the number of active tasks in this group to at most n.
// A negative value indicates no limit. A limit of zero will prevent any new
// tasks from being added.
//
// A task is active from the Go that adds it until it returns: queued or
// running, and a task waiting in a nested Wait counts as running. Any
// subsequent call to the Go method outside a task will block until it can
// add an active task without exceeding the configured limit; inside a task
// Go sets the task aside instead (see Go): a task set aside is active, so
// the active tasks may then be more than n, but it does not start until
// one of the n that execute returns. So at most n of the group's tasks
// execute at once. The limit sizes nothing: the workers are shared by
// every group.
//
// What a limit costs: a Go outside a task that finds the group full polls
// its count for about a microsecond, yields the processor a few times, and
// then parks until a finishing task hands it a slot; each task of a
// limited group takes and gives back a running slot with an atomic
// operation on the group. A group whose last such park was short (under
// 50µs: its tasks are tiny) has its next Go calls yield up to 64 times
// before they park, since parking and waking for each of its slots costs
// more than the wait; a longer park sets it back to a few yields. With
// tasks of a microsecond or more, or many goroutines submitting, none of
// this shows. For one goroutine feeding tiny tasks (tens of nanoseconds)
// under a small limit, every task is a hand-off between the submitter's
// CPU and a worker's. wsgroup has measured 1.5 to 1.8 times errgroup's
// speed there, and 1.2 to 1.9 times its own time on the same tasks
// without the limit. But each hand-off costs what moving cache lines
// between CPUs costs, which on a virtual machine can grow several times
// over for seconds at a time; then wsgroup falls below errgroup, whose
// goroutines mostly run on the submitter's CPU (BENCHMARKS.md has the
// figures). A limit on such work buys no speed.
//
// The limit must not be modified while any tasks in the group are active;
// SetLimit panics with an error if it is, whether or not the group had a
// limit (errgroup panics only if it had one). Removing the limit with a
// negative n is allowed while tasks are active, as errgroup allows it, but
// in both it races with the tasks, and the race detector reports it.
func (g *Group) SetLimit(n int) {
	check(g, "wsgroup: SetLimit called on a nil *Group")
	if active := g.s.SetLimit(n); active != 0 {
		panic(fmt.Errorf("wsgroup: modify limit while %v goroutines in the group are still active", active))
	}
}

// check panics with message on a nil *Group. Callers pass the whole
// message: built here from the method's name, it put Go one unit over the
// compiler's inlining budget, and Go was not inlined into its callers.
func check(g *Group, message string) {
	if g == nil {
		panic(message)
	}
}
