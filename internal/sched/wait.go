package sched

import (
	"context"

	"github.com/go-steal/steal/internal/gid"
)

// Waiting: Group.Wait returns once the group's count is zero. Until then
// the waiting goroutine helps: it runs the group's own queued tasks that
// it can reach (help on a worker, helpOutside elsewhere), on a worker also
// the tasks that its running tasks are waiting for (join.go), and parks
// (waitOutside, on the wait table of waiters.go) when none is left.

// Wait implements the waiting half of wsgroup.Group.Wait: on a worker it
// helps (helpUntilDone); elsewhere it runs the group's own tasks that it
// can reach and then parks (waitFromOutside).
func (g *Group) Wait() error {
	if w := current(); w != nil {
		w.settle() // this worker's own unsettled completions may be ours
		if g.count() != 0 {
			g.helpUntilDone(w)
		}
	} else if g.count() != 0 {
		g.waitFromOutside()
	}
	sl := g.slow.Load()
	if sl == nil {
		return nil
	}
	return sl.result()
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
//
// A Wait inside a task records itself for the helpers of the task's own
// group (enterJoin, join.go).
func (g *Group) helpUntilDone(w *worker) {
	var own int64 // see help
	returned := false
	g.enterJoin(w.running.group())
	defer func() {
		if returned {
			return
		}
		// The tasks help ran to the end are finished: subtract them, or
		// the count would never reach zero.
		if own != 0 {
			g.done(own)
		}
		w.block()
		g.waitOutside()
		w.unblock()
		if sl := g.slow.Load(); sl != nil {
			sl.result()
		}
	}()
	w.help(g, &own)
	returned = true
}

// help waits on a worker for g to finish. It runs g's own queued tasks:
// from its deque while the newest task there is g's, then stolen from other
// workers, with the tasks that g's running tasks wait for (join.go:
// joinedFrom chooses, joinable checks again once the task is claimed).
// When none is within reach, it polls the count for a moment, waits in
// its place for up to joinPatience (waitPatiently), and then blocks until
// g finishes, letting the pool run another worker meanwhile (block).
//
// It runs no other task. The tempting version, run whatever is queued while
// waiting, as work-stealing runtimes usually do, deadlocks correct errgroup
// code: a task queued by the waiting task (or by anyone) may wait for
// something the waiting task does only after Wait returns, such as
//
//	g.Go(func() error { <-ch; return nil })
//	inner.Wait() // would pick up the task above, newest first, and block in it
//	close(ch)
//
// and once it runs on top of the waiter's stack, the waiter can never
// resume. g's own tasks are safe: Wait waits for each of them anyway; so
// are the tasks on a chain of Waits in progress inside them (join.go).
// Those count in their own groups, not in *own.
//
// The tasks of an unlimited g that help runs to the end are not subtracted
// from g's count one by one: *own counts them, and help subtracts them all
// at once, with one atomic operation, when they are all that is left of the
// count (and then returns), or before it blocks. Until then nobody misses
// them: the count stays above zero either way while help is still taking
// or running tasks of g, and only zero wakes anyone. Before it blocks,
// though, help must subtract them: the tasks left run elsewhere, and the
// last to end must see the count reach zero and wake us. (A limited g
// gets each slot back at once: see afterTask. A Goexit that unwinds help
// leaves *own to helpUntilDone's deferred function.)
func (w *worker) help(g *Group, own *int64) {
	joined := func(t *task) bool { return joinedFrom(t.g.Load(), g) }
	dry := 0 // searches in a row that found nothing
	for {
		w.settle()
		if c := g.count(); c == *own {
			if c != 0 {
				*own = 0
				g.done(c)
			}
			return
		}
		// The deque's PopIf for g's tasks, its filter written in rather
		// than called through a function value (Newest), as in runOwn: a
		// helper that tests the newest task is over the inlining budget.
		var t *task
		if x := w.dq.Newest(); x != nil && x.g.Load() == g {
			t = w.dq.Pop() // nil if a thief won it
		}
		if t != nil {
			w.st.localPops++
			dry = 0
			if t.plain {
				var finished bool
				if t, finished = w.runOwn(t, g, own); finished {
					w.goexit = false // as in execute
					continue
				}
			}
			if t != nil {
				w.execute(t, own)
			}
			continue
		}
		if t := w.takeJoined(g, joined); t != nil {
			dry = 0
			if t.g.Load() == g {
				w.execute(t, own)
			} else {
				joinHelped()
				w.execute(t, nil) // counted in its own group (join.go)
			}
			continue
		}
		if k := *own; k != 0 {
			*own = 0
			g.done(k)
			continue // the count may be zero now
		}
		// g's tasks run elsewhere, with nothing of theirs to help with
		// now, or wait in our deque behind other tasks.
		dry++
		if w.pool.size.Load() > 1 {
			if dry <= submitPolls {
				// With short tasks, those left end, or queue tasks to
				// help with, sooner than a parked worker is woken: poll
				// the count, then search again.
				g.pollDone()
				continue
			}
			if dry == submitPolls+1 {
				// Patience (joinPatience): wait for g in our place,
				// without the pool running another worker in it, then
				// search once more.
				w.waitPatiently(g)
				continue
			}
		}
		// Block: the pool runs another worker in our place, and it
		// steals what our deque holds (see block).
		dry = 0
		w.block()
		g.waitOutside()
		w.unblock()
	}
}

// takeJoined takes a task that help may run for g (join.go), other than
// from its own deque: the oldest task of another worker's deque on a chain
// of joins leading to g (joined, with the second walk once it is
// claimed). It returns nil when there is none.
func (w *worker) takeJoined(g *Group, joined func(*task) bool) *task {
	for {
		t := w.stealIf(joined)
		if t == nil {
			break
		}
		if t.g.Load() == g || joinable(t, g) {
			return t
		}
		w.pool.requeue(t) // the chain broke before the claim
	}
	return nil
}

// waitPatiently parks w, which has found nothing to help g with, until g
// is done or joinPatience has passed, without giving up w's place in the
// pool. In fork-join the tasks left are mostly CPU-bound subtrees on the
// other workers, whose thieves are about to end or to queue more tasks to
// help with: giving our place to a new worker for that moment (block)
// would add a goroutine and a hand-off each time, and fork-join's nested
// Waits would pile them up. The other workers go on running the queued
// tasks, ours included (our deque stays in the scan set), so the pool is
// one worker short for at most joinPatience, and no longer: a Wait that
// still finds nothing blocks. The monitor does not take w for blocked in
// a task meanwhile (handoff.Slot.SetPatient). Only when another worker
// can run (the pool's size is above one).
func (w *worker) waitPatiently(g *Group) {
	w.rec.SetPatient(true)
	g.parkDoneFor(patience())
	w.rec.SetPatient(false)
}

// A goroutine that is not a worker (a request handler, main) runs tasks of
// its own group while it waits for the group in Wait, until nothing of the
// group is within reach. (Not while a Go waits for a slot: see
// Group.acquireOutside.) The tasks it can reach are the group's
// newest tasks in its own shard of the injector, which are most likely the
// ones it has just submitted, and the oldest task of a worker's deque when
// that task is the group's. Running them itself saves their hand-off to a
// worker and its own park and wake-up, and its CPU is not idle while it
// waits (ForkJoinPool's external joins help the same way).
//
// Only the group's own tasks: the waiter waits for each of them anyway, so
// running one cannot make it wait for anything it would not have waited
// for (the deadlock argument of worker.help). A task run here sees the
// goroutine of the caller of Wait: its runtime.Goexit ends that
// goroutine, and its panic ends the program (see callOutside).
//
// While it runs such a task, the goroutine is marked in runners, so that a
// Go made inside the task on a full limited group follows the rule for Go
// inside a task (setAside) instead of blocking: the slots it would
// wait for may be held by the very tasks suspended below it.

// waitFromOutside is Wait on a goroutine that is not a worker.
//
// If a task run here calls runtime.Goexit, the goroutine unwinds through
// this Wait; as in helpUntilDone, the deferred function then waits for the
// group's other tasks and ends the Wait (result), so that a panic the
// group recovered is raised on the goroutine all the same.
func (g *Group) waitFromOutside() {
	returned := false
	defer func() {
		if returned {
			return
		}
		g.waitOutside()
		if sl := g.slow.Load(); sl != nil {
			sl.result()
		}
	}()
	g.helpOutside()
	g.awaitOutside()
	returned = true
}

// helpOutside runs the group's tasks that the calling goroutine can reach
// (see above) until there are none.
func (g *Group) helpOutside() {
	id := gid.Current()
	if !runners.has(id) {
		j, ok := runners.add(id)
		if !ok {
			return
		}
		defer runners.remove(j) // deferred: a task's Goexit unwinds through here
	}
	var c outsideCounts
	defer global.publishOutside(id, &c) // deferred for Goexit too
	isG := func(t *task) bool { return t.g.Load() == g }
	for g.count() != 0 {
		if f := global.inj.unpushIf(g); f.f != nil {
			g.runOutside(f, &c)
		} else {
			t := global.stealFor(isG)
			if t == nil {
				return
			}
			c.steals++
			// The record is not recycled: free lists belong to workers.
			g.runOutside(t.fn, &c)
		}
	}
}

// runOutside runs f, a task of g that the calling goroutine (not a worker)
// has taken, and accounts for it; c counts it if it ran.
func (g *Group) runOutside(f fn, c *outsideCounts) {
	if g.skips() {
		g.drop(nil, false)
		return
	}
	admitted := false
	if g.limit > 0 {
		if !g.startRunning(nil, f) {
			return // parked; a worker will resubmit it
		}
		admitted = true
	}
	g.callOutside(f, admitted, c)
}

// awaitOutside is waitOutside after a short poll of the count: the tasks
// left are running on workers, and with short tasks they end sooner than a
// parked goroutine is woken. The poll is as in acquireOutside.
func (g *Group) awaitOutside() {
	if global.size.Load() > 1 {
		for range submitPolls {
			if g.pollDone() {
				return
			}
		}
	}
	g.waitOutside()
}

// pollDone loads the count up to 32 times, without giving up the
// processor, and reports whether it saw zero: one round of the polls of
// awaitOutside and worker.help.
func (g *Group) pollDone() bool {
	for range 32 {
		if g.count() == 0 {
			return true
		}
	}
	return false
}

// waitOutside parks the calling goroutine until no task is active.
func (g *Group) waitOutside() {
	for g.count() != 0 {
		g.park(bitDone, func(s uint64) bool { return countOf(s) != 0 })
	}
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
