package wsgroup_test

// Once the process has no task, no goroutine of the scheduler remains after
// a short linger: goleak.VerifyNone, which retries for a while, passes right
// after Wait.
// goleak.VerifyNone looks at every goroutine of the process, so nothing in
// this package may use t.Parallel.

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/go-steal/steal/wsgroup"
)

func TestNoLeakAfterWait(t *testing.T) {
	errDoom := errors.New("wsgroup_test: doomed")
	cases := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"zero-group", func(t *testing.T) {
			var g wsgroup.Group
			var ran atomic.Int32
			for i := 0; i < 1000; i++ {
				g.Go(func() error { ran.Add(1); return nil })
			}
			if err := g.Wait(); err != nil {
				t.Errorf("Wait() = %v, want nil", err)
			}
			if n := ran.Load(); n != 1000 {
				t.Errorf("ran %d tasks, want 1000", n)
			}
		}},
		{"SetLimit(3)", func(t *testing.T) {
			var g wsgroup.Group
			g.SetLimit(3)
			var ran atomic.Int32
			for i := 0; i < 1000; i++ {
				g.Go(func() error { ran.Add(1); busy(); return nil })
			}
			if err := g.Wait(); err != nil {
				t.Errorf("Wait() = %v, want nil", err)
			}
			if n := ran.Load(); n != 1000 {
				t.Errorf("ran %d tasks, want 1000", n)
			}
		}},
		{"SetLimit(3)-recursive", func(t *testing.T) {
			var g wsgroup.Group
			g.SetLimit(3)
			var ran atomic.Int32
			var node func(d int) func() error
			node = func(d int) func() error {
				return func() error {
					ran.Add(1)
					if d < 8 {
						g.Go(node(d + 1))
						g.Go(node(d + 1))
					}
					return nil
				}
			}
			g.Go(node(0))
			if err := g.Wait(); err != nil {
				t.Errorf("Wait() = %v, want nil", err)
			}
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
				var ran atomic.Int32
				for i := 0; i < 100; i++ {
					g.Go(func() error { ran.Add(1); return nil })
				}
				if err := g.Wait(); err != nil {
					t.Errorf("round %d: Wait() = %v, want nil", round, err)
				}
				if n := ran.Load(); n != 100 {
					t.Errorf("round %d: ran %d tasks, want 100", round, n)
				}
				g.SetLimit(2)
			}
		}},
		{"blocking-tasks", func(t *testing.T) {
			// Every task blocks until the last one has started, so the pool
			// has to grow past its usual size; the extra workers must go
			// away too.
			var g wsgroup.Group
			const n = 32
			var started atomic.Int32
			all := make(chan struct{})
			for i := 0; i < n; i++ {
				g.Go(func() error {
					if started.Add(1) == n {
						close(all)
					}
					<-all
					return nil
				})
			}
			if err := g.Wait(); err != nil {
				t.Errorf("Wait() = %v, want nil", err)
			}
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
			if err := a.Wait(); err != nil {
				t.Errorf("a.Wait() = %v, want nil", err)
			}
			if err := b.Wait(); err != nil {
				t.Errorf("b.Wait() = %v, want nil", err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if abandoned.Load() {
				t.Skip("an earlier test hung and its goroutines are still alive: a leak check would only report them again")
			}
			runWithTimeout(t, func() { tc.run(t) })
			goleak.VerifyNone(t)
		})
	}
}
