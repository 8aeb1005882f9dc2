package peers

// The loop benchmarks: one data-parallel loop over n indices per op, run
// by wsgroup's loops, by conc's iter, by hand and serially.
//
//	go test -run=NONE -bench=Loop -count=10 . > loop.txt
//	benchstat -col /impl -filter '.unit:ns/index' loop.txt

import (
	"context"
	"testing"

	"github.com/sourcegraph/conc/iter"
	"golang.org/x/sync/errgroup"

	"github.com/go-steal/steal/internal/workload"
	"github.com/go-steal/steal/wsgroup"
)

// A loopImpl runs l.Body(i) once for each i in [0, l.N). items is a slice
// of the indices, 0 to l.N-1, for the implementations that range over a
// slice's elements.
type loopImpl struct {
	name string
	run  func(l *workload.Loop, items []int32) error
}

var loopImpls = []loopImpl{
	{"impl=for", func(l *workload.Loop, _ []int32) error {
		return wsgroup.For(context.Background(), l.N, func(_ context.Context, i int) error {
			l.Body(i)
			return nil
		})
	}},
	{"impl=foreach", func(l *workload.Loop, items []int32) error {
		return wsgroup.ForEach(context.Background(), items, func(_ context.Context, e *int32) error {
			l.Body(int(*e))
			return nil
		})
	}},
	// conc hands out one index at a time from a shared counter to
	// GOMAXPROCS goroutines. It ranges over a slice, but ForEachIdx gives
	// the index, so it reads no element: the same body as impl=for.
	{"impl=conc", func(l *workload.Loop, _ []int32) error {
		iter.ForEachIdx(l.Done, func(i int, _ *uint32) { l.Body(i) })
		return nil
	}},
	{"impl=static", func(l *workload.Loop, _ []int32) error {
		workload.StaticSplit(l.N, procs(), l.Body)
		return nil
	}},
	{"impl=errgroup", func(l *workload.Loop, _ []int32) error {
		var g errgroup.Group
		for i := range l.N {
			g.Go(func() error { l.Body(i); return nil })
		}
		return g.Wait()
	}},
	{"impl=serial", func(l *workload.Loop, _ []int32) error {
		for i := range l.N {
			l.Body(i)
		}
		return nil
	}},
}

// BenchmarkLoop: the loop shapes of package workload (linear: 100k indices,
// the cost of index i proportional to i, 0.5 µs on average; clustered: 100k
// indices of 50 ns, every tenth index of the first tenth 1,000 times
// heavier; cheap: 10M bodies of a few ns), one whole loop per op; ns/index
// is ns/op over the loop's length. impl=for is wsgroup.For (range
// stealing), impl=foreach wsgroup.ForEach over a slice of the indices (For
// plus reading each element), impl=conc conc's iter.ForEachIdx (one index
// at a time from a shared counter), impl=static a split into GOMAXPROCS
// contiguous chunks, impl=errgroup one errgroup task per index. The floors
// are serial's ns/index divided by GOMAXPROCS and, on the cheap loop,
// impl=static.
func BenchmarkLoop(b *testing.B) {
	for _, shape := range []func() *workload.Loop{workload.LinearLoop, workload.ClusteredLoop, workload.CheapLoop} {
		l := shape()
		var items []int32 // made when a row of the shape runs: 40 MB for the cheap loop
		for _, im := range loopImpls {
			b.Run("shape="+l.Name+"/"+im.name, func(b *testing.B) {
				if items == nil {
					items = make([]int32, l.N)
					for i := range items {
						items[i] = int32(i)
					}
				}
				workload.BenchLoop(b, l, func() error { return im.run(l, items) })
			})
		}
	}
}
