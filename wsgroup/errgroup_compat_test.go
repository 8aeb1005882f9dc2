package wsgroup_test

// The tests in this file make the same checks, case for case, as the tests in
// golang.org/x/sync/errgroup's errgroup_test.go, against wsgroup: a program
// that passes them with errgroup must pass them with wsgroup.

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

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
		runWithTimeout(t, func() {
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

func TestWithContext(t *testing.T) {
	errDoom := errors.New("wsgroup_test: doomed")

	cases := []struct {
		errs []error
		want error
	}{
		{want: nil},
		{errs: []error{nil}, want: nil},
		{errs: []error{errDoom}, want: errDoom},
		{errs: []error{errDoom, nil}, want: errDoom},
	}

	for _, tc := range cases {
		runWithTimeout(t, func() {
			g, ctx := wsgroup.WithContext(context.Background())
			for _, err := range tc.errs {
				g.Go(func() error { return err })
			}
			if err := g.Wait(); err != tc.want {
				t.Errorf("after Go(return err) for err in %v: Wait() = %v, want %v",
					tc.errs, err, tc.want)
			}
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
	runWithTimeout(t, func() {
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

	runWithTimeout(t, func() {
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
	errDoom := errors.New("wsgroup_test: doomed")

	cases := []struct {
		errs []error
		want error
	}{
		{want: nil},
		{errs: []error{nil}, want: nil},
		{errs: []error{errDoom}, want: errDoom},
		{errs: []error{errDoom, nil}, want: errDoom},
	}

	for _, tc := range cases {
		runWithTimeout(t, func() {
			g, ctx := wsgroup.WithContext(context.Background())
			for _, err := range tc.errs {
				g.TryGo(func() error { return err })
			}
			if err := g.Wait(); err != tc.want {
				t.Errorf("after TryGo(return err) for err in %v: Wait() = %v, want %v",
					tc.errs, err, tc.want)
			}
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
