//go:build explore

package deque

import (
	"fmt"
	stdatomic "sync/atomic"
	"testing"

	"github.com/anishathalye/porcupine"

	"github.com/go-steal/steal/internal/explore"
	"github.com/go-steal/steal/internal/testkit"
)

// The deque under the interleaving explorer (package explore): an owner and
// one or two thieves run short programs, and every schedule with at most
// the given number of preemptions is run. Each schedule must hand every
// pushed item to exactly one taker (a Pop, a Steal, or the final drain) and
// leave the deque empty, whatever the order of the atomic operations.
//
// Run with: go test -tags explore -run Explore ./internal/deque

// dequeProgram is one configuration: the owner's operations (a positive
// number n pushes n new items in turn, 0 pops once) and, per thief, how
// many steals it makes.
type dequeProgram struct {
	name    string
	init    int // New(init); 0 means a zero Deque
	retain  bool
	prefill int // items pushed before the threads start
	owner   []int
	thieves []int
}

func (p dequeProgram) run(s *explore.Schedule) {
	var d *Deque[int]
	if p.init == 0 {
		d = new(Deque[int])
	} else {
		d = New[int](p.init)
	}
	if p.retain {
		d.Retain()
	}
	var items []*int
	push := func() {
		x := new(int)
		*x = len(items)
		items = append(items, x)
		d.Push(x)
	}
	for range p.prefill {
		push()
	}
	taken := make([][]*int, 1+len(p.thieves)) // by taker: owner first
	owner := s.Go("owner", func() {
		for _, op := range p.owner {
			if op == 0 {
				if x := d.Pop(); x != nil {
					taken[0] = append(taken[0], x)
				}
				continue
			}
			for range op {
				push()
			}
		}
	})
	var thieves []*explore.Thread
	for i, n := range p.thieves {
		thieves = append(thieves, s.Go(fmt.Sprintf("thief%d", i+1), func() {
			for range n {
				if x, _ := d.Steal(); x != nil {
					taken[1+i] = append(taken[1+i], x)
				}
			}
		}))
	}
	owner.Join()
	for _, th := range thieves {
		th.Join()
	}
	// Drain what is left, as the owner (the owner thread has ended, and
	// the Joins hand its deque over).
	for x := d.Pop(); x != nil; x = d.Pop() {
		taken[0] = append(taken[0], x)
	}
	if n := d.Len(); n != 0 {
		s.Errorf("Len() = %d after draining", n)
	}
	seen := map[*int]int{}
	for who, xs := range taken {
		for _, x := range xs {
			if seen[x]++; seen[x] > 1 {
				s.Errorf("item %d taken twice (again by taker %d); taken: %v", *x, who, show2(taken))
			}
		}
	}
	for _, x := range items {
		if seen[x] == 0 {
			s.Errorf("item %d lost; taken: %v", *x, show2(taken))
		}
	}
}

func show2(taken [][]*int) string {
	var out []string
	for _, xs := range taken {
		var v []int
		for _, x := range xs {
			v = append(v, *x)
		}
		out = append(out, fmt.Sprint(v))
	}
	return fmt.Sprint(out)
}

func dequePrograms() []dequeProgram {
	return []dequeProgram{
		// The last-item race: the owner pops the only item while a thief
		// steals it, from a zero Deque whose first Push allocates the ring.
		{name: "last-item", owner: []int{1, 0}, thieves: []int{1}},
		// The owner pushes again after the last-item race: the deque
		// must be left consistent by whoever won.
		{name: "last-item-then-push", owner: []int{1, 0, 1}, thieves: []int{2}},
		// Two thieves and the owner race for one item.
		{name: "last-item-two-thieves", init: 2, prefill: 1, owner: []int{0}, thieves: []int{1, 1}},
		// Push and pop at the bottom while a thief steals at the top.
		{name: "both-ends", init: 4, owner: []int{2, 0, 0}, thieves: []int{2}},
		// Growth: the third push doubles the ring while a thief steals.
		{name: "grow", init: 2, prefill: 2, owner: []int{1, 0}, thieves: []int{2}},
		// Shrinking: pops take a ring of 8 below a quarter full.
		{name: "shrink", init: 2, prefill: 5, owner: []int{0, 0, 0}, thieves: []int{2}},
	}
}

func TestExploreDeque(t *testing.T) {
	for _, retain := range []bool{false, true} {
		for _, p := range dequePrograms() {
			p.retain = retain
			name := p.name
			if retain {
				name += "/retain"
			}
			t.Run(name, func(t *testing.T) {
				bound := explore.Bound(2, 2)
				res := explore.Explore(t, explore.Options{Strategy: explore.Exhaustive(bound), Budget: explore.Budget()}, p.run)
				if !res.Exhausted && !explore.Long() {
					t.Fatalf("search not exhausted: %v", res)
				}
				t.Log(res)
			})
		}
	}
}

// TestExploreStealIfLinearizable explores a StealIf and a Steal against an
// owner that pushes into a ring of two slots, so that a slot is reused
// while the thieves look at it, and checks every schedule's history against
// the sequential specification (linearizability_test.go). A StealIf that
// reported "not wanted" after its keep saw an item from a reused slot, not
// the oldest item, fails it.
func TestExploreStealIfLinearizable(t *testing.T) {
	testkit.ForBool(t, "clear", "retain", func(t *testing.T, retain bool) {
		prog := func(s *explore.Schedule) {
			d := New[int](2)
			if retain {
				d.Retain()
			}
			var clock stdatomic.Int64
			recs := []*linRecorder{{clock: &clock, client: 0}, {clock: &clock, client: 1}, {clock: &clock, client: 2}}
			push := func(id int) {
				x := new(int)
				*x = id
				recs[0].do(linInput{kind: linPush, item: id}, func() linOutput { d.Push(x); return linOutput{} })
			}
			push(1)
			owner := s.Go("owner", func() {
				push(2)
				push(3)
			})
			stealIf := s.Go("stealif", func() {
				recs[1].do(linInput{kind: linStealIf}, func() linOutput {
					x, retry := d.StealIf(linKeepPtr)
					return linOutput{linID(x), retry}
				})
			})
			steal := s.Go("steal", func() {
				recs[2].do(linInput{kind: linSteal}, func() linOutput {
					x, retry := d.Steal()
					return linOutput{linID(x), retry}
				})
			})
			owner.Join()
			stealIf.Join()
			steal.Join()
			var h []porcupine.Operation
			for _, r := range recs {
				h = append(h, r.ops...)
			}
			if !porcupine.CheckOperations(linModel, h) {
				s.Errorf("not linearizable:\n%s", linFormat(h))
			}
		}
		bound := explore.Bound(2, 2)
		res := explore.Explore(t, explore.Options{Strategy: explore.Exhaustive(bound), Budget: explore.Budget()}, prog)
		if !res.Exhausted && !explore.Long() {
			t.Fatalf("search not exhausted: %v", res)
		}
		t.Log(res)
	})
}
