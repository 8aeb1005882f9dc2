package goexit

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/go-steal/steal/wsgroup"
	"golang.org/x/sync/errgroup" // want `errgroup can be replaced by wsgroup`
)

func Tasks(t *testing.T, b *testing.B, f *testing.F, tb testing.TB) {
	var g wsgroup.Group
	g.Go(func() error {
		runtime.Goexit() // want `^runtime.Goexit in a task: a wsgroup task runs on a shared worker goroutine or on the goroutine that called Wait \(Wait runs its group's queued tasks itself\), and Goexit ends that goroutine, not only the task; return an error instead; see https://github.com/go-steal/steal/blob/main/migrate.md#goexit-failnow-and-fatal-in-a-task$`
		return nil
	})
	g.TryGo(func() error {
		t.FailNow()     // want `t.FailNow calls runtime.Goexit in a task: .*or call t.Error and return; see .*#goexit-failnow-and-fatal-in-a-task$`
		t.Fatal("x")    // want `t.Fatal calls runtime.Goexit in a task`
		t.Fatalf("x")   // want `t.Fatalf calls runtime.Goexit in a task`
		t.SkipNow()     // want `t.SkipNow calls runtime.Goexit in a task`
		t.Skip("x")     // want `t.Skip calls runtime.Goexit in a task`
		t.Skipf("x")    // want `t.Skipf calls runtime.Goexit in a task`
		b.Fatal("x")    // want `b.Fatal calls runtime.Goexit in a task`
		f.FailNow()     // want `f.FailNow calls runtime.Goexit in a task`
		tb.Fatalf("x")  // want `tb.Fatalf calls runtime.Goexit in a task`
		t.Error("fine") // Error does not end the goroutine
		func() {
			t.FailNow() // want `t.FailNow calls runtime.Goexit in a task`
		}()
		defer func() {
			runtime.Goexit() // want `runtime.Goexit in a task`
		}()
		go func() {
			runtime.Goexit() // a goroutine of its own: not the task's
		}()
		return nil
	})
	var eg errgroup.Group
	eg.Go(func() error {
		t.Fatal("x") // want `t.Fatal calls runtime.Goexit in a task`
		return nil
	})
	_ = wsgroup.For(context.Background(), 3, func(ctx context.Context, i int) error {
		t.FailNow() // want `^t.FailNow calls runtime.Goexit in a For body: a For body runs on a shared worker goroutine or on the goroutine that called For \(it runs bodies itself while it waits\), and Goexit ends that goroutine, not only the For body`
		return nil
	})
	_ = wsgroup.ForEach(context.Background(), []int{1}, func(ctx context.Context, e *int) error {
		runtime.Goexit() // want `runtime.Goexit in a ForEach body`
		return nil
	}, wsgroup.PanicInWait)
	_, _ = wsgroup.Map(context.Background(), []int{1}, func(ctx context.Context, e *int) (string, error) {
		t.Skip() // want `t.Skip calls runtime.Goexit in a Map body`
		return "", nil
	})
	g.Go(func() error {
		var inner wsgroup.Group
		inner.Go(func() error {
			t.FailNow() // want `t.FailNow calls runtime.Goexit in a task`
			return nil
		})
		return inner.Wait()
	})
	_ = g.Wait()
}

// Silent below.

func helper(t *testing.T) error {
	t.FailNow() // not in a task literal
	runtime.Goexit()
	return errors.New("unreachable")
}

func InSubtest(t *testing.T, b *testing.B) {
	var g wsgroup.Group
	g.Go(func() error {
		t.Run("sub", func(t *testing.T) {
			t.FailNow() // the subtest's own goroutine
		})
		b.RunParallel(func(pb *testing.PB) {
			b.FailNow() // not the task's goroutine either
		})
		return nil
	})
	_ = g.Wait()
}

func NotInTasks(t *testing.T) {
	fail := func() error {
		t.Fatal("x") // a plain function, not passed to Go
		return nil
	}
	var g wsgroup.Group
	g.Go(fail) // not a literal: not followed
	g.Go(func() error { return helper(t) })
	_ = g.Wait()
	t.FailNow()
}

type fake struct{}

func (fake) Go(f func() error) {}

func NotAGroup(t *testing.T) {
	var g fake
	g.Go(func() error {
		t.FailNow()
		return nil
	})
}
