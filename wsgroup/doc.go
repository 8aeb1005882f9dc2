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
// errgroup starts a goroutine per Go call. wsgroup runs the functions of
// every group in the process on one shared set of reused worker goroutines,
// the scheduler (its workers are called the pool below): at most
// GOMAXPROCS of them run tasks at a time (more only
// when workers block; see Blocking tasks), and the count follows changes of
// GOMAXPROCS while the process runs. A Group owns no workers: making one,
// using it and dropping it costs about what an errgroup.Group does, so a
// service may make one per request.
//
//   - A Go called on a worker goroutine (that is, inside a task) pushes the
//     task onto that worker's own deque: no lock, no goroutine created.
//     The worker runs its newest task first, which keeps recursive work
//     cache-hot.
//   - A Go called anywhere else queues the task on the injector, a queue
//     split into shards by the calling goroutine, so that many goroutines
//     submitting at once do not queue on one lock. Workers take batches
//     from it.
//   - An idle worker takes from its own deque, then the injector, then
//     steals the oldest task of a randomly chosen other worker (the oldest
//     task of a recursive computation is the biggest piece of it). Every
//     few dozen tasks it looks at the injector first, so that tasks from
//     outside are served while a worker's deque keeps filling.
//   - A worker with nothing to do searches a few rounds, then sleeps; a new
//     task wakes it (see internal/sleep for the protocol and why no
//     wake-up is lost).
//
// Workers are started on demand, when a task is queued and no worker is
// idle to take it. An idle worker exits after 5 ms without work, and the
// watchdog (see Blocking tasks) after 50 ms without saturation, so once the
// process has no task, no goroutine of wsgroup remains within a few tens
// of milliseconds: goleak.VerifyNone, which retries for longer than that,
// passes right after Wait, and so does goleak.VerifyTestMain. A service
// whose requests come less than a few milliseconds apart keeps the same
// warm workers and starts no goroutine per request.
//
// # Waiting: helping instead of blocking
//
// Wait, called inside a task, does not simply block the worker: the worker
// runs the group's own queued tasks (from its deque, newest first, then
// stolen from other workers) until the group is done. Recursive fork-join
// with a Group per level therefore runs on the fixed set of workers, mostly
// without blocking and without a goroutine per task. When none of the
// group's tasks is within reach (they were stolen and run elsewhere), the
// worker blocks until the group is done and the scheduler starts another
// worker in its place meanwhile.
//
// Wait, called on any other goroutine, first runs the group's queued tasks
// that it can reach, on its own goroutine: the newest tasks that this
// goroutine submitted and no worker has taken yet, and the oldest task of
// a worker's deque when it is the group's. Then it blocks, without
// spinning, until the group is done. (A Go from outside on a group at its
// limit runs no task while it waits for a slot: it waits for one slot,
// not for the group, and a queued task may wait for something its caller
// does after that Go returns.) A request handler that
// fans out a few tasks and waits thus runs some of them itself instead of
// sleeping while a worker runs them: it saves their hand-off and its own
// wake-up, and its CPU is not idle while it waits.
//
// Either way Wait runs only its own group's tasks. Running whatever is
// queued, as work-stealing runtimes often do, would deadlock correct
// errgroup code: a task queued earlier may wait for something that the
// waiting goroutine does only after its Wait returns, and once such a task
// runs on top of the waiting goroutine's stack, that goroutine can never
// resume. The group's own tasks are safe: Wait waits for each of them
// anyway.
//
// A task run by a Wait outside the pool runs on the goroutine of
// that Wait, which is observable in three ways:
//
//   - goroutine-specific state is the caller's: its goroutine id, its pprof
//     labels, and its OS thread. A task that calls runtime.LockOSThread must
//     call UnlockOSThread before it returns, or the lock stays with the
//     caller (on a worker it would stay with the worker, which is as bad);
//   - runtime.Goexit in the task ends the caller's goroutine, after Wait has
//     waited for the rest of the group (see Panics and Goexit);
//   - a panic in the task cannot be recovered by the caller: it ends the
//     program, as it would under errgroup (see Panics and Goexit).
//
// # Blocking tasks
//
// errgroup runs every task at once, so errgroup code may contain tasks that
// wait for each other: a task blocks until a later task closes a channel,
// or several tasks wait on ctx.Done() for another to fail. A fixed set of
// workers would stall on such code once every worker blocks. wsgroup does
// not: a worker that blocks in one of wsgroup's own waits (a Wait whose
// group's tasks run elsewhere) is replaced at once, and while tasks are
// queued and no worker is idle, a watchdog goroutine samples the Go
// scheduler (runtime/metrics /sched/goroutines/running and /runnable)
// every 100 µs; when CPUs sit idle although every worker is busy, the busy
// workers must be blocked, and it adds workers (as many as there are idle
// CPUs, or, when nothing at all is running, one per queued task).
// CPU-bound work keeps the CPUs busy, so it never grows the set. Workers
// above GOMAXPROCS exit as soon as they are idle, and the watchdog exits
// when the scheduler has been unsaturated for 50 ms.
//
// The watchdog also keeps queued tasks from starving behind tasks that do
// not end, even while the CPUs are busy: when tasks submitted from outside
// have waited about a millisecond with no worker taking any (every worker
// is busy with long tasks of other groups), or tasks queued by a worker
// have waited as long with neither that worker nor any other taking one
// (the worker is stuck in a task that blocks or runs long), it adds a
// worker for them, one a millisecond, up to 1,024 such workers (or
// 4×GOMAXPROCS, if that is more), and the Go scheduler shares the CPUs
// between them and the busy ones. A task queued behind more stuck tasks
// than that waits for one of them to end.
//
// # Limits
//
// SetLimit(n) keeps errgroup's meaning and sizes nothing: at most n of the
// group's tasks are active (queued or running); a Go from outside the pool
// blocks while n are active, and TryGo reports false then. At most n of the
// group's tasks execute at once.
//
// Inside a task, a Go on a limited group never blocks: the caller may hold
// a slot itself (a task of the group calling Go on it), and waiting would
// deadlock, as it does with errgroup. At the limit it sets the task aside
// and returns at once; the task starts when a task of the group ends and
// frees a slot, the tasks set aside in the order they were set aside, which
// is when errgroup's blocked Go would have started it. So a task may wait for an earlier task
// of its group, as with errgroup, and recursion under SetLimit, which
// deadlocks with errgroup, completes. At most n of the group's tasks are
// active apart from those set aside, and so at most n execute at once. TryGo
// inside a task reports false, as errgroup's does, when n tasks are active.
// A task run by a Wait outside the pool counts as inside a task here.
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
// In both modes the group drains as usual: tasks blocked on ctx.Done()
// return, the workers find nothing of it left to run, and Wait returns
// once every task has. In SkipQueued mode a canceled
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
// Likewise for a task run by a Wait outside the pool, on its caller's
// goroutine, whose frames must not recover it either: "panic: VALUE [in a
// task that ran on the goroutine of a Wait of its group]".
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
// waiting, and may outlive the outer Wait.
//
// A task that calls runtime.Goexit (t.FailNow does) ends as completed, as
// with errgroup, and a fresh goroutine takes over its worker's queue. One
// difference remains: Goexit ends the whole goroutine the task runs on. If
// the task was run by a worker helping in a nested Wait, the tasks
// suspended below it on that goroutine end too (each counted as completed,
// their deferred calls run); if it was run by a Wait outside the
// pool, the goroutine that called it ends. Each Wait so unwound still waits
// for the rest of its group's tasks, blocked, before the unwinding goes on,
// and raises its group's recovered panic, if any (PanicInWait), into its
// caller, where that caller's own rules apply; the error it would have
// returned is lost with the caller that would have received it.
//
// # Loops
//
// Half of what errgroup code does is a loop with one task per item. For
// runs such a loop as a handful of tasks instead: one contiguous range of
// indices per GOMAXPROCS, each task running its range from the low end and,
// once done, stealing the upper half of the longest range left, so the
// cost is a few tasks however long the loop is, and a loop whose items
// differ in cost is still balanced to the end. ForEach and Map are For over
// a slice. For states what a loop promises: every index exactly once
// unless the loop is canceled, in no particular order, at most GOMAXPROCS
// bodies at a time; the first error cancels the loop's context and starts
// no further index; panics crash, or with the option PanicInWait, are
// raised again by For. Nested loops, and loops inside tasks, help as Wait
// does.
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
// # Statistics
//
// [ReadStats] returns process-wide counts of what the scheduler has done
// since the process started: tasks run, steals, sleeps and wake-ups,
// workers started, retired and added for blocked ones. They cost the
// tasks nothing measurable, so a service can export them as metrics (for
// example with expvar). [Stats] says what each field counts, and
// ReadStats when the counts are up to date.
//
// # Differences from errgroup
//
// migrate.md lists them with the reasons; in short:
//
//   - Tasks run on reused worker goroutines shared by the whole process,
//     at most GOMAXPROCS at a time unless workers block, or on the
//     goroutine of a Wait of their own
//     group; goroutine-specific state, such as pprof labels set by the
//     caller of Go, is not carried into tasks (a task sees the labels of
//     the goroutine that started its worker, or of the Wait that runs it;
//     use pprof.Do inside the task).
//   - Inside a task, Go on a limited group does not block (see Limits).
//   - runtime.Goexit in a task ends the goroutine it runs on: the tasks
//     suspended below it in a helping Wait, or the caller of a Wait that
//     ran it (see Panics and Goexit).
//   - A panic's crash report says "[recovered, repanicked]", or, for a task
//     run inside another task's Wait or by a Wait outside the pool, is
//     printed by wsgroup (exit status 2).
//   - Misuse panics at the call site with a message that starts with
//     "wsgroup:": Go(nil), TryGo(nil), methods on a nil *Group, and
//     SetLimit, SetCancelMode or SetPanicMode while tasks are active (as
//     errgroup's SetLimit does, as an error value).
//   - Beyond errgroup, and off by default: SetCancelMode(SkipQueued) and
//     SetPanicMode(PanicInWait) (see Errors and cancellation, and Panics
//     and Goexit); and the loops For, ForEach and Map (see Loops).
package wsgroup
