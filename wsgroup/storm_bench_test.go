package wsgroup_test

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/go-steal/steal/internal/gstatus"
	"github.com/go-steal/steal/internal/workload"
)

// BenchmarkGCStorm: CPU-bound work while the collector runs all the time
// (GOGC=20, and a goroutine that calls runtime.GC in a loop). One op is
// 100k tiny tasks submitted from outside, then fib(20) with a group per
// call. It runs at GOMAXPROCS 1, 2 and twice the CPUs (more Ps than CPUs:
// a worker whose thread the system does not run looks like one that does
// not move). peak-goroutines is the most goroutines seen at once above
// those before the op's work, the storm's own goroutine not counted: for
// wsgroup its workers, spares and monitor (the goal: at most GOMAXPROCS +
// 3), for errgroup its tasks in flight.
//
//	go test -run=NONE -bench=GCStorm -benchtime=5x -count=5 ./wsgroup
func BenchmarkGCStorm(b *testing.B) {
	procsList := []int{1, 2, 2 * runtime.NumCPU()}
	slices.Sort(procsList)
	procsList = slices.Compact(procsList)
	for _, procs := range procsList {
		for _, im := range benchImpls {
			b.Run(fmt.Sprintf("procs=%d/%s", procs, im.name), func(b *testing.B) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				defer debug.SetGCPercent(debug.SetGCPercent(20))
				var stop atomic.Bool
				stormDone := make(chan struct{})
				go func() {
					defer close(stormDone)
					for !stop.Load() {
						runtime.GC()
					}
				}()
				defer func() { stop.Store(true); <-stormDone }()
				// The status reader's check runs once per process, at the
				// pool's first saturation, with probe goroutines of its
				// own: decide it first, so that they are not counted.
				_ = gstatus.Prove()
				rounds := benchTinyRounds()
				var ran atomic.Int64
				stopPeak := benchPeak(b)
				for b.Loop() {
					g := im.newGroup()
					for i := range benchBatchTasks {
						g.Go(func() error {
							workload.Sink.Add(workload.Spin(uint64(i), rounds))
							ran.Add(1)
							return nil
						})
					}
					if err := g.Wait(); err != nil {
						b.Fatalf("Wait: %v", err)
					}
					if val, _, err := workload.Fib(func() workload.Group { return im.newGroup() }, 20); err != nil || val != 6765 {
						b.Fatalf("fib(20) = %d, %v", val, err)
					}
				}
				stopPeak()
				if got, want := ran.Load(), int64(b.N*benchBatchTasks); got != want {
					b.Fatalf("%d of %d tiny tasks ran", got, want)
				}
			})
		}
	}
}
