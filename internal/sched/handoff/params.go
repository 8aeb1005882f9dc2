package handoff

import "time"

// The hand-off's tuning: every time and count that decides how soon a
// stuck worker's slot goes on, and what that costs. (The scheduler's own
// tuning is in its params.go; each package keeps its constants in one
// file, so that tuning for a different machine touches two files.)
const (
	// blockedGap: the least time between two status reads that find a
	// worker blocked in one task for it to count as blocked (status.go).
	// One read is not enough: a task that waits often and briefly (a lock
	// taken in a loop, a stream of small writes) reads blocked part of
	// the time. It is also the most often the workers are checked for
	// the whole pool (Handoff.check).
	blockedGap = 50 * time.Microsecond

	// syscallGap is blockedGap for a worker in a system call: a stream of
	// short calls reads "in a system call" most of the time, so only a
	// call that is still in progress over a longer span counts (the
	// runtime's sysmon retakes such a processor after 20 µs to 10 ms).
	syscallGap = time.Millisecond

	// checkEvery: a poster that finds the pool saturated checks the
	// workers on one saturated post in checkEvery, counted by the poster
	// (per worker, or per injector shard) without a shared counter. A
	// power of two.
	checkEvery = 16

	// stillGap: where statuses are not read, the least time a worker must
	// have stood still in one task before the runtime's counts may prove
	// it off the CPU (counts.go); as blockedGap, so that a task that
	// waits often and briefly is not handed on for it.
	stillGap = 50 * time.Microsecond

	// stopSettle: for how long after a check finds that the collector
	// stopped the world a proof by the counts must be made twice
	// (signals.offCPU).
	stopSettle = time.Millisecond

	// unprovenWait: where statuses are not read, how long every attached
	// worker must have stood still before those the counts show off a
	// processor, but cannot show blocked, are handed on
	// (monitor.boundOffProc). Longer than the Go scheduler's time slice
	// (10 ms), so that a worker that merely waits its turn for a CPU is
	// seldom replaced.
	unprovenWait = 20 * time.Millisecond

	// runWait: how long a worker not known blocked (by a status read, or
	// by the counts) must have stood still in one task, with no attached
	// worker starting a task meanwhile, before the monitor hands it on
	// (monitor.boundLong). Several of the Go scheduler's time slices: a
	// worker that only waits for a CPU gets going again within that,
	// unless the machine is overloaded.
	runWait = 100 * time.Millisecond

	// handedKept bounds the evidence of monitor.rampOnEvidence: the
	// monitor looks at each entry once a tick. A wave beside more
	// goroutines that wait for a CPU than that is handed on one worker
	// per unprovenWait.
	handedKept = 256

	// watchTick is the monitor's period while the pool is saturated;
	// watchQuiet is how many ticks without saturation it counts before it
	// slows down (monitor.busy).
	watchTick  = 100 * time.Microsecond
	watchQuiet = 20

	// watchDoze is the monitor's longest period, while quiet or while
	// the work flows, and watchLinger how long it stays quiet before it
	// exits.
	watchDoze   = 5 * time.Millisecond
	watchLinger = 50 * time.Millisecond

	// recheckEvery: while the monitor yields for its next tick where
	// statuses are not read, it checks the workers this often
	// (monitor.wait).
	recheckEvery = 10 * time.Microsecond

	// flowTasks: a saturated pool whose every worker has started this
	// many tasks or more since the monitor's last tick flows (one that
	// started only one may be blocked in it): the monitor naps longer
	// and posts stop kicking it (monitor.busy).
	flowTasks = 2

	// spareLinger is how long a goroutine that left its slot waits to be
	// given another before it exits (spares.go): long enough that a
	// service's waves of blocking tasks reuse the same goroutines, short
	// enough that none is left long after the process's last task.
	spareLinger = 64 * time.Millisecond
)
