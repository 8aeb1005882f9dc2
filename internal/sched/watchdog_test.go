package sched

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Compensation for blocked workers (CONTRACT §4, second point). No test
// here measures time: each one waits (under the hang guard) for what must
// eventually happen, or samples a bound that must always hold.

// chainTasks returns n task functions where task i waits until task i+1
// has finished: run in submission order on a fixed number of workers, they
// stall unless the pool adds workers.
func chainTasks(n int, ran *atomic.Int64) []func() error {
	done := make([]chan struct{}, n)
	for i := range done {
		done[i] = make(chan struct{})
	}
	fs := make([]func() error, n)
	for i := range fs {
		fs[i] = func() error {
			if i+1 < n {
				<-done[i+1]
			}
			ran.Add(1)
			close(done[i])
			return nil
		}
	}
	return fs
}

// TestWatchdogChain: 64 tasks, each waiting for the one submitted after it,
// all complete, from outside and from inside a task, at several GOMAXPROCS.
func TestWatchdogChain(t *testing.T) {
	const n = 64
	for _, procs := range []int{1, 2, 8} {
		for _, from := range []string{"outside", "inside"} {
			t.Run(fmt.Sprintf("procs=%d/%s", procs, from), func(t *testing.T) {
				setProcs(t, procs)
				guard(t, func() {
					var g Group
					var ran atomic.Int64
					fs := chainTasks(n, &ran)
					switch from {
					case "outside":
						for _, f := range fs {
							g.Go(f, true)
						}
					case "inside":
						g.Go(func() error {
							var m Group
							for _, f := range fs {
								m.Go(f, true)
							}
							return m.Wait()
						}, true)
					}
					p := poolOf(t, &g)
					if err := g.Wait(); err != nil {
						t.Errorf("Wait() = %v", err)
					}
					if got := ran.Load(); got != n {
						t.Errorf("%d of %d tasks ran", got, n)
					}
					checkDrained(t, p)
				})
				goleak.VerifyNone(t)
			})
		}
	}
}

// TestWatchdogFanOutBlocking: many tasks that all wait for one gate that is
// opened only once every one of them has started: the pool must grow to
// run them all at once (errgroup would), whatever GOMAXPROCS.
func TestWatchdogFanOutBlocking(t *testing.T) {
	const n = 48
	for _, procs := range []int{1, 2} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			setProcs(t, procs)
			guard(t, func() {
				var g Group
				var started atomic.Int64
				all := make(chan struct{})
				for range n {
					g.Go(func() error {
						if started.Add(1) == n {
							close(all)
						}
						<-all
						return nil
					}, true)
				}
				p := poolOf(t, &g)
				if err := g.Wait(); err != nil {
					t.Errorf("Wait() = %v", err)
				}
				checkDrained(t, p)
			})
			goleak.VerifyNone(t)
		})
	}
}

// spin busy-waits for about d.
func spin(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

// TestWatchdogCPUBoundStaysSmall: thousands of CPU-bound tasks must not
// grow the pool past GOMAXPROCS plus a few workers (CONTRACT §4).
func TestWatchdogCPUBoundStaysSmall(t *testing.T) {
	const procs = 2
	n := 4000
	if testing.Short() || raceEnabled {
		n = 1000
	}
	for _, from := range []string{"outside", "inside"} {
		t.Run(from, func(t *testing.T) {
			setProcs(t, procs)
			guard(t, func() {
				base := runtime.NumGoroutine()
				var g Group
				var ran atomic.Int64
				work := func() error {
					spin(50 * time.Microsecond)
					ran.Add(1)
					return nil
				}
				first := make(chan struct{})
				g.Go(func() error { <-first; return nil }, true)
				p := poolOf(t, &g)
				var live, gor maxGauge
				s := startSampler(func() {
					live.observe(int64(p.live.Load()))
					gor.observe(int64(runtime.NumGoroutine()))
				})
				close(first)
				switch from {
				case "outside":
					for range n {
						g.Go(work, true)
					}
				case "inside":
					for range 4 {
						g.Go(func() error {
							for range n / 4 {
								g.Go(work, true)
							}
							return nil
						}, true)
					}
				}
				if err := g.Wait(); err != nil {
					t.Errorf("Wait() = %v", err)
				}
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
				// the workers.
				if hi := gor.hi.Load(); hi > int64(base)+2+limit {
					t.Errorf("CPU-bound tasks: up to %d goroutines, want ≤ %d (baseline %d + sampler + watchdog + GOMAXPROCS+3)",
						hi, int64(base)+2+limit, base)
				}
				checkDrained(t, p)
			})
			goleak.VerifyNone(t)
		})
	}
}

// TestWatchdogExtraWorkersRetire: a burst of blocking tasks makes the pool
// grow past its size; once the burst ends, the extra workers retire, while
// the group is still in use (no Wait yet): when the pool goes idle, and
// while bursts of short tasks keep waking its workers (so that retiring
// only after a linger spent asleep would not shrink it).
func TestWatchdogExtraWorkersRetire(t *testing.T) {
	const procs, n = 2, 32
	for _, after := range []string{"idle", "busy"} {
		t.Run(after, func(t *testing.T) {
			setProcs(t, procs)
			guard(t, func() {
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
					}, true)
				}
				p := poolOf(t, &g)
				waitUntil(t, "every blocking task started", func() bool { return started.Load() == n })
				if l := p.live.Load(); l <= p.size {
					t.Errorf("%d blocking tasks run with %d live workers, size %d", n, l, p.size)
				}
				close(gate)
				burst.Wait()
				switch after {
				case "idle":
					waitUntil(t, "extra workers retire", func() bool { return p.live.Load() <= p.size })
				case "busy":
					var ran atomic.Int64
					submitted := int64(0)
					waitUntil(t, "extra workers retire while bursts of tasks keep the pool busy", func() bool {
						for range 16 {
							g.Go(func() error { spin(20 * time.Microsecond); ran.Add(1); return nil }, true)
							submitted++
						}
						return p.live.Load() <= p.size
					})
					waitUntil(t, "bursts done", func() bool { return ran.Load() == submitted })
				}
				if err := g.Wait(); err != nil {
					t.Errorf("Wait() = %v", err)
				}
				checkDrained(t, p)
			})
			goleak.VerifyNone(t)
		})
	}
}

// TestWatchdogRestarts: every worker is blocked for long enough that the
// watchdog, finding nothing queued, exits; then the task that would unblock
// them is posted. The post must start the watchdog again (saturated pool),
// which adds a worker for it.
func TestWatchdogRestarts(t *testing.T) {
	for _, procs := range []int{1, 2} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			setProcs(t, procs)
			guard(t, func() {
				var g Group
				gate := make(chan struct{})
				var started atomic.Int64
				for range procs {
					g.Go(func() error { started.Add(1); <-gate; return nil }, true)
				}
				p := poolOf(t, &g)
				waitUntil(t, "every worker blocked, the watchdog gone, no extra worker", func() bool {
					return started.Load() == int64(procs) && !p.watching.Load() && p.live.Load() == p.size
				})
				g.Go(func() error { close(gate); return nil }, true)
				if err := g.Wait(); err != nil {
					t.Errorf("Wait() = %v", err)
				}
				checkDrained(t, p)
			})
			goleak.VerifyNone(t)
		})
	}
}

// TestBlockedOnOtherPool: a worker that blocks in a Wait (or in a Go at the
// limit) on a group of another pool counts as blocked, which raises its
// pool's capacity, so tasks queued behind it still run; once it returns,
// the count goes back.
func TestBlockedOnOtherPool(t *testing.T) {
	needGID(t)
	for _, how := range []string{"Wait", "Go-at-limit"} {
		for _, limit := range []int{-1, 2} {
			t.Run(fmt.Sprintf("%s/limit=%d", how, limit), func(t *testing.T) {
				setProcs(t, 1) // size 1: the only worker blocks
				guard(t, func() {
					var other Group
					otherGate := make(chan struct{})
					if how == "Go-at-limit" {
						other.SetLimit(1)
					}
					other.Go(func() error { <-otherGate; return nil }, true)

					var g Group
					g.SetLimit(limit)
					inWait := make(chan struct{})
					var otherRan atomic.Bool
					g.Go(func() error {
						close(inWait)
						switch how {
						case "Wait":
							other.Wait()
						case "Go-at-limit":
							other.Go(func() error { otherRan.Store(true); return nil }, true)
						}
						return nil
					}, true)
					<-inWait
					p := poolOf(t, &g)
					waitUntil(t, "the worker counts as blocked", func() bool { return p.blocked.Load() == 1 })
					if c, want := p.capacity(), min(p.size+1, p.hardMax); c != want {
						t.Errorf("capacity() = %d with one worker blocked, want %d", c, want)
					}
					const behind = 10
					var ran atomic.Int64
					for range behind {
						g.Go(func() error { ran.Add(1); return nil }, true)
					}
					waitUntil(t, "tasks queued behind the blocked worker run", func() bool { return ran.Load() == behind })
					if p.blocked.Load() != 1 {
						t.Errorf("blocked = %d while the worker still waits", p.blocked.Load())
					}
					close(otherGate)
					if err := g.Wait(); err != nil {
						t.Errorf("Wait() = %v", err)
					}
					if b := p.blocked.Load(); b != 0 {
						t.Errorf("blocked = %d after the wait ended", b)
					}
					checkDrained(t, p)
					if err := other.Wait(); err != nil {
						t.Errorf("other.Wait() = %v", err)
					}
					if how == "Go-at-limit" && !otherRan.Load() {
						t.Errorf("the task a worker submitted to the other group did not run")
					}
					checkDrained(t, other.pool.Load())
				})
				goleak.VerifyNone(t)
			})
		}
	}
}
