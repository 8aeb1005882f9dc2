package sched

import stdatomic "sync/atomic"

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
// is finished (done), which frees its slot for a task parked behind it:
// a dropped task that passed nothing on would leave the parked tasks, and
// the group's count, waiting for ever.
func (g *Group) drop(w *worker, injected bool) {
	sl := g.slow.Load()
	sl.skipped.Store(true)
	if w != nil {
		w.afterTask(g, false, injected && g.limit <= 0, nil)
	} else {
		g.done(1)
	}
}
