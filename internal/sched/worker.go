package sched

import (
	"sync/atomic"

	"github.com/go-steal/steal/internal/deque"
	"github.com/go-steal/steal/internal/sleep"
)

// worker is one slot of a pool and, while occupied, the goroutine that runs
// in it. Fields without a comment belong to that goroutine alone.
type worker struct {
	pool  *Pool
	index int

	// dq holds tasks pushed by this worker (Go calls made in its tasks, and
	// batches taken from the injector). The occupant pushes and pops; any
	// worker of the pool steals.
	dq deque.Deque[task]

	// occupied is guarded by pool.mu.
	occupied bool

	rng   uint64
	free  []*task
	batch [injectBatch]task

	// Completions not yet subtracted from cur's count: a run of tasks of
	// one unlimited group finishes with one atomic operation (flush).
	cur     *Group
	curDone int64

	// waitFor is the group whose Wait this worker is helping for (the
	// innermost, when Waits nest); nil in the main loop. Read by doneFn
	// under the sleep lock.
	waitFor *Group

	goexit bool    // a task called runtime.Goexit; run replaces the goroutine
	victim *worker // whom the last find stole from, or nil

	doneFn     func() bool // w.waitDone, bound once
	injectedFn func() bool // pool.inj.nonEmpty, bound once

	// Nested groups this worker opened (a Go took the count from 0 to 1)
	// and closed (a flush took it to 0); written by the occupant only, read
	// by Pool.pendingNested.
	nestedOpened atomic.Int64
	nestedClosed atomic.Int64
}

// run is the body of a worker goroutine.
func (w *worker) run(idle sleep.Idle) {
	workers.Register(w)
	defer func() {
		if w.goexit {
			w.replace()
		}
	}()
	p := w.pool
	for {
		if t := w.find(); t != nil {
			w.foundWork(&idle)
			for ; t != nil; t = w.find() {
				w.execute(t)
			}
			w.flush()
			idle = p.sleep.StartLooking(w.index)
			continue
		}
		if p.stop.Load() || p.live.Load() > p.capacity() {
			if w.retire(&idle) {
				return
			}
			continue
		}
		switch p.sleep.NoWorkFound(&idle, w.doneFn, w.injectedFn, linger) {
		case sleep.Done, sleep.Lingered:
			if w.retire(&idle) {
				return
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
	w.flush()
	w.waitFor = nil
	workers.Unregister()
	idle := w.pool.sleep.StartLooking(w.index)
	go w.run(idle)
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
	p := w.pool
	c := p.sleep.WorkFound(idle)
	if c.Inactive() != 0 {
		return // an idle worker will find what is left
	}
	if p.live.Load() >= p.capacity() {
		p.watch() // saturated, or about to be: see watchdog.go
		return
	}
	// Tasks left behind may be anywhere: each worker that took a batch from
	// the injector while others were still idle left part of it in its
	// deque, and then blocked. Look where it is cheap first, then scan.
	if w.dq.Len() > 0 || p.inj.nonEmpty() || w.victim != nil && w.victim.dq.Len() > 0 || p.queued() > 0 {
		p.spawn(false)
	}
}

// retire gives up the slot; see Pool.release. It reports whether the
// goroutine must exit.
func (w *worker) retire(idle *sleep.Idle) bool {
	w.flush()
	workers.Unregister()
	if w.pool.release(w, idle) {
		return true
	}
	workers.Register(w)
	return false
}

// waitDone is the done condition of NoWorkFound: the group this worker
// helps for has finished, or, in the main loop, the pool is shutting down.
func (w *worker) waitDone() bool {
	if g := w.waitFor; g != nil {
		return g.count() == 0
	}
	return w.pool.stop.Load()
}

// find looks for a task: own deque (newest first), then a batch from the
// injector, then the oldest task of a random other worker.
func (w *worker) find() *task {
	w.victim = nil
	if t := w.dq.Pop(); t != nil {
		return t
	}
	if t := w.takeInjected(); t != nil {
		return t
	}
	return w.steal()
}

// takeInjected moves a batch of injected tasks into the deque and returns
// the oldest of them to run now.
func (w *worker) takeInjected() *task {
	n := w.pool.inj.popBatch(w.batch[:])
	if n == 0 {
		return nil
	}
	// Pop is LIFO, so to run the batch in submission order the newest goes
	// in first.
	wasEmpty := w.dq.Len() == 0
	for i := n - 1; i >= 1; i-- {
		w.dq.Push(w.newTask(w.batch[i].f, w.batch[i].g))
		w.batch[i] = task{}
	}
	if n > 1 {
		// The rest of the batch is now stealable: announce it like any
		// other push (package sleep), or a worker that got sleepy before
		// it landed and lost a steal race to it could sleep with it
		// queued behind a task that blocks.
		w.pool.sleep.NewInternalJobs(n-1, wasEmpty)
	}
	t := w.newTask(w.batch[0].f, w.batch[0].g)
	w.batch[0] = task{}
	return t
}

// steal tries the other workers, starting at a random one.
func (w *worker) steal() *task {
	slots := *w.pool.slots.Load()
	n := len(slots)
	if n < 2 {
		return nil
	}
	for range stealRounds {
		retry := false
		start := int(w.random() % uint64(n))
		for i := range n {
			v := start + i
			if v >= n {
				v -= n
			}
			if v == w.index {
				continue
			}
			t, r := slots[v].dq.Steal()
			if t != nil {
				w.victim = slots[v]
				return t
			}
			retry = retry || r
		}
		if !retry {
			return nil
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

// execute runs t and accounts for its completion.
func (w *worker) execute(t *task) {
	f, g := t.f, t.g
	w.freeTask(t)
	if g != w.cur {
		// Before running a task of another group, which may run long or
		// block, settle the completions of the previous group, whose Wait
		// may be waiting for just those.
		w.flush()
		w.cur = g
	}
	if g.limit > 0 && !g.startRunning(w, f) {
		return // parked: the group is at its limit (see Group.startRunning)
	}
	w.call(f, g)
	w.finished(g)
}

// call runs f. If f does not return, because it called runtime.Goexit, the
// deferred half counts the task as finished, as errgroup's deferred done
// does, and marks the goroutine as exiting so that run starts a fresh
// goroutine in the slot. A panic is not ours to handle: it is re-raised at
// once, on top of f's frames, so the crash shows the task's own stack.
func (w *worker) call(f func() error, g *Group) {
	returned := false
	defer func() {
		if returned {
			return
		}
		if r := recover(); r != nil {
			panic(r)
		}
		w.finished(g)
		w.goexit = true
	}()
	if err := f(); err != nil {
		g.fail(err)
	}
	returned = true
}

// finished accounts for the end of a task of g that ran on w.
func (w *worker) finished(g *Group) {
	if g.limit > 0 {
		g.stopRunning(w)
	}
	// The task may have waited on a nested group and run other groups'
	// tasks meanwhile, so w.cur need not be g any more: check again.
	// (Counting this completion for w.cur unconditionally is the trap: it
	// credits the wrong group, whose Wait returns early while g's never
	// does.)
	if g != w.cur {
		w.flush()
		w.cur = g
	}
	w.curDone++
	if g.limit > 0 || g.pool.Load().owner != g {
		// Limited groups hand out slots, and nested groups are waited for
		// by a helper spinning through this loop: settle at once.
		w.flush()
	}
}

// flush subtracts the batched completions from the current group.
func (w *worker) flush() {
	if w.curDone == 0 {
		return
	}
	g, k := w.cur, w.curDone
	w.curDone = 0
	if g.finish(k) == 0 && g.pool.Load().owner != g {
		w.nestedClosed.Add(1)
	}
}

// pushLocal queues a task of g on this worker's deque.
func (w *worker) pushLocal(f func() error, g *Group) {
	wasEmpty := w.dq.Len() == 0
	w.dq.Push(w.newTask(f, g))
	// After the push (package sleep): wake a sleeper if one should steal.
	c := w.pool.sleep.NewInternalJobs(1, wasEmpty)
	w.pool.maybeSpawn(c)
}

// help runs tasks until g has finished. It is how Wait waits on a worker:
// the worker keeps running queued tasks, its own first, and sleeps only
// when there is nothing to run.
func (w *worker) help(g *Group) {
	prev := w.waitFor
	w.waitFor = g
	registered := false
	defer func() {
		// Deferred, so that it also runs when a task run here calls
		// runtime.Goexit and the goroutine unwinds through us.
		if registered {
			g.removeWorkerWaiter(w)
		}
		w.waitFor = prev
	}()
	for {
		w.flush()
		if g.count() == 0 {
			return
		}
		if t := w.find(); t != nil {
			w.execute(t)
			continue
		}
		if !registered {
			// Ask g to wake this worker when its count reaches zero; then
			// check again before idling.
			g.addWorkerWaiter(w)
			registered = true
			continue
		}
		if w.idleUntil(g) {
			return
		}
	}
}

// idleUntil runs the idle protocol for a helping worker: it reports true
// when g has finished, false after running one task it found.
func (w *worker) idleUntil(g *Group) bool {
	p := w.pool
	idle := p.sleep.StartLooking(w.index)
	for {
		if g.count() == 0 {
			p.sleep.StopLooking(&idle)
			return true
		}
		if t := w.find(); t != nil {
			w.foundWork(&idle)
			w.execute(t)
			return false
		}
		if p.sleep.NoWorkFound(&idle, w.doneFn, w.injectedFn, 0) == sleep.Done {
			p.sleep.StopLooking(&idle)
			return true
		}
	}
}

// block tells the pool that this worker is about to block in a wait that
// is not helping (a Wait or a limited Go on a group of another pool), so
// that the pool may run another worker meanwhile, within its hardMax. If
// the worker leaves queued tasks behind, a replacement starts at once.
func (w *worker) block() {
	p := w.pool
	p.blocked.Add(1)
	if w.dq.Len() > 0 || p.inj.nonEmpty() {
		p.spawn(false)
	}
}

// unblock ends block. Workers above capacity retire when next idle.
func (w *worker) unblock() {
	w.pool.blocked.Add(-1)
}
