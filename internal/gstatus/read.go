//go:build go1.26 && !go1.27 && linux && (amd64 || arm64)

package gstatus

import (
	"fmt"
	"sync/atomic"
	"unsafe"
)

// A layout says where three fields of runtime.g are: the status word
// (a uint32), the goroutine id (a uint64) and the wait reason (one byte).
// goLayout is the one this package reads with; the start-up check takes a
// layout as a parameter so that tests can show it rejects wrong ones.
type layout struct{ status, goid, reason uintptr }

// valid rejects a layout that this package could not even read safely:
// misaligned words (atomic loads need aligned addresses; on arm64 a
// misaligned one faults), fields beyond gBound (outside the g), or fields
// that overlap.
func (l layout) valid() error {
	switch {
	case l.status%4 != 0 || l.goid%8 != 0:
		return fmt.Errorf("layout %+v: status must be 4-aligned and goid 8-aligned", l)
	case l.status+4 > gBound || l.goid+8 > gBound || l.reason >= gBound:
		return fmt.Errorf("layout %+v: a field lies beyond %d bytes", l, gBound)
	case overlap(l.status, 4, l.goid, 8) || overlap(l.status, 4, l.reason, 1) || overlap(l.goid, 8, l.reason, 1):
		return fmt.Errorf("layout %+v: fields overlap", l)
	}
	return nil
}

func overlap(a, an, b, bn uintptr) bool { return a < b+bn && b < a+an }

// goidOf loads the goroutine id of the g at g.
func (l layout) goidOf(g unsafe.Pointer) uint64 {
	return atomic.LoadUint64((*uint64)(unsafe.Add(g, l.goid)))
}

// self returns the calling goroutine's Handle as l sees it.
func (l layout) self() Handle {
	g := getg()
	// The goroutine's own id cannot change while it runs.
	return Handle{g: g, id: l.goidOf(g)}
}

// load reads the status (without the scan bit) and the wait reason of h's
// goroutine. ok is false if the g no longer belongs to that goroutine.
//
// The order of the loads is what makes the result trustworthy. When the
// runtime starts a goroutine on a reused g, it writes the new id while the
// g is dead and only then changes the status (newproc1); when a goroutine
// parks, it writes the wait reason before the status (gopark, then
// park_m). All loads here are atomic, so each happens after the one before
// it, and a load that sees a status also sees what the runtime wrote
// before that status.
//
//  1. id, first: if it is h's, the g already belonged to h's goroutine, so
//     the status loaded next is not left over from an earlier goroutine
//     that used the same g.
//  2. status, then the reason: a goroutine that is seen parked is seen with
//     the reason it parked for (or, if it has since woken and parked
//     again, a later reason), never an older one.
//  3. id, again: if the g was handed to a new goroutine after step 1, the
//     new id was written before the new goroutine's status, so a status
//     from the new goroutine in step 2 means this load sees the new id.
//     Equal ids at steps 1 and 3 therefore mean the status is h's own.
//
// The reason is one byte; it is loaded as the aligned 4-byte word holding
// it (amd64 and arm64 are little-endian) so that every load is an atomic
// load of a whole aligned word.
func (l layout) load(h Handle) (status uint32, reason uint8, ok bool) {
	g := h.g
	if atomic.LoadUint64((*uint64)(unsafe.Add(g, l.goid))) != h.id {
		return 0, 0, false
	}
	status = atomic.LoadUint32((*uint32)(unsafe.Add(g, l.status)))
	word := atomic.LoadUint32((*uint32)(unsafe.Add(g, l.reason&^3)))
	if atomic.LoadUint64((*uint64)(unsafe.Add(g, l.goid))) != h.id {
		return 0, 0, false
	}
	return status &^ gScan, uint8(word >> (8 * (l.reason & 3))), true
}

// reasons is what the start-up check learned: which wait-reason values
// the runtime uses for user-level blocking, and the words runtime.Stack
// prints for each.
type reasons struct {
	blocking [256]bool
	words    map[uint8]string
}

// learned is the set Read classifies with. init writes it before it turns
// the reader on (on.Store(true)), and nothing writes it afterwards.
var learned reasons

// classify turns a status and wait reason into a Status.
func (rs *reasons) classify(status uint32, reason uint8) Status {
	switch status {
	case gRunning:
		return Running
	case gRunnable:
		return Runnable
	case gSyscall:
		return Syscall
	case gWaiting:
		if rs.blocking[reason] {
			return Blocked
		}
		return Waiting
	case gCopystack, gPreempted, gLeaked:
		return Waiting
	}
	// gIdle, gDead, or a state this package does not know.
	return Unknown
}

// self returns the calling goroutine's Handle (the reader is on).
func self() Handle {
	return layout{statusOffset, goidOffset, reasonOffset}.self()
}

// read is Read once the reader is known to be on and h not zero. The
// layout is spelled out with constants so that the compiler can fold the
// offsets into the loads.
func read(h Handle) Status {
	status, reason, ok := layout{statusOffset, goidOffset, reasonOffset}.load(h)
	if !ok {
		return Unknown
	}
	return learned.classify(status, reason)
}

// prove runs the start-up check on goLayout and keeps what it learned.
func prove() error {
	rs, err := check(goLayout)
	if err != nil {
		return err
	}
	learned = rs
	return nil
}
