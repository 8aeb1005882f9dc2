// Package explore runs the scheduler's real concurrent code under chosen
// interleavings and checks properties on every one: a systematic
// interleaving explorer in the manner of CHESS, for tests.
//
// # How it works
//
// The lock-free code of the scheduler (packages deque, ranges, sleep and
// sched) uses package explore/atomic instead of sync/atomic, and package
// explore/xsync for its mutexes, for parking a goroutine, for yielding and
// for starting goroutines. In a normal build those are aliases of, or thin
// functions over, the standard constructs, and cost nothing. Built with
// -tags explore, every atomic operation, lock, park, wake-up and goroutine
// start is an exploration point: a goroutine that belongs to the schedule
// being explored (a thread) stops there, and the strategy decides which
// thread takes the next step. Exactly one thread runs at a time, so the
// order of all atomic operations is the one the strategy chose. Goroutines
// that are not threads of a schedule pass through the points untouched.
//
// A test (see Explore) gives a program that starts a few threads and states
// the properties to check. The strategies are:
//
//   - Exhaustive(bound): every schedule with at most bound preemptions,
//     depth first, for the smallest configurations;
//   - PCT(seed, depth): random priorities with depth-1 priority change
//     points (probabilistic concurrency testing), for larger ones;
//   - Random(seed): a uniformly random thread at each step.
//
// # Properties
//
// A schedule fails when a thread panics, when the program calls
// Schedule.Errorf, when it exceeds a step bound (livelock), when no thread
// can run while some wait without a time limit (deadlock), and when a
// quiescence check fails. A quiescent state is one where no thread can run:
// every thread has ended or is blocked. Time limits (an idle worker's
// linger) never pass by themselves: the explorer lets one pass only at a
// quiescent state, after the checks. So a check such as "no worker sleeps
// while a task it could run is queued" catches a lost wake-up even when a
// timeout would later have rescued it, and a mutation that only slows
// things down fails just as one that hangs.
//
// # Limits
//
// Every interleaving explored is sequentially consistent, which is what Go's
// sync/atomic promises; the explorer does not model weaker memory orders,
// the Go scheduler's own preemption inside non-atomic code (the code under
// test shares memory only through atomics and mutexes), or real time.
// Operations outside the four packages (goroutine identity, the runtime's
// metrics, timers other than the linger) are not exploration points. A
// thread runs on a goroutine that may have run an earlier thread of the
// exploration (threads are carried by reused goroutines, whose stacks
// have grown already): what a program keys by goroutine id must be gone
// once its thread returns, as the scheduler's tables of workers and
// runners are.
//
// # What the project verifies
//
// This section is the one place that lists the checks of the concurrency
// core, what each covers and what none of them does. Every check runs in
// CI; the explorations run there at the sizes given here, in well under
// 30 s, and under -explore.long (larger bounds and unlimited random
// schedules, each exploration for up to -explore.budget) for as long as one
// asks:
//
//	go test -tags explore -run Explore ./internal/deque ./internal/ranges ./internal/sleep ./internal/sched
//	go test -tags explore -run Explore ./internal/deque ./internal/ranges ./internal/sleep ./internal/sched -explore.long -explore.budget=10m
//
// The deque (package deque, explore_test.go): an owner and one or two
// thieves over the real Deque, in both modes (clearing taken slots, and
// Retain): the race for the last item, the last item then a push, two
// thieves on the last item, both ends at once, growth of the ring and its
// shrinking. Every schedule with at most 2 preemptions (3 under
// -explore.long). Property: every pushed item is taken exactly once (by a
// Pop, a Steal or the final drain) and the deque ends empty. And a StealIf
// and a Steal against an owner that reuses the slots of a two-slot ring,
// with every schedule's history checked for linearizability (below).
//
// The range partitioner of the loops (package ranges, explore_test.go):
// participants, each the owner of a slot, take runs of indices from their
// own range and steal with the real Partition until Steal reports that
// nothing is left: two participants over one index, three indices one at
// a time, four and five indices in runs of one and two (a thief's cut
// between a Take's load and its compare-and-swap), three slots of which
// two participants steal the third's range and each other's, and an
// Untake of one and of two indices while the other participant steals.
// Every schedule with at most 2 preemptions (3 under -explore.long), then
// 5,000 PCT schedules of each. Properties: in every state the slots'
// ranges are disjoint and hold no index an owner has taken, and left lies
// between the indices in the slots and those no owner holds; every index
// is taken by exactly one owner's Take (again after each Untake), none is
// lost; a Steal reports false only at a step where every index has been
// taken; left ends at zero and every slot empty. Three concurrent
// participants are not explored: two thieves that wait for the indices a
// third holds in transit yield to each other, threads that yield in turn
// cost no preemption, and the searches do not end.
//
// The idle protocol (package sleep, explore_test.go): one or two workers
// over the real Sleep, with queues that are counters: an injected job while
// the only worker gets sleepy, two workers and two injected jobs, a busy
// worker's job pushed onto its own deque while another gets sleepy, a job
// that forks another, and workers stopped by their done condition. Every
// schedule with at most 3 preemptions for one worker and 1 for two (one
// more under -explore.long), then 10,000 PCT schedules of each. Properties:
// no lost wake-up, in every state (a job queued while a worker sleeps, none
// searches and no post is in flight); every job runs exactly once; a worker
// told to stop stops.
//
// The scheduler (package sched, explore_test.go): programs of groups on a
// fresh pool with the real workers, injector, deques, idle protocol and
// Wait: two tasks from outside; a task that forks a child; a fork while the
// other worker may be asleep; a limit of one, where the second Go waits for
// a slot; a Go inside a task on a limited group whose slot another task
// holds, so the task is set aside while the holder may be ending; two tasks
// that fail at once in a group with a context; a nested group waited for on
// a worker; a data-parallel loop (For) over two indices, its two
// range-stealing tasks racing for each other's index while the caller
// helps, and one whose first index fails (For returns that error, no
// index runs twice). Every schedule with at most
// 1 preemption (2 under -explore.long), then 2,000 PCT schedules of each.
// Properties: every task runs exactly once; Wait returns only after every
// task of its group, and once; Wait returns the error that the context
// records as its cause; a group's count never goes below zero and
// ends at zero (termination is detected once, after the last task); no lost
// wake-up in any state, and no task queued at a quiescent state (a stall
// that only a linger timeout would end); the pool ends empty.
//
// The deque against its sequential specification (package deque,
// linearizability_test.go): histories of Push, Pop and Steal recorded on
// real goroutines, many short ones per run, are checked for
// linearizability with github.com/anishathalye/porcupine.
//
// The partitioner's slots against theirs (package ranges,
// linearizability_test.go): each slot's word is an object of its own,
// with an owner's take of up to k indices, a thief's cut of the upper half
// (Steal's compare-and-swap), the owner's fill of its empty slot (Steal's
// store), an Untake, and a thief's scan that saw it empty; histories of
// two to four participants on real goroutines at GOMAXPROCS 1 to 8 are
// checked slot by slot with porcupine, and each must take every index
// exactly once. A stress test (ranges_test.go) runs the real Take, Steal
// and Untake the same way, under -race in CI.
//
// Group against errgroup (package wsgroup, property_test.go): random
// programs of Go, TryGo, SetLimit, nested groups, errors, cancellation and
// Wait run on errgroup and on wsgroup (pgregory.net/rapid), and their
// observable outcomes must agree where the package documentation says they
// do.
//
// Everything at once (internal/soak): many clients draw scenarios at random
// (flat fan-outs with and without a limit, reuse after Wait, one and several
// errors, nested fork-join with a limit per node, tasks that sleep under a
// limit, chains of tasks that wait for later tasks, TryGo at the limit,
// loops, recovered panics, Goexit, parent cancellation in both modes) while
// GOMAXPROCS changes among 1, 2 and 4, and check every result exactly:
// each task ran once (or was dropped as documented), no limit was exceeded,
// plain writes are visible after Wait, the right error or panic; a client
// that stops making progress, or a goroutine left after the load, fails it.
// The scenarios errgroup can run also run on errgroup, which checks the
// checks. CI runs it for 20 s plain and 20 s under -race, from a fresh seed
// each time; it runs as long as one asks (go run ./internal/soak -d 1h).
//
// Each check is shown to catch the bugs it is for: internal/mutants holds
// the table of deliberately broken variants (a sleeper that skips its last
// check of the jobs event counter, a post that wakes before it moves the
// counter, a sleeper that announces itself after its shutdown check, a
// local push or an outside Go that wakes nobody, a count decremented twice,
// a Wait that returns early, a freed slot that wakes nobody, a task set
// aside without a second look at the count, a first error claimed without
// a compare-and-swap, a StealIf that trusts a reused slot, a steal
// without its compare-and-swap, a pop that takes the last item without one
// or skips its final store, a push that publishes before it writes, a Go
// inside a task that queues past the tasks holding the slots, a TryGo that
// ignores the limit; in the partitioner, a Take by an unconditional Add or
// that subtracts from left before its compare-and-swap or gives up on a
// lost race, an Untake that adds to left after its compare-and-swap, a
// Steal that fills its slot before cutting the victim's range, cuts it
// with a plain store, or gives up without looking at left; for the soak, a
// worker that drops one task in a million, the error of a task run by an
// outside Wait lost, idle workers that never retire) with the check that
// catches each, and re-runs it:
//
//	go run ./internal/mutants
//
// Not verified: memory orders weaker than sequential consistency (Go's
// atomics are sequentially consistent, and the explorer explores only such
// executions); data races between plain memory accesses (the race
// detector's job: CI runs the stress tests under -race); the watchdog,
// which samples the real clock and the runtime's metrics and so does not
// run in explored programs; the injector's choice of shard by goroutine id
// (an explored pool has one shard) and the random first victim of an
// outside Wait's steals (always the first worker when explored); panics, Goexit and the opt-in failure
// modes under the explorer (the stress and property tests cover them); the
// partitioner's balance, which range a thief cuts and how much (the unit
// tests and the slots' specification check it, the explorations do not: a
// cut of the whole range would be slower, not wrong); and
// anything beyond the configurations above: a bounded search finds every
// bug that shows within its bound in those programs, which is evidence, not
// a proof for every program.
//
// The exploration points cost nothing in a normal build: the types of
// explore/atomic are aliases of sync/atomic's, the functions of
// explore/xsync are the plain constructs, and the scheduler's probes are
// empty functions; BENCHMARKS.md has the measurement with and without
// the layer.
package explore
