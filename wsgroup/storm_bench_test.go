package wsgroup_test

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/go-steal/steal/internal/testkit"
	"github.com/go-steal/steal/internal/workload"
)

// BenchmarkGCStorm: CPU-bound work while the collector runs all the time
// (GOGC=20, and a goroutine that calls runtime.GC in a loop). One op is
// 100k tiny tasks submitted from outside (work=tiny), or fib(20) with a
// group per call (work=fib). It runs at GOMAXPROCS 1, 2 and twice the
// CPUs (more Ps than CPUs: a worker whose thread the system does not run
// looks like one that does not move). peak-goroutines is the most
// goroutines seen at once above those before the op's work, the storm's
// own goroutine not counted: for wsgroup its workers, spares and monitor
// (the goal: at most GOMAXPROCS + 3; in work=fib they include the Waits
// that found nothing to help with for longer than their patience, which
// park and give their worker's place to another), for errgroup its tasks
// in flight.
//
//	go test -run=NONE -bench=GCStorm -benchtime=5x -count=5 ./wsgroup
func BenchmarkGCStorm(b *testing.B) {
	procsList := []int{1, 2, 2 * runtime.NumCPU()}
	slices.Sort(procsList)
	procsList = slices.Compact(procsList)
	for _, procs := range procsList {
		for _, work := range []string{"tiny", "fib"} {
			for _, im := range benchImpls {
				b.Run(fmt.Sprintf("procs=%d/work=%s/%s", procs, work, im.name), func(b *testing.B) {
					benchStorm(b, procs, work, im.newGroup)
				})
			}
		}
	}
}

// benchStorm is one row of BenchmarkGCStorm.
func benchStorm(b *testing.B, procs int, work string, newGroup func() benchGroup) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	defer debug.SetGCPercent(debug.SetGCPercent(20))
	defer testkit.CollectAlways()()
	rounds := benchTinyRounds()
	var ran atomic.Int64
	// Counted from an idle pool: the workers of the rows before would
	// otherwise be in the count the peak is measured above.
	testkit.WaitRetired(b)
	stopPeak := benchPeak(b)
	for b.Loop() {
		switch work {
		case "tiny":
			g := newGroup()
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
		case "fib":
			if val, _, err := workload.Fib(func() workload.Group { return newGroup() }, 20); err != nil || val != 6765 {
				b.Fatalf("fib(20) = %d, %v", val, err)
			}
		}
	}
	stopPeak()
	if got, want := ran.Load(), int64(b.N*benchBatchTasks); work == "tiny" && got != want {
		b.Fatalf("%d of %d tiny tasks ran", got, want)
	}
}
