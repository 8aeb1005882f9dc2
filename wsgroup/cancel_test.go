package wsgroup_test

// Cancellation as cooperative shutdown: the first error or the parent's
// cancellation cancels the group's context; by default (RunQueued) queued
// tasks still run afterwards, as with errgroup, and SkipQueued drops them.

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
	"github.com/go-steal/steal/wsgroup"
)

// TestErrorCancelsContextWhileTasksRun: the first error cancels the
// context before Wait returns, so tasks that wait for cancellation end.
func TestErrorCancelsContextWhileTasksRun(t *testing.T) {
	testkit.Guard(t, func() {
		g, ctx := wsgroup.WithContext(context.Background())
		const waiters = 16
		var sawCause atomic.Int32
		for i := 0; i < waiters; i++ {
			g.Go(func() error {
				<-ctx.Done()
				if context.Cause(ctx) == errDoom {
					sawCause.Add(1)
				}
				return ctx.Err()
			})
		}
		g.Go(func() error { return errDoom })
		if err := g.Wait(); err != errDoom {
			t.Errorf("Wait() = %v, want %v", err, errDoom)
		}
		if n := sawCause.Load(); n != waiters {
			t.Errorf("%d of %d waiting tasks saw the cause %v", n, waiters, errDoom)
		}
	})
}

// TestParentCancel: canceling the parent context cancels the group's
// context; the cause is the parent's.
func TestParentCancel(t *testing.T) {
	testkit.Guard(t, func() {
		parent, cancel := context.WithCancel(context.Background())
		g, ctx := wsgroup.WithContext(parent)
		started := make(chan struct{})
		for i := 0; i < 8; i++ {
			g.Go(func() error {
				started <- struct{}{}
				<-ctx.Done()
				return ctx.Err()
			})
		}
		for i := 0; i < 8; i++ {
			<-started
		}
		cancel()
		if err := g.Wait(); err != context.Canceled {
			t.Errorf("Wait() = %v, want %v", err, context.Canceled)
		}
		if cause := context.Cause(ctx); cause != context.Canceled {
			t.Errorf("context.Cause(ctx) = %v, want %v", cause, context.Canceled)
		}
	})
}

// TestQueuedTasksRunAfterError: cancellation is cooperative; tasks still run
// after the first error (they may hold a defer close(ch)).
func TestQueuedTasksRunAfterError(t *testing.T) {
	for _, limit := range []int{-1, 1, 2} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			testkit.Guard(t, func() {
				g, ctx := wsgroup.WithContext(context.Background())
				g.SetLimit(limit)
				g.Go(func() error { return errDoom })
				const n = 500
				var ran, sawCanceled atomic.Int32
				for i := 0; i < n; i++ {
					g.Go(func() error {
						ran.Add(1)
						if ctx.Err() != nil {
							sawCanceled.Add(1)
						}
						return nil
					})
				}
				if err := g.Wait(); err != errDoom {
					t.Errorf("Wait() = %v, want %v", err, errDoom)
				}
				if got := ran.Load(); got != n {
					t.Errorf("%d of %d tasks queued with the failing one ran, want all", got, n)
				}
				if limit == 1 && sawCanceled.Load() != n {
					// With limit 1 the failing task finished before any
					// other started: all of them see the canceled context.
					t.Errorf("%d of %d later tasks saw the canceled context, want all", sawCanceled.Load(), n)
				}
			})
		})
	}
}

// onOneWorker runs body as a task while the pool is held to one worker:
// GOMAXPROCS is 1, and the workers of earlier tests have retired, so the task's Go calls start no other worker, and the
// tasks body queues with Go stay in that worker's deque, unstarted, until
// body's Wait runs them (or skips them). The caller waits for body on a
// channel, not in Wait, which could run body on its own goroutine.
func onOneWorker(t *testing.T, body func()) {
	t.Helper()
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	testkit.WaitRetired(t)
	var outer wsgroup.Group
	done := make(chan struct{})
	outer.Go(func() error { defer close(done); body(); return nil })
	<-done
	wantNil(t, "outer Wait()", outer.Wait())
}

// wantSkipped runs body (under the hang guard) on one worker (see
// onOneWorker), where it fails a SkipQueued group with errStop and returns
// what the group's Wait returned; the tasks it counts in ran are the ones
// that must be skipped, described by what. It checks that Wait returned
// errStop, that none of them ran, and that no goroutine is left.
func wantSkipped(t *testing.T, what string, body func(ran *atomic.Int32) error) {
	t.Helper()
	var ran atomic.Int32
	var err error
	testkit.Guard(t, func() {
		onOneWorker(t, func() { err = body(&ran) })
	})
	if err != errStop {
		t.Errorf("Wait() = %v, want %v", err, errStop)
	}
	if got := ran.Load(); got != 0 {
		t.Errorf("%d %s ran, want none", got, what)
	}
	testkit.VerifyNone(t)
}

// TestCancelQueuedTasks: the parent is canceled while up to 10k tasks are
// queued. RunQueued runs every one of them, and each that starts after the
// cancellation sees ctx.Done(); Wait returns nil, as errgroup's does.
// SkipQueued runs none that were still queued; Wait returns the parent's
// cause. The tasks are queued on one worker, but while that worker is busy
// queuing them the monitor may hand its deque to another worker, which
// then runs some before the cancellation: so the test counts the tasks
// that start after it, and allows each goroutine that runs the group's
// tasks the one task it may have claimed just before (see SkipQueued).
func TestCancelQueuedTasks(t *testing.T) {
	const n = 10000
	for _, mode := range []wsgroup.CancelMode{wsgroup.RunQueued, wsgroup.SkipQueued} {
		t.Run(modeName(mode), func(t *testing.T) {
			var ran, late, lateSawDone atomic.Int32
			var canceled atomic.Bool // set once cancel has returned
			var mu sync.Mutex
			lateOn := map[int64]int{} // tasks started after the cancellation, per goroutine
			var err error
			testkit.Guard(t, func() {
				parent, cancel := context.WithCancelCause(context.Background())
				onOneWorker(t, func() {
					g, ctx := wsgroup.WithContext(parent)
					g.SetCancelMode(mode)
					for range n {
						g.Go(func() error {
							ran.Add(1)
							if canceled.Load() {
								late.Add(1)
								if ctx.Err() != nil {
									lateSawDone.Add(1)
								}
								mu.Lock()
								lateOn[gid.Current()]++
								mu.Unlock()
							}
							return nil
						})
					}
					cancel(errStop)
					canceled.Store(true)
					err = g.Wait()
				})
			})
			t.Logf("%s: %d of %d tasks ran, %d of them after the cancellation", modeName(mode), ran.Load(), n, late.Load())
			switch mode {
			case wsgroup.RunQueued:
				if got := ran.Load(); got != n {
					t.Errorf("%d of %d tasks ran, want all", got, n)
				}
				if got, want := lateSawDone.Load(), late.Load(); got != want {
					t.Errorf("%d of the %d tasks started after the cancellation saw ctx.Done(), want all", got, want)
				}
				if err != nil {
					t.Errorf("Wait() = %v, want nil", err)
				}
			case wsgroup.SkipQueued:
				for id, k := range lateOn {
					if k > 1 {
						t.Errorf("goroutine %d started %d tasks after the cancellation, want at most the one it had claimed: the queued ones skipped", id, k)
					}
				}
				if err != errStop {
					t.Errorf("Wait() = %v, want the parent's cause %v", err, errStop)
				}
			}
			testkit.VerifyNone(t)
		})
	}
}

func modeName(m wsgroup.CancelMode) string {
	switch m {
	case wsgroup.RunQueued:
		return "RunQueued"
	case wsgroup.SkipQueued:
		return "SkipQueued"
	}
	return fmt.Sprintf("CancelMode(%d)", int(m))
}

// TestSkipQueuedAfterError: the first error cancels the group; what is
// queued behind it is skipped, in a group with a context and in a zero
// Group (which has none). The failing task is queued last, so it runs
// first (newest first on the worker's own deque).
func TestSkipQueuedAfterError(t *testing.T) {
	const n = 100
	for _, withCtx := range []bool{false, true} {
		t.Run(fmt.Sprintf("context=%v", withCtx), func(t *testing.T) {
			wantSkipped(t, "tasks queued before the failing one", func(ran *atomic.Int32) error {
				g := new(wsgroup.Group)
				if withCtx {
					g, _ = wsgroup.WithContext(context.Background())
				}
				g.SetCancelMode(wsgroup.SkipQueued)
				for range n {
					g.Go(func() error { ran.Add(1); return nil })
				}
				g.Go(func() error { return errStop })
				return g.Wait()
			})
		})
	}
}

// TestSkipQueuedGoAfterCancel: once the group is canceled, Go queues
// nothing and TryGo reports false, from outside and from inside a task.
// After Wait, the context of a WithContext group is canceled, so a reused
// group takes no task either.
func TestSkipQueuedGoAfterCancel(t *testing.T) {
	testkit.Guard(t, func() {
		parent, cancel := context.WithCancelCause(context.Background())
		g, _ := wsgroup.WithContext(parent)
		g.SetCancelMode(wsgroup.SkipQueued)
		var ran atomic.Int32
		count := func() error { ran.Add(1); return nil }
		inside := make(chan bool, 1)
		started, canceled := make(chan struct{}), make(chan struct{})
		g.Go(func() error {
			close(started)
			<-canceled
			g.Go(count)
			inside <- g.TryGo(count)
			return nil
		})
		<-started // or it would be skipped
		cancel(errStop)
		close(canceled)
		g.Go(count)
		if g.TryGo(count) {
			t.Errorf("TryGo after cancellation = true, want false")
		}
		if err := g.Wait(); err != errStop {
			t.Errorf("Wait() = %v, want %v", err, errStop)
		}
		if <-inside {
			t.Errorf("TryGo inside a task after cancellation = true, want false")
		}
		if got := ran.Load(); got != 0 {
			t.Errorf("%d tasks submitted after the cancellation ran, want none", got)
		}

		// Reuse after Wait: Wait canceled the context.
		g2, _ := wsgroup.WithContext(context.Background())
		g2.SetCancelMode(wsgroup.SkipQueued)
		g2.Go(count)
		wantNil(t, "first Wait()", g2.Wait())
		g2.Go(count)
		if err := g2.Wait(); err != context.Canceled {
			t.Errorf("Wait() after reuse = %v, want %v", err, context.Canceled)
		}
		if got := ran.Load(); got != 1 {
			t.Errorf("%d tasks ran, want only the one before the first Wait", got)
		}
	})
	testkit.VerifyNone(t)
}

// TestSkipQueuedWaitReturnsPromptly: tasks that ignore the context and take
// a millisecond each are queued 10k deep; the 20th cancels the group. With
// SkipQueued, Wait returns once the tasks running at that moment end,
// without running the queue: a task starts after the cancellation only if
// its goroutine had claimed it just before (each goroutine that runs the
// group's tasks, a worker or the helping Wait, claims one at a time), so
// no more tasks start late than there are such goroutines. Without
// skipping, about 9,980 would.
func TestSkipQueuedWaitReturnsPromptly(t *testing.T) {
	const n, each = 10000, time.Millisecond
	var ran, late atomic.Int32
	var mu sync.Mutex
	runners := map[int64]bool{} // the goroutines that ran the group's tasks
	testkit.Guard(t, func() {
		parent, cancel := context.WithCancelCause(context.Background())
		var canceled atomic.Bool // set once cancel has returned
		var outer wsgroup.Group
		outer.Go(func() error {
			g, _ := wsgroup.WithContext(parent)
			g.SetCancelMode(wsgroup.SkipQueued)
			for range n {
				g.Go(func() error {
					if canceled.Load() {
						late.Add(1)
					}
					mu.Lock()
					runners[gid.Current()] = true
					mu.Unlock()
					if ran.Add(1) == 20 {
						cancel(errStop)
						canceled.Store(true)
					}
					time.Sleep(each)
					return nil
				})
			}
			if err := g.Wait(); err != errStop {
				t.Errorf("Wait() = %v, want %v", err, errStop)
			}
			return nil
		})
		wantNil(t, "outer Wait()", outer.Wait())
	})
	t.Logf("%d of %d tasks ran, %d of them after the cancellation, on %d goroutines", ran.Load(), n, late.Load(), len(runners))
	if got, most := late.Load(), int32(len(runners)); got > most {
		t.Errorf("%d tasks started after the cancellation, want at most one per goroutine that ran tasks (%d): the queued ones skipped", got, most)
	}
	testkit.VerifyNone(t)
}

// TestSkipQueuedWaitTwice: a SkipQueued group whose tasks all ran returns
// nil from every Wait, concurrent or repeated, although the first Wait
// canceled its context: a later Wait must not take that cancellation for
// one that skipped tasks and return context.Canceled.
func TestSkipQueuedWaitTwice(t *testing.T) {
	testkit.Guard(t, func() {
		g, _ := wsgroup.WithContext(context.Background())
		g.SetCancelMode(wsgroup.SkipQueued)
		ran := make(chan struct{})
		g.Go(func() error { close(ran); return nil })
		<-ran
		errs := make(chan error, 2)
		for range 2 {
			go func() { errs <- g.Wait() }()
		}
		for range 2 {
			if err := <-errs; err != nil {
				t.Errorf("concurrent Wait() = %v, want nil: no task failed or was skipped", err)
			}
		}
		wantNil(t, "third Wait()", g.Wait())
	})
	testkit.VerifyNone(t)
}

// TestCancelWakesAndDrains: in both modes, tasks blocked on ctx.Done() in a
// pool that grew to run them all are released by the parent's cancellation,
// and every worker exits by the time Wait returns. No task was skipped, so
// Wait returns nil in SkipQueued mode too.
func TestCancelWakesAndDrains(t *testing.T) {
	for _, mode := range []wsgroup.CancelMode{wsgroup.RunQueued, wsgroup.SkipQueued} {
		t.Run(modeName(mode), func(t *testing.T) {
			testkit.ForProcs(t, func(t *testing.T) {
				testkit.Guard(t, func() {
					parent, cancel := context.WithCancel(context.Background())
					g, ctx := wsgroup.WithContext(parent)
					g.SetCancelMode(mode)
					all := testkit.FanOut(g, 64, func() { <-ctx.Done() })
					<-all // every task is running (the pool grew) and blocked
					cancel()
					// Every task had started, so none was skipped:
					// in both modes Wait reports nil, as errgroup's.
					wantNil(t, "Wait()", g.Wait())
				})
				testkit.VerifyNone(t)
			})
		})
	}
}

// TestSkipQueuedReleasesParkedTasks: a task of a limited group that calls
// Go on its own group while at the limit runs the group's queued tasks
// meanwhile, and sets aside those that would exceed the limit, to be
// resubmitted one by one as tasks end. When the group is canceled in
// SkipQueued mode, a resubmitted task is dropped instead of run, and the
// ones behind it must still be resubmitted (and dropped), or Wait never
// returns. On one worker the order is fixed: the first task runs alone,
// parks four tasks, queues a fifth, and fails.
func TestSkipQueuedReleasesParkedTasks(t *testing.T) {
	wantSkipped(t, "tasks queued behind the failing one", func(ran *atomic.Int32) error {
		x, _ := wsgroup.WithContext(context.Background())
		x.SetLimit(1)
		x.SetCancelMode(wsgroup.SkipQueued)
		x.Go(func() error {
			for range 5 {
				x.Go(func() error { ran.Add(1); return nil })
			}
			return errStop
		})
		return x.Wait()
	})
}
