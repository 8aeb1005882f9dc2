package wsgroup_test

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-steal/steal/internal/workload"
)

// BenchmarkBesideSpinners is a CPU fan-out (64 tasks of about 20 µs,
// submitted from outside, then Wait) while one or two goroutines per P
// spin on the CPU without ever blocking, the way a CPU-bound part of a
// process that does not use groups runs. The Go scheduler gives every
// goroutine its turn; a pool that gave way to the spinners at every task
// end would get a sliver of the CPUs, and one that never did would hold
// them. One op is one fan-out.
func BenchmarkBesideSpinners(b *testing.B) {
	const tasks = 64
	units := benchSpinnerRounds()
	for _, perP := range []int{1, 2} {
		for _, im := range benchImpls {
			b.Run(fmt.Sprintf("spinners=%d/%s", perP, im.name), func(b *testing.B) {
				var stop atomic.Bool
				var spun atomic.Uint64
				var spinners sync.WaitGroup
				for range perP * runtime.GOMAXPROCS(0) {
					spinners.Go(func() {
						var x uint64
						for !stop.Load() {
							x += workload.Spin(x, 100)
						}
						spun.Add(x)
					})
				}
				defer func() { stop.Store(true); spinners.Wait() }()
				var sink atomic.Uint64
				for b.Loop() {
					g := im.newGroup()
					for range tasks {
						g.Go(func() error { sink.Add(workload.Spin(1, units)); return nil })
					}
					if err := g.Wait(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// benchSpinnerRounds: Spin rounds for a task of about 20 µs.
var benchSpinnerRounds = sync.OnceValue(func() int {
	return workload.Rounds(20*time.Microsecond, 100, func(i, rounds int) { workload.Sink.Add(workload.Spin(uint64(i), rounds)) })
})
