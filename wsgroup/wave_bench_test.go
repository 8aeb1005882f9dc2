package wsgroup_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-steal/steal/internal/testkit"
	"github.com/go-steal/steal/internal/workload"
)

// BenchmarkBlockingWave is a wave of 10,000 tasks, submitted from outside,
// that each block until all of them have started (so that all must run at
// once, as errgroup runs them), while four clients fan out CPU-bound
// tasks (8 of about 20 µs, then Wait) without pause, keeping every CPU
// busy. One op is one wave, from the first Go to the return of Wait.
// wsgroup must hand every blocked worker on; where it does not read
// goroutine statuses (STEAL_GSTATUS=off), the busy CPUs keep the
// runtime's counts from proving the first ones blocked.
func BenchmarkBlockingWave(b *testing.B) {
	const tasks, clients = 10_000, 4
	units := benchSpinnerRounds()
	for _, im := range benchImpls {
		b.Run(im.name, func(b *testing.B) {
			var stop atomic.Bool
			var wg sync.WaitGroup
			var sink atomic.Uint64
			for range clients {
				wg.Go(func() {
					for !stop.Load() {
						g := im.newGroup()
						for range 8 {
							g.Go(func() error { sink.Add(workload.Spin(1, units)); return nil })
						}
						if err := g.Wait(); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			defer func() { stop.Store(true); wg.Wait() }()
			for b.Loop() {
				g := im.newGroup()
				testkit.FanOut(g, tasks, nil)
				if err := g.Wait(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
