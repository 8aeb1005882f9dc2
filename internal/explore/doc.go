// Package explore runs the scheduler's real concurrent code under chosen
// interleavings and checks properties on every one: a systematic
// interleaving explorer in the manner of CHESS, for tests.
//
// # How it works
//
// The lock-free code of the scheduler (packages deque, sleep and sched)
// uses package explore/atomic instead of sync/atomic, and package
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
// Operations outside the three packages (goroutine identity, the runtime's
// metrics, timers other than the linger) are not exploration points.
package explore
