//go:build linux && (amd64 || arm64 || 386 || arm)

package gstatus

import (
	"fmt"
	"sync/atomic"
	"unsafe"
)

// supported: this build has a reader, which the check may turn on.
const supported = true

// The runtime's goroutine states (the _G constants of runtime2.go) that
// this package tells apart. They have kept their values since Go 1.0 (the
// newer ones were added after them); the check observes gRunning (running
// goroutines), gWaiting (parked probes), gSyscall (the probe in read(2))
// and gDead (probes after they exit) where it finds the status word, and
// fails on a release that numbers them otherwise. gRunnable is the state
// between gIdle and gRunning in the same list and cannot be produced on
// demand. gCopystack, gPreempted and gLeaked are states in which the
// runtime holds a goroutine (moving its stack, stopping it for the
// collector, or reporting it leaked); Read reports them as Waiting, which
// never counts as blocked.
const (
	gIdle      = 0
	gRunnable  = 1
	gRunning   = 2
	gSyscall   = 3
	gWaiting   = 4
	gDead      = 6
	gCopystack = 8
	gPreempted = 9
	gLeaked    = 10
	// gScan is a bit the collector sets on top of a state while it scans
	// the goroutine's stack; the state underneath is the goroutine's.
	gScan = 0x1000
)

// searchWords bounds the search: every offset the check tries, and so
// every field it can find, lies in the first searchWords machine words of
// a g. That is 456 bytes on 64-bit ports, the whole g of Go 1.26 and 1.27
// there, and 228 on 32-bit ones, where the g is 288 bytes: every read
// stays inside the g, which the race detector's pointer checks insist on.
// The fields the reader needs lie well inside (Go 1.26 and 1.27: status
// 144, id 152, wait reason 176, labels 352 on 64-bit ports; 72, 80, 100,
// 216 on 32-bit ones); a release that moved one beyond it would leave the
// reader off, never make it read outside the g.
const searchWords = 57

// searchBound is searchWords in bytes.
const searchBound = searchWords * unsafe.Sizeof(uintptr(0))

// A layout says where three fields of runtime.g are: the status word
// (a uint32), the goroutine id (a uint64) and the wait reason (one byte).
type layout struct{ status, goid, reason uintptr }

// valid rejects a layout that this package could not even read safely:
// misaligned words (atomic loads need aligned addresses; on arm64 a
// misaligned one faults, and on 386 a 64-bit one panics), fields beyond
// searchBound (outside the g), or fields that overlap.
func (l layout) valid() error {
	switch {
	case l.status%4 != 0 || l.goid%8 != 0:
		return fmt.Errorf("layout %+v: status must be 4-aligned and goid 8-aligned", l)
	case l.status+4 > searchBound || l.goid+8 > searchBound || l.reason >= searchBound:
		return fmt.Errorf("layout %+v: a field lies beyond %d bytes", l, searchBound)
	case overlap(l.status, 4, l.goid, 8) || overlap(l.status, 4, l.reason, 1) || overlap(l.goid, 8, l.reason, 1):
		return fmt.Errorf("layout %+v: fields overlap", l)
	}
	return nil
}

func overlap(a, an, b, bn uintptr) bool { return a < b+bn && b < a+an }

// load32 atomically loads the 32-bit word at offset off of g, which must
// be 4-aligned.
func load32(g unsafe.Pointer, off uintptr) uint32 {
	return atomic.LoadUint32((*uint32)(unsafe.Add(g, off)))
}

// load64 atomically loads the 64-bit word at offset off of g, which must
// be 8-aligned (a g is: it is a heap object larger than 8 bytes).
func load64(g unsafe.Pointer, off uintptr) uint64 {
	return atomic.LoadUint64((*uint64)(unsafe.Add(g, off)))
}

// loadByte loads the byte at offset off of g, as part of the aligned
// 32-bit word that holds it (every port with a reader is little-endian),
// so that every load is an atomic load of a whole aligned word.
func loadByte(g unsafe.Pointer, off uintptr) uint8 {
	return uint8(load32(g, off&^3) >> (8 * (off & 3)))
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
func (l layout) load(h Handle) (status uint32, reason uint8, ok bool) {
	g := h.g
	if load64(g, l.goid) != h.id {
		return 0, 0, false
	}
	status = load32(g, l.status)
	reason = loadByte(g, l.reason)
	if load64(g, l.goid) != h.id {
		return 0, 0, false
	}
	return status &^ gScan, reason, true
}

// reasons is what the check learned: which wait-reason values the runtime
// uses for user-level blocking, and the words runtime.Stack prints for
// each (the words of the probe kind that parked with it).
type reasons struct {
	blocking [256]bool
	words    map[uint8]string
}

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

// Handle identifies one goroutine for reads by other goroutines. A
// goroutine gets its own Handle from Self; the Handle may then be copied
// and handed to any goroutine. (On a port without a reader, off.go, it
// holds nothing.)
//
// The zero Handle stands for no goroutine: its Read returns Unknown.
type Handle struct {
	// g is the goroutine's g record. The runtime never frees a g (it keeps
	// every g it ever made, and reuses the g of an exited goroutine for a
	// new one) and the collector does not move objects, so the pointer
	// stays valid for the life of the process, whatever the goroutine does.
	g unsafe.Pointer
	// id is the goroutine's id, which tells this goroutine from a later
	// one that reuses the same g: ids are never reused.
	id uint64
}

// findings is what a check that passed found: the layout, the offset of
// the labels word (0: not found; a g's first word is its stack bound, so
// 0 is never the labels), and the wait reasons.
type findings struct {
	layout  layout
	labels  uintptr
	reasons reasons
}

// found is what the check that turned the reader on found. decide writes
// it (keep) before it stores true in on, and nothing writes it afterwards.
var found findings

// keep records what the check that turned the reader on found.
func keep(f findings) { found = f }

// self returns the calling goroutine's Handle: its g, and its id, read
// through the proven layout once the reader is on, or parsed from
// runtime.Stack before (the Handle of a goroutine that takes it early is
// read once the check passes).
func self() Handle {
	g := getg()
	if on.Load() {
		// The goroutine's own id cannot change while it runs.
		return Handle{g: g, id: load64(g, found.layout.goid)}
	}
	id, err := stackID()
	if err != nil {
		// A header that does not parse: the check would fail on it too,
		// and a Handle whose id matches no goroutine reads Unknown.
		return Handle{}
	}
	return Handle{g: g, id: id}
}

// read is Read once the reader is known to be on.
func read(h Handle) Status {
	if h.g == nil {
		return Unknown
	}
	status, reason, ok := found.layout.load(h)
	if !ok {
		return Unknown
	}
	return found.reasons.classify(status, reason)
}

// getg returns the calling goroutine's g (getg_amd64.s, getg_arm64.s,
// getg_386.s, getg_arm.s). It is an unsafe.Pointer, not a uintptr, so that the race
// detector's pointer checks see a pointer into the g object, not an
// integer.
func getg() unsafe.Pointer
