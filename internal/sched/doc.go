// Package sched is wsgroup's runtime: one process-wide pool of worker
// goroutines with a deque each, an injector queue for tasks from outside
// the pool, work stealing, the groups' counts, limits and waiting, the
// compensation of blocked workers, the opt-in failure modes, and
// data-parallel loops. Package wsgroup words everything for users; this
// package reports conditions (SetLimit, SetSkipQueued and SetRecoverPanics
// return the active count they refused on) and never panics with a user
// message of its own.
//
// # A task's life
//
//  1. Group.Go or Group.TryGo (group.go) counts the task in the group's
//     state word, within the limit if there is one (at a full limit, a Go
//     outside a task waits for a slot, acquireOutside; a Go inside a task
//     sets the task aside, setAside). The function goes with the caller's
//     profiler labels, and while tracing inside a trace region
//     (Group.submitted, labels.go). Then it queues the task: on a worker,
//     onto the worker's own deque (worker.pushLocal, worker.go; package
//     deque); elsewhere, into the injector, in the caller's shard
//     (Pool.inject, pool.go; injector.go). Task records are in task.go.
//  2. Queuing announces the task to the idle protocol (package sleep),
//     which wakes a sleeping worker if one should take it, and starts a
//     worker if none is idle (Pool.maybeSpawn, pool.go); with no room for
//     one, it tells the hand-off that the pool is saturated
//     (handoff.Handoff.Saturated: the workers may all be blocked). A push
//     onto a worker's deque makes the loads of both first, inline, and
//     calls them only when one has something to do (pushLocal).
//  3. A worker takes it (worker.find, worker.go): its own deque newest
//     first, then a batch from the injector (takeInjected), then the
//     oldest task of a random other worker (steal, stealIf), with a turn
//     now and then for the later sources, so that none starves behind
//     one that never empties (injectEvery, stealEvery). Or a helping
//     Wait takes it (wait.go): on a worker, a Wait of the task's group, or
//     a Wait of a group whose running task waits, in a Wait of its own,
//     for the task's group, or down a chain of such joins (join.go: the
//     Waits inside tasks record themselves in Group.awaitedIn; joinedFrom
//     follows the records, and again once the task is claimed,
//     joinable), from its deque while the newest task there is the
//     group's, or by stealing the oldest task of a deque only if it is
//     such a task (worker.help, worker.takeJoined); outside the pool, a
//     Wait of the task's group only, from the caller's injector shard
//     (injector.unpushIf) or a worker's deque (Pool.stealFor, worker.go),
//     the goroutine marked in runners (runners.go) meanwhile. A Wait on a
//     worker that finds none waits in its place for a moment
//     (worker.waitPatiently), then blocks and gives its place up
//     (worker.block).
//  4. It runs (worker.execute, which marks the task's start in the slot's
//     record for the hand-off, worker.rec, and endTask its end; if the
//     task blocks, package handoff hands the worker's slot on and another
//     goroutine takes the queue on: its doc follows a blocked task to its
//     slot's next goroutine. panic.go: worker.call and callOutside run it
//     in one deferred call's frame, tell a return, a panic and a
//     runtime.Goexit apart, and put the task's labels on the goroutine
//     and take them off again; worker.runOwn runs a helping Wait's plain
//     tasks of its own group, newest first from its deque, in runs under
//     one such frame). A skip-queued group that is canceled drops it instead
//     (failure.go: skips, drop); a limited group admits it to execute
//     (startRunning). A task queued while its group had neither is plain
//     (task.plain), and its worker does not look at the group for either.
//  5. It is counted finished (worker.afterTask, worker.settle): the
//     group's count goes down (Group.done, group.go), batched for runs of
//     injected tasks of an unlimited group, and for the tasks of an
//     unlimited group that its helping Wait runs itself (worker.help
//     subtracts them all at once). done wakes the goroutines
//     parked for the count to reach zero or drop below the limit, on the
//     wait table of waiters.go, and starts a task set aside (unpark).
//  6. Group.Wait (wait.go) returns once the count is zero, with the first
//     error (failure.go: fail, canceled) or the recovered panic raised
//     again (panic.go: taskPanicked, panicRecord).
//
// # Where the policies are
//
// The idle and wake policy (when a worker spins, sleeps, is woken, and who
// wakes whom) is package sleep: Sleep.Post, NewInternalJobs and Wake on the
// posting side, StartLooking, NoWorkFound, WorkFound and StopLooking on the
// worker's side. sched calls it from worker.go (run, foundWork,
// takeInjected, pushLocal) and pool.go (inject, spawn, release). When to
// start a worker is pool.go (maybeSpawn, spawn, release, capacity).
//
// When a worker gives up its slot for another goroutine is detach.go, for
// two reasons. Its own: it is about to block in a Wait with nothing to
// help with, once its patience has passed (worker.waitPatiently,
// joinPatience in params.go; worker.block). And the hand-off's, for a
// worker stuck in a task: that whole policy (who is stuck, by which
// evidence, how soon, the monitor, the ramp, the spares that goroutines
// wait as between slots, and the progress guarantee it gives) is package
// handoff; its doc is the map. sched tells it where each worker is
// (worker.rec: execute and endTask), calls Handoff.Saturated wherever a
// post finds the pool saturated (maybeSpawn, foundWork, block,
// release), and answers its questions through poolView (handoff.go).
//
// A goroutine that runs tasks never stops at a task end to let other
// goroutines have its P: the Go scheduler's preemption shares the P with
// them.
//
// # A slot's states
//
// A slot is free (no goroutine; listed in Pool.freeSlots; its deque
// empty) or occupied by one goroutine. An occupied slot is attached (it
// counts against GOMAXPROCS and is in the scan set, Pool.active) or
// detached for one or both reasons of worker.detachedBy (it counts in
// Pool.detached, which raises the capacity by one, and is not scanned).
// Every transition is made under Pool.mu:
//
//	free     → attached          startLocked: a spawn within capacity, on a spare or a new goroutine
//	free     → detached(hand-off) startLocked(true): the hand-off's ramp
//	attached → detached(wait)     detach: worker.block, a Wait with nothing left to help with
//	attached → detached(hand-off) detach: poolView.HandOn, a worker found stuck
//	detached → attached           reattach, when its last reason is cleared: worker.unblock,
//	                              or a nested task handed on has returned (afterTask)
//	attached → free               release: the linger ended, or the pool is above capacity
//	detached(hand-off) → free     release: its task returned and no queued task was left
//	occupied → occupied           replace: a task's runtime.Goexit; a new goroutine, same state
//
// live (occupied slots) ≤ capacity = GOMAXPROCS + detached, except for
// the ramp's workers and a moment after GOMAXPROCS goes down; a worker
// that finds the pool above capacity (Pool.surplus) retires. The numbers (batch
// size, linger, patience, polls) are in params.go, whose comment states
// the rule every package here follows: a constant that tunes a policy is
// in its package's params.go, one that shapes a layout beside its type.
// The switches that turn off the safety nets for tests are in switches.go
// (the monitor's are handoff.MonitorOff and handoff.MonitorStalled).
//
// A data-parallel loop (loop.go: For) is a group whose tasks share a range
// partition (package ranges) and steal halves of each other's ranges.
// Statistics (stats.go) are counted in plain fields per worker and
// published to atomics at a few points; ReadStats sums them.
//
// probe.go holds the seams that the explore build tag replaces
// (probe_explore.go): marks of the wake-ups in flight, which let the
// interleaving explorer (package explore) tell one on its way from a lost
// one, empty and inlined away in a normal build, and the submit polls'
// count, which explored programs cut short.
//
// # Invariants and the tests that check them
//
// The interleaving explorer runs small programs (schedPrograms in
// explore_test.go) under every schedule with few preemptions:
// TestExploreSched and TestExploreSchedPCT (go test -tags explore). On
// every schedule they check most of what follows.
//
//   - Every task runs exactly once; nothing queued is lost:
//     TestExploreSched, TestDifferentialAgainstReference, TestChurnOneGroup
//     (stress_test.go); the injector's queue: TestQueueModel,
//     TestQueueConcurrent, TestQueueUnpushConcurrent (injector_test.go).
//   - Wait returns after every task of its group, exactly once, and the
//     count never goes below zero: TestExploreSched, TestChurnOneGroup;
//     also while a helping Wait holds back the tasks it ran itself, with
//     the group waited for elsewhere too and given tasks from two
//     goroutines at once (wait-twice and go-from-two in
//     TestExploreSchedPCT), and one that ran one of its group's tasks and
//     then blocks while another runs elsewhere (TestWaitRanOwnThenBlocks,
//     wait_test.go); a task's Goexit or panic still counts it
//     finished: TestGoexitOnWorkers, TestGoexitInNestedWait,
//     TestGoexitInNestedWaitEndsWaiter (goexit_test.go).
//   - No lost wake-up (no task queued while every worker sleeps):
//     TestExploreSched (lostWakeUp), TestChurnLostWakeups,
//     TestChurnBlockingPairs; the wait table: TestWaitTable,
//     TestWaitTableParkRefusesStale (waiters_test.go). The idle protocol
//     itself: TestExploreSleep in package sleep.
//   - A Wait runs only tasks that it waits for anyway: its own group's
//     (TestOutsideWaitSkipsOtherGroups, TestOutsideWaitStealsOwnTasks,
//     wait_test.go), and those two joins down a chain, never one that no
//     join in progress leads to (TestWaitHelpsAlongTheChain,
//     TestWaitRunsNoTaskItDoesNotWaitFor, TestJoinRecords, join_test.go);
//     under the explorer, a join that helps a thief, two Waits of one
//     group in tasks of two others, whose helped tasks check the rule
//     themselves, and a group started again by two goroutines at once
//     while the record of its last use's join is there (help-thief,
//     two-joins and restart-two in TestExploreSchedPCT).
//   - At most limit tasks of a group are active, and execute, at once; a Go
//     inside a task never blocks: TestLimitBoundsRunningTasks,
//     TestLimitRunningCountPacked, TestGoInTaskOnFullGroupDoesNotBlock,
//     TestOutsideGoOnFullGroupWaitsForSlotOnly (limit_test.go).
//   - A blocked worker's slot is handed on, CPU-bound workers keep theirs
//     (also beside a storm of garbage collections), and a queued task
//     runs whatever keeps the workers stuck: TestHandOffBlocked,
//     TestHandOffProgress, TestHandOffGCStorm (handoff_test.go),
//     TestStatusPosterHandsOff (posters alone, the monitor switched off),
//     TestStatusLocalPosterHandsOff (likewise, the posts made inside a
//     task),
//     TestStatusPosterTakesBack (likewise, a poster whose Wait takes its
//     own tasks back),
//     TestStatusRampsBlockingFanOut,
//     TestStatusCPUBoundNotBlocked, TestStatusOffFallsBack (status_test.go;
//     the poster, CPU-bound and storm tests run by statuses and by the
//     fallback's counts), TestStatusStartsWithFirstWorker (the status
//     check starts with the pool's first worker, not before), the status
//     reader's own proofs in package gstatus,
//     TestWatchdogChain, TestWatchdogFanOutBlocking,
//     TestWatchdogCPUBoundStaysSmall, TestWatchdogRestarts
//     (watchdog_test.go), TestBlockedInWait (wait_test.go).
//   - Nothing sized at compile time fills and hangs, in any setting: waves
//     of 10,000 tasks blocked at once beside CPU-bound fan-outs, in a
//     process per setting the scheduler reads, at GOMAXPROCS 1, 2 and 4:
//     TestBlockingWave (wave_test.go).
//   - The idle, wake and retire protocols lose no task on their own, with
//     the monitor and the linger switched off: TestNoRescueWake,
//     TestNoRescueRetireLastLook, TestNoRescueRetireLastLookDeque, and
//     TestNoRescueRetireAgainstPost (a worker retiring while a Go from
//     outside posts, in every order of their steps; rescue_test.go); and
//     under every interleaving of a worker retiring, parking as a spare
//     and being handed the next slot: TestExploreSched (retire-reuse).
//   - Spares are reused, and leave: TestSparesReused (handoff_test.go).
//   - No task is left queued with no monitor: under every interleaving of
//     the monitor giving its flag up with posters, TestExploreWatch
//     (package handoff).
//   - Workers retire and the monitor exits by themselves, and no
//     goroutine leaks: TestPoolRetiresAfterWait, TestPoolRetiresWithoutWait,
//     TestLifecycleBurstRetires (lifecycle_test.go),
//     TestWatchdogExtraWorkersRetire; every test through guardPool and
//     goleak.VerifyTestMain (helpers_test.go).
//   - Statistics only grow and are exact once the pool is idle:
//     TestStatsIdleWorkersPublished, TestStatsRetiredSlotsPublished
//     (stats_test.go), and TestExploreSched at the end of each program.
//   - Behaviour matches errgroup: TestPropertyMatchesErrgroup in wsgroup.
//   - All of it at once, under a randomized mix from many clients while
//     GOMAXPROCS changes, every result checked and nothing left after the
//     load: the soak, internal/soak (TestSoak, and in CI for 20 s plain and
//     20 s under -race).
//
// The checks can fail: go run ./internal/mutants breaks the code one known
// bug at a time (a lost wake-up, a count subtracted twice, a limit
// ignored, ...) and runs the check that must catch it.
package sched
