package wsgroup_test

// API compatibility with golang.org/x/sync/errgroup. The first tests make
// the same checks, case for case, as errgroup's own errgroup_test.go; the
// rest check documented errgroup behaviour beyond those (the first error,
// concurrent and empty Waits). A program that passes them with errgroup
// must pass them with wsgroup. Limits, cancellation, panics and blocking
// tasks have files of their own.

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-steal/steal/internal/testkit"
	"github.com/go-steal/steal/wsgroup"
)

func TestZeroGroup(t *testing.T) {
	err1 := errors.New("wsgroup_test: 1")
	err2 := errors.New("wsgroup_test: 2")

	cases := [][]error{
		{},
		{nil},
		{err1},
		{err1, nil},
		{err1, nil, err2},
	}

	for _, errs := range cases {
		testkit.Guard(t, func() {
			g := new(wsgroup.Group)
			var first error
			for i, err := range errs {
				g.Go(func() error { return err })
				if first == nil && err != nil {
					first = err
				}
				// Wait after every Go: the group is reused, and the first
				// error sticks across the later Waits.
				if got := g.Wait(); got != first {
					t.Errorf("after Go(return err) for err in %v: Wait() = %v, want %v",
						errs[:i+1], got, first)
				}
			}
		})
	}
}

// A contextCase is a case of errgroup's TestWithContext and
// TestCancelCause: tasks returning errs, and what Wait must return.
type contextCase struct {
	errs []error
	want error
}

// contextCases returns the cases of TestWithContext and TestCancelCause.
func contextCases() []contextCase {
	return []contextCase{
		{want: nil},
		{errs: []error{nil}, want: nil},
		{errs: []error{errDoom}, want: errDoom},
		{errs: []error{errDoom, nil}, want: errDoom},
	}
}

// waitContextCase submits tc's tasks to a new WithContext group with Go,
// or with TryGo if tryGo, checks what Wait returns, and returns the
// group's context.
func waitContextCase(t *testing.T, tc contextCase, tryGo bool) context.Context {
	t.Helper()
	g, ctx := wsgroup.WithContext(context.Background())
	how := "Go"
	if tryGo {
		how = "TryGo"
	}
	for _, err := range tc.errs {
		if tryGo {
			g.TryGo(func() error { return err })
		} else {
			g.Go(func() error { return err })
		}
	}
	if err := g.Wait(); err != tc.want {
		t.Errorf("after %s(return err) for err in %v: Wait() = %v, want %v",
			how, tc.errs, err, tc.want)
	}
	return ctx
}

func TestWithContext(t *testing.T) {
	for _, tc := range contextCases() {
		testkit.Guard(t, func() {
			ctx := waitContextCase(t, tc, false)
			select {
			case <-ctx.Done():
			default:
				t.Errorf("after Go(return err) for err in %v and Wait: ctx.Done() was not closed",
					tc.errs)
			}
		})
	}
}

func TestTryGo(t *testing.T) {
	testkit.Guard(t, func() {
		g := &wsgroup.Group{}
		const n = 42
		g.SetLimit(n)
		ch := make(chan struct{})
		fn := func() error {
			ch <- struct{}{}
			return nil
		}
		for i := 0; i < n; i++ {
			if !g.TryGo(fn) {
				t.Errorf("TryGo #%d under SetLimit(%d) = false, want true", i, n)
				return // the group is left with unfinished tasks; the test has failed
			}
		}
		if g.TryGo(fn) {
			t.Errorf("TryGo with %d active tasks under SetLimit(%d) = true, want false", n, n)
			n := n + 1
			go func() {
				for i := 0; i < n; i++ {
					<-ch
				}
			}()
			g.Wait()
			return
		}
		go func() {
			for i := 0; i < n; i++ {
				<-ch
			}
		}()
		g.Wait()

		if !g.TryGo(fn) {
			t.Errorf("TryGo after Wait = false, want true")
			return
		}
		go func() { <-ch }()
		g.Wait()

		// Switch limit.
		g.SetLimit(1)
		if !g.TryGo(fn) {
			t.Errorf("TryGo after SetLimit(1) = false, want true")
			return
		}
		if g.TryGo(fn) {
			t.Errorf("second TryGo under SetLimit(1) = true, want false")
			go func() { <-ch; <-ch }()
			g.Wait()
			return
		}
		go func() { <-ch }()
		g.Wait()

		// Block all calls.
		g.SetLimit(0)
		for i := 0; i < 1<<10; i++ {
			if g.TryGo(fn) {
				t.Errorf("TryGo under SetLimit(0) = true, want false")
				go func() { <-ch }()
				break
			}
		}
		g.Wait()
	})
}

func TestGoLimit(t *testing.T) {
	const limit = 10

	testkit.Guard(t, func() {
		g := &wsgroup.Group{}
		g.SetLimit(limit)
		var active atomic.Int32
		for i := 0; i <= 1<<10; i++ {
			g.Go(func() error {
				n := active.Add(1)
				if n > limit {
					return fmt.Errorf("saw %d active tasks; want ≤ %d", n, limit)
				}
				time.Sleep(1 * time.Microsecond) // Give other tasks a chance to increment active.
				active.Add(-1)
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			t.Error(err)
		}
	})
}

func TestCancelCause(t *testing.T) {
	for _, tc := range contextCases() {
		testkit.Guard(t, func() {
			ctx := waitContextCase(t, tc, true)
			want := tc.want
			if want == nil {
				want = context.Canceled
			}
			if err := context.Cause(ctx); err != want {
				t.Errorf("after TryGo(return err) for err in %v: context.Cause(ctx) = %v, want %v",
					tc.errs, err, want)
			}
		})
	}
}

// TestFirstErrorWins: Wait returns one of the errors, the same one every
// time, and it is the cause of the context's cancellation.
func TestFirstErrorWins(t *testing.T) {
	testkit.Guard(t, func() {
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

// TestConcurrentWait: several goroutines may Wait at once (errgroup's
// pipeline example does); all see the same error.
func TestConcurrentWait(t *testing.T) {
	testkit.Guard(t, func() {
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

// TestWaitWithoutGo: Wait on a fresh group returns at once, repeatedly.
func TestWaitWithoutGo(t *testing.T) {
	testkit.Guard(t, func() {
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
