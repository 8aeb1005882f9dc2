package sched

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// The pool's life without an owner: workers start when tasks come, are
// reused by every group, follow GOMAXPROCS, and leave by themselves.

// TestLifecycleBurstRetires: after a burst of tasks from many goroutines
// outside the pool, of groups of every shape, including fan-outs of
// blocking tasks that make the watchdog grow the pool past GOMAXPROCS,
// every worker retires and the watchdog exits, with no Wait or shutdown
// asking them to.
func TestLifecycleBurstRetires(t *testing.T) {
	guard(t, func() {
		checkRetired(t)
		base := runtime.NumGoroutine()
		var live maxGauge
		var watched atomic.Bool
		s := startSampler(func() {
			live.observe(int64(global.live.Load()))
			if global.watching.Load() {
				watched.Store(true)
			}
		})
		const submitters, fanOut = 8, 16
		var ran atomic.Int64
		var wg sync.WaitGroup
		for sub := range submitters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for round := range 4 {
					var g Group
					switch (sub + round) % 3 {
					case 1:
						g.SetLimit(2)
					}
					// A fan-out of blocking tasks: none finishes before all
					// have started, so the pool must grow.
					if g.limit == 0 {
						var started atomic.Int64
						all := make(chan struct{})
						for range fanOut {
							g.Go(func() error {
								if started.Add(1) == fanOut {
									close(all)
								}
								<-all
								ran.Add(1)
								return nil
							})
						}
					}
					for range 50 {
						g.Go(func() error {
							var n Group
							n.Go(func() error { ran.Add(1); return nil })
							ran.Add(1)
							return n.Wait()
						})
					}
					if err := g.Wait(); err != nil {
						t.Errorf("Wait() = %v", err)
					}
				}
			}()
		}
		wg.Wait()
		checkRetired(t)
		s.stop()
		t.Logf("%d tasks; at most %d live workers; watchdog seen: %v", ran.Load(), live.hi.Load(), watched.Load())
		if !watched.Load() || live.hi.Load() <= int64(runtime.GOMAXPROCS(0)) {
			t.Errorf("the burst never grew the pool past GOMAXPROCS with the watchdog (at most %d live workers, watchdog seen: %v): "+
				"the test no longer builds its case", live.hi.Load(), watched.Load())
		}
		waitUntil(t, "goroutine count back to baseline", func() bool { return runtime.NumGoroutine() <= base })
	})
	goleak.VerifyNone(t)
}

// createdMetric counts the goroutines the process has created.
const createdMetric = "/sched/goroutines-created:goroutines"

// goroutinesCreated reads createdMetric; the test is skipped when the
// runtime does not have it.
func goroutinesCreated(t *testing.T) uint64 {
	t.Helper()
	found := false
	for _, d := range metrics.All() {
		if d.Name == createdMetric {
			found = true
		}
	}
	if !found {
		t.Skipf("runtime/metrics has no %s", createdMetric)
	}
	s := []metrics.Sample{{Name: createdMetric}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestLifecycleWorkersReused: back-to-back small groups from one goroutine
// run on the same warm workers: the number of goroutines created for
// thousands of groups stays a small fraction of the number of groups (a
// pool per group, or workers that retire as soon as they are idle, would
// create at least one per group). A count, not a time: a pause longer than
// the linger (a loaded machine) only costs a few more.
func TestLifecycleWorkersReused(t *testing.T) {
	groups := 2000
	if testing.Short() || raceEnabled {
		groups = 500
	}
	guard(t, func() {
		checkRetired(t)
		run := func() (onWorkers int64) {
			var g Group
			var wg sync.WaitGroup
			var on atomic.Int64
			const k = 4
			wg.Add(k)
			for range k {
				g.Go(func() error {
					if current() != nil {
						on.Add(1)
					}
					wg.Done()
					return nil
				})
			}
			wg.Wait() // not Wait first: the tasks must run on workers
			if err := g.Wait(); err != nil {
				t.Errorf("Wait() = %v", err)
			}
			return on.Load()
		}
		run() // warm up
		before := goroutinesCreated(t)
		var onWorkers int64
		for range groups {
			onWorkers += run()
		}
		created := goroutinesCreated(t) - before
		t.Logf("%d groups of 4 tasks (%d on workers): %d goroutines created", groups, onWorkers, created)
		if bound := uint64(groups / 10); created > bound {
			t.Errorf("%d back-to-back groups created %d goroutines, want at most %d: workers are not reused", groups, created, bound)
		}
		checkRetired(t)
	})
	goleak.VerifyNone(t)
}

// TestLifecycleFollowsGOMAXPROCS: the pool follows GOMAXPROCS while the
// process runs. Raised while the pool is saturated with CPU-bound tasks, it
// lets the pool grow to the new value; lowered, it makes the surplus
// workers retire, while tasks keep coming.
func TestLifecycleFollowsGOMAXPROCS(t *testing.T) {
	setProcs(t, 1)
	guard(t, func() {
		checkRetired(t)
		var g Group
		var ran atomic.Int64
		submitted := int64(0)
		work := func() error { spin(20 * time.Microsecond); ran.Add(1); return nil }
		// feed keeps tasks queued: it runs between polls of the conditions
		// below, on the test goroutine, which never runs tasks itself here
		// (no Wait, no limit).
		feed := func() {
			for range 16 {
				g.Go(work)
				submitted++
			}
		}
		check := func(what string, cond func() bool) {
			t.Helper()
			waitUntil(t, what, func() bool { feed(); return cond() })
		}
		check("saturated at GOMAXPROCS 1", func() bool { return global.live.Load() >= 1 && global.queued() > 0 })
		if l := global.live.Load(); l > 1 {
			// CPU-bound: the watchdog adds nobody, so one worker runs.
			t.Logf("note: %d live workers at GOMAXPROCS 1", l)
		}
		for _, procs := range []int{4, 2, 3, 1} {
			runtime.GOMAXPROCS(procs)
			switch {
			case int32(procs) > global.live.Load():
				check(fmt.Sprintf("the pool grows to GOMAXPROCS %d", procs), func() bool { return global.live.Load() >= int32(procs) })
			default:
				check(fmt.Sprintf("the pool shrinks to GOMAXPROCS %d", procs), func() bool { return global.live.Load() <= int32(procs) })
			}
			if s := global.size.Load(); s != int32(procs) {
				t.Errorf("size = %d after GOMAXPROCS(%d)", s, procs)
			}
		}
		waitUntil(t, "the queued tasks ran", func() bool { return ran.Load() == submitted })
		if err := g.Wait(); err != nil {
			t.Errorf("Wait() = %v", err)
		}
		checkRetired(t)
	})
	goleak.VerifyNone(t)
}
