package handoff

import (
	stdatomic "sync/atomic"
	"time"

	"github.com/go-steal/steal/internal/explore/atomic"
	"github.com/go-steal/steal/internal/gstatus"
)

// Slot is what the hand-off knows of one worker slot. The scheduler keeps
// one in each of its slots (NewSlot) and tells it, on the task path, where
// the slot's occupant is (Enter, Leave); the detectors and the monitor read
// it from other goroutines.
//
// Roles: the occupant (the goroutine in the slot) writes seq, handle and
// patient; any looker (the monitor, a poster that checks the workers)
// loads them and writes the marks; the monitor alone owns mon.
type Slot struct {
	index int // the scheduler's number for the slot (Pool.HandOn)

	// seq is twice the number of tasks started in the slot, plus one while
	// a task runs on the occupant's goroutine. The occupant stores it when
	// a task starts and when it ends (Enter, Leave), so it changes with
	// every task; an even value means the occupant is in the scheduler's
	// own code, between tasks, where it never counts as blocked (it may
	// wait on a lock of the scheduler's for a moment there). A looker
	// loads it before and after what it reads of the goroutine: if it
	// moved, what it read may belong to another task.
	seq atomic.Uint32

	// handle is the occupant's goroutine status handle, stored when it
	// takes the slot (SetHandle); nil while statuses are not read.
	handle stdatomic.Pointer[gstatus.Handle]

	// patient: the occupant waits in its place on purpose, for a bounded
	// time (a Wait's patience in the scheduler); it reads blocked, and is
	// not.
	patient atomic.Bool

	// still is the slot's one "stood still" mark: since when any looker
	// has seen the occupant in its current task (seq). Every detector and
	// the monitor's bounds measure how long a worker has stood still with
	// it. blocked is a second mark of the same kind for the status reads:
	// since when every read has found the occupant blocked in this task;
	// a read that finds it otherwise clears it (status.go).
	still, blocked mark

	mon monMarks // the monitor's alone (monitor.go)
}

// NewSlot returns the record of the scheduler's slot number index.
func NewSlot(index int) *Slot { return &Slot{index: index} }

// Init makes s the record of the scheduler's slot number index, for a Slot
// kept inside another value.
func (s *Slot) Init(index int) { s.index = index }

// Index returns the scheduler's number for the slot.
func (s *Slot) Index() int { return s.index }

// Enter tells the lookers that a task started: started tasks in all, this
// one included. One plain store: no looker pairs with it in a Dekker order
// (the status reads check it on both sides of their read, and the
// goroutine's status changes after it with an atomic operation of the
// runtime), so a looker may see it late; see atomic.StoreOwned32.
func (s *Slot) Enter(started uint32) { atomic.StoreOwned32(&s.seq, started<<1|1) }

// Leave tells the lookers that the task Enter announced has ended: the
// occupant is back in the scheduler's code, unless inTask (a task below it
// on the goroutine, one whose Wait or Go ran this one, goes on). In the
// second case seq does not change: the task below is in a task too, and
// started is the number Enter was last given, so seq already reads
// started<<1|1, and Leave stores nothing.
func (s *Slot) Leave(started uint32, inTask bool) {
	if !inTask {
		atomic.StoreOwned32(&s.seq, started<<1)
	}
}

// Seq returns where the occupant is (see Slot.seq); a hand-off must find
// it unchanged (Pool.HandOn).
func (s *Slot) Seq() uint32 { return s.seq.Load() }

// SetHandle stores the occupant's status handle (SelfHandle), when it
// takes the slot.
func (s *Slot) SetHandle(h *gstatus.Handle) { s.handle.Store(h) }

// SetPatient tells the lookers that the occupant starts (true) or ends
// waiting in its place on purpose: it reads blocked meanwhile, and is not.
func (s *Slot) SetPatient(on bool) { s.patient.Store(on) }

// Patient reports whether the occupant waits in its place on purpose.
func (s *Slot) Patient() bool { return s.patient.Load() }

// Rejoined forgets how long the occupant has stood still: it was detached
// and counts again, and the time it spent detached says nothing of the
// slot's progress since (a Wait that returned, say).
func (s *Slot) Rejoined() { s.still.forget() }

// mark records since when something has held of a slot's occupant in one
// task: the task's seq in the high half, the time of the first look that
// found it, in units of 1,024 ns, in bits 1 to 31 of the low half, and bit
// 0 set, so that no mark is 0 (0 is no mark). The time wraps after about
// 36 minutes; the signed difference of two such times is exact within half
// of that, far beyond any bound here. Any looker may write it: two that
// mark the same task at once store times a moment apart, and either will
// do.
type mark struct{ v stdatomic.Uint64 }

// stamp is a time in a mark (see mark).
type stamp uint32

func stampOf(now int64) stamp { return stamp(uint32(now>>10) & (1<<31 - 1)) }

// age returns how long before now t was; negative when t is later (a mark
// another looker stored after our clock read).
func (t stamp) age(now int64) time.Duration {
	d := (uint32(stampOf(now)) - uint32(t)) << 1 // 31-bit difference in the high bits
	return time.Duration(int32(d)>>1) << 10
}

// before reports whether t is earlier than u (within half the wrap).
func (t stamp) before(u stamp) bool { return int32(uint32(t-u)<<1) < 0 }

// look returns since when the mark has held for the task seq: the stamp
// of its first look, and first true if that is this one (the mark was
// of another task, or none). now is the caller's clock, read after what
// it saw of the task: an earlier time would make the span look longer than
// it is.
func (m *mark) look(seq uint32, now int64) (since stamp, first bool) {
	if since, ok := m.of(seq); ok {
		return since, false
	}
	t := stampOf(now)
	m.v.Store(uint64(seq)<<32 | uint64(t)<<1 | 1)
	return t, true
}

// of returns since when the mark has held for the task seq, if it is that
// task's; unlike look it never writes: the caller's seq may be older than
// the slot's.
func (m *mark) of(seq uint32) (since stamp, ok bool) {
	v := m.v.Load()
	if v == 0 || uint32(v>>32) != seq {
		return 0, false
	}
	return stamp(uint32(v) >> 1), true
}

// forget clears the mark: the next look starts it again.
func (m *mark) forget() {
	if m.v.Load() != 0 {
		m.v.Store(0)
	}
}
