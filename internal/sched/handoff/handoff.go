package handoff

import (
	stdatomic "sync/atomic"

	"github.com/go-steal/steal/internal/explore/atomic"
)

// Pool is what the hand-off asks of the scheduler. Every method may be
// called from any goroutine, at any time.
type Pool interface {
	// Attached returns the records of the attached workers' slots (the
	// scan set): a snapshot that the caller may iterate over while the
	// pool changes.
	Attached() []*Slot
	// HandOn detaches the worker in slot index if it is attached and
	// still where seq says (Slot.Seq), moves the tasks of its deque to
	// where the other workers find them, and reports whether it did.
	// The worker stops counting against GOMAXPROCS: another may start.
	HandOn(index int, seq uint32) bool
	// StartUpTo starts up to n workers within the pool's capacity, on
	// spares first.
	StartUpTo(n int)
	// StartExtra starts up to n workers above the capacity, each detached
	// from the start: it runs queued tasks one at a time and leaves when
	// it finds none. It stops early once the idle workers are as many as
	// the queued tasks.
	StartExtra(n int)
	// Room is how many more workers may start within the capacity now
	// (≤ 0: none).
	Room() int
	// Queued estimates the tasks queued, in the injector and the deques.
	Queued() int
	// Idle returns how many workers look for work, and how many of those
	// are awake (not asleep).
	Idle() (inactive, awake int)
	// Procs samples GOMAXPROCS, and lets the pool follow a change.
	Procs() int
}

// Kinds of hand-off, for Handoff.HandedOff: the worker was known blocked
// by its goroutine's status (KindBlocked), proven off the CPU by the
// runtime's counts (KindOffCPU), or handed on after a bound, without a
// proof (KindBound).
const (
	KindBlocked = iota
	KindOffCPU
	KindBound
	kinds
)

// Handoff is the hand-off's state for one pool: the monitor's flags, the
// posters' check clock, the runtime's counts. Its zero value is not ready:
// Init gives it its pool.
type Handoff struct {
	pool Pool

	// watching: a monitor runs. Set by the poster that starts it, with a
	// CompareAndSwap from false, and cleared by the monitor when it exits
	// (monitor.exit); see Handoff.watch.
	watching atomic.Bool
	// napping: the monitor waits for its timer, and a kick would wake it.
	napping atomic.Bool
	// flowing: the monitor's last tick found the pool saturated and every
	// worker moving, with statuses read; posts do not kick it meanwhile
	// (monitor.busy). Written by the monitor alone.
	flowing atomic.Bool
	kick    chan struct{}

	// checkedAt is the nanotime of the last check of the workers
	// (Handoff.check): one per blockedGap at most, for the whole pool.
	checkedAt stdatomic.Int64
	// signals reads the runtime's counts for the fallback's checks
	// (counts.go) and the monitor's pace.
	signals signals

	// For tests: hand-offs by kind, and ramps. Not in the statistics.
	handedOff [kinds]stdatomic.Uint64
	ramps     stdatomic.Uint64
}

// Init makes h the hand-off of pool p.
func (h *Handoff) Init(p Pool) {
	h.pool = p
	h.kick = make(chan struct{}, 1)
}

// Saturated is called by a poster that found the pool saturated: no
// worker idle and no room to start one (or a worker about to run a task it
// found with the pool full). n is the poster's own count of posts, one
// that only grows (a count that goes down again may cycle below the next
// multiple for good): one in checkEvery checks the workers (check), every
// one makes sure the monitor runs (watch). self is the calling worker's
// slot when it is between tasks or about to run one it has just found, or
// nil.
func (h *Handoff) Saturated(n uint32, self *Slot) {
	if n%checkEvery == 0 {
		h.check(self)
	}
	h.watch()
}

// Quiet reports whether Saturated(n, self) would do nothing: n is not a
// checking post, and the monitor runs and needs no kick (see watch). Small
// enough to be inlined, so that the posts of a saturated pool, one per
// task in fork-join on a busy pool, call nothing while it holds.
func (h *Handoff) Quiet(n uint32) bool { return n%checkEvery != 0 && h.watched() }

// check checks every attached worker but self, at most once per
// blockedGap for the whole pool, and hands on the slots of those that
// count as blocked: by their statuses (handOnBlocked), or, where statuses
// are not read, by the runtime's counts (handOnOffCPU). O(GOMAXPROCS):
// only the scan set is read.
func (h *Handoff) check(self *Slot) {
	if !statusOn() && !countsOn() {
		return
	}
	now := nanotime()
	last := h.checkedAt.Load()
	if now-last < int64(blockedGap) || !h.checkedAt.CompareAndSwap(last, now) {
		return
	}
	if statusOn() {
		h.handOnBlocked(h.pool.Attached(), self)
	} else {
		h.handOnOffCPU(h.pool.Attached(), self, now)
	}
}

// stuckSlot is a slot found in one task: its seq, and since when (its
// still mark).
type stuckSlot struct {
	s     *Slot
	seq   uint32
	since stamp
}

// handOn hands on the k slots of stuck that have stood still longest:
// detaches them (not one that moved on meanwhile: Pool.HandOn checks its
// seq), counts them as handed on for kind, and starts a goroutine in each
// one's place. It returns how many it handed on, and reorders stuck:
// those it handed on come first.
func (h *Handoff) handOn(stuck []stuckSlot, k, kind int) (n int) {
	// A few workers: insertion sort, oldest first.
	for i := 1; i < len(stuck); i++ {
		for j := i; j > 0 && stuck[j].since.before(stuck[j-1].since); j-- {
			stuck[j], stuck[j-1] = stuck[j-1], stuck[j]
		}
	}
	for i, s := range stuck[:min(k, len(stuck))] {
		if h.pool.HandOn(s.s.index, s.seq) {
			stuck[n], stuck[i] = s, stuck[n]
			n++
		}
	}
	if n > 0 {
		h.handedOff[kind].Add(uint64(n))
		h.pool.StartUpTo(n)
	}
	return n
}

// ramp starts a worker for each queued task that no idle worker will
// take, above the capacity: called when every attached worker is found
// blocked (or proven off the CPU) at once. With no worker left on a CPU,
// the queued tasks are likely to block as well, and errgroup would have
// run each on a goroutine of its own at once; handing them on one check
// at a time would take a check per task, each replacement blocking in its
// turn.
func (h *Handoff) ramp() {
	h.ramps.Add(1)
	inactive, _ := h.pool.Idle()
	h.pool.StartExtra(h.pool.Queued() - inactive)
}

// HandedOff returns how many workers were handed on by kind (KindBlocked,
// KindOffCPU, KindBound). For tests.
func (h *Handoff) HandedOff(kind int) uint64 { return h.handedOff[kind].Load() }

// CheckEvery is checkEvery: of a poster's saturated posts, one in
// CheckEvery checks the workers. For tests.
const CheckEvery = checkEvery

// Ramps returns how many hand-offs ramped the pool up (ramp). For tests.
func (h *Handoff) Ramps() uint64 { return h.ramps.Load() }
