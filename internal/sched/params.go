package sched

import "time"

// The run-time parameters that decide how the scheduler trades latency for
// CPU. They are kept together so that tuning for a different machine size
// touches one file; BENCHMARKS.md discusses which would change at 16–64
// cores. (sleep.Rounds and sleep.SpinRounds, the searches before a worker
// gets sleepy, are the sleep protocol's own constants, exported from
// package sleep.)
const (
	// injectBatch is the most tasks a worker moves from the injector into
	// its own deque at once. Larger batches amortize the injector's lock;
	// smaller ones spread a slow producer's tasks more evenly.
	injectBatch = 64

	// linger is how long an idle worker sleeps before it retires. It
	// bounds how long workers outlive the process's last task (with the
	// watchdog's watchQuiet ticks), and a service whose requests come less
	// than a linger apart keeps warm workers.
	linger = 5 * time.Millisecond

	// maxShards caps the injector's shards (see shardsFor): a worker that
	// finds its deque empty looks at every shard.
	maxShards = 64

	// submitPolls (probe.go: defaultSubmitPolls) is how many rounds of
	// 32 loads of the group's count an outside Go on a full limited group
	// makes without yielding (when GOMAXPROCS > 1); submitSpins is how
	// many times it then yields the processor, rechecking for a free
	// slot, before it blocks.
	defaultSubmitPolls = 16
	submitSpins        = 16

	// tailSpins is how many times a submitter retries an injector
	// shard's tail lock before it yields between tries.
	tailSpins = 8

	// freeTasks caps each worker's free list of task records.
	freeTasks = 256

	// watchTick is the watchdog's sampling period while its pool is
	// saturated; watchQuiet is how many ticks without saturation it waits
	// before it exits (see watchdog.go).
	watchTick  = 100 * time.Microsecond
	watchQuiet = 20

	// watchDoze is the watchdog's longest period while quiet, and
	// watchLinger how long it stays quiet before it exits.
	watchDoze   = 5 * time.Millisecond
	watchLinger = 50 * time.Millisecond

	// starveTicks is how many watchdog ticks tasks may wait in the
	// injector with no worker taking any before the watchdog adds a
	// worker for them (see watchdog.go); injectEvery is how often (in
	// searches for a task) a worker looks at the injector before its own
	// deque, so that a worker whose deque never empties still serves
	// tasks from outside.
	starveTicks = 10
	injectEvery = 61

	// fairPerProc×GOMAXPROCS, or fairFloor if that is more, is the most
	// workers the watchdog adds above capacity for tasks starving behind
	// tasks that do not end: enough for a chain of that many tasks each
	// waiting for the next (as errgroup code may have) while the CPUs are
	// busy. It adds one a tick after starveTicks ticks of starving, so
	// the floor takes a second of starving to reach.
	fairPerProc = 4
	fairFloor   = 1024

	// statsEvery is how many tasks a worker that stays busy runs between
	// publications of its counts (see stats.go): the most a busy worker's
	// counts lag behind, against one atomic store per count that moved
	// per publication. A power of two.
	statsEvery = 256
)
