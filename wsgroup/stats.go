package wsgroup

import "github.com/go-steal/steal/internal/sched"

// Stats are counts of what the scheduler, which runs the tasks of every
// Group in the process, has done since the process started. ReadStats
// returns them; ReadStats documents when a count is up to date.
//
// Every field but Workers is a count of events that only grows. The zero
// Stats is meaningful: no event at all, which is what a process that has
// run no task reads, and a baseline for Sub. Stats is a plain struct of
// exported numbers, so it encodes as JSON as it is (expvar.Func,
// encoding/json).
type Stats struct {
	// Tasks is the number of tasks (functions passed to Go or TryGo, and
	// the tasks a loop runs as, one per range: see For) that have
	// finished running: returned, panicked with the panic
	// recovered by their group (PanicInWait), or called runtime.Goexit.
	// It counts the tasks run by workers and those run by a Wait on the
	// goroutine that called it (see [Group.Wait]). A task dropped
	// without running (SkipQueued) is not counted.
	Tasks uint64

	// Steals is the number of tasks taken from the deque of another
	// worker: by a worker looking for work, by a worker that waits in a
	// Wait (only its group's tasks), and by a Wait outside the workers
	// (likewise). It also counts each range of indices that a task of a
	// loop (For, ForEach, Map) took from another task of the same loop.
	Steals uint64

	// FailedSteals is the number of searches of other workers' deques
	// that took nothing. A worker looking for work tries every other
	// worker's deque once, starting at a random one, and counts one
	// failed search when none had a task for it; a worker that waits in
	// a Wait counts one when no other deque's oldest task is of its
	// group. There is no search, and no count, when there is no other
	// deque to look at; a Wait outside the workers does not count its
	// failed look. An idle worker searches a few dozen times before it sleeps
	// and again each time it wakes, so this grows with idleness, not
	// with work. A loop's task that finds no range left to take from
	// the others (once per task, when the loop's indices are all taken)
	// counts one too.
	FailedSteals uint64

	// InjectorPops is the number of tasks that workers took from the
	// injector, the queue of tasks given by Go calls outside tasks. A
	// worker takes several at once: it runs the first and puts the rest
	// on its own deque, where they are counted again when popped
	// (LocalPops) or stolen (Steals). The tasks that a Wait outside the
	// workers takes back from the injector, to run them itself, are not
	// counted here (they are in Tasks).
	InjectorPops uint64

	// LocalPops is the number of tasks that workers took from their own
	// deques: the tasks given by Go calls in the tasks they ran, and the
	// rest of the batches they took from the injector.
	LocalPops uint64

	// Sleeps is the number of times a worker, after searching for work in
	// vain for a while, went to sleep. A sleep is counted when it starts.
	Sleeps uint64

	// Wakes is the number of sleeps that another goroutine ended because
	// there was work for the worker: a task was queued, or a worker that
	// found work, or that was leaving, passed it on. A sleep that ends
	// because the worker slept its whole linger (a few milliseconds,
	// after which it exits) is not a wake, so Sleeps − Wakes is the
	// sleeps going on plus those that timed out.
	Wakes uint64

	// WorkersStarted is the number of workers started: when a task is
	// queued and no worker is idle to take it (up to GOMAXPROCS), in
	// place of workers that are blocked (Compensations), and in place of
	// a worker whose goroutine a task ended with runtime.Goexit. A start
	// reuses a goroutine that a worker left a moment ago when there is
	// one, and starts a goroutine otherwise.
	WorkersStarted uint64

	// WorkersRetired is the number of workers that stopped: after a
	// linger without work, at once when more workers run than the
	// scheduler needs (those started for blocked workers, once these are
	// back), or because a task called runtime.Goexit. A worker is counted
	// here just after it leaves Workers, so once every worker has
	// stopped, WorkersRetired equals WorkersStarted. Its goroutine waits
	// a little longer to be reused before it exits.
	WorkersRetired uint64

	// Compensations is the number of workers started beyond GOMAXPROCS:
	// the starts, counted in WorkersStarted too, made while GOMAXPROCS or
	// more workers already ran. The scheduler goes beyond GOMAXPROCS only
	// when workers do not run: for each worker blocked in a Wait whose
	// group's tasks run elsewhere, and for each worker whose task has
	// made no progress for a sample of the scheduler's monitor while
	// tasks wait (see Blocking tasks in the package documentation).
	Compensations uint64

	// Workers is the number of worker goroutines now. It is a gauge, not
	// a count: it goes down as workers exit, to 0 a few milliseconds
	// after the process's last task.
	Workers int64
}

// ReadStats returns the scheduler's counts since the process started. They
// are process-wide: the tasks of every Group in the process are counted
// together.
//
// Each count is monotone: a call returns, for every field but Workers, at
// least what an earlier call returned.
//
// Workers count tasks, steals, failed steals and local pops without
// synchronizing with each other or with readers: each keeps these counts
// to itself and publishes them when it runs out of tasks (at the end of
// each busy spell), before it blocks in a Wait, every 256 tasks while it
// stays busy, and when it exits. A Wait that runs tasks on its own
// goroutine publishes their counts before it returns. So while tasks run,
// these counts lag: by fewer than 256 tasks per busy worker (and the pops
// and steals that found them), and by the tasks that Waits are running.
// The other counts are made where the event happens. Once the process is
// quiet (every Wait has returned, no task is queued or running, and the
// workers are idle), every count is exact but FailedSteals, which gets an
// idle worker's searches with its next busy spell or when it exits: once
// the workers have exited (Workers is 0, a few milliseconds later), it is
// exact too. The fields are read one after another, not at one instant,
// so a reading taken while tasks run need not agree across fields.
//
// ReadStats costs a few atomic loads per worker the process has had at
// once; it does not stop or slow the workers. Call it as a metrics scrape
// would, not per task.
func ReadStats() Stats { return Stats(sched.ReadStats()) }

// Sub returns the counts of s minus those of old: the events between two
// readings, old the earlier. Workers is s's: a gauge is not subtracted.
func (s Stats) Sub(old Stats) Stats {
	return Stats{
		Tasks:          s.Tasks - old.Tasks,
		Steals:         s.Steals - old.Steals,
		FailedSteals:   s.FailedSteals - old.FailedSteals,
		InjectorPops:   s.InjectorPops - old.InjectorPops,
		LocalPops:      s.LocalPops - old.LocalPops,
		Sleeps:         s.Sleeps - old.Sleeps,
		Wakes:          s.Wakes - old.Wakes,
		WorkersStarted: s.WorkersStarted - old.WorkersStarted,
		WorkersRetired: s.WorkersRetired - old.WorkersRetired,
		Compensations:  s.Compensations - old.Compensations,
		Workers:        s.Workers,
	}
}
