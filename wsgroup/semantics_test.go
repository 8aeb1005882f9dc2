package wsgroup_test

// Documented errgroup behaviour beyond errgroup's own tests: the API,
// limits and blocking, failures. Every test here also passes with golang.org/x/sync/errgroup.

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/go-steal/steal/wsgroup"
)

func TestSetLimitWhileActivePanics(t *testing.T) {
	for _, active := range []int{1, 2} {
		t.Run(fmt.Sprintf("active=%d", active), func(t *testing.T) {
			runWithTimeout(t, func() {
				var g wsgroup.Group
				g.SetLimit(4)
				release := make(chan struct{})
				for i := 0; i < active; i++ {
					g.Go(func() error { <-release; return nil })
				}
				v, panicked := recoverPanic(func() { g.SetLimit(8) })
				close(release)
				if err := g.Wait(); err != nil {
					t.Errorf("Wait() = %v, want nil", err)
				}
				if !panicked {
					t.Errorf("SetLimit with %d active tasks did not panic", active)
					return
				}
				err, ok := v.(error)
				if !ok {
					t.Errorf("SetLimit panicked with %T %v, want an error value", v, v)
					return
				}
				want := fmt.Sprintf("%smodify limit while %d goroutines in the group are still active", panicPrefix, active)
				if err.Error() != want {
					t.Errorf("SetLimit panicked with %q, want %q", err.Error(), want)
				}
				// The group is still usable, and SetLimit is allowed again
				// once nothing is active.
				if _, panicked := recoverPanic(func() { g.SetLimit(8) }); panicked {
					t.Errorf("SetLimit after Wait panicked")
				}
				var ran atomic.Int32
				for i := 0; i < 16; i++ {
					g.Go(func() error { ran.Add(1); return nil })
				}
				if err := g.Wait(); err != nil {
					t.Errorf("second Wait() = %v, want nil", err)
				}
				if n := ran.Load(); n != 16 {
					t.Errorf("ran %d tasks after the panic, want 16", n)
				}
			})
		})
	}
}

// TestNegativeLimit: a negative limit removes a previous limit.
func TestNegativeLimit(t *testing.T) {
	runWithTimeout(t, func() {
		var g wsgroup.Group
		g.SetLimit(1)
		g.SetLimit(-1)
		release := make(chan struct{})
		const n = 64
		for i := 0; i < n; i++ {
			if !g.TryGo(func() error { <-release; return nil }) {
				t.Errorf("TryGo #%d with no limit = false, want true", i)
				break
			}
		}
		close(release)
		if err := g.Wait(); err != nil {
			t.Errorf("Wait() = %v, want nil", err)
		}
	})
}

// TestFirstErrorWins: Wait returns one of the errors, the same one every
// time, and it is the cause of the context's cancellation.
func TestFirstErrorWins(t *testing.T) {
	runWithTimeout(t, func() {
		g, ctx := wsgroup.WithContext(context.Background())
		const n = 200
		errs := make(map[error]bool, n)
		for i := 0; i < n; i++ {
			err := fmt.Errorf("wsgroup_test: error %d", i)
			errs[err] = true
			g.Go(func() error { return err })
		}
		err := g.Wait()
		if !errs[err] {
			t.Errorf("Wait() = %v, want one of the tasks' errors", err)
		}
		if cause := context.Cause(ctx); cause != err {
			t.Errorf("context.Cause(ctx) = %v, want %v (the error Wait returned)", cause, err)
		}
		if again := g.Wait(); again != err {
			t.Errorf("second Wait() = %v, want %v", again, err)
		}
	})
}

// TestErrorCancelsContextWhileTasksRun: the first error cancels the
// context before Wait returns, so tasks that wait for cancellation end.
func TestErrorCancelsContextWhileTasksRun(t *testing.T) {
	runWithTimeout(t, func() {
		errDoom := errors.New("wsgroup_test: doomed")
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
	runWithTimeout(t, func() {
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
			runWithTimeout(t, func() {
				errDoom := errors.New("wsgroup_test: doomed")
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

// TestConcurrentWait: several goroutines may Wait at once (errgroup's
// pipeline example does); all see the same error.
func TestConcurrentWait(t *testing.T) {
	runWithTimeout(t, func() {
		errDoom := errors.New("wsgroup_test: doomed")
		var g wsgroup.Group
		release := make(chan struct{})
		for i := 0; i < 32; i++ {
			g.Go(func() error {
				<-release
				if i == 7 {
					return errDoom
				}
				return nil
			})
		}
		const waiters = 4
		results := make(chan error, waiters)
		for i := 0; i < waiters; i++ {
			go func() { results <- g.Wait() }()
		}
		close(release)
		if err := g.Wait(); err != errDoom {
			t.Errorf("Wait() = %v, want %v", err, errDoom)
		}
		for i := 0; i < waiters; i++ {
			if err := <-results; err != errDoom {
				t.Errorf("concurrent Wait() = %v, want %v", err, errDoom)
			}
		}
	})
}

// TestGoexit: a task that calls runtime.Goexit (t.FailNow does) counts as
// completed; no task is lost and Wait returns.
func TestGoexit(t *testing.T) {
	for _, limit := range []int{-1, 1, 2} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			runWithTimeout(t, func() {
				g, ctx := wsgroup.WithContext(context.Background())
				g.SetLimit(limit)
				const n = 100
				var ran, exited atomic.Int32
				for i := 0; i < n; i++ {
					g.Go(func() error {
						if i%3 == 0 {
							defer exited.Add(1)
							runtime.Goexit()
						}
						ran.Add(1)
						return nil
					})
				}
				if err := g.Wait(); err != nil {
					t.Errorf("Wait() = %v, want nil", err)
				}
				wantExited := int32((n + 2) / 3)
				if got := exited.Load(); got != wantExited {
					t.Errorf("%d tasks called Goexit, want %d", got, wantExited)
				}
				if got := ran.Load(); got != n-wantExited {
					t.Errorf("%d tasks ran to the end, want %d", got, n-wantExited)
				}
				if cause := context.Cause(ctx); cause != context.Canceled {
					t.Errorf("context.Cause(ctx) = %v, want %v", cause, context.Canceled)
				}
			})
		})
	}
}

// TestTasksWaitingForLaterTasks: with no limit an errgroup user may write
// tasks that block until a later task runs. wsgroup must never starve them
// whatever GOMAXPROCS.
func TestTasksWaitingForLaterTasks(t *testing.T) {
	const n = 64
	check := func(t *testing.T, g *wsgroup.Group, submit func(func() error)) {
		var ran atomic.Int32
		// done[i] is closed by task i; task i waits for task i+1.
		done := make([]chan struct{}, n)
		for i := range done {
			done[i] = make(chan struct{})
		}
		for i := 0; i < n; i++ {
			submit(func() error {
				if i+1 < n {
					<-done[i+1]
				}
				ran.Add(1)
				close(done[i])
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			t.Errorf("Wait() = %v, want nil", err)
		}
		if got := ran.Load(); got != n {
			t.Errorf("ran %d tasks, want %d", got, n)
		}
	}
	withGOMAXPROCS(t, func(t *testing.T) {
		t.Run("outside", func(t *testing.T) {
			runWithTimeout(t, func() {
				var g wsgroup.Group
				check(t, &g, func(f func() error) { g.Go(f) })
			})
		})
		t.Run("from-task", func(t *testing.T) {
			// All the tasks are submitted by one task, so they land on its
			// worker's deque, and that task then waits for the last of them
			// without calling Wait.
			runWithTimeout(t, func() {
				var outer wsgroup.Group
				outer.Go(func() error {
					var g wsgroup.Group
					check(t, &g, func(f func() error) { g.Go(f) })
					return nil
				})
				if err := outer.Wait(); err != nil {
					t.Errorf("outer Wait() = %v, want nil", err)
				}
			})
		})
		t.Run("same-group-from-task", func(t *testing.T) {
			// The first task pushes the others onto its own group and then
			// blocks until the last one has run.
			runWithTimeout(t, func() {
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
				if err := g.Wait(); err != nil {
					t.Errorf("Wait() = %v, want nil", err)
				}
				if got := ran.Load(); got != n-1 {
					t.Errorf("ran %d tasks, want %d", got, n-1)
				}
			})
		})
		t.Run("pipeline", func(t *testing.T) {
			// A producer, unbuffered stages and a consumer, all in one group.
			runWithTimeout(t, func() {
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
				if err := g.Wait(); err != nil {
					t.Errorf("Wait() = %v, want nil", err)
				}
				if want := items*(items-1)/2 + items*stages; sum != want {
					t.Errorf("pipeline sum = %d, want %d", sum, want)
				}
			})
		})
		// No goroutine of the groups remains, whatever the pools grew to.
		goleak.VerifyNone(t)
	})
}

// TestWaitWithoutGo: Wait on a fresh group returns at once, repeatedly.
func TestWaitWithoutGo(t *testing.T) {
	runWithTimeout(t, func() {
		var g wsgroup.Group
		for i := 0; i < 3; i++ {
			if err := g.Wait(); err != nil {
				t.Errorf("Wait() on an empty group = %v, want nil", err)
			}
		}
		g2, ctx := wsgroup.WithContext(context.Background())
		if err := g2.Wait(); err != nil {
			t.Errorf("Wait() on an empty WithContext group = %v, want nil", err)
		}
		if cause := context.Cause(ctx); cause != context.Canceled {
			t.Errorf("context.Cause(ctx) = %v, want %v", cause, context.Canceled)
		}
	})
}

// A Go inside a task on a full limited group starts its task only after a
// task of the group has ended, as errgroup's blocking Go does, so a later
// task may wait for an earlier one. Here the second task waits for the
// cancellation that the first task's error causes; with a limit of one it
// must not take the slot before the first has run. (A version that queued
// the second task where it ran first deadlocked.)
func TestLimitInTaskKeepsOrder(t *testing.T) {
	errA := errors.New("a")
	withGOMAXPROCS(t, func(t *testing.T) {
		for _, limit := range []int{1, 2} {
			runWithTimeout(t, func() {
				var outer wsgroup.Group
				outer.Go(func() error {
					g, ctx := wsgroup.WithContext(context.Background())
					g.SetLimit(limit)
					for range limit {
						g.Go(func() error { return errA })
					}
					// Each of these waits for an earlier task's error.
					for range limit {
						g.Go(func() error { <-ctx.Done(); return nil })
					}
					return g.Wait()
				})
				if err := outer.Wait(); err != errA {
					t.Errorf("limit %d: Wait returned %v, want %v", limit, err, errA)
				}
			})
			// The same with a channel that the first task closes.
			runWithTimeout(t, func() {
				var outer wsgroup.Group
				outer.Go(func() error {
					var g wsgroup.Group
					g.SetLimit(limit)
					ch := make(chan struct{})
					g.Go(func() error { close(ch); return nil })
					for range limit {
						g.Go(func() error { <-ch; return nil })
					}
					return g.Wait()
				})
				if err := outer.Wait(); err != nil {
					t.Errorf("limit %d: Wait returned %v", limit, err)
				}
			})
		}
	})
}
