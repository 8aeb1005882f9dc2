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
		runtime.LockOSThread() // want `^runtime.LockOSThread without runtime.UnlockOSThread in a task: a wsgroup task runs on a shared worker goroutine or on the goroutine that called Wait .*, so the lock, and whatever the task does to the thread, stays with that goroutine.*; unlock before the task returns \(defer runtime.UnlockOSThread\(\)\), or do thread-bound work on a goroutine of your own, started and waited for inside the task; see https://github.com/go-steal/steal/blob/main/migrate.md#lockosthread-and-goroutine-local-state-in-a-task$`
		return nil
	})
	g.Go(func() error {
		runtime.UnlockOSThread() // want `^runtime.UnlockOSThread without runtime.LockOSThread in a task: .*so it can undo a lock that goroutine holds \(a caller of Wait locked to the main thread, say\); unlock only what the task locked; see .*#lockosthread-and-goroutine-local-state-in-a-task$`
		return nil
	})
	g.Go(func() error {
		pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("k", "v"))) // want `^pprof.SetGoroutineLabels in a task: .*so the labels stay on that goroutine after the task returns.*label the task's own work with pprof.Do inside it instead.*#lockosthread-and-goroutine-local-state-in-a-task$`
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
	// A task that unlocks what it locked, and one that labels its work
	// with pprof.Do, as the package documentation says to.
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
