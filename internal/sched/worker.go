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

	// waitFor is the group whose Wait (or slot) this worker is helping
	// for, innermost first; nil in the main loop. waitSlot tells which
	// condition ends the wait. Read by doneFn under the sleep lock.
	waitFor  *Group
	waitSlot bool

	doneFn     func() bool // w.waitDone, bound once
	injectedFn func() bool // pool.inj.nonEmpty, bound once

	// Nested-group tasks submitted and finished by this worker; written by
	// the occupant only, read by Pool.pendingNested.
	nestedSubmitted atomic.Int64
	nestedFinished  atomic.Int64
}

// run is the body of a worker goroutine.
func (w *worker) run(idle sleep.Idle) {
	workers.Register(w)
	p := w.pool
	for {
		if t := w.find(); t != nil {
			p.sleep.WorkFound(&idle)
			for ; t != nil; t = w.find() {
				w.execute(t)
			}
			w.flush()
			idle = p.sleep.StartLooking(w.index)
			continue
		}
		if p.stop.Load() {
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
// helps for has finished (or has a free slot), or, in the main loop, the
// pool is shutting down.
func (w *worker) waitDone() bool {
	if g := w.waitFor; g != nil {
		if w.waitSlot {
			return g.slotFree()
		}
		return g.count() == 0
	}
	return w.pool.stop.Load()
}

// find looks for a task: own deque (newest first), then a batch from the
// injector, then the oldest task of a random other worker.
func (w *worker) find() *task {
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
	// Push the rest newest-first is wrong: Pop is LIFO, so to run the batch
	// in submission order the newest must go in first.
	for i := n - 1; i >= 1; i-- {
		w.dq.Push(w.newTask(w.batch[i].f, w.batch[i].g))
		w.batch[i] = task{}
	}
	t := w.newTask(w.batch[0].f, w.batch[0].g)
	w.batch[0] = task{}
	return t
}

// steal tries the other workers, starting at a random one.
func (w *worker) steal() *task {
	slots := w.pool.slots
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
	if err := f(); err != nil {
		g.fail(err)
	}
	if g.limit > 0 {
		g.stopRunning(w)
	}
	// f may have waited on a nested group and run other groups' tasks
	// meanwhile, so w.cur need not be g any more: check again. (Counting
	// this completion for w.cur unconditionally is the trap: it credits
	// the wrong group, whose Wait returns early while g's never does.)
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
	if g.pool.Load().owner != g {
		w.nestedFinished.Add(k)
	}
	g.finish(k)
}

// pushLocal queues a task of g on this worker's deque.
func (w *worker) pushLocal(f func() error, g *Group) {
	wasEmpty := w.dq.Len() == 0
	w.dq.Push(w.newTask(f, g))
	// After the push (package sleep): wake a sleeper if one should steal.
	c := w.pool.sleep.NewInternalJobs(1, wasEmpty)
	w.pool.maybeSpawn(c)
}

// help runs tasks until g has finished (slot false) or has a free slot
// (slot true). It is how Wait, and Go on a limited group, wait on a worker:
// the worker keeps running queued tasks, its own first, and sleeps only
// when there is nothing to run.
func (w *worker) help(g *Group, slot bool) {
	p := w.pool
	prevG, prevSlot := w.waitFor, w.waitSlot
	w.waitFor, w.waitSlot = g, slot
	defer func() { w.waitFor, w.waitSlot = prevG, prevSlot }()

	registered := false
	for {
		w.flush()
		if w.doneFn() {
			break
		}
		if t := w.find(); t != nil {
			w.execute(t)
			continue
		}
		if !registered {
			// Ask g to wake this worker when the condition may have
			// become true; then re-check before idling.
			g.addWorkerWaiter(w, slot)
			registered = true
			continue
		}
		idle := p.sleep.StartLooking(w.index)
		for {
			if w.doneFn() {
				p.sleep.StopLooking(&idle) // not retiring the slot: just not idle
				goto out
			}
			if t := w.find(); t != nil {
				p.sleep.WorkFound(&idle)
				w.execute(t)
				break
			}
			if p.sleep.NoWorkFound(&idle, w.doneFn, w.injectedFn, 0) == sleep.Done {
				p.sleep.StopLooking(&idle)
				goto out
			}
		}
	}
out:
	if registered {
		g.removeWorkerWaiter(w)
	}
}
