package sched

import (
	"unsafe"

	"github.com/go-steal/steal/internal/deque"
	"github.com/go-steal/steal/internal/explore/atomic"
	"github.com/go-steal/steal/internal/explore/xsync"
	"github.com/go-steal/steal/internal/gstatus"
	"github.com/go-steal/steal/internal/sched/handoff"
	"github.com/go-steal/steal/internal/sleep"
)

// worker is one slot of the pool and, while occupied, the goroutine that
// runs in it. Fields without a comment belong to that goroutine alone.
type worker struct {
	pool  *Pool
	index int

	// dq holds tasks pushed by this worker (Go calls made in its tasks, and
	// batches taken from the injector). The occupant pushes and pops; other
	// workers steal, and so does a goroutine waiting outside the pool for
	// a group whose task is oldest here (Group.helpOutside).
	dq deque.Deque[task]

	// occupied is guarded by pool.mu.
	occupied bool

	// rec is the slot as the hand-off sees it (package handoff): the
	// occupant tells it where it is, a task's start and end (execute,
	// endTask), and the hand-off's detectors and monitor read it. started
	// is the number of tasks started in the slot, the occupant's own
	// count. detachedBy holds the reasons the slot is detached
	// (detach.go); written under pool.mu, loaded by the occupant without
	// it.
	rec        handoff.Slot
	started    uint32
	detachedBy atomic.Uint32

	// labels is the address of the occupant's own profiler labels
	// (gstatus.LabelsWord), set when it takes the slot, or nil: the
	// occupant alone loads from it (worker.wears, labels.go).
	labels *unsafe.Pointer
	// posts counts this worker's pushes, the poster's own count that
	// handoff.Handoff.Saturated asks for.
	posts uint32

	rng   uint64
	free  []*task
	batch [injectBatch]job

	// Completions not yet subtracted from cur's count: a run of tasks of
	// one unlimited group finishes with one atomic operation (settle).
	cur     *Group
	curDone int64

	finds   uint32   // calls of find, for its periodic look at the injector
	looking bool     // counted inactive in the sleep protocol (between StartLooking and WorkFound or StopLooking)
	goexit  bool     // a runtime.Goexit unwinds the goroutine (worker.unwound); serve replaces it
	victim  *worker  // whom the last find stole from, or nil
	depth   int      // tasks executing on this goroutine (nested by Wait and Go)
	running groupRef // the group of the innermost of those tasks, 0 between tasks (join.go)

	surplusFn  func() bool // pool.surplus, bound once
	injectedFn func() bool // pool.inj.nonEmpty, bound once
	queuedFn   func() bool // whether pool.queued() > 0, bound once

	st    slotCounts // the slot's counts so far, over all its occupants (stats.go)
	shown slotCounts // what pub holds
	pub   published  // for readers: see stats.go
}

// run is the body of a worker goroutine: it serves slot w, then waits as a
// spare (handoff.Spares) for another slot, until its linger passes.
func (w *worker) run(idle sleep.Idle) {
	clearLabels()
	p := w.pool
	handle := handoff.SelfHandle()
	var sp *handoff.Spare[assignment]
	for {
		if !w.serve(idle, handle) {
			return
		}
		if sp == nil {
			sp = handoff.NewSpare[assignment]()
		}
		a, ok := p.spares.Wait(sp)
		if !ok {
			return
		}
		w, idle = a.w, a.idle
	}
}

// serve runs tasks in slot w until the goroutine gives the slot up, when
// it reports true, or until a task ended it with runtime.Goexit, after
// which it does not return.
func (w *worker) serve(idle sleep.Idle, handle *gstatus.Handle) (released bool) {
	workers.Register(w)
	w.rec.SetHandle(handle)
	w.labels = gstatus.LabelsWord()
	w.looking = true
	defer func() {
		// Not after release: the slot may belong to a new goroutine by
		// now, whose goexit flag this would read.
		if !released && w.goexit {
			w.replace()
		}
	}()
	p := w.pool
	for {
		if t := w.find(); t != nil {
			w.foundWork(&idle)
			for ; t != nil; t = w.find() {
				w.execute(t, nil)
				if p.surplus() {
					break // a replacement whose worker is back: retire now
				}
			}
			w.settle()
			w.publish()
			idle = p.sleep.StartLooking(w.index)
			w.looking = true
			if w.detachedBy.Load()&detachHandOff != 0 {
				// Handed on (detached by the hand-off), and no task left to take:
				// another worker has our place, so leave (see detach.go).
				if released = w.retire(&idle); released {
					return true
				}
			}
			continue
		}
		if w.detachedBy.Load()&detachHandOff != 0 {
			// Started detached by the hand-off's ramp, and no task left.
			if released = w.retire(&idle); released {
				return true
			}
			continue
		}
		if p.surplus() {
			if released = w.retire(&idle); released {
				return true
			}
			continue
		}
		// Surplus is NoWorkFound's done condition only to save a linger:
		// nobody wakes a sleeper when the pool turns surplus (a blocked
		// worker coming back); it retires when its linger ends anyway.
		switch p.sleep.NoWorkFound(&idle, w.surplusFn, w.injectedFn, idleLinger()) {
		case sleep.Done, sleep.Lingered:
			if released = w.retire(&idle); released {
				return true
			}
		}
	}
}

// replace starts a fresh goroutine in w's slot, for one that a task ended
// with runtime.Goexit. The deferred halves of call have already counted
// every task that was on the goroutine's stack as finished, and help's
// deferred cleanup has dropped its registrations; the slot stays occupied,
// with its deque and whatever tasks are queued in it.
func (w *worker) replace() {
	w.goexit = false
	w.depth = 0
	w.running = 0
	// Between tasks: the slot's next status reads are of the new
	// goroutine, which is not in the task that ended.
	w.rec.Leave(w.started, false)
	w.settle()
	w.publish()
	w.pool.countReplace()
	workers.Unregister()
	idle := w.pool.sleep.StartLooking(w.index)
	xsync.Go(func() { w.run(idle) })
}

// foundWork ends an idle spell that found a task. If more tasks are queued
// and no other worker is idle to take them, it acts as a poster would
// (Pool.maybeSpawn): the tasks may have been posted while this worker was
// still counted idle, so nobody started a worker for them, and the task
// this worker is about to run may block. "Queued" means in our deque (a
// batch from the injector), in the injector, or in the deque we stole
// from: a worker whose deque others steal from may be blocked, and each
// thief that leaves tasks behind in it passes the baton on.
func (w *worker) foundWork(idle *sleep.Idle) {
	postBegin()
	defer postEnd()
	p := w.pool
	w.looking = false
	c := p.sleep.WorkFound(idle, w.queuedFn)
	if c.Inactive() != 0 {
		return // an idle worker will find what is left
	}
	if p.full() {
		// Saturated, or about to be: the other workers may all be
		// blocked, and this one runs a task next.
		p.ho.Saturated(0, &w.rec)
		return
	}
	// Tasks left behind may be anywhere: each worker that took a batch from
	// the injector while others were still idle left part of it in its
	// deque, and then blocked. Look where it is cheap first, then scan.
	if w.dq.Len() > 0 || p.inj.nonEmpty() || w.victim != nil && w.victim.dq.Len() > 0 || p.queued() > 0 {
		// spawn refuses when GOMAXPROCS went down since the size was
		// sampled: then the pool is saturated after all, and only the
		// hand-off can tell whether these tasks' workers are blocked.
		if !p.spawn() {
			p.ho.Saturated(0, nil)
		}
	}
}

// retire gives up the slot; see Pool.release. It reports whether the
// goroutine must exit.
func (w *worker) retire(idle *sleep.Idle) bool {
	w.settle()
	w.publish() // before release: then the slot may have a new occupant
	workers.Unregister()
	if w.pool.release(w, idle) {
		w.pool.counts.retired.Add(1)
		return true
	}
	workers.Register(w)
	return false
}

// find looks for a task: own deque (newest first), then a batch from the
// injector, then the oldest task of a random other worker. Two exceptions
// keep each source from starving behind another that never empties:
// every injectEvery searches it looks at the injector first, for tasks
// from outside behind a deque that always has more; and on every
// stealEvery-th search that reaches the queues (its own deque empty) it
// tries the other workers before the injector, for a task on the deque of
// a worker stuck in a task, which its neighbours would otherwise take only
// once the clients outside let the injector run dry (the hand-off moves
// such a deque to the injector, but only once it learns the worker is
// stuck, and with no status to read that can take long).
func (w *worker) find() *task {
	w.victim = nil
	if w.finds++; w.finds%injectEvery == 0 {
		if t := w.takeInjected(); t != nil {
			return t
		}
	}
	if t := w.dq.Pop(); t != nil {
		w.st.localPops++
		return t
	}
	if w.finds%stealEvery == 0 {
		if t := w.steal(); t != nil {
			return t
		}
	}
	if t := w.takeInjected(); t != nil {
		return t
	}
	return w.steal()
}

// takeInjected takes injected tasks (from one shard of the injector,
// starting the search at a random shard) and returns the oldest of them to
// run now; the rest of a batch goes into the deque.
//
// It takes one task unless another worker is idle to steal the rest, or
// the shard holds more than injectHigh tasks: a batch in a private deque
// waits behind its first task, which may block. With a long queue (a
// producer far ahead of the workers) batches amortize the shard's lock,
// and a batch stranded behind a blocked task is drained by the monitor
// when it detaches the worker.
func (w *worker) takeInjected() *task {
	p := w.pool
	most := 1
	others := p.sleep.Load().Inactive()
	if w.detachedBy.Load() != 0 {
		others = 0 // nobody scans our deque
	}
	if w.looking {
		others-- // this worker counts itself while it looks for work
	}
	if others > 0 {
		// Another worker is idle: batches are safe to take, a thief is
		// near.
		most = len(w.batch)
	}
	n := p.inj.takeBatch(w.batch[:], w.random(), int(p.live.Load()), most)
	if n == 0 {
		return nil
	}
	// Pop is LIFO, so to run the batch in submission order the newest goes
	// in first.
	postBegin()
	wasEmpty := w.dq.Len() == 0
	for i := n - 1; i >= 1; i-- {
		w.dq.Push(w.newTask(w.batch[i].fn, w.batch[i].g, true, w.batch[i].plain))
		w.batch[i] = job{}
	}
	if n > 1 {
		// The rest of the batch is now stealable: announce it like any
		// other push (package sleep), or a worker that got sleepy before
		// it landed and lost a steal race to it could sleep with it
		// queued behind a task that blocks.
		w.pool.sleep.NewInternalJobs(n-1, wasEmpty)
		w.pushed()
	}
	postEnd()
	t := w.newTask(w.batch[0].fn, w.batch[0].g, true, w.batch[0].plain)
	w.batch[0] = job{}
	return t
}

// steal tries the other workers, starting at a random one, and takes the
// oldest task of the first that has one.
func (w *worker) steal() *task { return w.stealIf(nil) }

// stealIf is steal restricted to tasks for which keep reports true (all of
// them when keep is nil). It keeps trying while a steal lost a race: a
// lost race means the victim had a task a moment ago, and the sleep
// protocol needs the last search before sleeping to find any task posted
// before the worker got sleepy. (Each lost race is another worker's win,
// so this loop ends.)
func (w *worker) stealIf(keep func(*task) bool) *task {
	slots := w.pool.scanned()
	n := len(slots)
	if n < 2 {
		return nil
	}
	for {
		retry := false
		start := int(w.random() % uint64(n))
		for i := range n {
			v := start + i
			if v >= n {
				v -= n
			}
			if slots[v] == w {
				continue
			}
			var t *task
			var r bool
			if keep == nil {
				t, r = slots[v].dq.Steal()
			} else {
				t, r = slots[v].dq.StealIf(keep)
			}
			if t != nil {
				w.victim = slots[v]
				w.st.steals++
				return t
			}
			retry = retry || r
		}
		if !retry {
			w.st.failedSteals++
			return nil
		}
	}
}

// stealFor takes the oldest task of a worker's deque for which keep
// reports true, trying each worker once from a random start, or returns
// nil. Like worker.stealIf it retries a deque whose steal lost a race.
func (p *Pool) stealFor(keep func(*task) bool) *task {
	slots := p.scanned()
	n := len(slots)
	if n == 0 {
		return nil
	}
	start := int(xsync.Rand() % uint64(n))
	for i := range n {
		v := start + i
		if v >= n {
			v -= n
		}
		for {
			t, retry := slots[v].dq.StealIf(keep)
			if t != nil {
				return t
			}
			if !retry {
				break
			}
		}
	}
	return nil
}

// random is xorshift64*; owner only.
func (w *worker) random() uint64 {
	x := w.rng
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	w.rng = x
	return x * 0x2545F4914F6CDD1D
}

// execute runs t and accounts for its completion; own is as in afterTask.
func (w *worker) execute(t *task, own *int64) {
	f, g, injected, plain := t.fn, t.g.Load(), t.injected, t.plain
	w.freeTask(t)
	w.started++
	w.rec.Enter(w.started)
	if g != w.cur && w.curDone != 0 {
		// Before running a task of another group, which may run long or
		// block, settle the completions of the previous group, whose Wait
		// may be waiting for just those. cur itself moves to g only once a
		// completion of g is batched (afterTask): a task that a helping
		// Wait runs for its own group (own) never is, and the store of a
		// pointer into the worker would cost a write barrier while the
		// collector marks, for every fork-join node.
		w.settleNow()
	}
	if !plain && g.skips() {
		g.drop(w, injected)
		w.endTask()
		return
	}
	// Whether the task took a running slot is remembered with the task,
	// not read again from g.limit when it ends: SetLimit(-1) may change
	// the limit meanwhile, as errgroup allows.
	admitted := false
	if !plain && g.limit > 0 {
		if !g.startRunning(w, f) {
			w.endTask()
			return // parked: the group is at its limit (see Group.startRunning)
		}
		admitted = true
	}
	if w.call(f, g, admitted) {
		// It panicked, the group recorded the panic, and call finished
		// the task; no runtime.Goexit went on past it (see unwound).
		w.goexit = false
		return
	}
	w.endTask()
	// A task not admitted here belongs to a group that had no limit when
	// it started, and cannot get one while it is active.
	w.afterTask(g, admitted, injected && !admitted, own)
}

// endTask tells the hand-off that the task execute started has ended: the
// worker is back in the scheduler's code, unless a task below it on the
// goroutine (one whose Wait or Go ran this one) goes on. Before afterTask,
// which may take locks and wake waiters. A task that ends the goroutine
// with runtime.Goexit does not come back here: the statuses of its dead
// goroutine read as unknown, and its replacement stores its own handle.
func (w *worker) endTask() { w.rec.Leave(w.started, w.depth > 0) }

// afterTask accounts for the end of a task of g that ran on w; admitted
// tells whether it held one of g's running slots, batchable whether it is
// an injected task of an unlimited g. A non-nil own is the count of
// finished tasks of g that a helping Wait for g subtracts itself (see
// worker.help): a task that held no slot is added to it instead of being
// accounted here. Only execute passes own, and there a task that held no
// slot belongs to a group with no limit. afterTask reads nothing of g's
// limit: its callers know the answers.
//
// Completions of batchable tasks are batched: a run of them finishes with
// one atomic operation on the group's count (settle),
// made before the worker runs a task of another group, waits or goes idle.
// Such a group is waited for outside the pool, by a goroutine that parks
// until the count is zero, so the delay costs it nothing. Every other
// completion is settled at once: a limited group hands out slots as tasks
// finish, and a group whose tasks were pushed on a worker is most often
// waited for by a worker that is helping and checks the count.
func (w *worker) afterTask(g *Group, admitted, batchable bool, own *int64) {
	if admitted {
		g.stopRunning()
	}
	if w.depth > 0 && w.detachedBy.Load()&detachHandOff != 0 {
		// A nested task the hand-off found stuck is over, and the task below
		// it goes on (see detach.go).
		w.reattach(detachHandOff)
	}
	if own != nil && !admitted {
		*own++
		return
	}
	// The task may have waited on a nested group and run other groups'
	// tasks meanwhile, so w.cur need not be g any more: check again.
	// (Counting this completion for w.cur unconditionally is the trap: it
	// credits the wrong group, whose Wait returns early while g's never
	// does.)
	if g != w.cur {
		w.settle()
		w.cur = g
	}
	w.curDone++
	if !batchable {
		w.settle()
	}
}

// settle subtracts the batched completions from the current group. It
// is called several times per task: the check is kept small enough to be
// inlined, and the subtraction is in settleNow.
func (w *worker) settle() {
	if w.curDone != 0 {
		w.settleNow()
	}
}

func (w *worker) settleNow() {
	g, k := w.cur, w.curDone
	w.curDone = 0
	g.done(k)
}

// pushLocal queues a task of g on this worker's deque.
//
// After the push (package sleep), a post wakes a sleeper if one should
// steal (Sleep.NewInternalJobs) and, when no worker is idle, starts one or
// tells the hand-off (Pool.maybeSpawn). Most posts do neither: nobody
// sleeps, and either a worker is idle to steal the task or the pool is
// saturated with nothing for the hand-off to do on this post. Those are
// told apart here, inline, from the same loads that the two calls would
// make, in the same order (the counters first, after the push; then the
// pool's size and the hand-off's flags, as maybeSpawn's pairing with a
// retiring worker needs); only a post with something to do makes them
// (announce), and they load the counters again, which is as good: any
// load after the push is.
func (w *worker) pushLocal(f fn, g *Group, plain bool) {
	postBegin()
	wasEmpty := w.dq.Push(w.newTask(f, g, false, plain))
	p := w.pool
	c := p.sleep.Load()
	w.posts++
	if !c.Calm() || c.Inactive() == 0 && !(p.full() && p.ho.Quiet(w.posts)) {
		w.announce(wasEmpty)
	}
	w.pushed()
	postEnd()
}

// announce is the rest of a post of pushLocal's that has something to do:
// wake a sleeper, start a worker, or have the hand-off check or watch.
func (w *worker) announce(wasEmpty bool) {
	c := w.pool.sleep.NewInternalJobs(1, wasEmpty)
	w.pool.maybeSpawn(c, w.posts)
}

// block tells the pool that this worker is about to block in one of our
// waits (a Wait with nothing left to help with): it detaches (detach.go),
// which moves the tasks of its deque to the injector, so that another
// worker runs in its place. If tasks are queued, that one starts at once.
func (w *worker) block() {
	w.publish()
	p := w.pool
	p.detach(w, detachWait, 0)
	if p.inj.nonEmpty() || p.queued() > 0 {
		p.spawn()
	}
	// Tasks may also be queued later, by workers that are not blocked, with
	// no spawn to follow if those block too: the monitor tops the pool up
	// to capacity while it is saturated. The workers left may be blocked
	// already: have them checked now.
	p.ho.Saturated(0, nil)
}

// unblock ends block. Workers above capacity retire when next idle.
func (w *worker) unblock() {
	w.reattach(detachWait)
}
