package wsgroup_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-steal/steal/internal/gid"
	"github.com/go-steal/steal/internal/testkit"
	"github.com/go-steal/steal/internal/workload"
	"github.com/go-steal/steal/wsgroup"
)

// The tests of ReadStats. The counts are process-wide, so each test takes
// its readings while no task of another test runs (the tests of this
// package that run tasks in parallel run after these), and compares
// readings taken when the scheduler is quiet: no worker left.

// quietStats polls ReadStats until no worker is left, and returns that
// reading: every worker has published its counts by then. Workers exit
// within milliseconds of the last task.
func quietStats(t testing.TB) wsgroup.Stats {
	t.Helper()
	var s wsgroup.Stats
	testkit.WaitUntil(t, "no worker left", func() bool {
		s = wsgroup.ReadStats()
		return s.Workers == 0
	})
	return s
}

// statsStay reads the stats a few times over a few lingers of the workers
// and reports an error if Tasks moves: a count published late (after the
// scheduler was seen quiet) would be one counted twice, or a lag.
func statsStay(t *testing.T, want wsgroup.Stats) {
	t.Helper()
	for range 10 {
		time.Sleep(time.Millisecond)
		if s := wsgroup.ReadStats(); s.Tasks != want.Tasks {
			t.Errorf("Tasks moved from %d to %d with no task running", want.Tasks, s.Tasks)
			return
		}
	}
}

// TestStatsForkJoinExact: once the scheduler is quiet, Tasks has moved by
// exactly the number of tasks of a nested fork-join (fib with a group per
// call): called from the test's goroutine, where the outermost Wait runs
// most of it, taking back the tasks it gives; then in a task, where
// workers run it, helping in the nested Waits.
func TestStatsForkJoinExact(t *testing.T) {
	testkit.ForProcs(t, func(t *testing.T) {
		n := testkit.Scale(20, 16)
		_, fibTasks := workload.FibExpected(n)
		want := 2*fibTasks + 1
		fib := func() {
			_, tasks, err := workload.Fib(func() workload.Group { return new(wsgroup.Group) }, n)
			if err != nil || tasks != fibTasks {
				t.Errorf("fib(%d): %d tasks, error %v; want %d tasks", n, tasks, err, fibTasks)
			}
		}
		testkit.Guard(t, func() {
			before := quietStats(t)
			fib()
			var g wsgroup.Group
			done := make(chan struct{})
			g.Go(func() error { fib(); close(done); return nil })
			<-done // then Wait, which would otherwise run the task here
			wantNil(t, "g.Wait()", g.Wait())
			after := quietStats(t)
			d := after.Sub(before)
			if d.Tasks != uint64(want) {
				t.Errorf("Tasks moved by %d for a fork-join of %d tasks", d.Tasks, want)
			}
			if d.WorkersStarted == 0 {
				t.Errorf("no worker started for %d tasks: %+v", want, d)
			}
			statsStay(t, after)
		})
	})
}

// TestStatsOutsideTasks: tasks given from outside the pool are counted
// exactly, whether a worker runs them or the goroutine that waits for
// them; it repeats until some ran on the waiting goroutine.
func TestStatsOutsideTasks(t *testing.T) {
	const n = 64
	testkit.Guard(t, func() {
		me := gid.Current()
		for {
			before := quietStats(t)
			var onWaiter atomic.Int64
			var g wsgroup.Group
			for range n {
				g.Go(func() error {
					if gid.Current() == me {
						onWaiter.Add(1)
					}
					return nil
				})
			}
			if err := g.Wait(); err != nil {
				t.Errorf("Wait: %v", err)
				return
			}
			after := quietStats(t)
			if d := after.Sub(before).Tasks; d != n {
				t.Errorf("Tasks moved by %d for %d tasks (%d of them run by Wait)", d, n, onWaiter.Load())
				return
			}
			if onWaiter.Load() > 0 {
				statsStay(t, after)
				return
			}
		}
	})
}

// TestStatsGoexit: a task that ends with runtime.Goexit counts as
// finished, on a worker (whose goroutine is replaced: a start and a
// retirement) and on the goroutine of the Wait that ran it (which ends).
// It repeats until both have happened.
func TestStatsGoexit(t *testing.T) {
	const n = 8
	testkit.Guard(t, func() {
		var onWaiter, onWorker bool
		for !onWaiter || !onWorker {
			before := quietStats(t)
			var waiterRan atomic.Int64
			guardOnOwnGoroutine(t, func() {
				me := gid.Current()
				var g wsgroup.Group
				for range n {
					g.Go(func() error {
						if gid.Current() == me {
							waiterRan.Add(1)
						}
						runtime.Goexit()
						return nil
					})
				}
				g.Wait() // ends here if it runs a task
			})
			after := quietStats(t)
			d := after.Sub(before)
			if d.Tasks != n {
				t.Errorf("Tasks moved by %d for %d tasks that called Goexit (%d on the waiter)", d.Tasks, n, waiterRan.Load())
				return
			}
			onWaiter = onWaiter || waiterRan.Load() > 0
			onWorker = onWorker || waiterRan.Load() < n
		}
	})
}

// TestStatsMonotone: under concurrent load, no count ever goes down
// between two readings, and each reading is consistent with itself where
// the documentation says so.
func TestStatsMonotone(t *testing.T) {
	testkit.Guard(t, func() {
		stop := make(chan struct{})
		var load sync.WaitGroup
		for i := range 4 {
			load.Add(1)
			go func() {
				defer load.Done()
				for j := 0; j < testkit.Scale(40, 10); j++ {
					if _, _, err := workload.Fib(func() workload.Group { return new(wsgroup.Group) }, 12+i); err != nil {
						t.Errorf("fib: %v", err)
					}
				}
			}()
		}
		go func() { load.Wait(); close(stop) }()
		prev := wsgroup.ReadStats()
		for reads := 0; ; reads++ {
			s := wsgroup.ReadStats()
			for _, c := range []struct {
				name     string
				old, new uint64
			}{
				{"Tasks", prev.Tasks, s.Tasks},
				{"Steals", prev.Steals, s.Steals},
				{"FailedSteals", prev.FailedSteals, s.FailedSteals},
				{"InjectorPops", prev.InjectorPops, s.InjectorPops},
				{"LocalPops", prev.LocalPops, s.LocalPops},
				{"Sleeps", prev.Sleeps, s.Sleeps},
				{"Wakes", prev.Wakes, s.Wakes},
				{"WorkersStarted", prev.WorkersStarted, s.WorkersStarted},
				{"WorkersRetired", prev.WorkersRetired, s.WorkersRetired},
				{"Compensations", prev.Compensations, s.Compensations},
			} {
				if c.new < c.old {
					t.Errorf("read %d: %s went down from %d to %d", reads, c.name, c.old, c.new)
					return
				}
			}
			if s.Workers < 0 || s.WorkersRetired > s.WorkersStarted || s.Wakes > s.Sleeps || s.Compensations > s.WorkersStarted {
				t.Errorf("read %d: inconsistent reading %+v", reads, s)
				return
			}
			prev = s
			select {
			case <-stop:
				return
			default:
			}
		}
	})
}

// TestStatsSteals: a task that gives a task to its own worker's deque and
// then blocks until that task has run leaves it to be stolen, by another
// worker or by the Wait outside the pool: exactly one steal, with no local
// pop, and one task taken from the injector (the first; the test does not
// Wait before it has started, so a worker took it). With GOMAXPROCS ≥ 2 a
// second worker runs while the first is blocked, and each searches the
// other's deque in vain before it sleeps: failed steals.
func TestStatsSteals(t *testing.T) {
	testkit.ForProcs(t, func(t *testing.T) {
		procs := runtime.GOMAXPROCS(0)
		testkit.Guard(t, func() {
			before := quietStats(t)
			var g wsgroup.Group
			started, stolen := make(chan struct{}), make(chan struct{})
			g.Go(func() error {
				close(started)
				g.Go(func() error { close(stolen); return nil })
				<-stolen
				return nil
			})
			<-started
			wantNil(t, "g.Wait()", g.Wait())
			d := quietStats(t).Sub(before)
			if d.Tasks != 2 || d.Steals != 1 || d.LocalPops != 0 || d.InjectorPops != 1 {
				t.Errorf("got %+v; want 2 tasks, 1 steal, 0 local pops, 1 injector pop", d)
			}
			if procs >= 2 && d.FailedSteals == 0 {
				t.Errorf("got %+v; want failed steals", d)
			}
		})
	})
}

// TestStatsLocalPops: with one worker, the tasks that a task gives to its
// worker's deque and leaves there (it does not wait for them) are popped
// by that worker when the task ends: two local pops, no steal.
func TestStatsLocalPops(t *testing.T) {
	testkit.SetProcs(t, 1)
	testkit.Guard(t, func() {
		before := quietStats(t)
		var g, children wsgroup.Group
		ran := make(chan struct{})
		g.Go(func() error {
			children.Go(func() error { close(ran); return nil }) // runs last: the newest runs first
			children.Go(func() error { return nil })
			return nil
		})
		<-ran // no Wait before: a Wait of either group would help run them
		wantNil(t, "children.Wait()", children.Wait())
		wantNil(t, "g.Wait()", g.Wait())
		d := quietStats(t).Sub(before)
		if d.Tasks != 3 || d.LocalPops != 2 || d.Steals != 0 || d.InjectorPops != 1 {
			t.Errorf("got %+v; want 3 tasks, 2 local pops, no steal, 1 injector pop", d)
		}
	})
}

// TestStatsCompensations: with GOMAXPROCS small, tasks that wait for each
// other (a barrier of procs+3 tasks) need a worker each at once: at least
// procs+2 of them run on workers (the Wait may run one), so at least two
// workers start beyond GOMAXPROCS.
func TestStatsCompensations(t *testing.T) {
	for _, procs := range []int{1, 2} {
		t.Run(fmt.Sprintf("GOMAXPROCS=%d", procs), func(t *testing.T) {
			testkit.SetProcs(t, procs)
			k := procs + 3
			testkit.Guard(t, func() {
				before := quietStats(t)
				var barrier sync.WaitGroup
				barrier.Add(k)
				var g wsgroup.Group
				for range k {
					g.Go(func() error {
						barrier.Done()
						barrier.Wait()
						return nil
					})
				}
				wantNil(t, "g.Wait()", g.Wait())
				d := quietStats(t).Sub(before)
				if d.Compensations < 2 || d.WorkersStarted < uint64(k-1) || d.Tasks != uint64(k) {
					t.Errorf("got %+v; want at least 2 compensations, at least %d workers started, %d tasks", d, k-1, k)
				}
			})
		})
	}
}

// TestStatsWorkersStartedRetired: once no goroutine of the scheduler is
// left, every worker started has been counted as retired, including those
// started beyond GOMAXPROCS and those that replaced a goroutine ended by
// runtime.Goexit; and the workers that retired after their linger slept.
func TestStatsWorkersStartedRetired(t *testing.T) {
	before := wsgroup.ReadStats()
	testkit.Guard(t, func() {
		var g wsgroup.Group
		var barrier sync.WaitGroup
		barrier.Add(3)
		for range 3 {
			g.Go(func() error { barrier.Done(); barrier.Wait(); return nil })
		}
		wantNil(t, "g.Wait()", g.Wait())
		guardOnOwnGoroutine(t, func() {
			var g wsgroup.Group
			for range 4 {
				g.Go(func() error { runtime.Goexit(); return nil })
			}
			g.Wait() // ends here if it runs one of them
		})
		if _, _, err := workload.Fib(func() workload.Group { return new(wsgroup.Group) }, 15); err != nil {
			t.Errorf("fib: %v", err)
		}
	})
	testkit.WaitRetired(t)
	s := wsgroup.ReadStats()
	if s.Workers != 0 || s.WorkersStarted != s.WorkersRetired {
		t.Fatalf("with no worker goroutine left: %d workers, %d started, %d retired", s.Workers, s.WorkersStarted, s.WorkersRetired)
	}
	if d := s.Sub(before); d.WorkersStarted == 0 || d.Sleeps == 0 {
		t.Fatalf("got %+v; want workers started, and sleeps before they retired", d)
	}
}

// TestStatsWakes: a task given while a worker sleeps wakes it. The test
// waits until a worker has gone to sleep and gives a task; it repeats
// until one was woken (a worker may linger out first).
func TestStatsWakes(t *testing.T) {
	testkit.Guard(t, func() {
		before := quietStats(t)
		for {
			var g wsgroup.Group
			g.Go(func() error { return nil })
			if err := g.Wait(); err != nil {
				t.Errorf("Wait: %v", err)
				return
			}
			sleeps := wsgroup.ReadStats().Sleeps
			for s := wsgroup.ReadStats(); s.Sleeps == sleeps && s.Workers > 0; s = wsgroup.ReadStats() {
				time.Sleep(50 * time.Microsecond)
			}
			if d := wsgroup.ReadStats().Sub(before); d.Wakes > 0 {
				if d.Wakes > d.Sleeps {
					t.Errorf("more wakes than sleeps: %+v", d)
				}
				return
			}
		}
	})
}

// TestStatsBusyWorkerPublishes: a worker that stays busy (here in a task
// that ran 1000 tasks of a nested group, helping in its Wait, and then
// blocks) publishes its counts every 256 tasks, so they lag by fewer than
// 256 tasks per worker.
func TestStatsBusyWorkerPublishes(t *testing.T) {
	const n = 1000
	publishedWhileHeld(t, "the counts lag by fewer than 256 tasks per worker", func(g *wsgroup.Group, release <-chan struct{}) {
		ran := make(chan struct{})
		g.Go(func() error {
			var inner wsgroup.Group
			for range n {
				inner.Go(func() error { return nil })
			}
			inner.Wait()
			close(ran)
			<-release
			return nil
		})
		<-ran
	}, func(d wsgroup.Stats) bool { return d.Tasks+255*uint64(d.Workers) >= n })
}

// TestStatsBlockedWorkerPublishes: a worker about to block in a Wait (its
// group's only task runs on another worker) publishes its counts first:
// here the one task of a nested group it ran just before.
func TestStatsBlockedWorkerPublishes(t *testing.T) {
	publishedWhileHeld(t, "the task the worker ran is counted", func(g *wsgroup.Group, release <-chan struct{}) {
		taken := make(chan struct{})
		g.Go(func() error {
			var first, second wsgroup.Group
			first.Go(func() error { return nil })
			first.Wait() // runs it here: no other worker
			second.Go(func() error { close(taken); <-release; return nil })
			<-taken // stolen by a worker the watchdog adds
			second.Wait()
			return nil
		})
	}, func(d wsgroup.Stats) bool { return d.Tasks > 0 })
}

// TestStatsReplacedWorkerPublishes: a worker whose goroutine a task ends
// with runtime.Goexit publishes its counts before its replacement starts,
// here while the replacement is held in the next task of its deque.
func TestStatsReplacedWorkerPublishes(t *testing.T) {
	publishedWhileHeld(t, "the task the worker ran is counted", func(g *wsgroup.Group, release <-chan struct{}) {
		started := make(chan struct{})
		g.Go(func() error {
			g.Go(func() error { close(started); <-release; return nil })
			runtime.Goexit()
			return nil
		})
		<-started
	}, func(d wsgroup.Stats) bool { return d.Tasks > 0 })
}

// publishedWhileHeld, at GOMAXPROCS 1 and under the hang guard, has hold
// give g tasks that stay active until release is closed, waits until the
// counts moved since the scheduler was quiet satisfy published (what
// describes that), releases the tasks and waits for g.
func publishedWhileHeld(t *testing.T, what string, hold func(g *wsgroup.Group, release <-chan struct{}), published func(d wsgroup.Stats) bool) {
	t.Helper()
	testkit.SetProcs(t, 1)
	testkit.Guard(t, func() {
		before := quietStats(t)
		var g wsgroup.Group
		release := make(chan struct{})
		hold(&g, release)
		testkit.WaitUntil(t, what, func() bool { return published(wsgroup.ReadStats().Sub(before)) })
		close(release)
		wantNil(t, "g.Wait()", g.Wait())
	})
}

// TestStatsLoopTasks: a loop runs as one task per range, GOMAXPROCS of
// them (fewer for a shorter loop), and Tasks moves by exactly that.
func TestStatsLoopTasks(t *testing.T) {
	testkit.ForProcs(t, func(t *testing.T) {
		testkit.Guard(t, func() {
			for _, n := range []int{1, 3, 10_000} {
				before := quietStats(t)
				h := make(loopHits, n)
				wantNil(t, fmt.Sprintf("For(%d)", n), wsgroup.For(context.Background(), n, h.body))
				h.check(t, fmt.Sprintf("For(%d)", n))
				after := quietStats(t)
				if d, want := after.Sub(before).Tasks, uint64(min(n, runtime.GOMAXPROCS(0))); d != want {
					t.Errorf("For(%d): Tasks moved by %d, want %d (one per range)", n, d, want)
				}
			}
		})
	})
}
