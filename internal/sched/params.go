package sched

import "time"

// The run-time parameters that decide how the scheduler trades latency for
// CPU. The rule, in every package of the scheduler: a constant that tunes
// a policy (a time, a count, a size that trades one cost against another)
// is in its package's params.go; a constant that is part of a layout or an
// encoding (the bits of a state word, a table's size tied to its hash)
// stays beside the type it shapes, and so does a tuning constant of a file
// that one build leaves out (poolMutexSpins, poolmutex.go). So tuning for
// a different machine touches three files: this one, the hand-off's
// (package handoff) and the idle protocol's (package sleep). BENCHMARKS.md
// discusses which would change at 16–64 cores.
const (
	// injectBatch is the most tasks a worker moves from the injector into
	// its own deque at once. Larger batches amortize the injector's lock;
	// smaller ones spread a slow producer's tasks more evenly.
	injectBatch = 64

	// linger is how long an idle worker sleeps before it retires. It
	// bounds how long workers outlive the process's last task (with the
	// hand-off's monitor and spares lingers), and a service whose requests come less
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
	// parks, and submitSpinsQuick how many times when the group's last
	// such park lasted less than quickPark (Group.acquireOutside).
	defaultSubmitPolls = 16
	submitSpins        = 4
	submitSpinsQuick   = 64
	quickPark          = 50 * time.Microsecond

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

	// injectEvery is how often (in searches for a task) a worker looks at
	// the injector before its own deque, so that a worker whose deque
	// never empties still serves tasks from outside.
	injectEvery = 61

	// stealEvery is how often, in searches for a task, a worker tries
	// the other workers' deques before the injector: on every
	// stealEvery-th search, if its own deque is empty then, so that a task
	// on the deque of a worker stuck in a task is not starved by a stream
	// of tasks from outside. A prime other
	// than injectEvery, so that the two turns seldom fall on the same
	// search; each costs a scan of the other deques, paid by one task in
	// stealEvery while the injector is busy.
	stealEvery = 127

	// injectHigh is the shard length above which a worker takes a batch
	// from the injector even when no other worker is idle to steal it
	// (see worker.takeInjected).
	injectHigh = 2 * injectBatch

	// statsEvery is how many tasks a worker that stays busy runs between
	// publications of its counts (see stats.go): the most a busy worker's
	// counts lag behind, against one atomic store per count that moved
	// per publication. A power of two.
	statsEvery = 256

	// spawnCheck is how many workers spawnExtra starts between two looks at
	// the queued tasks, each of which scans the deques.
	spawnCheck = 16

	// joinHops is the most links the chain walk follows. A cycle of records
	// (two tasks each waiting for the other's group, a deadlock under errgroup
	// too) must not loop it for ever; a longer chain is not followed, which
	// only leaves some task to its thief.
	joinHops = 64

	// chunkTarget is about how long a participant's run of indices takes once
	// it has sized it: it measures each run and doubles the next one while
	// runs take less than half of this, halves it while they take more than
	// twice. Each run costs two atomic operations on the partition and a
	// clock reading, so runs of a few microseconds make that negligible even
	// for bodies of a few nanoseconds; and a run is what a thief cannot take
	// from its owner, so it bounds the imbalance at the end of a loop.
	chunkTarget = 10 * time.Microsecond

	// maxChunk caps a run of indices, whatever the clock says.
	maxChunk = 1 << 16
)
