package wsgroup_test

// Tasks run by a Wait, or by a Go on a full limited group, on a goroutine
// that is not a worker: the waiter runs its own group's queued tasks
// itself, and what such a task observes (its goroutine, Goexit, a Go on its
// own full group) is as the package documentation says. The crash of a
// panic in such a task is tested with the other crashes (TestPanicChild).

import (
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/go-steal/steal/internal/gid"
	"github.com/go-steal/steal/wsgroup"
)

// TestWaitOutsideRunsOwnTasks: a goroutine that submits a few tasks and
// waits runs some of them itself. Fails if Wait outside the pool only
// parks (every task would run on a worker), and if it runs a task twice or
// loses one (the counts).
func TestWaitOutsideRunsOwnTasks(t *testing.T) {
	const requests, k = 2000, 4
	var onWaiter, ran atomic.Int64
	runWithTimeout(t, func() {
		me := gid.Current()
		for range requests {
			var g wsgroup.Group
			for range k {
				g.Go(func() error {
					ran.Add(1)
					if gid.Current() == me {
						onWaiter.Add(1)
					}
					return nil
				})
			}
			if err := g.Wait(); err != nil {
				t.Errorf("Wait() = %v", err)
			}
		}
	})
	if got := ran.Load(); got != requests*k {
		t.Errorf("%d tasks ran, want %d", got, requests*k)
	}
	t.Logf("%d of %d tasks ran on the waiting goroutine", onWaiter.Load(), requests*k)
	if onWaiter.Load() == 0 {
		t.Errorf("no task ran on the goroutine that waited: Wait outside the pool did not help")
	}
}

// TestGoexitInTaskRunByWaiter: a task that calls runtime.Goexit while it
// runs on the goroutine of its group's Wait ends that goroutine, as the
// package documentation says, but only after Wait has waited for the rest
// of the group. Each round submits a task that calls Goexit when it runs on
// the waiter and a slower one that it waits for; rounds repeat until a
// Goexit happened on the waiter. Fails if the Goexit is swallowed (Wait
// returns) or if the goroutine ends before the rest of its group.
func TestGoexitInTaskRunByWaiter(t *testing.T) {
	withGOMAXPROCS(t, func(t *testing.T) {
		runWithTimeout(t, func() {
			for round := 0; ; round++ {
				if round == 10_000 {
					t.Errorf("in %d rounds, Wait never ran its own task", round)
					return
				}
				var other atomic.Bool
				var returned, exitedAfterOther atomic.Bool
				done := make(chan struct{})
				go func() {
					defer close(done)
					defer func() { exitedAfterOther.Store(other.Load()) }()
					me := gid.Current()
					var g wsgroup.Group
					g.Go(func() error {
						for range 1000 {
							runtime.Gosched() // long enough to still run when Goexit comes
						}
						other.Store(true)
						return nil
					})
					g.Go(func() error {
						if gid.Current() == me {
							runtime.Goexit()
						}
						return nil
					})
					g.Wait()
					returned.Store(true)
				}()
				<-done
				if returned.Load() {
					continue // the Goexit task ran on a worker this time
				}
				if !exitedAfterOther.Load() {
					t.Errorf("the waiter's goroutine ended before the rest of its group had run")
				}
				return
			}
		})
	})
}

// TestRecursionUnderLimitOnWaiter: tasks of a SetLimit(1) group call Go on
// their own group, and the goroutine that waits runs them. A task running
// on the waiter holds the one slot, so its Go must follow the rule for Go
// inside a task (set the task aside until a slot frees) instead of waiting for a slot: if
// it waited, the waiter would wait for itself.
func TestRecursionUnderLimitOnWaiter(t *testing.T) {
	withGOMAXPROCS(t, func(t *testing.T) {
		for _, limit := range []int{1, 2} {
			var ran atomic.Int64
			runWithTimeout(t, func() {
				for range 100 {
					var g wsgroup.Group
					g.SetLimit(limit)
					var node func(d int) func() error
					node = func(d int) func() error {
						return func() error {
							ran.Add(1)
							if d < 5 {
								g.Go(node(d + 1))
								g.Go(node(d + 1))
							}
							return nil
						}
					}
					g.Go(node(0))
					if err := g.Wait(); err != nil {
						t.Errorf("Wait() = %v", err)
					}
				}
			})
			if got, want := ran.Load(), int64(100*63); got != want {
				t.Errorf("limit %d: %d tasks ran, want %d", limit, got, want)
			}
		}
	})
}
