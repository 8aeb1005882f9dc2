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
	// (and an outside Wait whose tasks run on workers) makes, when
	// GOMAXPROCS > 1, before it parks; submitSpins is how many times the
	// Go then yields the processor, rechecking for a free slot, before it
	// parks.
	defaultSubmitPolls = 16
	submitSpins        = 4

	// joinPatience is how long a Wait on a worker that finds nothing of
	// its group's to help with (join.go) waits in its place before it
	// lets the pool start another worker in it (worker.waitPatiently):
	// long enough for the other workers' CPU-bound subtrees to end or
	// queue tasks to help with, which is where fork-join's Waits stop,
	// short enough that a Wait for tasks that block leaves the pool a
	// worker short only briefly.
	joinPatience = time.Millisecond

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

	// recheckEvery: while the monitor yields for its next tick where
	// statuses are not read, it checks the workers this often (see
	// monitor.wait).
	recheckEvery = 10 * time.Microsecond

	// watchDoze is the watchdog's longest period while quiet, and
	// watchLinger how long it stays quiet before it exits.
	watchDoze   = 5 * time.Millisecond
	watchLinger = 50 * time.Millisecond

	// injectEvery is how often (in searches for a task) a worker looks at
	// the injector before its own deque, so that a worker whose deque
	// never empties still serves tasks from outside.
	injectEvery = 61

	// injectHigh is the shard length above which a worker takes a batch
	// from the injector even when no other worker is idle to steal it
	// (see worker.takeInjected).
	injectHigh = 2 * injectBatch

	// unprovenWait: where statuses are not read, how long every attached
	// worker must have stood still before those the runtime's counts show
	// off a processor, but cannot show blocked, are handed on
	// (monitor.handOffOffProc). Longer than the Go scheduler's time slice
	// (10 ms), so that a worker that merely waits its turn for a CPU is
	// seldom replaced.
	unprovenWait = 20 * time.Millisecond

	// spareLinger is how long a goroutine that left its slot waits to be
	// given another before it exits (spare.go): long enough that a
	// service's waves of blocking tasks reuse the same goroutines, short
	// enough that none is left long after the process's last task.
	spareLinger = 64 * time.Millisecond

	// statsEvery is how many tasks a worker that stays busy runs between
	// publications of its counts (see stats.go): the most a busy worker's
	// counts lag behind, against one atomic store per count that moved
	// per publication. A power of two.
	statsEvery = 256
)
