package wsgroup_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
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
// the cheap loop, the static split, and impl=static-for, a static split of
// the very body For is given (a context in, an error out, a call more than
// static's): what For costs beyond its caller's own code.
//
//	go test -run=NONE -bench=Loop -count=6 ./wsgroup | benchstat -col /impl -
func BenchmarkLoop(b *testing.B) {
	for _, shape := range []func() *workload.Loop{workload.LinearLoop, workload.ClusteredLoop, workload.CheapLoop} {
		l := shape()
		b.Run("shape="+l.Name+"/impl=for", func(b *testing.B) {
			workload.BenchLoop(b, l, func() error {
				return wsgroup.For(context.Background(), l.N, func(_ context.Context, i int) error {
					l.Body(i)
					return nil
				})
			})
		})
		b.Run("shape="+l.Name+"/impl=static", func(b *testing.B) {
			workload.BenchLoop(b, l, func() error {
				workload.StaticSplit(l.N, runtime.GOMAXPROCS(0), l.Body)
				return nil
			})
		})
		b.Run("shape="+l.Name+"/impl=static-for", func(b *testing.B) {
			// For's own floor: the same body as impl=for, with its
			// context and error, on a static split.
			body := func(_ context.Context, i int) error { l.Body(i); return nil }
			workload.BenchLoop(b, l, func() error {
				return workload.StaticSplitFor(context.Background(), l.N, runtime.GOMAXPROCS(0), body)
			})
		})
		b.Run("shape="+l.Name+"/impl=errgroup", func(b *testing.B) {
			workload.BenchLoop(b, l, func() error {
				var g errgroup.Group
				for i := range l.N {
					g.Go(func() error { l.Body(i); return nil })
				}
				return g.Wait()
			})
		})
		b.Run("shape="+l.Name+"/impl=serial", func(b *testing.B) {
			workload.BenchLoop(b, l, func() error {
				for i := range l.N {
					l.Body(i)
				}
				return nil
			})
		})
	}
}

// BenchmarkLoopNested runs the same 100,000 bodies of 0.5 µs arranged three
// ways: one flat For (the best arrangement), a For of 100 indices whose
// body is a For of 1,000, and a For in each of 8 concurrent requests (a
// service whose handlers each run a loop), and as a static split. The
// nested arrangements should come within 10% of the flat one.
//
//	go test -run=NONE -bench=LoopNested -count=6 ./wsgroup | benchstat -col /impl -
func BenchmarkLoopNested(b *testing.B) {
	l := workload.UniformLoop()
	const outer, requests = 100, 8
	inner := l.N / outer
	body := func(_ context.Context, i int) error { l.Body(i); return nil }
	run := func(b *testing.B, loop func() error) { workload.BenchLoop(b, l, loop) }
	b.Run("impl=flat", func(b *testing.B) {
		run(b, func() error { return wsgroup.For(context.Background(), l.N, body) })
	})
	b.Run("impl=for-in-for", func(b *testing.B) {
		run(b, func() error {
			return wsgroup.For(context.Background(), outer, func(ctx context.Context, i int) error {
				return wsgroup.For(ctx, inner, func(ctx context.Context, j int) error { return body(ctx, i*inner+j) })
			})
		})
	})
	b.Run("impl=for-per-request", func(b *testing.B) {
		run(b, func() error {
			per := l.N / requests
			errs := make([]error, requests)
			var wg sync.WaitGroup
			for r := range requests {
				wg.Go(func() {
					errs[r] = wsgroup.For(context.Background(), per, func(ctx context.Context, i int) error { return body(ctx, r*per+i) })
				})
			}
			wg.Wait()
			return errors.Join(errs...)
		})
	})
	// The static split of uniform work is as good as any arrangement can
	// be: it shows what two cores give here.
	b.Run("impl=static", func(b *testing.B) {
		run(b, func() error { workload.StaticSplit(l.N, runtime.GOMAXPROCS(0), l.Body); return nil })
	})
	b.Run("impl=serial", func(b *testing.B) {
		run(b, func() error {
			for i := range l.N {
				l.Body(i)
			}
			return nil
		})
	})
}
