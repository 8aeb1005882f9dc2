package wsgroup_test

// Blocking tasks in a group with no limit: code written for errgroup,
// where every task has its own goroutine, must not starve on a pool of
// GOMAXPROCS workers: tasks that wait for later tasks, pipelines, and
// groups whose tasks wait while other groups' tasks keep every CPU busy.
// Nothing here measures time: if a task never starts, the test hangs and
// the hang guard ends it with a dump of every goroutine. (The scheduler's
// watchdog tests bound the pool's growth.)

import (
	"crypto/md5"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-steal/steal/internal/testkit"
	"github.com/go-steal/steal/wsgroup"
)

// TestTasksWaitingForLaterTasks: with no limit an errgroup user may write
// tasks that block until a later task runs. wsgroup must never starve them
// whatever GOMAXPROCS.
func TestTasksWaitingForLaterTasks(t *testing.T) {
	const n = 64
	check := func(t *testing.T, g *wsgroup.Group) {
		var ran atomic.Int32
		// done[i] is closed by task i; task i waits for task i+1.
		done := make([]chan struct{}, n)
		for i := range done {
			done[i] = make(chan struct{})
		}
		for i := 0; i < n; i++ {
			g.Go(func() error {
				if i+1 < n {
					<-done[i+1]
				}
				ran.Add(1)
				close(done[i])
				return nil
			})
		}
		wantNil(t, "Wait()", g.Wait())
		if got := ran.Load(); got != n {
			t.Errorf("ran %d tasks, want %d", got, n)
		}
	}
	testkit.ForProcs(t, func(t *testing.T) {
		t.Run("outside", func(t *testing.T) {
			testkit.Guard(t, func() {
				var g wsgroup.Group
				check(t, &g)
			})
		})
		t.Run("from-task", func(t *testing.T) {
			// All the tasks are submitted by one task, so they land on its
			// worker's deque, and that task then waits for them in its
			// Wait, which helps with them newest first.
			testkit.Guard(t, func() {
				var outer wsgroup.Group
				outer.Go(func() error {
					var g wsgroup.Group
					check(t, &g)
					return nil
				})
				wantNil(t, "outer Wait()", outer.Wait())
			})
		})
		t.Run("same-group-from-task", func(t *testing.T) {
			// The first task pushes the others onto its own group and then
			// blocks until the last one has run.
			testkit.Guard(t, func() {
				var g wsgroup.Group
				var ran atomic.Int32
				last := make(chan struct{})
				g.Go(func() error {
					for i := 1; i < n; i++ {
						g.Go(func() error {
							if ran.Add(1) == n-1 {
								close(last)
							}
							return nil
						})
					}
					<-last
					return nil
				})
				wantNil(t, "Wait()", g.Wait())
				if got := ran.Load(); got != n-1 {
					t.Errorf("ran %d tasks, want %d", got, n-1)
				}
			})
		})
		t.Run("pipeline", func(t *testing.T) {
			// A producer, unbuffered stages and a consumer, all in one group.
			testkit.Guard(t, func() {
				var g wsgroup.Group
				const items, stages = 200, 6
				chans := make([]chan int, stages+1)
				for i := range chans {
					chans[i] = make(chan int)
				}
				var sum int
				g.Go(func() error {
					for v := range chans[stages] {
						sum += v
					}
					return nil
				})
				for s := 0; s < stages; s++ {
					g.Go(func() error {
						defer close(chans[s+1])
						for v := range chans[s] {
							chans[s+1] <- v + 1
						}
						return nil
					})
				}
				g.Go(func() error {
					defer close(chans[0])
					for i := 0; i < items; i++ {
						chans[0] <- i
					}
					return nil
				})
				wantNil(t, "Wait()", g.Wait())
				if want := items*(items-1)/2 + items*stages; sum != want {
					t.Errorf("pipeline sum = %d, want %d", sum, want)
				}
			})
		})
		// No goroutine of the groups remains, whatever the pools grew to.
		testkit.VerifyNone(t)
	})
}

// TestMD5AllPipeline is the shape of the pipelines article's bounded
// MD5All: one producer sends paths on an unbuffered channel, 20 consumers
// hash them and send results on another unbuffered channel, and Wait runs in
// a separate goroutine that closes the results channel, while the caller
// drains it. Every task blocks on a channel most of the time.
func TestMD5AllPipeline(t *testing.T) {
	const files, consumers = 500, 20
	data := make(map[string][]byte, files)
	for i := range files {
		data[fmt.Sprintf("dir%d/file%d", i%7, i)] = fmt.Appendf(nil, "contents of file %d", i)
	}
	type result struct {
		path string
		sum  [md5.Size]byte
	}
	testkit.ForProcs(t, func(t *testing.T) {
		testkit.Guard(t, func() {
			var g wsgroup.Group
			paths := make(chan string)
			g.Go(func() error {
				defer close(paths)
				for p := range data {
					paths <- p
				}
				return nil
			})
			c := make(chan result)
			for range consumers {
				g.Go(func() error {
					for p := range paths {
						c <- result{p, md5.Sum(data[p])}
					}
					return nil
				})
			}
			waited := make(chan error, 1)
			go func() {
				waited <- g.Wait()
				close(c)
			}()
			got := make(map[string][md5.Size]byte)
			for r := range c {
				if _, dup := got[r.path]; dup {
					t.Errorf("%s hashed twice", r.path)
				}
				got[r.path] = r.sum
			}
			if err := <-waited; err != nil {
				t.Errorf("Wait() = %v, want nil", err)
			}
			if len(got) != files {
				t.Errorf("%d of %d files hashed", len(got), files)
			}
			for p, sum := range got {
				if sum != md5.Sum(data[p]) {
					t.Errorf("%s: wrong sum", p)
				}
			}
		})
		testkit.VerifyNone(t)
	})
}

// TestNoStarvationBetweenGroups: 4×GOMAXPROCS tasks (of one group, of a
// nested group, or of as many groups) occupy every worker and are queued
// behind them; they end only once a task of another group B runs, which
// B's request queues from outside and does not Wait for until it has run
// (as errgroup code may: a task must start without its Wait being called).
// The busy tasks spin, spin while yielding, or block.
//
// It catches a scheduler shared by all groups that serves tasks in strict
// arrival order on a fixed set of workers, so that B's task waits behind
// tasks that never end: with spinning tasks it must have a free worker or
// start one for B (the CPUs are busy, so a blocked-worker detector that
// looks at CPU use will not); with blocked tasks it must notice that its
// workers are blocked and add workers until B's task is reached.
func TestNoStarvationBetweenGroups(t *testing.T) {
	for _, kind := range []string{"spin", "yield", "block"} {
		for _, shape := range []string{"outside", "from-task", "many-groups"} {
			t.Run(kind+"/"+shape, func(t *testing.T) {
				testkit.ForProcs(t, func(t *testing.T) {
					testkit.Guard(t, func() { starveAndRelease(t, kind, shape) })
				})
			})
		}
	}
}

// starveAndRelease is one run of TestNoStarvationBetweenGroups. kind is
// what the tasks that keep the workers busy do until they are released,
// shape how they are queued.
func starveAndRelease(t *testing.T, kind, shape string) {
	p := runtime.GOMAXPROCS(0)
	hogs := 4 * p
	var released atomic.Bool
	release := make(chan struct{})
	free := sync.OnceFunc(func() {
		released.Store(true)
		close(release)
	})
	t.Cleanup(free) // if the test fails before it releases them
	var started, finished atomic.Int32
	hog := func() error {
		started.Add(1)
		defer finished.Add(1)
		switch kind {
		case "spin":
			// A pure CPU loop that never yields; only the Go runtime's
			// asynchronous preemption lets other goroutines onto its
			// processor.
			n := 0
			for !released.Load() {
				n++
			}
			spinSink.Add(uint64(n))
		case "yield":
			// A CPU loop that calls runtime.Gosched, so other goroutines
			// run often, but the task still never returns to its worker.
			for !released.Load() {
				runtime.Gosched()
			}
		case "block": // blocked on a channel, using no CPU
			<-release
		default:
			t.Errorf("unknown kind %q", kind)
		}
		return nil
	}

	var a wsgroup.Group
	many := make([]wsgroup.Group, hogs)
	switch shape {
	case "outside": // one group, every task queued from outside
		for range hogs {
			a.Go(hog)
		}
	case "from-task":
		// One task queues them on a nested group (its worker's own
		// queue, from which the others steal) and waits for it.
		a.Go(func() error {
			var h wsgroup.Group
			for range hogs {
				h.Go(hog)
			}
			return h.Wait()
		})
	case "many-groups": // one group per task, each queued from outside
		for i := range many {
			many[i].Go(hog)
		}
	default:
		t.Fatalf("unknown shape %q", shape)
	}
	// Every worker is busy: GOMAXPROCS of the busy tasks have started
	// (more may start if the scheduler adds workers).
	testkit.WaitUntil(t, "GOMAXPROCS busy tasks have started", func() bool { return started.Load() >= int32(p) })

	// Another request. Its task releases the busy ones; the request waits
	// for the task to have run before it calls Wait, so only the
	// scheduler can have started it.
	var b wsgroup.Group
	bRan := make(chan struct{})
	b.Go(func() error {
		free()
		close(bRan)
		return nil
	})
	<-bRan
	wantNil(t, "b.Wait()", b.Wait())

	wantNil(t, "a.Wait()", a.Wait())
	for i := range many {
		if err := many[i].Wait(); err != nil {
			t.Errorf("Wait() of busy group %d = %v, want nil", i, err)
		}
	}
	if s, f := started.Load(), finished.Load(); s != int32(hogs) || f != int32(hogs) {
		t.Errorf("%d busy tasks started and %d finished, want %d", s, f, hogs)
	}
}

// occupyCPUs keeps every CPU busy until the returned function is called,
// with GOMAXPROCS CPU loops that yield but never end by themselves: tasks
// of a group of their own (inGroup, so they also occupy workers of the
// scheduler), or plain goroutines. It returns once they have all started.
// The returned function stops them and waits for them; the test's cleanup
// stops them too, so that a test that fails before calling it does not
// leave them spinning under the tests that follow.
func occupyCPUs(t *testing.T, inGroup bool) (stop func()) {
	p := runtime.GOMAXPROCS(0)
	var quit atomic.Bool
	var started atomic.Int32
	loop := func() error {
		started.Add(1)
		for !quit.Load() {
			runtime.Gosched()
		}
		return nil
	}
	g := new(wsgroup.Group)
	var wg sync.WaitGroup
	for range p {
		if inGroup {
			g.Go(loop)
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); loop() }()
	}
	t.Cleanup(func() { quit.Store(true) })
	testkit.WaitUntil(t, "every CPU loop has started", func() bool { return started.Load() >= int32(p) })
	return func() {
		quit.Store(true)
		wg.Wait()
		if err := g.Wait(); err != nil {
			t.Errorf("Wait() of the busy group = %v, want nil", err)
		}
	}
}

// TestBlockedTasksWhileCPUsBusy runs each of waitingShapes (a group whose
// tasks wait for each other, waited for from outside) while GOMAXPROCS
// CPU loops that never end by themselves keep every CPU busy: tasks of
// another group, or plain goroutines of the program. With errgroup every
// task has its own goroutine and the Go scheduler shares the CPUs among
// all of them, so the group completes.
//
// It catches a scheduler that adds workers for blocked tasks only when it
// sees idle CPUs: here the CPUs are never idle, the group's workers are
// all blocked, and the task that would release them is never started.
func TestBlockedTasksWhileCPUsBusy(t *testing.T) {
	for _, load := range []struct {
		name    string
		inGroup bool
	}{{"other-group", true}, {"goroutines", false}} {
		for _, sh := range waitingShapes {
			t.Run(load.name+"/"+sh.name, func(t *testing.T) {
				testkit.ForProcs(t, func(t *testing.T) {
					testkit.Guard(t, func() {
						defer occupyCPUs(t, load.inGroup)()
						sh.run(t)
					})
				})
			})
		}
	}
}
