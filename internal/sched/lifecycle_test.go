package sched

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"weak"

	"github.com/go-steal/steal/internal/gid"
	"github.com/go-steal/steal/internal/testkit"
)

// The pool's life without an owner: workers start when tasks come, are
// reused by every group, follow GOMAXPROCS, and leave by themselves.

// TestLifecycleBurstRetires: after a burst of tasks from many goroutines
// outside the pool, of groups of every shape, including fan-outs of
// blocking tasks that grow the pool past GOMAXPROCS, every worker retires
// and the watchdog exits, with no Wait or shutdown asking them to.
//
// That the pool grew is seen at an event, not by sampling: when the last
// task of a fan-out starts, all of them are running, at most one on the
// submitter's goroutine (its Wait runs only its own group's tasks, and
// blocks in the first), so at least fanOut-1 workers are live.
func TestLifecycleBurstRetires(t *testing.T) {
	testkit.Guard(t, func() {
		checkRetired(t)
		base := runtime.NumGoroutine()
		var grown maxGauge // live workers while a fan-out had every task running
		const submitters = 8
		fanOut := max(16, 2*runtime.GOMAXPROCS(0)+2)
		var ran atomic.Int64
		testkit.Parallel(submitters, func(sub int) {
			for round := range 4 {
				var g Group
				switch (sub + round) % 3 {
				case 1:
					g.SetLimit(2)
				}
				// A fan-out of blocking tasks: none finishes before all
				// have started, so the pool must grow.
				if g.limit == 0 {
					testkit.FanOut(&g, fanOut, func() {
						grown.observe(int64(global.live.Load()))
						ran.Add(1)
					})
				}
				for range 50 {
					g.Go(func() error {
						var n Group
						n.Go(func() error { ran.Add(1); return nil })
						ran.Add(1)
						return n.Wait()
					})
				}
				wantNil(t, "Wait()", g.Wait())
			}
		})
		checkRetired(t)
		t.Logf("%d tasks; %d live workers while a fan-out of %d ran", ran.Load(), grown.hi.Load(), fanOut)
		if hi := grown.hi.Load(); hi < int64(fanOut-1) || hi <= int64(runtime.GOMAXPROCS(0)) {
			t.Errorf("while a fan-out of %d blocking tasks all ran, %d workers were live, want at least %d, past GOMAXPROCS (%d)",
				fanOut, hi, fanOut-1, runtime.GOMAXPROCS(0))
		}
		testkit.WaitUntil(t, "goroutine count back to baseline", func() bool { return runtime.NumGoroutine() <= base })
	})
	testkit.VerifyNone(t)
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
	groups := testkit.ScaleDown(2000, 500)
	guardPool(t, func() {
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
			wantNil(t, "Wait()", g.Wait())
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
	})
}

// TestLifecycleFollowsGOMAXPROCS: the pool follows GOMAXPROCS while the
// process runs. Raised while the pool is saturated with CPU-bound tasks, it
// lets the pool grow to the new value; lowered, it makes the surplus
// workers retire, while tasks keep coming.
func TestLifecycleFollowsGOMAXPROCS(t *testing.T) {
	testkit.SetProcs(t, 1)
	guardPool(t, func() {
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
			testkit.WaitUntil(t, what, func() bool { feed(); return cond() })
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
		testkit.WaitUntil(t, "the queued tasks ran", func() bool { return ran.Load() == submitted })
		wantNil(t, "Wait()", g.Wait())
	})
}

// TestPoolRetiresAfterWait: after the Wait of a top-level group returns,
// its tasks have all run, and soon no worker occupies a slot and no
// goroutine of the pool remains, whatever the shape of the work. A group
// used again after Wait behaves the same.
func TestPoolRetiresAfterWait(t *testing.T) {
	errBoom := errors.New("boom")
	shapes := []struct {
		name  string
		limit int
		run   func(g *Group, ran *atomic.Int64)
		want  int64
		err   error
	}{
		{"flat", -1, func(g *Group, ran *atomic.Int64) {
			for range 1000 {
				g.Go(func() error { ran.Add(1); return nil })
			}
		}, 1000, nil},
		{"flat-limit1", 1, func(g *Group, ran *atomic.Int64) {
			for range 300 {
				g.Go(func() error { ran.Add(1); return nil })
			}
		}, 300, nil},
		{"flat-limit2-error", 2, func(g *Group, ran *atomic.Int64) {
			for i := range 300 {
				g.Go(func() error {
					ran.Add(1)
					if i == 150 {
						return errBoom
					}
					return nil
				})
			}
		}, 300, errBoom},
		{"nested-fib", -1, func(g *Group, ran *atomic.Int64) {
			for range 4 {
				g.Go(func() error {
					if fibGroup(15) != fibPlain(15) {
						return errors.New("wrong fib")
					}
					ran.Add(1)
					return nil
				})
			}
		}, 4, nil},
		{"spawning", -1, func(g *Group, ran *atomic.Int64) {
			for range 50 {
				g.Go(func() error {
					for range 20 {
						g.Go(func() error { ran.Add(1); return nil })
					}
					ran.Add(1)
					return nil
				})
			}
		}, 50 * 21, nil},
	}
	for _, s := range shapes {
		t.Run(s.name, func(t *testing.T) {
			base := runtime.NumGoroutine()
			testkit.Guard(t, func() {
				for round := range 3 { // a Group may be used again after Wait
					var ran atomic.Int64
					var g Group
					g.SetLimit(s.limit)
					s.run(&g, &ran)
					if err := g.Wait(); err != s.err {
						t.Errorf("round %d: Wait() = %v, want %v", round, err, s.err)
					}
					if got := ran.Load(); got != s.want {
						t.Errorf("round %d: %d tasks ran, want %d", round, got, s.want)
					}
					if c := g.count(); c != 0 {
						t.Errorf("round %d: count %d after Wait", round, c)
					}
					checkRetired(t)
				}
				testkit.WaitUntil(t, "goroutine count back to baseline", func() bool { return runtime.NumGoroutine() <= base })
			})
			testkit.VerifyNone(t)
		})
	}
}

// TestPoolRetiresWithoutWait: workers retire after the linger even while a
// group that is never waited on is still in use; the pool starts workers
// again on the group's next Go.
func TestPoolRetiresWithoutWait(t *testing.T) {
	guardPool(t, func() {
		var g Group
		var wg sync.WaitGroup
		var ran atomic.Int64
		for range 200 {
			wg.Add(1)
			g.Go(func() error {
				defer wg.Done()
				var n Group
				for range 5 {
					n.Go(func() error { ran.Add(1); return nil })
				}
				n.Wait()
				return nil
			})
		}
		wg.Wait()
		testkit.WaitUntil(t, "idle workers retire", func() bool { return poolIdle() && g.count() == 0 })
		if got := ran.Load(); got != 200*5 {
			t.Errorf("%d nested tasks ran, want %d", got, 200*5)
		}
		testkit.VerifyNone(t)

		// The pool comes back to life: the task runs on a new worker (the
		// test goroutine is blocked on done, not in Wait, so it cannot run
		// the task itself).
		done := make(chan struct{})
		var onWorker atomic.Bool
		g.Go(func() error { onWorker.Store(current() != nil); close(done); return nil })
		<-done
		if gid.Trusted() && !onWorker.Load() {
			t.Errorf("after the workers retired, a task did not run on a worker")
		}
		wantNil(t, "Wait()", g.Wait())
	})
}

// TestPoolEscapedNestedGroup: a task makes a nested group, Go's a task on
// it that blocks, and returns without waiting (as an errgroup task may
// leave goroutines behind). The outer Wait must return while that task is
// blocked, with the worker that runs it still live; once it is released,
// the pool goes idle, whether the nested group is waited on or not.
func TestPoolEscapedNestedGroup(t *testing.T) {
	for _, procs := range []int{1, 2} {
		for _, how := range []string{"linger", "wait-again"} {
			t.Run(fmt.Sprintf("procs=%d/%s", procs, how), func(t *testing.T) {
				testkit.SetProcs(t, procs)
				guardPool(t, func() {
					var g, n Group
					started, release := make(chan struct{}), make(chan struct{})
					var nestedDone atomic.Bool
					g.Go(func() error {
						n.Go(func() error {
							close(started)
							<-release
							nestedDone.Store(true)
							return nil
						})
						return nil
					})
					<-started
					if err := g.Wait(); err != nil { // must not hang
						t.Errorf("Wait() = %v", err)
					}
					if nestedDone.Load() {
						t.Fatalf("the nested task finished before it was released")
					}
					if n.count() != 1 {
						t.Errorf("nested count = %d while its task runs, want 1", n.count())
					}
					if global.live.Load() < 1 {
						t.Errorf("live = %d while a nested task runs on a worker", global.live.Load())
					}
					close(release)
					switch how {
					case "linger":
						testkit.WaitUntil(t, "nested task done", func() bool { return nestedDone.Load() && n.count() == 0 })
					case "wait-again":
						wantNil(t, "nested Wait()", n.Wait())
						if !nestedDone.Load() {
							t.Errorf("nested Wait returned before its task finished")
						}
						wantNil(t, "second Wait()", g.Wait())
					}
					if g.count() != 0 || n.count() != 0 {
						t.Errorf("counts at the end: outer %d, nested %d", g.count(), n.count())
					}
				})
			})
		}
	}
}

// TestPoolConcurrentWaits: several goroutines Wait on one group at once
// (each may run the group's tasks that it can reach); all return the same
// error, and the group can be used again.
func TestPoolConcurrentWaits(t *testing.T) {
	errFirst := errors.New("first")
	rounds := testkit.ScaleDown(20, 5)
	guardPool(t, func() {
		var g Group
		for round := range rounds {
			gate := make(chan struct{})
			var ran atomic.Int64
			const tasks = 64
			for i := range tasks {
				g.Go(func() error {
					if i%2 == 0 {
						<-gate
					}
					ran.Add(1)
					if i == 7 {
						return errFirst
					}
					return nil
				})
			}
			const waiters = 8
			errs := make(chan error, waiters)
			var started sync.WaitGroup
			for range waiters {
				started.Add(1)
				go func() {
					started.Done()
					err := g.Wait()
					if c := g.count(); c != 0 {
						t.Errorf("round %d: a Wait returned with count %d", round, c)
					}
					errs <- err
				}()
			}
			started.Wait()
			if round%2 == 0 {
				runtime.Gosched()
			}
			close(gate)
			for range waiters {
				if err := <-errs; err != errFirst {
					t.Errorf("round %d: concurrent Wait() = %v, want %v", round, err, errFirst)
				}
			}
			if got := ran.Load(); got != tasks {
				t.Errorf("round %d: %d tasks ran, want %d", round, got, tasks)
			}
		}
	})
}

// TestPoolReleasesClosures: once a task has run, neither the injector, nor
// a deque, nor a free task record, nor a waiter that ran it keeps its
// closure alive. Limited groups are included, so that tasks also run on the
// goroutine of a Go that waits for a slot.
func TestPoolReleasesClosures(t *testing.T) {
	guardPool(t, func() {
		type payload struct{ buf [64]byte }
		const n = 500
		ptrs := make([]weak.Pointer[payload], 0, 2*n)
		var g, limited Group
		limited.SetLimit(2)
		for i := range n {
			obj := &payload{}
			obj.buf[0] = byte(i)
			ptrs = append(ptrs, weak.Make(obj))
			g.Go(func() error {
				var m Group
				inner := &payload{}
				inner.buf[0] = obj.buf[0]
				m.Go(func() error { sink.Add(int64(inner.buf[1])); return nil })
				m.Wait()
				sink.Add(int64(obj.buf[1]))
				return nil
			})
			lobj := &payload{}
			ptrs = append(ptrs, weak.Make(lobj))
			limited.Go(func() error { sink.Add(int64(lobj.buf[1])); return nil })
		}
		wantNil(t, "Wait()", g.Wait())
		wantNil(t, "limited Wait()", limited.Wait())
		runtime.GC()
		runtime.GC()
		alive := 0
		for _, p := range ptrs {
			if p.Value() != nil {
				alive++
			}
		}
		if alive != 0 {
			t.Errorf("%d of %d task closures are still reachable after Wait", alive, len(ptrs))
		}
		runtime.KeepAlive(&g)
		runtime.KeepAlive(&limited)
	})
}
