package goroutinestate

import (
	"context"
	"runtime"
	"runtime/pprof"

	"github.com/go-steal/steal/wsgroup"
)

func Tasks(ctx context.Context) error {
	g, ctx := wsgroup.WithContext(ctx)
	g.Go(func() error {
		runtime.LockOSThread() // want `^runtime.LockOSThread without runtime.UnlockOSThread in a task: a wsgroup task runs on a shared worker goroutine or on the goroutine that called Wait .*, so the lock, and whatever the task does to the thread, stays with that goroutine.*; unlock before the task returns \(defer runtime.UnlockOSThread\(\)\), or do thread-bound work on a goroutine of your own, started and waited for inside the task; see https://github.com/go-steal/steal/blob/main/migrate.md#lockosthread-in-a-task$`
		return nil
	})
	g.Go(func() error {
		runtime.UnlockOSThread() // want `^runtime.UnlockOSThread without runtime.LockOSThread in a task: .*so it can undo a lock that goroutine holds \(a caller of Wait locked to the main thread, say\); unlock only what the task locked; see .*#lockosthread-in-a-task$`
		return nil
	})
	g.Go(func() error {
		// Not reported: a task carries the labels of the goroutine that
		// called Go, and the goroutine that ran it gets its own labels back
		// after the task, so these last to the end of the task, as on
		// errgroup's goroutine.
		pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("k", "v")))
		return nil
	})
	_ = wsgroup.For(ctx, 4, func(ctx context.Context, i int) error {
		runtime.LockOSThread() // want `runtime.LockOSThread without runtime.UnlockOSThread in a For body`
		return nil
	})
	return g.Wait()
}

// Silent below.

func OwnGoroutine(ctx context.Context) error {
	var g wsgroup.Group
	g.Go(func() error {
		done := make(chan struct{})
		go func() {
			defer close(done)
			runtime.LockOSThread() // a goroutine of its own, which takes its thread with it
			pprof.SetGoroutineLabels(ctx)
		}()
		<-done
		return nil
	})
	// A task that unlocks what it locked, and labels its work with pprof.Do.
	g.Go(func() error {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		pprof.Do(ctx, pprof.Labels("k", "v"), func(context.Context) {})
		return nil
	})
	_ = wsgroup.For(ctx, 4, func(ctx context.Context, i int) error {
		pprof.Do(ctx, pprof.Labels("i", "x"), func(context.Context) {})
		return nil
	})
	runtime.LockOSThread() // not in a task
	defer runtime.UnlockOSThread()
	pprof.Do(ctx, pprof.Labels("k", "v"), func(context.Context) {})
	return g.Wait()
}

// Labels carry over from the caller of Go and are restored after each task,
// as under errgroup: nothing about them is reported.
func Labels(ctx context.Context) error {
	var g wsgroup.Group
	pprof.Do(ctx, pprof.Labels("request", "r1"), func(ctx context.Context) {
		// Tasks started inside pprof.Do run with its labels, inherited
		// from the goroutine that called Go.
		g.Go(func() error {
			if v, ok := pprof.Label(ctx, "request"); ok {
				_ = v
			}
			return nil
		})
		g.Go(func() error {
			pprof.Do(ctx, pprof.Labels("stage", "parse"), func(context.Context) {})
			return nil
		})
		g.Go(func() error {
			// Set for the rest of the task only: the goroutine that runs
			// it gets its own labels back when the task returns.
			pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("stage", "write")))
			return nil
		})
	})
	_ = wsgroup.ForEach(ctx, []string{"a", "b"}, func(ctx context.Context, s *string) error {
		pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("item", *s)))
		return nil
	})
	g.Go(func() error {
		// A task started from a labelled task inherits its labels.
		pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("outer", "1")))
		var inner wsgroup.Group
		inner.Go(func() error {
			pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("inner", "1")))
			return nil
		})
		return inner.Wait()
	})
	return g.Wait()
}
