package ranges

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-steal/steal/internal/testkit"
)

// span is a range [lo, hi) as the tests write it.
type span struct{ lo, hi uint32 }

// size is the number of indices in s: 0 when lo >= hi.
func (s span) size() uint32 {
	if s.hi <= s.lo {
		return 0
	}
	return s.hi - s.lo
}

func (s span) String() string { return fmt.Sprintf("[%d, %d)", s.lo, s.hi) }

// spans returns the ranges in p's slots.
func spans(p *Partition) []span {
	out := make([]span, p.Parts())
	for i := range out {
		out[i].lo, out[i].hi = unpack(p.slots[i].word.Load())
	}
	return out
}

// withSpans returns a partition whose slots hold the given ranges, and
// whose left counts them: a state that New alone does not make.
func withSpans(ss ...span) *Partition {
	p := New(0, len(ss))
	n := int64(0)
	for i, s := range ss {
		p.slots[i].word.Store(pack(s.lo, s.hi))
		n += int64(s.size())
	}
	p.left.Store(n)
	return p
}

// specCut is how many indices a thief cuts from a range of n >= 1, as the
// package comment says: the upper half rounded down, and the last index.
func specCut(n uint32) uint32 {
	if n == 1 {
		return 1
	}
	return n / 2
}

// checkSplit checks that ss is the split of [0, n) that New promises:
// contiguous ranges in slot order covering [0, n), of lengths that differ
// by at most one.
func checkSplit(t *testing.T, n int, ss []span) {
	t.Helper()
	// In uint64: n+len(ss)-1 overflows an int when n is MaxLen and int is
	// 32 bits.
	un, parts := uint64(n), uint64(len(ss))
	short, long := uint32(un/parts), uint32((un+parts-1)/parts)
	next := uint32(0)
	for i, s := range ss {
		if s.lo != next || s.hi < s.lo {
			t.Fatalf("New(%d, %d): slot %d holds %v, want a range from %d; slots: %v", n, len(ss), i, s, next, ss)
		}
		if l := s.hi - s.lo; l < short || l > long {
			t.Fatalf("New(%d, %d): slot %d holds %v, of length %d, want %d or %d; slots: %v", n, len(ss), i, s, l, short, long, ss)
		}
		next = s.hi
	}
	if next != uint32(n) {
		t.Fatalf("New(%d, %d): the ranges end at %d; slots: %v", n, len(ss), next, ss)
	}
}

func TestNewSplit(t *testing.T) {
	var ns []int
	for n := range 40 {
		ns = append(ns, n)
	}
	ns = append(ns, 97, 1000, 1<<20+3)
	for _, n := range ns {
		for _, parts := range []int{1, 2, 3, 4, 5, 7, 8, 16, 33, 64} {
			p := New(n, parts)
			if p.Parts() != parts {
				t.Fatalf("New(%d, %d).Parts() = %d", n, parts, p.Parts())
			}
			if p.Left() != int64(n) {
				t.Fatalf("New(%d, %d).Left() = %d", n, parts, p.Left())
			}
			checkSplit(t, n, spans(p))
		}
	}
}

// TestNewMaxLen: the largest partition (on 64-bit ports, hi = 2³²-1 in the
// high half; where int is 32 bits, the largest int) is split, taken and
// stolen without overflow. TestWordTop covers the top of the word on
// every port.
func TestNewMaxLen(t *testing.T) {
	for _, parts := range []int{1, 2, 3, 7, 64} {
		p := New(MaxLen, parts)
		checkSplit(t, MaxLen, spans(p))
		if p.Left() != MaxLen {
			t.Fatalf("New(MaxLen, %d).Left() = %d", parts, p.Left())
		}
	}
	p := New(MaxLen, 1)
	if lo, hi := p.Take(0, MaxLen); lo != 0 || hi != MaxLen || p.Left() != 0 {
		t.Fatalf("Take(0, MaxLen) of New(MaxLen, 1) = [%d, %d), Left() = %d", lo, hi, p.Left())
	}
	if lo, hi := p.Take(0, MaxLen); lo != hi || lo != MaxLen {
		t.Fatalf("Take(0, MaxLen) of an emptied slot = [%d, %d), want [MaxLen, MaxLen)", lo, hi)
	}

	p = New(MaxLen, 2)
	top := spans(p)[1]
	if lo, hi := p.Take(0, MaxLen); lo != 0 || hi != top.lo {
		t.Fatalf("Take(0, MaxLen) of New(MaxLen, 2) = [%d, %d), want [0, %d)", lo, hi, top.lo)
	}
	if !p.Steal(0) {
		t.Fatal("Steal(0) = false with the upper half of MaxLen left")
	}
	mid := uint32(MaxLen) - specCut(top.size())
	if got, want := spans(p), []span{{mid, MaxLen}, {top.lo, mid}}; !slices.Equal(got, want) {
		t.Fatalf("after Steal(0): slots %v, want %v", got, want)
	}
	if want := int64(MaxLen) - int64(top.lo); p.Left() != want {
		t.Fatalf("after Steal(0): Left() = %d, want %d", p.Left(), want)
	}
}

// TestWordTop: a slot whose range ends at the top of the 32-bit half,
// 2³²-1, which only a 64-bit port's New makes, is taken from, stolen from
// and given back to without overflow, whatever the size of int.
func TestWordTop(t *testing.T) {
	const top uint32 = math.MaxUint32
	p := withSpans(span{top - 5, top}, span{top, top})
	if lo, hi := p.Take(0, 2); lo != top-5 || hi != top-3 {
		t.Fatalf("Take(0, 2) of [2³²-6, 2³²-1) = [%d, %d), want [%d, %d)", lo, hi, top-5, top-3)
	}
	p.Untake(0, top-4, top-3)
	if !p.Steal(1) {
		t.Fatal("Steal(1) = false with [2³²-5, 2³²-1) in slot 0")
	}
	if got, want := spans(p), []span{{top - 4, top - 2}, {top - 2, top}}; !slices.Equal(got, want) {
		t.Fatalf("after Steal(1): slots %v, want %v", got, want)
	}
	if lo, hi := p.Take(1, top); lo != top-2 || hi != top {
		t.Fatalf("Take(1, 2³²-1) = [%d, %d), want [%d, %d)", lo, hi, top-2, top)
	}
	if lo, hi := p.Take(1, top); lo != top || hi != top {
		t.Fatalf("Take(1) of an emptied slot at the top = [%d, %d), want [%d, %d)", lo, hi, top, top)
	}
	if p.Left() != 2 {
		t.Fatalf("Left() = %d, want 2 (slot 0's [2³²-4, 2³²-2))", p.Left())
	}
}

func TestNewPanics(t *testing.T) {
	type args struct{ n, parts int }
	cases := []args{{-1, 1}, {0, 0}, {5, -1}}
	// One index too many, where an int holds it: on 64-bit ports. Where
	// int is 32 bits, MaxLen is the largest int, which TestNewMaxLen
	// partitions.
	if over := uint64(MaxLen) + 1; over <= math.MaxInt {
		cases = append(cases, args{int(over), 1})
	}
	for _, c := range cases {
		if _, panicked := testkit.Recover(func() { New(c.n, c.parts) }); !panicked {
			t.Errorf("New(%d, %d) did not panic", c.n, c.parts)
		}
	}
}

func TestCut(t *testing.T) {
	for _, c := range []struct{ n, want uint32 }{
		{1, 1}, {2, 1}, {3, 1}, {4, 2}, {5, 2}, {100, 50}, {101, 50}, {MaxLen, MaxLen / 2},
		{math.MaxUint32, math.MaxUint32 / 2},
	} {
		if got := cut(c.n); got != c.want {
			t.Errorf("cut(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}

// TestTake takes runs of random sizes from one slot and compares each with
// the specification: the first min(k, remaining) indices of the range.
func TestTake(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		n := rng.IntN(50)
		p := New(n, 1)
		next := uint32(0)
		for {
			k := uint32(1 + rng.IntN(8))
			if rng.IntN(10) == 0 {
				k = MaxLen
			}
			lo, hi := p.Take(0, k)
			want := min(next+min(k, uint32(n)-next), uint32(n))
			if lo != next || hi != want {
				t.Fatalf("New(%d, 1): Take(0, %d) = [%d, %d), want [%d, %d)", n, k, lo, hi, next, want)
			}
			if left := p.Left(); left != int64(n)-int64(hi) {
				t.Fatalf("New(%d, 1): Left() = %d after taking [0, %d)", n, left, hi)
			}
			if lo == hi {
				break
			}
			next = hi
		}
		if next != uint32(n) {
			t.Fatalf("New(%d, 1): Take reported the slot empty at %d", n, next)
		}
	}
}

// TestTakeOwnSlotOnly: a Take takes from its own slot and no other.
func TestTakeOwnSlotOnly(t *testing.T) {
	p := New(2, 4) // slots 0 and 2 are empty
	before := spans(p)
	for _, own := range []int{0, 2} {
		if lo, hi := p.Take(own, 5); lo != hi {
			t.Fatalf("Take(%d) of an empty slot = [%d, %d)", own, lo, hi)
		}
	}
	if got := spans(p); !slices.Equal(got, before) || p.Left() != 2 {
		t.Fatalf("Takes of empty slots changed %v into %v, Left() = %d", before, got, p.Left())
	}
}

// TestStealLongest steals into an empty slot from random layouts and
// compares the result with the specification: the upper cut of one of the
// longest other ranges moves into the thief's slot, the rest is
// unchanged, and so is Left.
func TestStealLongest(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		parts := 2 + rng.IntN(5)
		ss := make([]span, parts)
		base := uint32(rng.IntN(1000))
		for i := range ss {
			l := uint32(rng.IntN(4) * rng.IntN(6)) // ties and empties are common
			ss[i] = span{base, base + l}
			base += l + uint32(rng.IntN(3))
		}
		own := rng.IntN(parts)
		ss[own].lo = ss[own].hi // empty, as Steal requires
		longest := uint32(0)
		for i, s := range ss {
			if i != own {
				longest = max(longest, s.size())
			}
		}
		if longest == 0 {
			continue // nothing to steal: TestStealNothingLeft
		}
		p := withSpans(ss...)
		left := p.Left()
		if !p.Steal(own) {
			t.Fatalf("Steal(%d) of %v = false", own, ss)
		}
		got := spans(p)
		victim := -1
		for i := range got {
			if i != own && got[i] != ss[i] {
				if victim >= 0 {
					t.Fatalf("Steal(%d) changed slots %d and %d: %v became %v", own, victim, i, ss, got)
				}
				victim = i
			}
		}
		if victim < 0 {
			t.Fatalf("Steal(%d) changed no other slot: %v became %v", own, ss, got)
		}
		v := ss[victim]
		if v.size() != longest {
			t.Fatalf("Steal(%d) of %v stole from slot %d, of length %d, not from one of length %d", own, ss, victim, v.size(), longest)
		}
		mid := v.hi - specCut(v.size())
		if got[victim] != (span{v.lo, mid}) || got[own] != (span{mid, v.hi}) {
			t.Fatalf("Steal(%d) of %v from slot %d left %v, want %v in the victim and %v in the thief's slot",
				own, ss, victim, got, span{v.lo, mid}, span{mid, v.hi})
		}
		if p.Left() != left {
			t.Fatalf("Steal(%d) of %v changed Left() from %d to %d", own, ss, left, p.Left())
		}
	}
}

// TestStealNothingLeft: with every other slot empty and no index left,
// Steal reports false and changes nothing.
func TestStealNothingLeft(t *testing.T) {
	for _, n := range []int{0, 1, 5} {
		p := New(n, 3)
		for i := range 3 {
			p.Take(i, MaxLen)
		}
		before := spans(p)
		for i := range 3 {
			if p.Steal(i) {
				t.Fatalf("New(%d, 3), all taken: Steal(%d) = true; slots %v", n, i, spans(p))
			}
		}
		if got := spans(p); !slices.Equal(got, before) || p.Left() != 0 {
			t.Fatalf("New(%d, 3): failed Steals changed %v into %v, Left() = %d", n, before, got, p.Left())
		}
	}
}

// TestStealWaitsForIndicesInTransit: a thief that finds every other slot
// empty while another thief holds indices it has cut off and not yet
// stored must wait for them, not report that nothing is left; once they
// are stored, it steals them.
func TestStealWaitsForIndicesInTransit(t *testing.T) {
	testkit.Guard(t, func() {
		p := New(4, 2) // [0, 2) and [2, 4)
		p.Take(0, 2)
		p.Take(1, 1)                      // slot 1 holds [3, 4)
		victim, lo, hi := p.cutLongest(0) // thief 0 cuts [3, 4) and holds it
		if victim != 1 || lo != 3 || hi != 4 {
			t.Fatalf("cutLongest(0) = %d, [%d, %d), want 1, [3, 4)", victim, lo, hi)
		}
		if l, h := p.Take(1, 1); l != h {
			t.Fatalf("Take(1) = [%d, %d) after the cut, want nothing", l, h)
		}
		done := make(chan bool)
		go func() { done <- p.Steal(1) }()
		select {
		case ok := <-done:
			t.Fatalf("Steal(1) returned %v while index 3 was in transit (Left() = %d)", ok, p.Left())
		case <-time.After(20 * time.Millisecond):
		}
		p.slots[0].word.Store(pack(lo, hi)) // thief 0 ends its Steal
		if !<-done {
			t.Fatal("Steal(1) = false after index 3 was stored")
		}
		if got, want := spans(p), []span{{3, 3}, {3, 4}}; !slices.Equal(got, want) {
			t.Fatalf("slots %v, want %v", got, want)
		}
	})
}

func TestUntake(t *testing.T) {
	// Alone: the indices go back to the front of the range.
	p := New(10, 1)
	p.Take(0, 4)
	p.Untake(0, 1, 4)
	if got := spans(p); got[0] != (span{1, 10}) || p.Left() != 9 {
		t.Fatalf("after Take(0, 4) and Untake(0, 1, 4): slot %v, Left() = %d; want [1, 10) and 9", got[0], p.Left())
	}
	if lo, hi := p.Take(0, 2); lo != 1 || hi != 3 {
		t.Fatalf("Take(0, 2) after the Untake = [%d, %d), want [1, 3)", lo, hi)
	}

	// After a thief has cut the rest of the range, to nothing.
	p = New(8, 2) // [0, 4) and [4, 8)
	p.Take(0, 3)  // slot 0 holds [3, 4)
	p.Take(1, 4)
	if !p.Steal(1) {
		t.Fatal("Steal(1) = false")
	}
	if got := spans(p); got[0] != (span{3, 3}) || got[1] != (span{3, 4}) {
		t.Fatalf("after Steal(1): slots %v, want [3, 3) and [3, 4)", got)
	}
	left := p.Left()
	p.Untake(0, 1, 3)
	if got := spans(p); got[0] != (span{1, 3}) || p.Left() != left+2 {
		t.Fatalf("after Untake(0, 1, 3): slot 0 holds %v, Left() = %d; want [1, 3) and %d", got[0], p.Left(), left+2)
	}
	// The indices given back can be stolen again.
	p.Take(1, 1)
	if !p.Steal(1) {
		t.Fatal("Steal(1) = false with [1, 3) in slot 0")
	}
	if got := spans(p); got[0] != (span{1, 2}) || got[1] != (span{2, 3}) {
		t.Fatalf("after the second Steal(1): slots %v, want [1, 2) and [2, 3)", got)
	}

	// Indices that do not end where the range begins.
	if _, panicked := testkit.Recover(func() { p.Untake(0, 0, 3) }); !panicked {
		t.Error("Untake(0, 0, 3) with slot 0 at [1, 2) did not panic")
	}
}

// TestConcurrent: participants take and steal on real goroutines until
// every index is taken, as the loop's participants do, at GOMAXPROCS 1, 2,
// 4 and 8. Every index must be taken exactly once, Left must end at zero,
// and a Steal that reports false must see Left at zero (unless an Untake
// has given indices back since). Some rounds give back the end of a take
// now and then, as a participant whose body calls Goexit does.
func TestConcurrent(t *testing.T) {
	budget := time.Duration(testkit.Scale(200, 50)) * time.Millisecond
	minRounds := testkit.Scale(20, 5)
	testkit.ForProcs(t, func(t *testing.T) {
		procs := runtime.GOMAXPROCS(0)
		testkit.Guard(t, func() {
			rng := rand.New(rand.NewPCG(uint64(procs), 5))
			start := time.Now()
			rounds, steals := 0, 0
			for ; rounds < minRounds || time.Since(start) < budget; rounds++ {
				cfg := stressConfig{
					n:      []int{0, 1, procs, 100, 1000, 20000}[rng.IntN(6)],
					parts:  []int{procs, procs + 1, 2 * procs}[rng.IntN(3)],
					maxK:   uint32(1 + rng.IntN(16)),
					untake: rng.IntN(3) == 0,
				}
				steals += cfg.run(t, rng.Uint64())
			}
			t.Logf("%d rounds, %d steals", rounds, steals)
		})
	})
}

// stressConfig is one round of TestConcurrent.
type stressConfig struct {
	n, parts int
	maxK     uint32 // takes are of 1 to maxK indices
	untake   bool   // give back the end of a take now and then
}

// run runs one round and returns the number of successful Steals.
func (c stressConfig) run(t *testing.T, seed uint64) int {
	t.Helper()
	p := New(c.n, c.parts)
	taken := make([]atomic.Int32, c.n)
	var steals atomic.Int64
	errs := make(chan string, c.parts)
	var wg sync.WaitGroup
	for own := range c.parts {
		rng := rand.New(rand.NewPCG(seed, uint64(own)))
		wg.Go(func() {
			for {
				lo, hi := p.Take(own, uint32(1+rng.IntN(int(c.maxK))))
				if lo == hi {
					if !p.Steal(own) {
						if left := p.Left(); !c.untake && left != 0 {
							errs <- fmt.Sprintf("participant %d: Steal = false with Left() = %d", own, left)
						}
						return
					}
					steals.Add(1)
					continue
				}
				if c.untake && hi-lo >= 2 && rng.IntN(8) == 0 {
					// Run a few, then give the rest back.
					j := lo + 1 + uint32(rng.IntN(int(hi-lo-1)))
					for i := lo; i < j; i++ {
						taken[i].Add(1)
					}
					p.Untake(own, j, hi)
					continue
				}
				for i := lo; i < hi; i++ {
					taken[i].Add(1)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("%+v: %s", c, e)
	}
	for i := range taken {
		if n := taken[i].Load(); n != 1 {
			t.Fatalf("%+v: index %d taken %d times", c, i, n)
		}
	}
	if left := p.Left(); left != 0 {
		t.Fatalf("%+v: Left() = %d after every participant is done", c, left)
	}
	for i, s := range spans(p) {
		if s.size() != 0 {
			t.Fatalf("%+v: slot %d still holds %v after every participant is done", c, i, s)
		}
	}
	return int(steals.Load())
}
