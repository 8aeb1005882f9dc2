package handoff

import (
	"slices"
	"testing"
	"time"

	"github.com/go-steal/steal/internal/rtcount"
)

// fakePool is a Pool of slots whose occupants the test moves by hand
// (Slot.Enter), and which records what the hand-off asks of it.
type fakePool struct {
	slots    []*Slot
	refuse   map[int]bool // HandOn refuses these slots
	handedOn []int        // the slots HandOn detached, in order
	started  int          // StartUpTo's workers
	extra    []int        // StartExtra's arguments
	queued   int
}

func (p *fakePool) Attached() []*Slot { return p.slots }
func (p *fakePool) HandOn(i int, seq uint32) bool {
	if p.refuse[i] || p.slots[i].Seq() != seq {
		return false
	}
	p.handedOn = append(p.handedOn, i)
	return true
}
func (p *fakePool) StartUpTo(n int)             { p.started += n }
func (p *fakePool) StartExtra(n int)            { p.extra = append(p.extra, n) }
func (p *fakePool) Room() int                   { return 0 }
func (p *fakePool) Queued() int                 { return p.queued }
func (p *fakePool) Idle() (inactive, awake int) { return 0, 0 }
func (p *fakePool) Procs() int                  { return len(p.slots) }

// newFake returns a hand-off on a fake pool of n slots, each in its first
// task, and the runtime's counts it reads.
func newFake(n int) (*Handoff, *fakePool, *fakeCounts) {
	p := &fakePool{refuse: map[int]bool{}}
	for i := range n {
		s := NewSlot(i)
		s.Enter(1)
		p.slots = append(p.slots, s)
	}
	f := &fakeCounts{}
	h := &Handoff{}
	h.Init(p)
	h.signals.src = f
	return h, p, f
}

// TestFallbackHandsOnProvenWorkers: the fallback's check marks the
// workers it finds in a task, and at a later check hands on those that
// stood still for stillGap once the counts prove them off the CPU, oldest
// first, never one that moved on; with one worker not proven off the
// CPU, it does not ramp the pool up (TestFallbackNeedsProof sees a ramp).
func TestFallbackHandsOnProvenWorkers(t *testing.T) {
	h, p, f := newFake(3)
	p.queued = 10
	now := int64(time.Hour)
	gap := int64(stillGap) + 1<<10   // a stamp's unit more: marks round their times down
	f.c = rtcount.Counts{Running: 1} // only the checker runs

	if n, fresh := h.handOnOffCPU(p.slots, nil, now); n != 0 || fresh != 3 {
		t.Fatalf("first check: handed on %d, fresh %d; want 0 and 3", n, fresh)
	}
	// Slot 0 was seen a while after the others: it has stood still less.
	p.slots[0].Enter(2)
	h.handOnOffCPU(p.slots[:1], nil, now+gap/2)
	if n, fresh := h.handOnOffCPU(p.slots, nil, now+gap); n != 2 || fresh != 0 {
		t.Fatalf("check after stillGap: handed on %d, fresh %d; want 2 and 0", n, fresh)
	}
	if want := []int{1, 2}; !slices.Equal(p.handedOn, want) || p.started != 2 {
		t.Fatalf("handed on %v and started %d, want %v and 2", p.handedOn, p.started, want)
	}
	if len(p.extra) != 0 || h.Ramps() != 0 {
		t.Fatalf("ramped up (StartExtra%v) with slot 0 not proven off the CPU", p.extra)
	}
	if got := h.HandedOff(KindOffCPU); got != 2 {
		t.Fatalf("HandedOff(KindOffCPU) = %d, want 2", got)
	}

	// Slot 0 moves on before the next check: it is not stuck, and the
	// others, handed on already, are refused.
	p.slots[0].Enter(3)
	p.refuse[1], p.refuse[2] = true, true
	if n, fresh := h.handOnOffCPU(p.slots, nil, now+2*gap); n != 0 || fresh != 1 {
		t.Fatalf("after slot 0 moved: handed on %d, fresh %d; want 0 and 1", n, fresh)
	}
}

// TestFallbackNeedsProof: workers that stood still but that the counts
// cannot prove off the CPU (each may be a goroutine that runs or waits
// for a CPU) stay; the caller's own slot is never checked.
func TestFallbackNeedsProof(t *testing.T) {
	h, p, f := newFake(3)
	p.queued = 10
	now := int64(time.Hour)
	f.c = rtcount.Counts{Running: 3, Runnable: 1}
	h.handOnOffCPU(p.slots, nil, now)
	if n, _ := h.handOnOffCPU(p.slots, nil, now+int64(time.Millisecond)); n != 0 {
		t.Fatalf("handed on %d workers the counts do not prove off the CPU", n)
	}
	f.c = rtcount.Counts{Running: 1}
	if n, _ := h.handOnOffCPU(p.slots, p.slots[0], now+2*int64(time.Millisecond)); n != 2 || slices.Contains(p.handedOn, 0) {
		t.Fatalf("handed on %d (%v), want the 2 other than the caller's", n, p.handedOn)
	}
	if want := []int{10}; !slices.Equal(p.extra, want) || h.Ramps() != 1 {
		t.Fatalf("every other worker proven off the CPU: StartExtra%v, %d ramps; want %v, 1", p.extra, h.Ramps(), want)
	}
}

// TestHandOnOldestFirst: of the stuck slots, handOn detaches the k that
// stood still longest, skips one the pool refuses (it moved on, or was
// handed on before), and starts a worker for each it handed on.
func TestHandOnOldestFirst(t *testing.T) {
	h, p, _ := newFake(4)
	stuck := []stuckSlot{
		{p.slots[0], 3, stampOf(40 << 10)},
		{p.slots[1], 3, stampOf(10 << 10)},
		{p.slots[2], 3, stampOf(30 << 10)},
		{p.slots[3], 3, stampOf(20 << 10)},
	}
	p.refuse[3] = true
	if n := h.handOn(stuck, 2, KindBound); n != 1 {
		t.Fatalf("handed on %d, want 1: the oldest two are 1 and 3, and 3 is refused", n)
	}
	if !slices.Equal(p.handedOn, []int{1}) || p.started != 1 || stuck[0].s != p.slots[1] {
		t.Fatalf("handed on %v, started %d, first %d", p.handedOn, p.started, stuck[0].s.Index())
	}
}
