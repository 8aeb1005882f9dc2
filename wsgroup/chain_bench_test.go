package wsgroup_test

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-steal/steal/internal/workload"
)

// BenchmarkChain32 is the tail of a chain of 32 tasks in which each task
// waits for the next one to finish, submitted in order from outside, while
// two other goroutines keep groups of CPU-bound tasks flowing: on a fixed
// set of workers the chain completes only through the monitor's hand-offs.
// One op is one chain; besides ns/op it reports the median and the longest
// chain (p50-ns, max-ns), at GOMAXPROCS 1, 2, 4 and 8. Run it with
// -benchtime=200x for 200 chains each (also under -race).
func BenchmarkChain32(b *testing.B) {
	const n = 32
	besideBusyGroups(b, func(g benchGroup) {
		tasks, first := workload.Chain(n, nil)
		for _, f := range tasks {
			g.Go(f)
		}
		<-first // not Wait, which could run the tasks itself
	})
}

// BenchmarkBarrier32 is 32 tasks that meet at a barrier (each waits until
// all 32 have arrived), submitted from outside beside the same busy groups
// as BenchmarkChain32. The barrier is crossed only when every task has had
// a CPU: the tasks that wait are parked goroutines, readied by the last to
// arrive, and they run only when the goroutines that hold the Ps let them.
// Its p50-ns and max-ns show how long a readied goroutine waits beside a
// busy pool.
func BenchmarkBarrier32(b *testing.B) {
	const n = 32
	besideBusyGroups(b, func(g benchGroup) {
		var arrived sync.WaitGroup
		arrived.Add(n)
		var left sync.WaitGroup
		left.Add(n)
		for range n {
			g.Go(func() error {
				arrived.Done()
				arrived.Wait()
				left.Done()
				return nil
			})
		}
		left.Wait() // not Wait, which could run the tasks itself
	})
}

// besideBusyGroups times one op, a call of round on a new group followed
// by its Wait, while two goroutines keep groups of CPU-bound tasks flowing
// on the same implementation, at GOMAXPROCS 1, 2, 4 and 8; it reports the
// median and the longest op (p50-ns, max-ns).
func besideBusyGroups(b *testing.B, round func(benchGroup)) {
	for _, procs := range []int{1, 2, 4, 8} {
		for _, im := range benchImpls {
			b.Run(fmt.Sprintf("procs=%d/%s", procs, im.name), func(b *testing.B) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				var stop atomic.Bool
				var spun atomic.Uint64 // the busy tasks' results, so that they are computed
				var busy sync.WaitGroup
				for range 2 {
					busy.Go(func() {
						for !stop.Load() {
							g := im.newGroup()
							for range 16 {
								g.Go(func() error { spun.Add(workload.Spin(1, 200)); return nil })
							}
							g.Wait()
						}
					})
				}
				defer func() { stop.Store(true); busy.Wait() }()
				times := make([]time.Duration, 0, b.N)
				for b.Loop() {
					start := time.Now()
					g := im.newGroup()
					round(g)
					if err := g.Wait(); err != nil {
						b.Fatal(err)
					}
					times = append(times, time.Since(start))
				}
				slices.Sort(times)
				b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "p50-ns")
				b.ReportMetric(float64(times[len(times)-1].Nanoseconds()), "max-ns")
			})
		}
	}
}
