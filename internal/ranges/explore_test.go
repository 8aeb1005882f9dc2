//go:build explore

package ranges

import (
	"fmt"
	"testing"

	"github.com/go-steal/steal/internal/explore"
)

// The partitioner under the interleaving explorer (package explore): two
// participants, each the owner of one slot (of two or three), take and
// steal as the loop's participants do until Steal reports that nothing is
// left, and every schedule with at most two preemptions is run, then
// random ones (PCT). Not three participants: two thieves that wait in
// Steal for the indices a third holds in transit yield to each other, and
// threads that yield in turn cost the explorer no preemption, so neither
// search would end. Properties:
//
//   - in every state: the slots' ranges are disjoint, and none holds an
//     index that an owner has taken and not given back; and Left() is at
//     least the number of indices in the slots (so a thief never sees it
//     at zero while there is something to steal), and at most the number
//     of indices no owner holds;
//   - every index is taken by exactly one owner's Take (once more for each
//     time it is given back by Untake), and none is lost;
//   - a Steal that reports false does so when every index has been taken:
//     checked at the step of its load of left, before any other thread
//     moves (indices in transit, or given back by an Untake that has not
//     returned, count as not taken);
//   - at the end, Left() is zero and every slot empty.
//
// Run with: go test -tags explore -run Explore ./internal/ranges

// rangesProgram is one configuration.
type rangesProgram struct {
	name  string
	n     int
	slots int      // New(n, slots); 0: one slot per participant
	ks    []uint32 // by participant: how many indices each Take asks for
	// untake: participant 0 runs only the first index of its first take
	// and gives the others back, as a participant whose body calls
	// Goexit does (the loop's next participant for the slot goes on).
	untake bool
}

// ghost is what the participants have taken, as they record it: plain
// variables, read and written only by the thread that holds the
// explorer's baton, so always consistent with the partition's state at
// the exploration points.
type ghost struct {
	s      *explore.Schedule
	p      *Partition
	holder []int // by index: 1 + the participant that holds it, or 0
	takes  []int // by index: Takes that returned it
	back   int   // indices of an Untake that has been called and not returned
}

// free is how many indices no participant holds.
func (g *ghost) free() int {
	n := 0
	for _, h := range g.holder {
		if h == 0 {
			n++
		}
	}
	return n
}

// took records that participant own's Take returned [lo, hi).
func (g *ghost) took(own int, lo, hi uint32) {
	for i := lo; i < hi; i++ {
		if h := g.holder[i]; h != 0 {
			g.s.Errorf("participant %d took index %d, which participant %d holds", own, i, h-1)
		}
		g.holder[i] = own + 1
		g.takes[i]++
	}
}

// invariant is the property of every state (see above).
func (g *ghost) invariant() error {
	ss := spans(g.p)
	inSlots := int64(0)
	for i, a := range ss {
		inSlots += int64(a.size())
		for j := a.lo; j < a.hi; j++ {
			if h := g.holder[j]; h != 0 {
				return fmt.Errorf("slot %d holds %v, and participant %d holds index %d; slots %v", i, a, h-1, j, ss)
			}
		}
		for j, b := range ss[:i] {
			if a.size() > 0 && b.size() > 0 && a.lo < b.hi && b.lo < a.hi {
				return fmt.Errorf("slots %d and %d overlap: %v", j, i, ss)
			}
		}
	}
	if left := g.p.Left(); left < inSlots || left > int64(g.free()) {
		return fmt.Errorf("Left() = %d, with %d indices in the slots %v and %d held by no participant", left, inSlots, ss, g.free())
	}
	return nil
}

// participate is participant own's thread: Take k at a time, Steal when
// the slot is empty, until Steal reports false.
func (g *ghost) participate(own int, k uint32, untake bool) {
	p := g.p
	for {
		lo, hi := p.Take(own, k)
		if lo < hi {
			g.took(own, lo, hi)
			if untake && hi-lo >= 2 {
				untake = false
				for i := lo + 1; i < hi; i++ {
					g.holder[i] = 0
				}
				g.back = int(hi - lo - 1)
				p.Untake(own, lo+1, hi)
				g.back = 0
			}
			continue
		}
		if !p.Steal(own) {
			// No exploration point since Steal's load of left.
			if free := g.free(); free != g.back {
				g.s.Errorf("participant %d: Steal = false with %d indices taken by nobody (%d of them being given back)", own, free, g.back)
			}
			return
		}
	}
}

func (c rangesProgram) run(s *explore.Schedule) {
	p := New(c.n, max(c.slots, len(c.ks)))
	g := &ghost{s: s, p: p, holder: make([]int, c.n), takes: make([]int, c.n)}
	s.Always(g.invariant)
	var threads []*explore.Thread
	for own, k := range c.ks {
		threads = append(threads, s.Go(fmt.Sprintf("p%d", own), func() {
			g.participate(own, k, c.untake && own == 0)
		}))
	}
	for _, th := range threads {
		th.Join()
	}
	for i, h := range g.holder {
		if h == 0 {
			s.Errorf("index %d lost: held by nobody at the end (taken %d times)", i, g.takes[i])
		}
	}
	if left := p.Left(); left != 0 {
		s.Errorf("Left() = %d at the end", left)
	}
	for i, sp := range spans(p) {
		if sp.size() != 0 {
			s.Errorf("slot %d holds %v at the end", i, sp)
		}
	}
}

func rangesPrograms() []rangesProgram {
	return []rangesProgram{
		// Fewer indices than participants: the only index, stolen whole
		// (cut(1) = 1) while its owner takes it.
		{name: "2p-n1", n: 1, ks: []uint32{1, 1}},
		// Two participants, one index at a time: steals of the last
		// index, and a thief that finds nothing while the other's cut
		// is in transit.
		{name: "2p-n3-k1", n: 3, ks: []uint32{1, 1}},
		// Takes of two against cuts of one.
		{name: "2p-n4-k2k1", n: 4, ks: []uint32{2, 1}},
		// Takes of two on both sides: a cut between a Take's load and its
		// compare-and-swap shortens the take.
		{name: "2p-n5-k2", n: 5, ks: []uint32{2, 2}},
		// Three slots, two participants: the owner of the third slot has
		// not started (a participant the pool has not run yet), and the
		// two race to cut its range, and each other's.
		{name: "3s2p-n4-k1", n: 4, slots: 3, ks: []uint32{1, 1}},
		{name: "3s2p-n5-k2k1", n: 5, slots: 3, ks: []uint32{2, 1}},
		// An Untake while the other participant steals: of one index,
		// and of two.
		{name: "2p-n4-untake", n: 4, ks: []uint32{2, 1}, untake: true},
		{name: "2p-n6-untake", n: 6, ks: []uint32{3, 1}, untake: true},
	}
}

// rangesMaxSteps bounds a schedule: the longest takes a few hundred steps,
// and a participant that spins in Steal forever (a livelock) fails fast.
const rangesMaxSteps = 20000

func TestExploreRanges(t *testing.T) {
	for _, c := range rangesPrograms() {
		t.Run(c.name, func(t *testing.T) {
			opts := explore.Options{Strategy: explore.Exhaustive(explore.Bound(2, 2)), MaxSteps: rangesMaxSteps, Budget: explore.Budget()}
			res := explore.Explore(t, opts, c.run)
			if !res.Exhausted && !explore.Long() {
				t.Fatalf("search not exhausted: %v", res)
			}
			t.Log(res)
		})
	}
}

// TestExploreRangesPCT runs random schedules of the same programs
// (probabilistic concurrency testing, three priority change points): they
// reach interleavings with more preemptions than the exhaustive bound.
func TestExploreRangesPCT(t *testing.T) {
	for _, c := range rangesPrograms() {
		t.Run(c.name, func(t *testing.T) {
			opts := explore.Options{Strategy: explore.PCT(1, 3), MaxSchedules: explore.Schedules(1000, 5000), MaxSteps: rangesMaxSteps, Budget: explore.Budget()}
			t.Log(explore.Explore(t, opts, c.run))
		})
	}
}
