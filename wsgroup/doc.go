// Package wsgroup is golang.org/x/sync/errgroup on a work-stealing runtime.
//
// Change the import path, and the package name where it is spelled out:
//
//	import "golang.org/x/sync/errgroup"                 // before
//	import errgroup "github.com/go-steal/steal/wsgroup" // after (or rename the uses)
//
// The API is errgroup's: [Group], [WithContext], [Group.Go],
// [Group.TryGo], [Group.SetLimit] and [Group.Wait], with the same
// documented behaviour. What changes is where the functions run. Beyond
// errgroup, and off by default, a group can recover its tasks' panics
// ([Group.SetPanicMode]) and drop its queued tasks once canceled
// ([Group.SetCancelMode]); and [For], [ForEach] and [Map] run a loop as a
// few tasks.
//
// This overview describes the model. The documentation of each function
// and method states its contract, including, in the terms of the Go memory
// model, what it synchronizes with.
//
// # How tasks run
//
// errgroup starts a goroutine per Go call. wsgroup runs the functions of
// every group in the process on one shared set of reused worker goroutines,
// the scheduler (its workers are called the pool below): at most
// GOMAXPROCS of them run tasks at a time (more only when workers block;
// see Blocking tasks), and the count follows changes of GOMAXPROCS while
// the process runs. A Group owns no workers: making one, using it and
// dropping it costs about what an errgroup.Group does, so a service may
// make one per request.
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
//     outside are served while a worker's deque keeps filling; and every
//     hundred or so searches it tries the other workers before the
//     injector, so that a task queued behind a task that blocks its worker
//     is not left waiting while tasks from outside keep coming.
//   - A worker with nothing to do searches a few rounds, then sleeps; a new
//     task wakes it (see internal/sleep for the protocol and why no
//     wake-up is lost). Idle workers are kept cheap: at most one of them
//     searches at a time, for at most 10 µs (a few dozen rounds), and the
//     others sleep at once; a worker woken for a task that someone else
//     took meanwhile (most often the Wait that helps: see below) sleeps
//     again at its first fruitless search; a worker that finds a task
//     wakes another only while more are queued. A sleeping worker uses no
//     CPU, and the timer that ends its linger is armed once and left
//     running between sleeps, not re-armed for each one. A Go from
//     outside the pool still wakes a sleeping worker for its task, even
//     when the Wait that follows runs the task itself: Go cannot know
//     that a Wait follows, and without the wake-up a task that the caller
//     waits for by other means (a channel) would never start.
//
// Workers are started on demand, when a task is queued and no worker is
// idle to take it. A worker idle for 5 ms leaves its slot and waits as a
// spare for another one, for up to about 64 ms, and the monitor (see
// Blocking tasks) exits 50 ms after the pool was last saturated; so once
// the process has no task, no goroutine of wsgroup remains within about a
// tenth of a second: goleak.VerifyNone, which retries for longer than
// that, passes right after Wait, and so does goleak.VerifyTestMain. A
// service whose requests come less than a few milliseconds apart keeps the
// same warm workers and starts no goroutine per request.
//
// # Waiting: helping instead of blocking
//
// A Wait runs its group's queued tasks that it can reach, on its own
// goroutine, until the group is done, and blocks only when none is within
// reach ([Group.Wait] says which tasks it reaches). Inside a task, this
// keeps the worker busy: recursive fork-join with a Group per level runs on
// the fixed set of workers, mostly without blocking and without a goroutine
// per task. Outside the pool, a request handler that fans out a few tasks
// and waits runs some of them itself instead of sleeping while a worker
// runs them: it saves their hand-off and its own wake-up.
//
// A Wait runs only tasks that it waits for anyway: its own group's, and,
// inside a task, those that its group's running tasks are waiting for in
// Waits of their own (a nested group's tasks, left queued on the worker
// that took the group's task: the Wait helps that worker, as a
// ForkJoinPool join helps the thief of its task). Running whatever is queued, as work-stealing
// runtimes often do, would deadlock correct errgroup code: a task queued
// earlier may wait for something that the waiting goroutine does only
// after its Wait returns, and once such a task runs on top of the waiting
// goroutine's stack, that goroutine can never resume. The tasks a Wait
// runs are safe: it could not return before any of them anyway. A task
// run by a Wait runs on that Wait's goroutine, which a task can observe;
// [Group.Wait] lists how.
//
// # Blocking tasks
//
// errgroup runs every task at once, so errgroup code may contain tasks that
// wait for each other: a task blocks until a later task closes a channel,
// or several tasks wait on ctx.Done() for another to fail. And most
// errgroup code in services blocks on I/O. A fixed set of workers would
// stall on the first kind once every worker blocks, and serve the second
// badly. wsgroup hands the slot of a blocked worker to another goroutine,
// as the Go runtime hands the processor of a thread blocked in a system
// call to another thread, and it knows which workers are blocked the way
// the runtime's own monitor knows it: from each worker goroutine's
// scheduling status.
//
//   - A worker that blocks in one of wsgroup's own waits (a Wait whose
//     group's tasks run elsewhere, with nothing of theirs to help with)
//     gives up its slot before it blocks, after waiting in it for up to
//     about a millisecond for those tasks to end or to queue more.
//   - A worker whose task is blocked (its goroutine waits on a channel, a
//     select, a sleep, a sync.Mutex, sync.RWMutex, sync.WaitGroup or
//     sync.Cond, or on network or pipe I/O; or it is in one system call
//     for more than about a millisecond) gives up its slot as soon as this
//     has been seen twice, at least 50 µs apart, within the same task. The
//     monitor looks, a goroutine that runs while tasks are queued and no
//     worker is idle to take them, every 100 µs; so do some of the Go
//     calls that find every worker busy (at most one round of looks per
//     50 µs for the whole process). While every worker keeps starting
//     tasks (a saturated service whose tasks run on the CPU), the monitor
//     naps longer each time, up to 5 ms, and the Go calls stop waking
//     it, so that it costs next to nothing while the work flows. A
//     parked spare goroutine (or a new one) takes the slot at once, and the
//     tasks queued on the blocked worker's own deque move to the shared
//     queue.
//   - A worker whose task runs, or waits for a CPU, is never taken for
//     blocked, nor one that waits for the garbage collector: CPU-bound
//     work, collections included, never grows the set of workers past
//     GOMAXPROCS. Only a task that has stood still for 100 ms while no
//     other worker has started a task (and the collector does not mark)
//     gives up its slot, whatever it does, so that a task that spins until
//     another queued task has run cannot hold up the queue for ever.
//   - Some waits count as neither: a goroutine parked on one of the
//     runtime's own semaphores (for example, the second of two goroutines
//     reading the same *os.File at once), on a nil channel or an empty
//     select, reads as held by the runtime, since the collector parks
//     goroutines the same way. Such a task gives up its slot after the
//     100 ms above.
//   - When every worker is blocked, whoever hands one on also starts a
//     goroutine for each queued task that no idle worker is there to
//     take, as errgroup would have.
//   - A worker whose task returns after it gave up its slot goes on taking
//     queued tasks one at a time, as an errgroup goroutine would have run
//     them, and then waits as a spare; spares are reused newest first, so
//     a service's waves of blocking tasks run on the same few goroutines.
//
// Where the statuses are read: on Linux, on amd64, arm64, 386 and arm,
// with any Go release on which a check passes; the package builds on
// every port of Go with the two supported releases, Go 1.26 and Go 1.27,
// and the check passes on both, on each of those four architectures. wsgroup states no offset
// in the runtime's goroutine records: when the pool starts its first
// worker, a check of a few milliseconds, on a goroutine of its own,
// parks probe goroutines in each of the ways above, finds where each
// goroutine's id, status and wait reason are by searching the records of
// those and of running goroutines for the one place that holds what each
// must, and takes as blocking the wait reasons the probes read, none
// written into wsgroup. Nothing of this runs when the program starts:
// importing wsgroup costs a program nothing, and a program that never
// calls Go never runs the check. It runs at the first Go, while the pool
// still has room, rather than once the pool is saturated: its probes then
// find processors that the program's work does not hold, and the check
// is over before blocked workers need it. Started beside goroutines that
// hold every processor anyway, it takes a few of their time slices (0.2
// to 0.5 s at GOMAXPROCS 1 beside two goroutines that never block) and
// still passes. Until the check has passed,
// on any other platform (macOS, Windows, the BSDs, WebAssembly, other
// architectures), if the check finds nothing or more than one candidate,
// or with STEAL_GSTATUS=off in the environment, wsgroup uses the
// runtime's metrics instead (those runtime/metrics publishes): a worker that has
// stood still in one task for 50 µs is handed on once the counts of
// goroutines running on a processor and waiting for one prove that it is
// neither (the stuck workers outnumber the goroutines that could be
// running or waiting for a CPU); not while the garbage collector marks,
// when a CPU-bound worker may be parked helping it, and, within a
// millisecond of a collection, only when two looks at least 50 µs apart
// prove it with no stop of the world for the collector between them.
// The counts cannot tell a task's own wait from one on the collector at
// the start or end of a cycle: when a cycle takes that long to start
// (more processors than CPUs, a busy machine), a worker waiting for it
// may be handed on, and the pool runs one goroutine more until that task
// returns. A stuck worker
// the counts cannot prove blocked (every CPU is busy, or the collector
// marks) is handed on after 20 ms (longer than the Go scheduler's time
// slice) if no worker has started a task meanwhile and the counts show
// it off a processor (blocked, or waiting for a CPU), and after the
// 100 ms above otherwise. The workers handed on that way are watched
// after: once the counts prove some of them, still in the task they
// were handed on in, blocked (more of them stand still than goroutines
// wait for a CPU), the tasks of the pool block, and the other stuck
// workers are handed on at once, with a goroutine for each queued task,
// as when every worker reads blocked. So a wave of thousands of blocking
// tasks beside goroutines that keep every CPU busy starts in a few tens
// of milliseconds, not one task per 20 ms. The Go calls that find
// every worker busy check as the monitor does. BENCHMARKS.md gives the
// figures on both paths.
//
// The progress guarantee: a queued task does not wait more than about one
// monitor period (100 µs, plus the lateness of the Go timer) behind
// workers that are blocked; behind workers that run, up to the 100 ms
// above (on the fallback, about a millisecond behind workers the counts
// prove blocked). The monitor is a
// goroutine like any other: while every processor runs goroutines that do
// not block (a Wait that runs its own group's tasks is one), it gets its
// turn only when the Go scheduler preempts one of them, every 10 ms or
// so; a Go made meanwhile that finds every worker busy still hands blocked
// workers on.
//
// # Sharing the CPUs
//
// An errgroup task ends its goroutine, and every such end lets the Go
// scheduler run whatever became ready on that processor meanwhile: a
// goroutine let go at a barrier, a request handler whose reply arrived, one
// whose sleep is over. wsgroup's workers, and a Wait that runs its group's
// tasks, run tasks back to back, and the Go scheduler preempts them every
// 10 ms: a goroutine readied beside a pool that keeps every processor busy
// waits up to that long for one, where errgroup's would wait for about a
// task. Tasks that wait for each other (a barrier, a chain) beside such
// groups can take tens of milliseconds where errgroup's take a fraction
// of one (BENCHMARKS.md, "Tasks that wait for each other beside busy
// clients", has the figures at every GOMAXPROCS, and examples/barrier
// measures them). wsgroup has no setting that makes workers or helping
// Waits stop at task ends to let such goroutines run: the rules tried cost
// services more than they gave the barrier.
//
// # Limits
//
// SetLimit keeps errgroup's meaning and sizes nothing: it bounds the
// group's tasks that execute at once. A Go outside the pool blocks at the limit,
// as errgroup's does; a Go inside a task must not, since its caller may
// hold one of the slots, and sets the task aside until a slot frees
// instead. So recursion under a limit completes,
// where it deadlocks with errgroup. [Group.SetLimit] and [Group.Go] state
// the rules.
//
// # Errors and cancellation
//
// The first error is returned by Wait and cancels the group's context
// ([WithContext]). Cancellation is cooperative: nothing is interrupted,
// and by default ([RunQueued]) tasks queued before the cancellation still
// run, as they do with errgroup; [SkipQueued] drops them instead, for tasks
// that are safe to skip. [CancelMode] and [Group.Wait] state what Wait
// returns in each mode.
//
// # Panics and Goexit
//
// By default ([PanicCrash]) a panic in a task crashes the program, as with
// errgroup; [PanicInWait] recovers it and raises it again, as a
// [*PanicError], in the group's Wait. [PanicMode] states both, and what a
// crash report looks like. A task that calls runtime.Goexit (t.FailNow
// does) ends as completed, as with errgroup, but it ends the goroutine it
// runs on, which may be that of a Wait; [Group.Go] and [Group.Wait] state
// what that ends.
//
// # Loops
//
// Half of what errgroup code does is a loop with one task per item. [For]
// runs such a loop as a handful of tasks instead: one contiguous range of
// indices per GOMAXPROCS, each task running its range from the low end
// and, once done, stealing the upper half of the longest range left, so
// the cost is a few tasks however long the loop is, and a loop whose items
// differ in cost is still balanced to the end. [ForEach] and [Map] are For
// over a slice. Nested loops, and loops inside tasks, help as Wait does.
// For states what a loop promises.
//
// # Statistics
//
// [ReadStats] returns process-wide counts of what the scheduler has done
// since the process started: tasks run, steals, sleeps and wake-ups,
// workers started, retired and added for blocked ones. Counting them costs
// the tasks nothing measurable (BENCHMARKS.md, "Counting statistics"), so
// a service can export them as metrics (for example with expvar). [Stats]
// says what each field counts, and ReadStats when the counts are up to
// date.
//
// # Differences from errgroup
//
// migrate.md, at the repository root, says how to migrate; the
// differences, each stated where it applies:
//
//   - Tasks run on reused worker goroutines shared by the whole process,
//     or on the goroutine of a Wait that waits for them (their group's, or,
//     inside a task, that of a group whose task waits for theirs):
//     goroutine identity
//     (goroutine ids, the OS thread) is that goroutine's ([Group.Go],
//     [Group.Wait]). Profiler labels carry over as under errgroup: a task
//     wears the labels of its caller of Go. While the execution tracer
//     runs, each task is a trace region named after the function that
//     called Go, where errgroup's tasks are goroutines ([Group.Go]).
//   - Inside a task, Go on a limited group does not block ([Group.Go]).
//   - runtime.Goexit in a task ends the goroutine it runs on: the tasks
//     suspended below it in a helping Wait, or the caller of a Wait that
//     ran it ([Group.Wait]).
//   - A panic's crash report says "[recovered, repanicked]", or, for a task
//     run by a Wait, is printed by wsgroup with exit status 2 ([PanicCrash]).
//   - Misuse panics at the call site with a message that starts with
//     "wsgroup:": Go(nil), TryGo(nil), methods on a nil *Group ([Group]),
//     and SetLimit, SetCancelMode or SetPanicMode while tasks are active,
//     with or without a limit (errgroup's SetLimit panics, with an error
//     value, only when the group has a limit) ([Group.SetLimit]).
//   - A task queued behind tasks that block waits for a blocked worker's
//     slot to be handed on, about 100 µs (up to 100 ms behind the few
//     waits that read as the runtime's own, and, where goroutine statuses
//     are not read, up to 20 ms a slot while other goroutines keep every
//     CPU busy: see Blocking tasks), where errgroup's goroutine would
//     start at once.
//   - A program that breaks sync.WaitGroup's rule for reuse (a Go that
//     starts a group again while a Wait for it has not returned) may see
//     that Go's task run, and waited for, by the Wait of an enclosing
//     group ([Group.Wait]).
//   - A goroutine that a task or the group itself makes ready (a barrier's
//     waiters, a Wait's caller) gets its processor when the worker's task
//     queue runs dry or the Go scheduler next preempts the worker (10 ms),
//     where errgroup's goroutine ends and lets it run (see Sharing the
//     CPUs).
package wsgroup
