package sched

import (
	"sync/atomic"
	"testing"

	"github.com/go-steal/steal/internal/gid"
	"github.com/go-steal/steal/internal/testkit"
)

// Routing: a Go inside a task on a worker queues on that worker's deque; a
// Go from any other goroutine queues on the injector, in the caller's shard.

// TestRoutingGoInsideTaskUsesDeque: a Go made inside a task pushes onto the
// calling worker's deque (for the task's own group and for a nested
// group), never onto the injector. GOMAXPROCS 1 and an idle pool at the
// start give one worker, so nobody steals from its deque while we look.
func TestRoutingGoInsideTaskUsesDeque(t *testing.T) {
	onOneProc(t, func() {
		var g Group
		const k = 10
		var ran atomic.Int64
		var nested atomic.Pointer[Group]
		done := make(chan struct{})
		g.Go(func() error {
			defer close(done)
			w := current()
			if w == nil {
				t.Errorf("task runs outside the pool, want a worker")
				return nil
			}
			base := w.dq.Len()
			n := new(Group)
			for i := range k {
				g.Go(func() error { ran.Add(1); return nil })
				n.Go(func() error { ran.Add(1); return nil })
				if got := w.dq.Len(); got != base+2*(i+1) {
					t.Errorf("after %d Go pairs inside a task: deque length %d, want %d", i+1, got, base+2*(i+1))
				}
				if global.inj.nonEmpty() {
					t.Errorf("a Go inside a task put a task in the injector")
				}
			}
			nested.Store(n)
			return nil // the worker runs the queued tasks after this one
		})
		// Not Wait yet: a Wait could take the task back from the injector
		// and run it here, outside the pool.
		<-done
		wantNil(t, "Wait()", g.Wait())
		n := nested.Load()
		if n == nil {
			t.Fatal("outer task did not run to its end")
		}
		wantNil(t, "nested Wait()", n.Wait())
		if got := ran.Load(); got != 2*k {
			t.Errorf("%d inner tasks ran, want %d", got, 2*k)
		}
	})
}

// TestRoutingNoInjectorInsideTasks: with no limit and several workers,
// Go calls inside tasks never touch the injector (only the one outside Go
// does, and its task has been taken by the time it runs). The test
// goroutine does not Wait until every task has run: a Wait outside the
// pool may run tasks itself, and their Go calls are outside Go calls.
func TestRoutingNoInjectorInsideTasks(t *testing.T) {
	needGID(t)
	guardPool(t, func() {
		var g Group
		var ran atomic.Int64
		var injected, outside atomic.Int64
		g.Go(func() error {
			var spawn func(depth int)
			spawn = func(depth int) {
				for range 4 {
					g.Go(func() error {
						if current() == nil {
							outside.Add(1)
						}
						ran.Add(1)
						if depth > 0 {
							spawn(depth - 1)
						}
						return nil
					})
					if global.inj.nonEmpty() {
						injected.Add(1)
					}
				}
			}
			spawn(3)
			return nil
		})
		const want = 4 + 16 + 64 + 256
		testkit.WaitUntil(t, "every task ran", func() bool { return ran.Load() == want && g.count() == 0 })
		wantNil(t, "Wait()", g.Wait())
		if n := outside.Load(); n != 0 {
			t.Errorf("%d tasks ran outside the pool although nobody waited", n)
		}
		if n := injected.Load(); n != 0 {
			t.Errorf("the injector held tasks after %d Go calls made inside tasks", n)
		}
	})
}

// TestRoutingOutsideGoUsesInjector: a Go from a goroutine that is not a
// worker queues on the injector, in the caller's own shard, even for a
// group whose other tasks run on workers. With GOMAXPROCS 1 and the only
// worker held busy, the task stays there long enough to be seen.
func TestRoutingOutsideGoUsesInjector(t *testing.T) {
	onOneProc(t, func() {
		var g, n Group
		held, release := make(chan struct{}), make(chan struct{})
		var ran atomic.Int64
		g.Go(func() error {
			n.Go(func() error { ran.Add(1); return nil }) // from inside: a deque
			close(held)
			<-release
			return nil
		})
		<-held
		mine := global.inj.shard()
		before, total := mine.len(), global.inj.len()
		n.Go(func() error { ran.Add(1); return nil }) // from outside
		if got := mine.len(); got != before+1 {
			t.Errorf("after an outside Go the caller's shard holds %d tasks, want %d", got, before+1)
		}
		if got := global.inj.len(); got != total+1 {
			t.Errorf("after an outside Go the injector holds %d tasks, want %d", got, total+1)
		}
		close(release)
		wantNil(t, "n.Wait()", n.Wait())
		wantNil(t, "g.Wait()", g.Wait())
		if got := ran.Load(); got != 2 {
			t.Errorf("%d nested tasks ran, want 2", got)
		}
	})
}

// TestTasksRunOnWorkersOrRunners: every task runs either on a worker or on
// a goroutine outside the pool that is in runners (one that waits for the
// task's group, or submits to it), across a mix of group shapes and many
// submitting goroutines.
func TestTasksRunOnWorkersOrRunners(t *testing.T) {
	needGID(t)
	guardPool(t, func() {
		var bad atomic.Int64
		check := func() {
			if current() == nil && !runners.has(gid.Current()) {
				bad.Add(1)
			}
		}
		testkit.Parallel(8, func(s int) {
			for range 50 {
				var g Group
				if s%2 == 1 {
					g.SetLimit(s)
				}
				for range 10 {
					g.Go(func() error {
						check()
						var n Group
						n.Go(func() error { check(); return nil })
						n.Go(func() error { check(); return nil })
						return n.Wait()
					})
				}
				wantNil(t, "Wait()", g.Wait())
			}
		})
		if n := bad.Load(); n != 0 {
			t.Errorf("%d tasks ran outside the pool on a goroutine not in runners", n)
		}
	})
}
