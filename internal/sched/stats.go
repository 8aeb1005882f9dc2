package sched

import (
	"github.com/go-steal/steal/internal/explore/atomic"
	"github.com/go-steal/steal/internal/gid"
)

// Statistics: monotone counts of what a pool did, read by ReadStats.
// wsgroup.Stats documents each count for users; this file says where each
// is kept and when a reader sees it.
//
// Counting must cost the task path nothing measurable, so a worker counts
// into plain fields of its slot that only the slot's occupant touches
// (worker.st), and copies them into the slot's atomics (worker.pub) only
// at a few points: at the end of each busy spell, before it blocks in a
// Wait (block), every statsEvery tasks (countTask), and when its goroutine
// leaves the slot (retire, replace). A slot's counts are cumulative over
// all the goroutines that occupied it: the slot is handed from one
// occupant to the next under pool.mu (release, spawn) or by the go
// statement of replace, so each occupant continues the counts of the
// last. Readers sum the published atomics of every slot, including the
// unoccupied ones, which keep the counts of their last occupant.
//
// Tasks run by goroutines that are not workers (an outside Wait that helps,
// see wait.go) are counted by the running goroutine in a local
// outsideCounts and added, once per helpOutside, to one of a few striped
// atomics (outsideStripe), chosen by goroutine id so that concurrent
// waiters rarely share one.
//
// The tasks workers take from the injector are not counted here: each
// shard's taken count (queue.taken), which the injector keeps for its own
// use, is exactly that, and always up to date. Sleeps and wake-ups are
// counted by package sleep (Sleep.Tally). Starts, retirements and
// compensations are rare (a goroutine start or exit each) and counted in
// pool-wide atomics (poolCounts).
//
// What a reader may see: every atomic here only grows (a slot's atomics
// are stored by its occupant only, each time with a value at least the
// last; the others are only added to), so each load returns at least what
// any earlier load returned, and a sum of such loads made after another
// sum is at least as large: ReadStats is monotone. A count lags the events
// by what its writer has not published yet: for a busy worker, fewer than
// statsEvery tasks and the pops and steals that found them; for an idle
// worker, the failed searches of its idle spell (published at the end of
// its next busy spell, or when it retires); for a goroutine helping
// outside the pool, the tasks of the helpOutside running now.

// slotCounts are the events one worker slot counts itself.
type slotCounts struct {
	tasks        uint64 // tasks that ended on this slot's goroutines (worker.call)
	steals       uint64 // tasks taken from another worker's deque, and range steals
	failedSteals uint64 // searches of other workers' deques that took nothing, and failed range steals
	localPops    uint64 // tasks popped from this slot's own deque
}

// published is the copy of a slot's counts that readers load.
//
// Writer: the slot's occupant only (publish), with Store, each time of a
// value at least the one it stored before (the counts only grow). Readers:
// ReadStats, with Load. A reader sees the counts as of the occupant's last
// publish: fewer than statsEvery tasks (and the pops and steals that found
// them) behind while the occupant is busy; exact, but for failedSteals
// (its searches since), while it idles; exact once it has left the slot
// and no one has taken it since.
//
// Padded so that the occupant's stores, and the readers' loads, do not
// touch the lines of the deque and of the fields the occupant works with
// on every task.
type published struct {
	_            [64]byte
	tasks        atomic.Uint64
	steals       atomic.Uint64
	failedSteals atomic.Uint64
	localPops    atomic.Uint64
	_            [64 - 32]byte
}

// countTask counts a task that ended on w (normally, by a panic its group
// recovered, or by runtime.Goexit) and publishes every statsEvery tasks, so
// that the counts of a worker that stays busy for long (in one task's
// Wait, helping) still move.
func (w *worker) countTask() {
	w.st.tasks++
	if w.st.tasks%statsEvery == 0 {
		w.publish()
	}
}

// publish copies w's counts into the slot's atomics, storing only the ones
// that changed since the last publish (shown is what pub holds): on amd64
// a store is an XCHG, as costly as an atomic add. Owner only.
func (w *worker) publish() {
	if w.st == w.shown {
		return
	}
	if w.st.tasks != w.shown.tasks {
		w.pub.tasks.Store(w.st.tasks)
	}
	if w.st.steals != w.shown.steals {
		w.pub.steals.Store(w.st.steals)
	}
	if w.st.failedSteals != w.shown.failedSteals {
		w.pub.failedSteals.Store(w.st.failedSteals)
	}
	if w.st.localPops != w.shown.localPops {
		w.pub.localPops.Store(w.st.localPops)
	}
	w.shown = w.st
}

// outsideCounts are what one helpOutside counts on its own goroutine
// before it adds them to a stripe (publishOutside).
type outsideCounts struct {
	tasks  uint64 // tasks of the group run here (callOutside)
	steals uint64 // tasks taken from a worker's deque (stealFor)
}

// outsideStripe is one of the pool-wide counts of events on goroutines that
// are not workers.
//
// Writers: any such goroutine whose id hashes to the stripe, with Add:
// once at the end of each helpOutside (publishOutside), and once per call
// of countRangeSteal. Readers: ReadStats, with Load. A reader sees every
// helpOutside that has ended (returned, or been unwound by a Goexit) and
// none of one that is running, and every range steal counted so far.
//
// Padded to a cache line of its own: the adders of different stripes run
// on different CPUs at once.
type outsideStripe struct {
	tasks        atomic.Uint64
	steals       atomic.Uint64
	failedSteals atomic.Uint64
	_            [64 - 24]byte
}

// outsideStripes is the number of stripes, a power of two.
const outsideStripes = 16

// stripeFor returns the calling goroutine's stripe, id being its
// goroutine id.
func (p *Pool) stripeFor(id int64) *outsideStripe {
	return &p.outside[uint64(id)*0x9E3779B97F4A7C15>>(64-4)]
}

// publishOutside adds what a goroutine outside the pool counted (see
// helpOutside) to its stripe. It is deferred, so that the counts of a
// helpOutside that a task's runtime.Goexit unwinds are added too.
func (p *Pool) publishOutside(id int64, c *outsideCounts) {
	if c.tasks == 0 && c.steals == 0 {
		return
	}
	s := p.stripeFor(id)
	if c.tasks != 0 {
		s.tasks.Add(c.tasks)
	}
	if c.steals != 0 {
		s.steals.Add(c.steals)
	}
}

// countRangeSteal counts a range steal (ok) or a failed one by the calling goroutine
// (a worker or not); loop code calls it.
func countRangeSteal(ok bool) {
	if w := current(); w != nil {
		if ok {
			w.st.steals++
		} else {
			w.st.failedSteals++
		}
		return
	}
	s := global.stripeFor(gid.Current())
	if ok {
		s.steals.Add(1)
	} else {
		s.failedSteals.Add(1)
	}
}

// poolCounts are a pool's counts of rare events (a goroutine started or
// ended each), atomics that only grow, read by ReadStats with Load.
type poolCounts struct {
	// started: workers started in a slot, on a new goroutine or on a
	// spare (handoff.Spares). Added to by startLocked, under mu, before the
	// worker occupies its slot (so a reader never sees more workers live
	// than started), and by replace, on the goroutine that ends, before
	// it starts its successor.
	started atomic.Uint64
	// retired: workers that left their slot. Added to by retire after
	// release gave the slot up (the goroutine then waits as a spare, or
	// exits), and by replace (a task's runtime.Goexit ended the
	// goroutine), on the goroutine that ends: a reader may see a worker
	// gone from Pool.live a moment before it is counted here.
	retired atomic.Uint64
	// compensations: spawns made while the pool already had size
	// (GOMAXPROCS) or more workers, which only blocked workers (capacity)
	// or the hand-off's ramp (spawnExtra) allow. Added to by startLocked, under
	// mu, with started.
	compensations atomic.Uint64
}

// countSpawn counts a worker that startLocked is about to start, under mu,
// before occupy.
func (p *Pool) countSpawn() {
	p.counts.started.Add(1)
	if p.live.Load() >= p.size.Load() {
		p.counts.compensations.Add(1)
	}
}

// Stats are a pool's counts since it was made. wsgroup.Stats has the same
// fields, in the same order (it converts with Stats(s)), and documents them.
type Stats struct {
	Tasks, Steals, FailedSteals, InjectorPops, LocalPops uint64
	Sleeps, Wakes                                        uint64
	WorkersStarted, WorkersRetired, Compensations        uint64
	Workers                                              int64
}

// ReadStats returns the process's pool's counts.
func ReadStats() Stats { return global.readStats() }

// readStats sums p's counts.
//
// Workers (live) is loaded first: a worker publishes its counts before it
// gives up its slot, so a reader that sees no worker live sees every count
// of the workers that left. Retirements are loaded before starts, so that
// WorkersStarted ≥ WorkersRetired in every snapshot. The slots are all of
// them, not only the occupied ones (Pool.scanned): a slot keeps its last
// occupant's counts.
func (p *Pool) readStats() Stats {
	var s Stats
	s.Workers = int64(p.live.Load())
	s.WorkersRetired = p.counts.retired.Load()
	s.WorkersStarted = p.counts.started.Load()
	s.Compensations = p.counts.compensations.Load()
	for _, w := range *p.slots.Load() {
		s.Tasks += w.pub.tasks.Load()
		s.Steals += w.pub.steals.Load()
		s.FailedSteals += w.pub.failedSteals.Load()
		s.LocalPops += w.pub.localPops.Load()
	}
	for i := range p.outside {
		o := &p.outside[i]
		s.Tasks += o.tasks.Load()
		s.Steals += o.steals.Load()
		s.FailedSteals += o.failedSteals.Load()
	}
	s.InjectorPops = p.inj.takenTotal()
	t := p.sleep.Tally()
	s.Sleeps, s.Wakes = t.Sleeps, t.Wakes
	return s
}

// countReplace counts the goroutine that replace ends and the one it
// starts.
func (p *Pool) countReplace() {
	p.counts.retired.Add(1)
	p.counts.started.Add(1)
}
