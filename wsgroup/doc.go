// Package wsgroup is golang.org/x/sync/errgroup on a work-stealing runtime.
//
// Change the import path, and the package name where it is spelled out:
//
//	import "golang.org/x/sync/errgroup"                 // before
//	import errgroup "github.com/go-steal/steal/wsgroup" // after (or rename the uses)
//
// The API is errgroup's: [Group], [WithContext], [Group.Go],
// [Group.TryGo], [Group.SetLimit] and [Group.Wait], with the same
// documented behaviour. What changes is where the functions run.
//
// # How tasks run
//
// errgroup starts a goroutine per Go call. wsgroup runs the functions on a
// small set of reused worker goroutines, a pool: GOMAXPROCS of them, or n
// after SetLimit(n) with n below GOMAXPROCS (more only when workers block;
// see Blocking tasks). Workers are started on demand, when a task is queued
// and no worker is idle to take it.
//
//   - A Go called on a worker goroutine (that is, inside a task) pushes the
//     task onto that worker's own deque: no lock, no goroutine created.
//     The worker runs its newest task first, which keeps recursive work
//     cache-hot.
//   - A Go called anywhere else queues the task on the pool's injector,
//     from which workers take batches.
//   - An idle worker takes from its own deque, then the injector, then
//     steals the oldest task of a randomly chosen other worker (the oldest
//     task of a recursive computation is the biggest piece of it).
//   - A worker with nothing to do searches a few rounds, then sleeps; a new
//     task wakes it (see internal/sleep for the protocol and why no
//     wake-up is lost). Idle workers exit after a few milliseconds.
//
// # Nested groups and helping
//
// A Group whose first Go is called inside a task shares the pool of the
// worker that called it. Its Wait, called inside a task, does not simply
// block the worker: the worker runs the group's own queued tasks (from its
// deque, newest first, then stolen from other workers) until the group is
// done. Recursive fork-join with a Group per level therefore runs on the
// fixed set of workers, mostly without blocking and without a goroutine
// per task. When none of the group's tasks is within reach (they were
// stolen and run elsewhere), the worker blocks until the group is done and
// the pool starts another worker in its place meanwhile.
//
// Wait runs no other task while it waits. Running whatever is queued, as
// work-stealing runtimes often do, would deadlock correct errgroup code: a
// task queued earlier may wait for something that the waiting task does
// only after its Wait returns, and once such a task runs on top of the
// waiting task's stack, the waiting task can never resume.
//
// A Group whose first Go is called outside any task owns a new pool. When
// its Wait returns, the pool's workers have exited: no goroutine of the
// group remains (goleak.VerifyNone passes right after Wait), unless tasks of
// nested groups that nobody waited for are still running; those workers
// leave once idle. Idle workers of a pool whose group is never waited for
// leave after a few milliseconds.
//
// A Wait called outside the pool blocks without spinning. A Wait (or a Go
// that must wait for a slot) called inside a task of another pool blocks
// that worker, and lets its pool start another worker meanwhile.
//
// # Blocking tasks
//
// errgroup runs every task at once, so errgroup code may contain tasks that
// wait for each other: a task blocks until a later task closes a channel,
// or several tasks wait on ctx.Done() for another to fail. A fixed pool
// would stall on such code once every worker blocks. wsgroup does not:
// while tasks are queued and no worker is idle, a watchdog goroutine
// samples the Go scheduler (runtime/metrics /sched/goroutines/running and
// /runnable) every 100 µs; when CPUs sit idle although every worker is
// busy, the busy workers must be blocked, and the pool adds workers (as
// many as there are idle CPUs, or, when nothing at all is running, as many
// again as it has). CPU-bound work keeps the CPUs busy, so it never grows
// the pool. Workers above the pool's size exit as soon as they are idle,
// and the watchdog exits when the pool has been unsaturated for 2 ms.
// A group with SetLimit(n) never has more than n workers.
//
// # Limits
//
// SetLimit(n) keeps errgroup's meaning: at most n of the group's tasks are
// active (queued or running); a Go from outside the pool blocks while n are
// active, and TryGo reports false then. At most n of the group's tasks
// execute at once.
//
// A pool owned by a limited group runs at most n workers, not counting
// workers blocked in a Wait of ours (a nested Wait whose tasks were stolen,
// or a Wait on another pool's group): each of those is replaced while it
// blocks, the way the Go runtime replaces a thread blocked in a system
// call. Without that, a task of a SetLimit(1) group that waits on a nested
// group would deadlock its one-worker pool. The replacements leave as soon
// as the worker they stand in for is back.
//
// Inside a task, a Go on a limited group never blocks: the caller may hold
// a slot itself (a task of the group calling Go on it), and waiting would
// deadlock, as it does with errgroup. While the group is at its limit and
// tasks of the group are queued within reach, the calling worker runs those
// first (backpressure); then it queues the task above the limit. The
// execution bound still holds: a worker does not start a task of a group
// that has n tasks executing (a task waiting in a nested Wait counts as
// executing); it sets the task aside until one of them ends. So recursion
// under SetLimit, which deadlocks with errgroup, completes. TryGo inside a
// task reports false, as errgroup's does, when n tasks are active.
//
// # Errors and cancellation
//
// The first non-nil error returned by a function is returned by Wait and
// cancels the group's context (WithContext) with that error as the cause;
// Wait cancels it with context.Canceled as the cause when there was no
// error.
//
// Cancellation is cooperative: nothing is interrupted, running tasks see
// ctx.Done(). By default (RunQueued) tasks queued before the cancellation
// still run, as they do with errgroup, where each already has its
// goroutine: an errgroup task may hold a defer close(ch) that another task
// waits for, and skipping it could hang the program. With
// SetCancelMode(SkipQueued), once the group is canceled (a task returned an
// error, a task's panic was recovered, or the parent context was canceled)
// a worker drops each of the group's tasks that has not started instead of
// running it, and Go queues nothing (TryGo reports false). Wait then
// returns the first error; if no task failed but tasks were dropped (or Go
// refused), it returns context.Cause of the group's context, since nil
// would say that every task ran. If nothing was dropped, Wait returns nil
// as errgroup's does, even if the context was canceled. A zero Group,
// which has no context, is canceled by its first error or recovered panic
// only. Since Wait cancels the context it made, a SkipQueued group made by
// WithContext takes no task after its first Wait.
//
// In both modes the pool drains and exits as usual: tasks blocked on
// ctx.Done() return, the workers find nothing left to run, and when Wait
// returns no goroutine of the group remains. In SkipQueued mode a canceled
// group's Wait returns as soon as the tasks that were running end; the
// check is made when a worker takes a task, so a task that passed it a
// moment before the cancellation still runs.
//
// # Panics and Goexit
//
// By default (PanicCrash) a panic in a task crashes the program, as with
// errgroup; the crash shows
// the panic value and the task's stack (marked "[recovered, repanicked]":
// the worker intercepts the panic only to tell it from runtime.Goexit, and
// raises it again at once, above the task's frames). If the task ran on top
// of another task's stack (in that task's Wait), raising it there would let
// the lower task recover a panic that errgroup never shows it; instead the
// program ends as for an unrecovered panic, with "panic: VALUE [in a task
// that ran on another task's goroutine]", the stack, and exit status 2.
//
// With SetPanicMode(PanicInWait), the group recovers its tasks' panics
// instead. The first one becomes a *PanicError holding the panic value and
// the stack of the task where it happened; the group's context is canceled
// with it as the cause, the other tasks go on (queued ones run, unless the
// group is in SkipQueued mode), and when they have all returned, Wait
// panics with the *PanicError on its caller's goroutine. Its Error method
// includes the original stack, so an unrecovered re-panic still shows
// where the task failed, and Unwrap returns the value when it is an error.
// Later panics in the group's tasks are recovered too and counted
// (PanicError.Later). A panic takes precedence over errors: Wait panics
// even if a task returned an error first (the context's cause stays that
// error). Like the first error, the panic sticks to the group: a later Wait
// panics again. The mode belongs to the group whose task panicked: a
// nested group in PanicCrash mode crashes the program even inside a task
// of a PanicInWait group; a nested group in PanicInWait mode panics in its
// Wait, inside the outer task, where the outer group's mode applies.
// A recovered panic ends only its own task: if that task had started a
// nested group and not yet waited for it, the nested group's tasks run on
// with nobody waiting for them, as after any task that returns without
// waiting, and may outlive the outer Wait (see Nested groups and helping).
//
// A task that calls runtime.Goexit (t.FailNow does) ends as completed, as
// with errgroup, and a fresh goroutine takes over its worker's queue. One
// difference remains: Goexit ends the whole worker goroutine, so if the
// task was run by a worker helping in a nested Wait, the tasks suspended
// below it on that goroutine end too (each counted as completed, their
// deferred calls run). Each Wait so unwound still waits for the rest of its
// group's tasks, blocked, before the unwinding goes on, and raises its
// group's recovered panic, if any (PanicInWait), into the task that called
// it, where that task's group's mode applies; the error it would have
// returned is lost with the task that would have received it.
//
// # Memory model
//
// The call of Go (or of a TryGo that reports true) synchronizes before the
// start of the function it passes. The return of each function passed to Go
// synchronizes before the return of the Wait that waits for it (or its
// panic, in PanicInWait mode). The first non-nil error, or the first
// recovered panic, is recorded before the group's context is canceled with
// it.
//
// # Zero value
//
// The zero Group is valid, has no limit, does not cancel on error, runs
// every queued task (RunQueued) and lets panics crash the program
// (PanicCrash). A Group may be used again after Wait; its first error (and
// recovered panic) sticks. SetLimit, SetCancelMode and SetPanicMode may be
// called before the first Go, or between a Wait and the next Go, not while
// tasks are active. A Group must
// not be copied after first use (go vet reports copies).
//
// # Differences from errgroup
//
// migrate.md lists them with the reasons; in short:
//
//   - Tasks run on reused worker goroutines, at most GOMAXPROCS (or the
//     limit) at a time unless workers block; goroutine-specific state, such
//     as pprof labels set by the caller of Go, is not carried into tasks (a
//     task sees the labels of the goroutine that started its worker; use
//     pprof.Do inside the task).
//   - Inside a task, Go on a limited group does not block (see Limits).
//   - runtime.Goexit in a task run by a helping Wait also ends the tasks
//     suspended below it (see Panics and Goexit).
//   - A panic's crash report says "[recovered, repanicked]", or, for a task
//     run inside another task's Wait, is printed by wsgroup (exit status 2).
//   - A pool owned by a limited group may have more than n workers while
//     some are blocked in a Wait (see Limits).
//   - Misuse panics at the call site with a message that starts with
//     "wsgroup:": Go(nil), TryGo(nil), methods on a nil *Group, and
//     SetLimit, SetCancelMode or SetPanicMode while tasks are active (as
//     errgroup's SetLimit does, as an error value).
//   - Beyond errgroup, and off by default: SetCancelMode(SkipQueued) and
//     SetPanicMode(PanicInWait) (see Errors and cancellation, and Panics
//     and Goexit).
package wsgroup
