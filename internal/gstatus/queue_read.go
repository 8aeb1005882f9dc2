//go:build linux && (amd64 || arm64 || 386 || arm)

package gstatus

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"
)

// A pLayout says where the fields Contended reads are: runtime.g's m (a
// *m); runtime.m's curg (a *g) and p (a puintptr); runtime.p's status,
// m (an muintptr), runqhead, runqtail (uint32s), runq (an array of
// runqLen guintptrs) and runnext (a guintptr); and the timers struct
// inside runtime.p: the P's earliest timer in its heap and the earliest
// that a timer was moved to (atomic int64s of the runtime's nanotime, 0:
// none).
type pLayout struct {
	gM, mCurg, mP                            uintptr
	pStatus, pM, runqHead, runqTail          uintptr
	runq, runnext, minWhenHeap, minWhenModif uintptr
}

// runqLen is the length of a P's local run queue (runtime.p.runq).
const runqLen = 256

// pRunning is the runtime's _Prunning: a P that an M runs user code on.
const pRunning = 1

// The layouts of Go 1.26 and 1.27, which agree (from their debug
// information; TestQueueLayoutMatchesDWARF checks them), for 64-bit and
// 32-bit ports.
var (
	pLayout64 = pLayout{
		gM: 48, mCurg: 184, mP: 208,
		pStatus: 4, pM: 48, runqHead: 400, runqTail: 404, runq: 408, runnext: 2456,
		minWhenHeap: 13672 + 48, minWhenModif: 13672 + 56,
	}
	pLayout32 = pLayout{
		gM: 24, mCurg: 100, mP: 112,
		pStatus: 4, pM: 44, runqHead: 236, runqTail: 240, runq: 244, runnext: 1268,
		minWhenHeap: 8288 + 32, minWhenModif: 8288 + 40,
	}
)

// pLayoutReleases are the releases whose layout is known.
var pLayoutReleases = []string{"go1.26", "go1.27"}

// pLayoutFor returns the layout of the release that version (as
// runtime.Version prints it) names, for this port's word size.
func pLayoutFor(version string) (pLayout, bool) {
	for _, r := range pLayoutReleases {
		if version == r || strings.HasPrefix(version, r+".") || strings.HasPrefix(version, r+"rc") {
			if unsafe.Sizeof(uintptr(0)) == 8 {
				return pLayout64, true
			}
			return pLayout32, true
		}
	}
	return pLayout{}, false
}

// qfound is the layout the check proved. proveQueue writes it before
// decideQueue stores true in queueOn, and nothing writes it afterwards.
var qfound pLayout

// loadPtr atomically loads the pointer-sized word at offset off of x as a
// pointer. (A puintptr or muintptr is loaded as a pointer, not converted
// from an integer: the race detector's pointer checks reject a conversion
// of an integer into a pointer into the heap.)
func loadPtr(x unsafe.Pointer, off uintptr) unsafe.Pointer {
	return atomic.LoadPointer((*unsafe.Pointer)(unsafe.Add(x, off)))
}

// loadWord atomically loads the pointer-sized word at offset off of x.
func loadWord(x unsafe.Pointer, off uintptr) uintptr {
	return atomic.LoadUintptr((*uintptr)(unsafe.Add(x, off)))
}

// loadInt64 atomically loads the int64 at offset off of x (8-aligned: the
// runtime aligns its atomic int64s on every port).
func loadInt64(x unsafe.Pointer, off uintptr) int64 {
	return atomic.LoadInt64((*int64)(unsafe.Add(x, off)))
}

// curP returns the P that the calling goroutine's M holds (nil if it
// holds none: never while it runs Go code, but the goroutine may have
// moved to another M between the two loads, and that M may have just
// released its P).
func (l *pLayout) curP() unsafe.Pointer {
	return loadPtr(loadPtr(getg(), l.gM), l.mP)
}

// contended is Contended once the reader is on.
//
// Nothing here needs an order: each load is a snapshot of one field, and
// the answer is a hint, acted on at the next task end if it was stale. A
// P is never freed (the runtime keeps every P it made, also after
// GOMAXPROCS drops), so a P the caller has just left is still safe to
// read.
func contended(timers bool) Snapshot {
	l := &qfound
	p := l.curP()
	if p == nil {
		return Snapshot{P: -1}
	}
	s := Snapshot{P: int32(load32(p, 0))} // runtime.p.id, the first field
	if s.Next = loadWord(p, l.runnext); s.Next != 0 {
		s.Waiters |= RunNext
	}
	if s.Tail = load32(p, l.runqTail); load32(p, l.runqHead) != s.Tail {
		s.Waiters |= RunQueue
	}
	if timers {
		// The earliest timer, as the runtime's own timers.wakeTime
		// computes it.
		when := loadInt64(p, l.minWhenHeap)
		if m := loadInt64(p, l.minWhenModif); m != 0 && (when == 0 || m < when) {
			when = m
		}
		if when != 0 && when <= nanotime() {
			s.Waiters |= TimerDue
		}
	}
	return s
}

// queueTries bounds each step of the check. A try can be inconclusive for
// reasons that say nothing about the layout (another P takes the new
// goroutine before it is read, the checking goroutine moves to another P,
// the P has a timer due earlier than the one set), and is then not
// counted; a step must be seen to hold queueWant times, and to fail in
// none of its conclusive tries (only the chain's can fail conclusively).
// Too few tries that hold leave the reader undecided (errQueueBusy), to be
// checked again later: a wrong layout stays undecided, never on.
const (
	queueTries = 200
	queueWant  = 3
)

var errNoQueueLayout = errors.New("gstatus: no run-queue layout for " + runtime.Version())

// proveQueue finds this release's layout and checks it on the running
// process (see queue.go); on success it keeps it in qfound.
func proveQueue() error {
	l, ok := pLayoutFor(runtime.Version())
	if !ok {
		return errNoQueueLayout
	}
	if err := checkLayout(l); err != nil {
		return err
	}
	qfound = l
	return nil
}

// checkLayout checks l on the running process (see queueTries).
func checkLayout(l pLayout) error {
	for _, step := range []struct {
		name string
		try  func(*pLayout) (holds, conclusive bool)
	}{
		{"m and p lead back to the running goroutine", chainHolds},
		{"a new goroutine is in runnext, the one it displaced in the run queue", runqHolds},
		{"a timer just set is the P's earliest", timerHolds},
	} {
		seen := 0
		for range queueTries {
			holds, conclusive := step.try(&l)
			if !conclusive {
				continue
			}
			if !holds {
				return fmt.Errorf("gstatus: run-queue layout of %s: not so: %s", runtime.Version(), step.name)
			}
			if seen++; seen == queueWant {
				break
			}
		}
		if seen < queueWant {
			return fmt.Errorf("%w: %s held in %d conclusive tries of %d, want %d", errQueueBusy, step.name, seen, queueTries, queueWant)
		}
	}
	return nil
}

// chainHolds reports whether the calling goroutine's m runs it (m.curg)
// and holds a running P that names that m. Inconclusive when the m's P is
// not (yet) running: the goroutine may be moving between Ms.
func chainHolds(l *pLayout) (holds, conclusive bool) {
	g := getg()
	m := loadPtr(g, l.gM)
	if m == nil {
		return false, true
	}
	p := loadPtr(m, l.mP)
	if p == nil {
		return false, false
	}
	return loadPtr(m, l.mCurg) == g && loadPtr(p, l.pM) == m && load32(p, l.pStatus) == pRunning, true
}

// runqHolds starts two goroutines: a go statement puts its new goroutine
// in its P's runnext, and moves the one there to the tail of the run
// queue. It reports whether it saw exactly that: the second in runnext
// and the first as the last entry of a queue of 1 to runqLen entries.
// Anything else is inconclusive, not a failure: another P may have taken
// either goroutine between the go statements and the reads, or the
// checking goroutine moved; a layout that is wrong never shows both
// goroutines where they belong, so it never passes.
func runqHolds(l *pLayout) (holds, conclusive bool) {
	var ids [2]chan unsafe.Pointer
	release := make(chan struct{})
	for i := range ids {
		ids[i] = make(chan unsafe.Pointer, 1)
	}
	p := l.curP()
	go func() { ids[0] <- getg(); <-release }()
	go func() { ids[1] <- getg(); <-release }()
	next := loadWord(p, l.runnext)
	head, tail := load32(p, l.runqHead), load32(p, l.runqTail)
	last := loadWord(p, l.runq+uintptr((tail-1)%runqLen)*unsafe.Sizeof(uintptr(0)))
	same := l.curP() == p
	first, second := <-ids[0], <-ids[1]
	close(release)
	n := tail - head
	ok := same && p != nil && next == uintptr(second) && n >= 1 && n <= runqLen && last == uintptr(first)
	return ok, ok
}

// timerHolds sets a timer due a nanosecond later and reports whether the
// P's earliest timer is then the one it set: at the runtime's clock
// between the readings just before and just after it was set. Anything
// else is inconclusive: the P may have had an earlier timer, another P may
// have run the new one already (idle Ps run the due timers of others), or
// the checking goroutine moved; a wrong layout never passes.
func timerHolds(l *pLayout) (holds, conclusive bool) {
	p := l.curP()
	before := nanotime()
	t := time.AfterFunc(time.Nanosecond, func() {})
	after := nanotime()
	when := loadInt64(p, l.minWhenHeap)
	same := l.curP() == p
	t.Stop()
	ok := same && p != nil && when >= before+1 && when <= after+1
	return ok, ok
}
