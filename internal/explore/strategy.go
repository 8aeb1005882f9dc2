//go:build explore

package explore

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// A Strategy chooses, at each step of a schedule, which of the threads that
// can run takes the step, and which schedule comes next.
type Strategy interface {
	// begin starts a schedule; false means there is none left.
	begin() bool
	// choose picks one of len(ids) > 1 candidate threads, given by their
	// ids in the order they were started, and returns its index. cur is
	// the index of the thread that took the last step, or -1 if it cannot
	// run now or has just yielded; yielder is its index in the latter
	// case, or -1. A thread that yielded (runtime.Gosched in a spin loop)
	// should give way, but it may also go on, as a real Gosched allows:
	// strategies must not let it go on forever, or a spin loop waiting
	// for another thread never ends. steps counts the steps so far.
	choose(ids []int, cur, yielder, steps int) int
	// end closes a schedule that took steps steps.
	end(steps int)
	fmt.Stringer
}

// Exhaustive returns a strategy that runs every schedule with at most bound
// preemptions, depth first, as CHESS does: a preemption is a step given to
// another thread while the one that took the last step could go on.
// Switching away from a thread that blocks, ends or yields is free; letting
// a thread that yielded go on counts as a preemption (of the threads it
// yielded to), so a spin loop spins at most bound times in a row. Most
// concurrency bugs need only one or two preemptions to show, and the
// number of schedules grows polynomially in the length of the program for
// a fixed bound, where it grows exponentially without one.
//
// The program must be deterministic: the same choices must lead to the same
// candidates, or the exploration fails with "replay diverged".
func Exhaustive(bound int) Strategy { return &dfs{bound: bound} }

// decision is one choice point of a depth-first schedule.
type decision struct {
	n, cur  int // candidates, and the index of the last step's thread (or -1)
	yielder int // the index of the last step's thread if it yielded (or -1)
	pos     int // position of the choice in the order of at
	preempt int // preemptions made before this choice
}

// at returns the candidate tried at position pos (0 <= pos < n), in the
// order they are tried: first the one that costs no preemption (cur, or
// the first other than the yielder when cur is -1), then the rest, the
// yielder last. (Computed, not listed: it runs at every step.)
func (d decision) at(pos int) int {
	first := max(d.cur, 0)
	if d.cur < 0 && first == d.yielder {
		first++
	}
	if pos == 0 {
		return first
	}
	for i := range d.n {
		if i != first && i != d.yielder {
			if pos--; pos == 0 {
				return i
			}
		}
	}
	return d.yielder
}

func (d decision) cost(c int) int {
	if d.cur >= 0 && c != d.cur || c == d.yielder {
		return 1
	}
	return 0
}

type dfs struct {
	bound     int
	prefix    []int // positions to replay
	decisions []decision
	started   bool
	runs      int
}

func (s *dfs) begin() bool {
	s.runs++
	if !s.started {
		s.started = true
		return true
	}
	for i := len(s.decisions) - 1; i >= 0; i-- {
		d := s.decisions[i]
		for p := d.pos + 1; p < d.n; p++ {
			if d.preempt+d.cost(d.at(p)) <= s.bound {
				s.prefix = s.prefix[:0]
				for _, e := range s.decisions[:i] {
					s.prefix = append(s.prefix, e.pos)
				}
				s.prefix = append(s.prefix, p)
				s.decisions = s.decisions[:0]
				return true
			}
		}
	}
	return false
}

func (s *dfs) choose(ids []int, cur, yielder, _ int) int {
	n := len(ids)
	preempt := 0
	if k := len(s.decisions); k > 0 {
		last := s.decisions[k-1]
		preempt = last.preempt + last.cost(last.at(last.pos))
	}
	d := decision{n: n, cur: cur, yielder: yielder, preempt: preempt}
	if k := len(s.decisions); k < len(s.prefix) {
		d.pos = s.prefix[k]
		if d.pos >= n {
			return -1 // replay diverged
		}
	}
	s.decisions = append(s.decisions, d)
	return d.at(d.pos)
}

func (s *dfs) end(int) {}

func (s *dfs) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "exhaustive, at most %d preemptions, schedule %d, choices [", s.bound, s.runs)
	for i, d := range s.decisions {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprint(&b, d.at(d.pos))
	}
	b.WriteString("]")
	return b.String()
}

// PCT returns a strategy that runs random schedules with the probabilistic
// concurrency testing algorithm of Burckhardt, Kothari, Musuvathi and
// Nagarakatte (ASPLOS 2010): each thread gets a random priority, the
// highest-priority thread that can run takes every step, and at depth-1
// random steps the running thread drops to a priority below all others. A
// bug that needs d ordering constraints is found by each schedule with
// probability at least 1/(n·k^(d-1)) for n threads and k steps. Schedule i
// of seed s is the same on every run.
func PCT(seed uint64, depth int) Strategy { return &pct{seed: seed, depth: max(depth, 1), k: 100} }

type pct struct {
	seed   uint64
	depth  int
	k      int // steps of the longest schedule so far: where change points fall
	run    int
	rng    *rand.Rand
	prio   map[int]float64 // by thread id, assigned on first sight
	change map[int]int     // step -> rank of the change point
}

func (s *pct) begin() bool {
	s.run++
	s.rng = rand.New(rand.NewPCG(s.seed, uint64(s.run)))
	s.prio = map[int]float64{}
	s.change = map[int]int{}
	for i := 1; i < s.depth; i++ {
		s.change[1+s.rng.IntN(s.k)] = i
	}
	return true
}

func (s *pct) choose(ids []int, cur, yielder, steps int) int {
	n := len(ids)
	for _, id := range ids {
		if _, ok := s.prio[id]; !ok {
			s.prio[id] = float64(s.depth) + s.rng.Float64()
		}
	}
	if rank, ok := s.change[steps]; ok && cur >= 0 {
		s.prio[ids[cur]] = float64(rank) * 0.5 // below every initial priority
		delete(s.change, steps)
	}
	// The highest priority takes the step, but a thread that has just
	// yielded gives way (else a spinning thread of high priority would
	// spin forever).
	best := -1
	for i := range n {
		if i != yielder && (best < 0 || s.prio[ids[i]] > s.prio[ids[best]]) {
			best = i
		}
	}
	return best
}

func (s *pct) end(steps int) { s.k = max(s.k, steps) }

func (s *pct) String() string {
	return fmt.Sprintf("PCT depth %d, seed %d, schedule %d", s.depth, s.seed, s.run)
}

// Random returns a strategy that gives each step to a thread chosen
// uniformly among those that can run. Schedule i of seed s is the same on
// every run.
func Random(seed uint64) Strategy { return &random{seed: seed} }

type random struct {
	seed uint64
	run  int
	rng  *rand.Rand
}

func (s *random) begin() bool {
	s.run++
	s.rng = rand.New(rand.NewPCG(s.seed, uint64(s.run)))
	return true
}

func (s *random) choose(ids []int, _, _, _ int) int { return s.rng.IntN(len(ids)) }
func (s *random) end(int)                           {}
func (s *random) String() string {
	return fmt.Sprintf("random, seed %d, schedule %d", s.seed, s.run)
}
