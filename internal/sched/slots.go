package sched

import (
	"github.com/go-steal/steal/internal/sched/handoff"
	"github.com/go-steal/steal/internal/sleep"
)

// The slots: which are free, which occupied, attached or detached, and the
// counts that follow from that (Pool.live, Pool.detached, the scan set
// Pool.active and the free list Pool.freeSlots). Every transition is a
// function of this file, made under Pool.mu; the state machine is drawn
// in doc.go ("A slot's states"). The other files ask the questions below
// (full, roomLocked, surplus, capacity) rather than spell them out, and
// in a build with the stealdebug tag every transition checks the
// invariant (checkSlotsLocked, slots_debug.go):
//
//	live     = the occupied slots
//	detached = the occupied slots with a reason in detachedBy
//	active   = the occupied slots without one, each once, with their
//	           records for the hand-off in the same order
//	freeSlots = the slots not occupied, each once

// capacity is how many workers the pool may have now: GOMAXPROCS, plus one
// for each detached worker (blocked in one of our waits, or stuck in a
// task). A detached worker runs no other task, the way a thread in a
// system call does not count against GOMAXPROCS; not replacing it could
// deadlock the pool (every worker waiting on a nested group whose tasks
// sit in a queue) or starve it (every worker blocked in a task while
// tasks wait).
func (p *Pool) capacity() int32 {
	return p.size.Load() + p.detached.Load()
}

// surplus reports whether the pool has more workers than its capacity:
// one of them should retire (see worker.run).
func (p *Pool) surplus() bool { return p.live.Load() > p.capacity() }

// full reports whether the pool has as many workers as its capacity: a
// post that finds no idle worker cannot start one (spawn would refuse,
// unless GOMAXPROCS went up since it was sampled).
func (p *Pool) full() bool { return p.live.Load() >= p.capacity() }

// roomLocked reports whether a worker may start within the capacity,
// GOMAXPROCS sampled afresh (refreshSize), under mu.
func (p *Pool) roomLocked() bool {
	return p.live.Load() < p.refreshSize()+p.detached.Load()
}

// freeSlotLocked takes the slot freed last (its deque's ring and sleeper
// are the warmest), or makes a new one, up to sleep.MaxWorkers slots, and
// returns it, or nil at that bound; under mu. The caller occupies it.
func (p *Pool) freeSlotLocked() *worker {
	if n := len(p.freeSlots); n > 0 {
		w := p.freeSlots[n-1]
		p.freeSlots = p.freeSlots[:n-1]
		return w
	}
	slots := *p.slots.Load()
	if len(slots) >= sleep.MaxWorkers {
		return nil
	}
	w := p.newWorker(len(slots))
	p.sleep.Grow(len(slots) + 1)
	// In place when the array has room: thieves read only the first
	// len(slots) elements of the slice they loaded.
	grown := append(slots, w)
	p.slots.Store(&grown)
	return w
}

// occupyLocked marks free slot w occupied, attached (in the scan set) or,
// for the hand-off's ramp, detached by the hand-off from the start; under
// mu.
func (p *Pool) occupyLocked(w *worker, detached bool) {
	if w.occupied {
		// A bug in this package, not a misuse: two goroutines would own
		// one deque, and both push and pop at its bottom.
		panic("sched: a worker started in an occupied slot")
	}
	w.occupied = true
	p.live.Add(1)
	if detached {
		w.detachedBy.Store(detachHandOff)
		p.countDetached()
	} else {
		p.setActive(w, true)
	}
	checkSlotsLocked(p)
}

// vacateLocked frees w's slot, under mu: its occupant leaves (release). A
// detached slot leaves as attached, so that its next occupant starts
// clean.
func (p *Pool) vacateLocked(w *worker) {
	w.occupied = false
	p.live.Add(-1)
	p.freeSlots = append(p.freeSlots, w)
	if w.detachedBy.Load() != 0 {
		w.detachedBy.Store(0)
		p.detached.Add(-1)
	} else {
		p.setActive(w, false)
	}
	checkSlotsLocked(p)
}

// retakeLocked occupies, attached, the slot w that its occupant has just
// vacated and must keep after all (release); under mu. The slot is free,
// so it is listed, most likely last.
func (p *Pool) retakeLocked(w *worker) {
	for i := len(p.freeSlots) - 1; i >= 0; i-- {
		if p.freeSlots[i] == w {
			p.freeSlots = append(p.freeSlots[:i], p.freeSlots[i+1:]...)
			break
		}
	}
	p.occupyLocked(w, false)
}

// The reasons a worker is detached: bits of worker.detachedBy.
const (
	detachWait    = 1 << 0
	detachHandOff = 1 << 1
)

// detach marks w detached for why, if w occupies its slot and was not
// detached for why already, and reports whether it did. seq, when
// nonzero, must still be w's task sequence number (the hand-off detaches a
// worker only if its task has not moved since it found it stuck). If w was
// attached, it leaves the scan set and its deque is drained.
func (p *Pool) detach(w *worker, why uint32, seq uint32) bool {
	p.mu.Lock()
	old := w.detachedBy.Load()
	if !w.occupied || old&why != 0 || seq != 0 && w.rec.Seq() != seq {
		p.mu.Unlock()
		return false
	}
	w.detachedBy.Store(old | why)
	if old == 0 {
		p.countDetached()
		p.setActive(w, false)
	}
	checkSlotsLocked(p)
	p.mu.Unlock()
	if old == 0 {
		p.drain(w)
	}
	return true
}

// countDetached counts one more detached worker, under mu.
func (p *Pool) countDetached() { p.detached.Add(1) }

// reattach clears why from w's detachedBy; when no reason is left, w
// counts against GOMAXPROCS again and rejoins the scan set. Called by w's
// occupant.
func (w *worker) reattach(why uint32) {
	p := w.pool
	p.mu.Lock()
	old := w.detachedBy.Load()
	if old&why != 0 {
		w.detachedBy.Store(old &^ why)
		if old == why {
			p.detached.Add(-1)
			p.setActive(w, true)
			w.rec.Rejoined()
		}
	}
	checkSlotsLocked(p)
	p.mu.Unlock()
}

// setActive adds w to the scan set (in) or removes it, under mu: the list
// is copied, so that scanners keep iterating over the snapshot they
// loaded. Copying costs one slice per change, of at most GOMAXPROCS plus
// a few entries.
func (p *Pool) setActive(w *worker, in bool) {
	old := p.active.Load().list
	next := &scanSet{list: make([]*worker, 0, len(old)+1)}
	for _, v := range old {
		if v != w {
			next.list = append(next.list, v)
		}
	}
	if in {
		next.list = append(next.list, w)
	}
	next.recs = make([]*handoff.Slot, len(next.list))
	for i, v := range next.list {
		next.recs[i] = &v.rec
	}
	p.active.Store(next)
}

// scanSet is the scan set (Pool.active): its workers, and their slots'
// records for the hand-off (poolView.Attached), in the same order.
type scanSet struct {
	list []*worker
	recs []*handoff.Slot
}

// scanned returns the scan set (see Pool.active).
func (p *Pool) scanned() []*worker { return p.active.Load().list }
