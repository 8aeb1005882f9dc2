package wsgroup_test

// The lifecycle of the goroutines that run tasks, seen from outside: once
// the process has no task, every goroutine of the scheduler leaves by
// itself, and nothing else is left (testkit.VerifyNone waits for the first,
// an event, then asks goleak); and a service that runs request after
// request does not start goroutines for each of them. How soon they leave
// (a linger, within goleak's own retries on an idle machine) is a time, so
// no test asserts it: the soak (internal/soak) reports it. goleak looks at
// every goroutine of the process, so nothing in this package may use
// t.Parallel.

import (
	"context"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"

	"github.com/go-steal/steal/internal/testkit"
	"github.com/go-steal/steal/wsgroup"
)

func TestNoLeakAfterWait(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"zero-group", func(t *testing.T) {
			var g wsgroup.Group
			runTasks(t, &g, 1000, func() {})
		}},
		{"SetLimit(3)", func(t *testing.T) {
			var g wsgroup.Group
			g.SetLimit(3)
			runTasks(t, &g, 1000, busy)
		}},
		{"SetLimit(3)-recursive", func(t *testing.T) {
			var g wsgroup.Group
			g.SetLimit(3)
			var ran atomic.Int64
			g.Go(binaryTree(&g, &ran, 0, 8))
			wantNil(t, "Wait()", g.Wait())
			if n := ran.Load(); n != 511 {
				t.Errorf("ran %d tasks, want 511", n)
			}
		}},
		{"nested-fib(10)", func(t *testing.T) {
			if got := fibGroups(10); got != 55 {
				t.Errorf("fib(10) = %d, want 55", got)
			}
		}},
		{"WithContext-error", func(t *testing.T) {
			g, ctx := wsgroup.WithContext(context.Background())
			var ran atomic.Int32
			g.Go(func() error { return errDoom })
			for i := 0; i < 100; i++ {
				g.Go(func() error {
					ran.Add(1)
					if i%10 == 0 {
						return ctx.Err() // nil or context.Canceled: not the first error
					}
					return nil
				})
			}
			if err := g.Wait(); err != errDoom {
				t.Errorf("Wait() = %v, want %v", err, errDoom)
			}
			if n := ran.Load(); n != 100 {
				t.Errorf("ran %d tasks, want 100", n)
			}
		}},
		{"WithContext-error-waiters", func(t *testing.T) {
			// Tasks block until the error cancels the context.
			g, ctx := wsgroup.WithContext(context.Background())
			for i := 0; i < 8; i++ {
				g.Go(func() error { <-ctx.Done(); return ctx.Err() })
			}
			g.Go(func() error { return errDoom })
			if err := g.Wait(); err != errDoom {
				t.Errorf("Wait() = %v, want %v", err, errDoom)
			}
		}},
		{"reused-twice", func(t *testing.T) {
			var g wsgroup.Group
			for round := 0; round < 2; round++ {
				t.Logf("round %d", round)
				runTasks(t, &g, 100, func() {})
				g.SetLimit(2)
			}
		}},
		{"blocking-tasks", func(t *testing.T) {
			// Every task blocks until the last one has started, so the pool
			// has to grow past its usual size; the extra workers must go
			// away too.
			var g wsgroup.Group
			testkit.FanOut(&g, 32, nil)
			wantNil(t, "Wait()", g.Wait())
		}},
		{"task-waits-on-other-group", func(t *testing.T) {
			var a, b wsgroup.Group
			b.Go(func() error { return nil })
			a.Go(func() error {
				for i := 0; i < 50; i++ {
					b.Go(func() error { return nil })
				}
				return b.Wait()
			})
			wantNil(t, "a.Wait()", a.Wait())
			wantNil(t, "b.Wait()", b.Wait())
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			testkit.Guard(t, func() { tc.run(t) })
			testkit.VerifyNone(t)
		})
	}
}

// TestNoLeakAfterConcurrentRequests: 100 clients at once each run a few
// requests of every kind (including tasks blocked on other tasks, which
// make the scheduler add workers, and Goexit, which replaces a worker's
// goroutine) and return; then no goroutine but the test's may remain
// (goleak waits a while for goroutines that are on their way out).
//
// It catches workers, replacement workers or helper goroutines (a
// watchdog, a timer-driven retirer) that are never told to exit once
// every group is done, or that wait for a wake-up that never comes
// when the last of many concurrent groups finishes.
func TestNoLeakAfterConcurrentRequests(t *testing.T) {
	const clients = 100
	perClient := testkit.Scale(6, 3)
	testkit.ForProcs(t, func(t *testing.T) {
		seed := uint64(100 + runtime.GOMAXPROCS(0))
		testkit.Guard(t, func() {
			runClients(t, clients, seed, func(done int) bool { return done < perClient })
		})
		testkit.VerifyNone(t)
	})
}

// goroutinesCreated is the runtime metric that counts every goroutine
// started since the program began (Go 1.26).
const goroutinesCreated = "/sched/goroutines-created:goroutines"

// readGoroutinesCreated reads goroutinesCreated. It reports an error (and
// returns 0) if the runtime does not have it; it may be called from a
// goroutine other than the test's.
func readGoroutinesCreated(t testing.TB) uint64 {
	t.Helper()
	s := []metrics.Sample{{Name: goroutinesCreated}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		t.Errorf("runtime/metrics has no %s (kind %v)", goroutinesCreated, s[0].Value.Kind())
		return 0
	}
	return s[0].Value.Uint64()
}

// TestWarmReuseStartsNoGoroutines runs small requests back to back from
// one goroutine (each a new top-level group with 4 tiny tasks, then Wait)
// and counts, with the runtime's own counter of goroutines created, how
// many goroutines they started: at most GOMAXPROCS+8 for all of them
// together (a cold start of every worker, plus a little slack), after a
// warm-up that also started the garbage collector's workers, and two more
// for each worker that retired meanwhile (which happens only when the
// machine kept this goroutine waiting for a linger), while retirements stay
// under a tenth of the requests. These are counts of events, not timings. Variants: a plain group, a group whose task forks a
// nested group, a limited group, and a WithContext group.
//
// It catches a scheduler that starts (and stops) its workers per
// top-level group instead of keeping them for the next request, and one
// that starts a goroutine per task, per Wait or per context.
//
// A scheduler in which each top-level group owns its workers and stops
// them in Wait fails this test by design: every request starts at least
// one worker.
func TestWarmReuseStartsNoGoroutines(t *testing.T) {
	found := false
	for _, d := range metrics.All() {
		found = found || d.Name == goroutinesCreated
	}
	if !found {
		t.Fatalf("runtime/metrics does not list %s", goroutinesCreated)
	}
	requests := testkit.Scale(2000, 1000)
	noop := func() error { return nil }
	variants := []struct {
		name    string
		request func(t *testing.T)
	}{
		{"plain", func(t *testing.T) {
			var g wsgroup.Group
			for range 4 {
				g.Go(noop)
			}
			wantNil(t, "Wait()", g.Wait())
		}},
		{"nested", func(t *testing.T) {
			var g wsgroup.Group
			var ran atomic.Int32
			g.Go(func() error {
				var h wsgroup.Group
				for range 3 {
					h.Go(func() error { ran.Add(1); return nil })
				}
				return h.Wait()
			})
			wantNil(t, "Wait()", g.Wait())
			if n := ran.Load(); n != 3 {
				t.Errorf("%d nested tasks ran, want 3", n)
			}
		}},
		{"limit", func(t *testing.T) {
			var g wsgroup.Group
			g.SetLimit(2)
			for range 4 {
				g.Go(noop)
			}
			wantNil(t, "Wait()", g.Wait())
		}},
		{"context", func(t *testing.T) {
			g, ctx := wsgroup.WithContext(context.Background())
			for range 4 {
				g.Go(func() error { return ctx.Err() })
			}
			wantNil(t, "Wait()", g.Wait())
		}},
	}
	testkit.ForProcs(t, func(t *testing.T) {
		for _, v := range variants {
			t.Run(v.name, func(t *testing.T) {
				var created, retired uint64
				testkit.Guard(t, func() {
					for range 200 {
						v.request(t)
					}
					runtime.GC() // the collector starts its per-P workers once
					before, stats := readGoroutinesCreated(t), wsgroup.ReadStats()
					for range requests {
						v.request(t)
					}
					created = readGoroutinesCreated(t) - before
					retired = wsgroup.ReadStats().Sub(stats).WorkersRetired
				})
				t.Logf("%d requests started %d goroutines; %d workers retired meanwhile", requests, created, retired)
				// A worker retires only after a linger without a task:
				// when this goroutine was kept off the CPU that long (a
				// busy machine), and then a worker starts again for the
				// next request, with maybe the watchdog. Allow for each
				// retirement; retirements themselves must stay rare.
				if most := uint64(requests / 10); retired > most {
					t.Errorf("%d workers retired during %d requests one after another, want at most %d: the workers must stay warm between requests", retired, requests, most)
				}
				if bound := uint64(runtime.GOMAXPROCS(0)+8) + 2*retired; created > bound {
					t.Errorf("%d requests, one after another, started %d goroutines, want at most %d (GOMAXPROCS+8, and 2 for each of the %d workers that retired): the workers must be reused from one request to the next",
						requests, created, bound, retired)
				}
			})
		}
	})
}
