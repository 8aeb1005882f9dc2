package sched

import (
	"context"
	stdatomic "sync/atomic"
)

// modes are the group's opt-in failure behaviours. They are written only
// while no task of the group is active (as the limit is), so a worker reads
// them without synchronization of its own: the Go that made a task active
// comes after the write, and the write comes after the subtraction that
// finished the last task of the previous batch.
type modes struct {
	// skipQueued: once the group is canceled (first error, recovered
	// panic, or its context), tasks that have not started are dropped
	// and Go queues nothing.
	skipQueued bool

	// wrapPanic, when set, makes a task's panic recovered: the first one
	// becomes the error it returns, which cancels the group's context and
	// is raised again by Wait. later counts the panics after the first.
	// When nil, a task's panic crashes the program (worker.call).
	wrapPanic func(v any, stack []byte, later *stdatomic.Int64) error
}

// SetSkipQueued turns the skip-queued cancellation mode on or off. It
// refuses (and returns the number of active tasks it saw) while any task of
// the group is active.
func (g *Group) SetSkipQueued(on bool) (active int64) {
	if active = g.count(); active != 0 {
		return active
	}
	g.sl().skipQueued = on
	return 0
}

// fail records err if it is the group's first error, and cancels. The
// write of err comes before the cancel (what the package docs promise) and,
// since a task calls fail before it finishes, before Wait reads err.
func (g *Group) fail(err error) {
	sl := g.sl()
	if sl.errSet.CompareAndSwap(false, true) {
		sl.err = err
		if sl.cancel != nil {
			sl.cancel(err)
		}
	}
}

// canceled reports whether the group has failed (a task returned an error
// or had its panic recovered) or its context is done. Each is one atomic
// load (context's Err is one for a context made by WithCancelCause).
func (sl *groupSlow) canceled() bool {
	return sl.errSet.Load() || sl.pan.set.Load() || sl.ctx != nil && sl.ctx.Err() != nil
}

// skips reports whether a queued task of g must be dropped instead of run:
// the group is in skip-queued mode and canceled. The check is made when a
// worker has claimed the task, just before it would run it; a task that
// passed it runs to the end even if the group is canceled a moment later.
func (g *Group) skips() bool {
	sl := g.slow.Load()
	return sl != nil && sl.skipQueued && sl.canceled()
}

// drop ends a task of g that w (or, w nil, a goroutine waiting outside the
// pool) claimed and skips (skips reported true). Like a task that ran, it
// is finished (finish), which frees its slot for a task parked behind it:
// a dropped task that passed nothing on would leave the parked tasks, and
// the group's count, waiting for ever.
func (g *Group) drop(w *worker, injected bool) {
	sl := g.slow.Load()
	sl.skipped.Store(true)
	if w != nil {
		w.finished(g, false, injected)
	} else {
		g.finish(1)
	}
}

// helpUntilDone is the helping half of Wait on a worker (worker.help),
// for a Wait that may never return.
//
// A task that help runs executes on the waiting task's goroutine; if it
// calls runtime.Goexit, the whole goroutine unwinds, the waiting task with
// it (see worker.call). Wait then never returns to its caller, and what it
// would have reported is lost: harmless for an error (the caller ends as if
// it had called Goexit itself), but not for a panic that the group
// recovered, which Wait must raise. So when help is unwound, the deferred
// function finishes the Wait: it waits, blocked, for the group's other
// tasks, and ends it as Wait would (result), raising a recovered panic
// there. Raised in a deferred call during Goexit, the panic reaches the
// waiting task's own recovery in worker.call, like a panic of its own;
// once that handles it, the Goexit goes on.
//
// Only Goexit unwinds help: a panic in a task that help runs is either
// recovered in worker.call or ends the program there (fatalPanic).
func (g *Group) helpUntilDone(w *worker) {
	returned := false
	defer func() {
		if returned {
			return
		}
		w.block()
		g.waitOutside()
		w.unblock()
		if sl := g.slow.Load(); sl != nil {
			sl.result()
		}
	}()
	w.help(g)
	returned = true
}

// result ends a Wait once no task of the group is active: it cancels the
// group's context, then raises the recovered panic again, if any, on the
// waiting goroutine, or returns the group's error. A skip-queued group that
// dropped a task (or refused a Go) although no task failed was canceled
// from outside (its parent): it reports the context's cause, since nil
// would claim that every task ran.
//
// The tempting version, "return the cause if the context is canceled",
// is wrong twice over: the cancel below (by this Wait or an earlier or
// concurrent one) makes it true for every later Wait, and a parent
// canceled after the last task ran would turn a complete run into an error.
func (sl *groupSlow) result() error {
	err := sl.err
	if err == nil && sl.skipped.Load() && sl.ctx != nil {
		err = context.Cause(sl.ctx)
	}
	if sl.cancel != nil {
		sl.cancel(sl.err)
	}
	if sl.pan.set.Load() {
		panic(sl.pan.err)
	}
	return err
}
