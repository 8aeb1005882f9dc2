package sched

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-steal/steal/internal/testkit"
	"github.com/go-steal/steal/internal/workload"
)

// Compensation for blocked workers: the pool grows while its workers are
// blocked and tasks wait, and only then. No test here measures time: each
// one waits (under the hang guard) for what must eventually happen, or
// samples a bound that must always hold.
//
// A Wait outside the pool runs the group's tasks that it can reach, which
// could stand in for the growth under test (the test goroutine would run
// the task that unblocks the others). So these tests wait for their tasks
// by other means (a channel, a count) before they call Wait.

// TestWatchdogChain: 64 tasks, each waiting for the one submitted after it,
// all complete, from outside and from inside a task, at several GOMAXPROCS.
func TestWatchdogChain(t *testing.T) {
	const n = 64
	for _, procs := range []int{1, 2, 8} {
		for _, from := range []string{"outside", "inside"} {
			t.Run(fmt.Sprintf("procs=%d/%s", procs, from), func(t *testing.T) {
				testkit.SetProcs(t, procs)
				guardPool(t, func() {
					var g Group
					var ran atomic.Int64
					fs, last := workload.Chain(n, func(int) { ran.Add(1) })
					switch from {
					case "outside":
						for _, f := range fs {
							g.Go(f)
						}
					case "inside":
						g.Go(func() error {
							var m Group
							for _, f := range fs {
								m.Go(f)
							}
							return m.Wait()
						})
					}
					<-last
					wantNil(t, "Wait()", g.Wait())
					if got := ran.Load(); got != n {
						t.Errorf("%d of %d tasks ran", got, n)
					}
				})
			})
		}
	}
}

// TestWatchdogFanOutBlocking: many tasks that all wait for one gate that is
// opened only once every one of them has started: the pool must grow to
// run them all at once (errgroup would), whatever GOMAXPROCS.
func TestWatchdogFanOutBlocking(t *testing.T) {
	const n = 48
	forProcs(t, []int{1, 2}, func(t *testing.T, procs int) {
		var g Group
		<-testkit.FanOut(&g, n, nil)
		wantNil(t, "Wait()", g.Wait())
	})
}

// TestWatchdogCPUBoundStaysSmall: thousands of CPU-bound tasks must not
// grow the pool past GOMAXPROCS plus a few workers.
func TestWatchdogCPUBoundStaysSmall(t *testing.T) {
	const procs = 2
	n := testkit.ScaleDown(4000, 1000)
	for _, from := range []string{"outside", "inside"} {
		t.Run(from, func(t *testing.T) {
			testkit.SetProcs(t, procs)
			guardPool(t, func() {
				checkRetired(t)
				base := runtime.NumGoroutine()
				var g Group
				var ran atomic.Int64
				work := func() error {
					spin(50 * time.Microsecond)
					ran.Add(1)
					return nil
				}
				var live, gor maxGauge
				s := startSampler(func() {
					live.observe(int64(global.live.Load()))
					gor.observe(int64(runtime.NumGoroutine()))
				})
				goFrom(&g, from, n, work)
				wantNil(t, "Wait()", g.Wait())
				s.stop()
				if got := ran.Load(); got != int64(n) {
					t.Errorf("%d of %d tasks ran", got, n)
				}
				limit := int64(procs + 3)
				t.Logf("%d tasks: at most %d live workers, %d goroutines (baseline %d)", n, live.hi.Load(), gor.hi.Load(), base)
				if hi := live.hi.Load(); hi > limit {
					t.Errorf("CPU-bound tasks grew the pool to %d live workers, want ≤ GOMAXPROCS+3 = %d", hi, limit)
				}
				// Goroutines: the baseline, the sampler, the watchdog, and
				// the workers, live or spare (a spare is a goroutine that
				// was a live worker: it counts within the bound).
				if hi := gor.hi.Load(); hi > int64(base)+2+limit {
					t.Errorf("CPU-bound tasks: up to %d goroutines, want ≤ %d (baseline %d + sampler + watchdog + GOMAXPROCS+3)",
						hi, int64(base)+2+limit, base)
				}
			})
		})
	}
}

// TestWatchdogExtraWorkersRetire: a burst of blocking tasks makes the pool
// grow past GOMAXPROCS; once the burst ends, the extra workers retire,
// while the group is still in use (no Wait yet): when the pool goes idle,
// and while bursts of short tasks keep waking its workers (so that retiring
// only after a linger spent asleep would not shrink it).
func TestWatchdogExtraWorkersRetire(t *testing.T) {
	const procs, n = 2, 32
	for _, after := range []string{"idle", "busy"} {
		t.Run(after, func(t *testing.T) {
			testkit.SetProcs(t, procs)
			guardPool(t, func() {
				var g Group
				var started atomic.Int64
				gate := make(chan struct{})
				var burst sync.WaitGroup
				for range n {
					burst.Add(1)
					g.Go(func() error {
						defer burst.Done()
						started.Add(1)
						<-gate
						return nil
					})
				}
				testkit.WaitUntil(t, "every blocking task started", func() bool { return started.Load() == n })
				if l := global.live.Load(); l <= procs {
					t.Errorf("%d blocking tasks run with %d live workers, GOMAXPROCS %d", n, l, procs)
				}
				close(gate)
				burst.Wait()
				switch after {
				case "idle":
					testkit.WaitUntil(t, "extra workers retire", func() bool { return global.live.Load() <= procs })
				case "busy":
					var ran atomic.Int64
					submitted := int64(0)
					testkit.WaitUntil(t, "extra workers retire while bursts of tasks keep the pool busy", func() bool {
						for range 16 {
							g.Go(func() error { spin(20 * time.Microsecond); ran.Add(1); return nil })
							submitted++
						}
						return global.live.Load() <= procs
					})
					testkit.WaitUntil(t, "bursts done", func() bool { return ran.Load() == submitted })
				}
				wantNil(t, "Wait()", g.Wait())
			})
		})
	}
}

// TestWatchdogRestarts: every worker is blocked for long enough that the
// watchdog, finding nothing queued, exits; then the task that would unblock
// them is posted. The post must start the watchdog again (saturated pool),
// which adds a worker for it.
func TestWatchdogRestarts(t *testing.T) {
	forProcs(t, []int{1, 2}, func(t *testing.T, procs int) {
		var g Group
		gate := make(chan struct{})
		var started atomic.Int64
		for range procs {
			g.Go(func() error { started.Add(1); <-gate; return nil })
		}
		testkit.WaitUntil(t, "every worker blocked, the watchdog gone, no extra worker", func() bool {
			return started.Load() == int64(procs) && !global.ho.Watching() && global.live.Load() == int32(procs)
		})
		g.Go(func() error { close(gate); return nil })
		<-gate // not Wait, which could run the task itself
		wantNil(t, "Wait()", g.Wait())
	})
}
