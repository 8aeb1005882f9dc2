package workload

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// A Loop is a data-parallel loop for the loop benchmarks: N indices, index
// i costing Cost(i) rounds of Spin. Body runs one index and counts it in
// Done, so that after b.N loops every count must be b.N (Check).
//
// The count is a plain increment, not an atomic one: an atomic add would
// cost more than the cheap loop's whole body. A loop that runs each index
// once per call writes each count from one goroutine at a time, ordered by
// the loop's own wait; one that ran an index twice at once would be a data
// race, and is caught by Check anyway.
type Loop struct {
	Name string
	N    int
	Cost func(i int) int // Spin rounds of index i
	Out  []uint64
	Done []uint32
}

// Body runs index i: the work, its result, and its count.
func (l *Loop) Body(i int) {
	l.Out[i] = Spin(uint64(i), l.Cost(i))
	l.Done[i]++
}

// Check reports an index that did not run exactly runs times.
func (l *Loop) Check(runs int) error {
	var s uint64
	for i := range l.Done {
		if got := l.Done[i]; got != uint32(runs) {
			return fmt.Errorf("%s: index %d ran %d times in %d loops", l.Name, i, got, runs)
		}
		s += l.Out[i]
	}
	Sink.Add(s)
	return nil
}

func newLoop(name string, n int, cost func(int) int) *Loop {
	return &Loop{Name: name, N: n, Cost: cost, Out: make([]uint64, n), Done: make([]uint32, n)}
}

// The loop shapes' sizes.
const (
	imbalancedN = 100_000
	cheapN      = 10_000_000
)

// roundsPerMicro is how many Spin rounds a loop body spends in a
// microsecond, calibrated once.
var roundsPerMicro = sync.OnceValue(func() int { return BatchRounds(time.Microsecond, 10_000) })

// LinearLoop is an imbalanced loop: 100,000 indices, the cost of index i
// proportional to i, 0.5 µs on average. A static split into P chunks gives
// the last chunk 2P-1 times the work of the first.
func LinearLoop() *Loop {
	r := roundsPerMicro()
	return newLoop("linear", imbalancedN, func(i int) int { return 1 + r*i/imbalancedN })
}

// ClusteredLoop is an imbalanced loop: 100,000 indices of 50 ns, except 1%
// of them, every tenth index of the first tenth of the range, which cost
// 1,000 times as much (50 µs). A static split gives the first chunk all the
// heavy ones.
func ClusteredLoop() *Loop {
	light := max(1, roundsPerMicro()/20)
	return newLoop("clustered", imbalancedN, func(i int) int {
		if i < imbalancedN/10 && i%10 == 0 {
			return 1000 * light
		}
		return light
	})
}

// UniformLoop is a loop of 100,000 indices of 0.5 µs each: the work that
// the nested-loop benchmarks arrange in different ways.
func UniformLoop() *Loop {
	r := max(1, roundsPerMicro()/2)
	return newLoop("uniform", imbalancedN, func(int) int { return r })
}

// CheapLoop is a uniform loop of 10 million bodies of a few nanoseconds:
// two rounds of Spin and the count.
func CheapLoop() *Loop {
	return newLoop("cheap", cheapN, func(int) int { return 2 })
}

// StaticSplit runs body(i) for i in [0, n) on p goroutines, each a
// contiguous chunk of n/p indices, and waits: the floor for a loop that
// calls a function per index, and what range stealing is measured
// against on imbalanced loops.
func StaticSplit(n, p int, body func(i int)) {
	chunks(n, p, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			body(i)
		}
	})
}

// StaticSplitFor is StaticSplit for a body of wsgroup.For's shape, called
// as For calls it, with a context and returning an error: the floor for
// For's own cost, in which the shape of the body the user hands For (a
// call that a func(int) body does without) does not count. It returns the
// first error of a body; every index runs whatever the errors.
func StaticSplitFor(ctx context.Context, n, p int, body func(context.Context, int) error) error {
	var mu sync.Mutex
	var first error
	chunks(n, p, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if err := body(ctx, i); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		}
	})
	return first
}

// chunks runs run(lo, hi) for the p contiguous chunks of [0, n), each on a
// goroutine of its own, and waits for them. The static splits put their
// loops in run, so that each index costs them only their body's call.
func chunks(n, p int, run func(lo, hi int)) {
	var wg sync.WaitGroup
	for c := range p {
		lo, hi := n*c/p, n*(c+1)/p
		wg.Go(func() { run(lo, hi) })
	}
	wg.Wait()
}

// BenchLoop is the body of a loop benchmark: one whole run of l per op
// (loop), with allocations and ns/index reported. It fails b if loop
// returns an error, or unless every index of l ran exactly b.N times.
func BenchLoop(b *testing.B, l *Loop, loop func() error) {
	clear(l.Done)
	b.ReportAllocs()
	for b.Loop() {
		if err := loop(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*l.N), "ns/index")
	ReportCrossCPU(b)
	if err := l.Check(b.N); err != nil {
		b.Fatal(err)
	}
}
