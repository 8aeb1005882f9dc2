package handoff

import (
	"time"

	"github.com/go-steal/steal/internal/gstatus"
)

// Known blocking: the first detector, where package gstatus has proven the
// layout of the runtime's goroutine records (probe.go). A worker counts as
// blocked when two reads of its goroutine's status, at least blockedGap
// apart (syscallGap for a system call), both found it blocked in the same
// task, with no read between that found it otherwise. Blocked is waiting
// on a channel, a select, a sleep, a lock of package sync, network I/O, or
// in a system call. A worker that runs, waits for a CPU, or waits for the
// garbage collector (an assist, a cycle's start) is never taken for
// blocked; nor one between tasks or in the scheduler's own code (an even
// seq), where it may wait on a lock of the scheduler's for a moment; nor
// one that waits in its place on purpose (Slot.patient).

// blockedFor reads s's occupant's status and reports whether it counts as
// blocked (see above), with the seq it read (the hand-off must find the
// worker still in that task: Pool.HandOn) and since when it has read
// blocked. Any goroutine may call it.
//
// st is what the read found; Unknown when the worker is between tasks
// (seq even), moved on during the read, or has no handle.
func (s *Slot) blockedFor() (found stuckSlot, st gstatus.Status, blocked bool) {
	h := s.handle.Load()
	if h == nil {
		return stuckSlot{}, gstatus.Unknown, false
	}
	// seq first: a status read while the worker is between tasks (even)
	// says nothing about a task. Then seq again, after the status: if it
	// moved, the status may belong to another task, or to our own code.
	seq := s.seq.Load()
	if seq&1 == 0 || s.patient.Load() {
		// Between tasks, or parked on purpose, for a bounded time.
		return stuckSlot{}, gstatus.Unknown, false
	}
	st = h.Read()
	if s.seq.Load() != seq {
		return stuckSlot{}, gstatus.Unknown, false
	}
	var gap time.Duration
	switch st {
	case gstatus.Blocked:
		gap = blockedGap
	case gstatus.Syscall:
		gap = syscallGap
	default:
		// Running, runnable, waiting for the collector, or gone: this
		// read contradicts an earlier sighting.
		s.blocked.forget()
		return stuckSlot{}, st, false
	}
	// The clock is read here, after the status, not taken from the
	// caller: another reader may have marked the slot meanwhile, and an
	// earlier time of ours would make the span look longer than it is.
	now := nanotime()
	since, first := s.blocked.look(seq, now)
	return stuckSlot{s, seq, since}, st, !first && since.age(now) >= gap
}

// handOnBlocked hands on the slots of active (all but self) that count as
// blocked, starts a worker in the place of each (a parked spare if there
// is one), and returns how many it handed on. When it handed one on and
// every other worker of active reads blocked too, if only for the first
// time (the worker started in the place of the last one handed on, say),
// it also ramps up. (Not when self is a worker in a task, one that posts:
// it runs.)
func (h *Handoff) handOnBlocked(active []*Slot, self *Slot) int {
	var buf [16]stuckSlot
	found := buf[:0]
	blocked, others := 0, len(active)
	for _, s := range active {
		if s == self {
			others--
			continue
		}
		f, st, ok := s.blockedFor()
		if st == gstatus.Blocked || st == gstatus.Syscall {
			blocked++ // counts for the ramp even if only seen once yet
		}
		if ok {
			found = append(found, f)
		}
	}
	if len(found) == 0 {
		return 0
	}
	n := h.handOn(found, len(found), KindBlocked)
	if n > 0 && blocked == others {
		h.ramp()
	}
	return n
}
