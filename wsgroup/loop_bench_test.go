package wsgroup_test

import (
	"context"
	"runtime"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/go-steal/steal/internal/workload"
	"github.com/go-steal/steal/wsgroup"
)

// BenchmarkLoop runs the data-parallel loop shapes of package workload
// (cost proportional to the index; 1% of indices 1,000 times heavier,
// clustered; 10 million bodies of a few nanoseconds) as wsgroup.For, as a
// static split into GOMAXPROCS chunks, as one errgroup task per index, and
// serially. The floors are serial's ns/op divided by GOMAXPROCS and, for
// the cheap loop, the static split.
//
//	go test -run=NONE -bench=Loop -count=6 ./wsgroup | benchstat -col /impl -
func BenchmarkLoop(b *testing.B) {
	for _, shape := range []func() *workload.Loop{workload.LinearLoop, workload.ClusteredLoop, workload.CheapLoop} {
		l := shape()
		run := func(b *testing.B, loop func(l *workload.Loop)) {
			clear(l.Done)
			b.ReportAllocs()
			for b.Loop() {
				loop(l)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*l.N), "ns/index")
			if err := l.Check(b.N); err != nil {
				b.Fatal(err)
			}
		}
		b.Run("shape="+l.Name+"/impl=for", func(b *testing.B) {
			run(b, func(l *workload.Loop) {
				err := wsgroup.For(context.Background(), l.N, func(_ context.Context, i int) error {
					l.Body(i)
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run("shape="+l.Name+"/impl=static", func(b *testing.B) {
			run(b, func(l *workload.Loop) { workload.StaticSplit(l.N, runtime.GOMAXPROCS(0), l.Body) })
		})
		b.Run("shape="+l.Name+"/impl=errgroup", func(b *testing.B) {
			run(b, func(l *workload.Loop) {
				var g errgroup.Group
				for i := range l.N {
					g.Go(func() error { l.Body(i); return nil })
				}
				if err := g.Wait(); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run("shape="+l.Name+"/impl=serial", func(b *testing.B) {
			run(b, func(l *workload.Loop) {
				for i := range l.N {
					l.Body(i)
				}
			})
		})
	}
}
