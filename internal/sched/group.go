package sched

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// Group is the scheduler's side of a wsgroup.Group: the count of its
// unfinished tasks, its limit, its first error, and the goroutines waiting
// on it. The zero value is an unbound group with no limit.
type Group struct {
	// state packs the number of active tasks (queued or running, not yet
	// finished) above two flag bits that say whether the waiter lists
	// below are non-empty. Go adds one task; a worker subtracts finished
	// tasks, possibly several at once (worker.flush). Keeping the flags in
	// the same word lets a finisher learn, from the result of its own
	// subtraction, whether anybody must be woken: one atomic operation on
	// the fast path.
	state atomic.Uint64

	// pool is set once, by the first Go: the pool of the worker that made
	// the call, or a new pool owned by this group.
	pool atomic.Pointer[Pool]

	// limit > 0 bounds the active tasks; 0 means no limit; blockAll is
	// SetLimit(0). Written by SetLimit only while no task is active.
	limit int64

	// slow holds what only errors, waiting, limits and parking need.
	// Fork-join code makes a Group per call, so the common Group stays
	// small (32 bytes) and the rest is allocated on first need.
	slow atomic.Pointer[groupSlow]
}

// blockAll is the limit value for SetLimit(0): no task may be added.
const blockAll = -1

// groupSlow is the part of a Group that errors, panics, cancellation,
// blocking and limits use.
type groupSlow struct {
	errSet atomic.Bool
	err    error           // written once, by the task whose CAS on errSet won
	ctx    context.Context // set by WithContext before first use
	cancel func(error)     // set by WithContext before first use
	modes                  // SetSkipQueued, SetRecoverPanics; see failure.go
	pan    panicRecord     // the first recovered panic; see failure.go
	// skipped: a skip-queued group dropped a task or refused a Go. Set
	// before the drop is counted (or before Go returns), so a Wait that
	// sees the group done sees it too; read by groupSlow.result.
	skipped atomic.Bool

	// running counts tasks of a limited group that are executing; a task
	// that would exceed the limit (a helper in a nested Wait picked it up
	// while the waiting task still counts as running) is parked instead,
	// and resubmitted when a running task stops.
	running atomic.Int64
	nParked atomic.Int64

	mu          sync.Mutex
	doneWaiters []waiter // waiting for the count to reach zero
	slotWaiters []waiter // waiting for the count to drop below limit
	parked      []func() error
}

// sl returns the slow part, allocating it on first use.
func (g *Group) sl() *groupSlow {
	if s := g.slow.Load(); s != nil {
		return s
	}
	g.slow.CompareAndSwap(nil, new(groupSlow))
	return g.slow.Load()
}

const (
	bitDone  = 1 << 0 // doneWaiters non-empty
	bitSlot  = 1 << 1 // slotWaiters non-empty
	oneTask  = 1 << 2
	flagBits = bitDone | bitSlot
)

// waiter is a goroutine blocked on a Group, on ch: buffered, one token per
// registration.
type waiter struct {
	ch chan struct{}
}

var chans = sync.Pool{New: func() any { return make(chan struct{}, 1) }}

// SetContext sets the group's context and the function that cancels it,
// called with the first error and by Wait. WithContext calls it before the
// group's first use.
func (g *Group) SetContext(ctx context.Context, cancel context.CancelCauseFunc) {
	sl := g.sl()
	sl.ctx, sl.cancel = ctx, cancel
}

// count returns the number of active tasks.
func (g *Group) count() int64 { return int64(g.state.Load() / oneTask) }

// SetLimit implements wsgroup.Group.SetLimit.
func (g *Group) SetLimit(n int) {
	if n < 0 {
		g.limit = 0
	} else {
		// One read of the state, so the message states what was seen.
		if active := g.count(); active != 0 {
			panic(fmt.Errorf("wsgroup: modify limit while %v goroutines in the group are still active", active))
		}
		g.limit = int64(n)
		if n == 0 {
			g.limit = blockAll
		}
	}
	// A pool this group owns is sized by the limit. Between batches (no
	// task active) a differently sized pool is made by the next Go.
	if p := g.pool.Load(); p != nil && p.owner == g && g.count() == 0 &&
		(p.size != sizeFor(int(g.limit)) || p.hardMax != hardMaxFor(int(g.limit))) {
		g.pool.Store(nil)
	}
}

// bind returns the group's pool, binding it on first use: to the pool of
// the calling worker w, or to a new pool that the group owns.
func (g *Group) bind(w *worker) *Pool {
	if p := g.pool.Load(); p != nil {
		return p
	}
	var p *Pool
	if w != nil {
		p = w.pool
	} else {
		p = newPool(g, int(g.limit))
	}
	if g.pool.CompareAndSwap(nil, p) {
		return p
	}
	return g.pool.Load()
}

// Go implements wsgroup.Group.Go (block true) and TryGo (block false).
func (g *Group) Go(f func() error, block bool) bool {
	if sl := g.slow.Load(); sl != nil && sl.skipQueued && sl.canceled() {
		sl.skipped.Store(true)
		return false // SetSkipQueued: a canceled group takes no new task
	}
	cw := current()
	p := g.bind(cw)
	w := cw
	if w != nil && w.pool != p {
		w = nil // a worker of another pool is an outsider here
	}
	var n int64 // the group's active count once this task is added
	switch {
	case g.limit == blockAll:
		if !block {
			return false
		}
		// errgroup's Go blocks forever on a zero-capacity semaphore; so
		// do we, visibly to the runtime's deadlock detector.
		var never chan struct{}
		<-never
	case g.limit > 0:
		var ok bool
		if n, ok = g.tryAcquire(); !ok {
			switch {
			case !block:
				return false
			case w == nil:
				if cw != nil {
					cw.block() // see Wait
					n = g.acquireBlocking()
					cw.unblock()
				} else {
					n = g.acquireBlocking()
				}
			default:
				// Inside a task, Go does not wait for a slot: the caller
				// may hold one itself (a task of g calling g.Go), or a
				// task of g may be suspended below it on this worker's
				// stack, and waiting would deadlock where errgroup does.
				// While the group is over its limit and tasks of g are
				// queued within reach, run those instead (backpressure;
				// only g's, for the reason given in worker.help); then
				// queue the task above the limit. At most limit tasks of
				// g execute at once all the same (Group.startRunning).
				isG := func(t *task) bool { return t.g.Load() == g }
				for {
					if n, ok = g.tryAcquire(); ok {
						break
					}
					if p.owner == g {
						n = g.add()
						break
					}
					t := w.dq.PopIf(isG)
					if t == nil {
						t = w.stealIf(isG)
					}
					if t == nil {
						n = g.add()
						break
					}
					w.execute(t)
				}
			}
		}
	default:
		n = g.add()
	}
	if n == 1 && p.owner != g {
		// This Go opened a nested group (see Pool.pendingNested). Counted
		// before the task is queued, so before the group can close.
		if w != nil {
			w.nestedOpened.Add(1)
		} else {
			p.extra.Add(1)
		}
	}
	if w != nil {
		w.pushLocal(f, g)
	} else {
		p.inject(job{f: f, g: g})
	}
	return true
}

// add adds one active task and returns the new count.
func (g *Group) add() int64 { return int64(g.state.Add(oneTask) / oneTask) }

// tryAcquire adds one active task if that keeps the count within limit,
// and returns the new count.
func (g *Group) tryAcquire() (int64, bool) {
	for {
		s := g.state.Load()
		if int64(s/oneTask) >= g.limit {
			return 0, false
		}
		if g.state.CompareAndSwap(s, s+oneTask) {
			return int64(s/oneTask) + 1, true
		}
	}
}

// acquireBlocking waits, outside the pool, until tryAcquire succeeds. It
// polls, then yields a few times, before it blocks: with tiny tasks a slot
// frees within a scheduling round, far sooner than a blocked goroutine is
// woken.
func (g *Group) acquireBlocking() int64 {
	sl := g.sl()
	multiP := g.pool.Load().multiP
	for i := 0; ; i++ {
		if n, ok := g.tryAcquire(); ok {
			return n
		}
		if i < submitPolls && multiP {
			// Poll the count without giving up the processor: on another
			// CPU a worker is finishing a task right now, and a yield
			// costs a trip through the runtime's global run queue.
			for range 32 {
				if int64(g.state.Load()/oneTask) < g.limit {
					break
				}
			}
			continue
		}
		if i < submitPolls+submitSpins {
			runtime.Gosched()
			continue
		}
		ch := chans.Get().(chan struct{})
		sl.mu.Lock()
		// Set the flag before the last try: a finisher whose subtraction
		// comes after this Or sees the flag and wakes us; one that came
		// before left a free slot that tryAcquire takes.
		g.state.Or(bitSlot)
		if n, ok := g.tryAcquire(); ok {
			sl.mu.Unlock()
			chans.Put(ch)
			return n
		}
		sl.slotWaiters = append(sl.slotWaiters, waiter{ch: ch})
		sl.mu.Unlock()
		<-ch
		chans.Put(ch)
	}
}

// finish subtracts k finished tasks, wakes whoever waits for the count to
// reach zero or to drop below the limit, and returns the new count. The
// subtraction publishes everything the finished tasks did: a Wait that
// observes the new count (or is woken because of it) sees their effects.
func (g *Group) finish(k int64) int64 {
	// Read the limit before the subtraction: once it lets Wait return,
	// the owner may call SetLimit.
	limit := g.limit
	s := g.state.Add(^uint64(k*oneTask - 1))
	g.finished(s, limit)
	return int64(s / oneTask)
}

// finishNested is finish for a nested group, run by worker w: it also
// counts the close (the count reaching zero) in w.nestedClosed, and counts
// it before the zero is published. Counting after would leave a window in
// which a Wait has seen the group done, its task has ended, the owner's Wait
// has returned and called Pool.shutdown, and pendingNested still counts the
// group as open, so shutdown skips the join. So the close is counted when
// a compare-and-swap is about to publish zero; if that CAS fails and a
// later one publishes a count above zero instead (a Go raced in), the
// premature close is balanced by counting an opening, which keeps both
// counters monotonic, as pendingNested needs.
func (g *Group) finishNested(k int64, w *worker) int64 {
	limit := g.limit
	counted := false
	for {
		old := g.state.Load()
		s := old - uint64(k*oneTask)
		if s/oneTask == 0 && !counted {
			w.nestedClosed.Add(1)
			counted = true
		}
		if g.state.CompareAndSwap(old, s) {
			if counted && s/oneTask != 0 {
				w.nestedOpened.Add(1)
			}
			g.finished(s, limit)
			return int64(s / oneTask)
		}
	}
}

// finished wakes the waiters that the state s, just published by a
// subtraction, releases.
func (g *Group) finished(s uint64, limit int64) {
	if s&flagBits == 0 {
		return
	}
	if s&bitDone != 0 && s/oneTask == 0 {
		g.wake(false)
	}
	if s&bitSlot != 0 && int64(s/oneTask) < limit {
		g.wake(true)
	}
}

// wake wakes the waiters of one list and empties it; each re-registers if
// its condition no longer holds when it runs.
func (g *Group) wake(slot bool) {
	sl := g.sl()
	sl.mu.Lock()
	list, bit := &sl.doneWaiters, uint64(bitDone)
	if slot {
		list, bit = &sl.slotWaiters, bitSlot
	}
	woken := *list
	*list = nil
	g.state.And(^bit)
	sl.mu.Unlock()
	for _, wt := range woken {
		wt.ch <- struct{}{}
	}
}

// waitOutside blocks the calling goroutine, which is not a worker of the
// group's pool, until no task is active.
func (g *Group) waitOutside() {
	sl := g.sl()
	for g.count() != 0 {
		ch := chans.Get().(chan struct{})
		sl.mu.Lock()
		// As in acquireBlocking: flag first, then the check, so that a
		// finisher either sees the flag or left a zero count for us.
		registered := g.state.Or(bitDone)/oneTask != 0
		if registered {
			sl.doneWaiters = append(sl.doneWaiters, waiter{ch: ch})
		}
		sl.mu.Unlock()
		if registered {
			<-ch
		}
		chans.Put(ch)
	}
}

// Wait implements the waiting half of wsgroup.Group.Wait: on a worker of
// the group's pool it helps; elsewhere it blocks, and then, for the group
// that owns the pool, shuts the pool's workers down.
func (g *Group) Wait() error {
	if p := g.pool.Load(); p != nil {
		if w := current(); w != nil && w.pool == p {
			w.flush() // this worker's own unsettled completions may be ours
			if g.count() != 0 {
				g.helpUntilDone(w)
			}
		} else {
			if w != nil {
				// A worker of another pool: let that pool replace it
				// while it blocks here.
				w.block()
				g.waitOutside()
				w.unblock()
			} else {
				g.waitOutside()
			}
			if p.owner == g {
				p.shutdown()
			}
		}
	}
	sl := g.slow.Load()
	if sl == nil {
		return nil
	}
	return sl.result()
}

// startRunning admits a task of a limited group to execute on w, or parks
// it and reports false. Parking happens only when a task of the group is
// suspended in a helping Wait on some worker and that worker (or another)
// picks up a further task of the same group: running it would let more
// than limit of the group's tasks be executing at once.
func (g *Group) startRunning(w *worker, f func() error) bool {
	sl := g.sl()
	if sl.running.Add(1) <= g.limit {
		return true
	}
	sl.running.Add(-1)
	sl.mu.Lock()
	sl.parked = append(sl.parked, f)
	sl.nParked.Store(int64(len(sl.parked)))
	sl.mu.Unlock()
	// A task may have stopped between our Add and the store of nParked,
	// and missed the parked task: look again (see stopRunning).
	if sl.running.Load() < g.limit {
		g.unpark(w)
	}
	return false
}

// stopRunning ends a task's admission and resubmits a parked task, if any.
// The decrement comes before the load of nParked, and startRunning stores
// nParked before loading running: one of the two sees the other.
func (g *Group) stopRunning(w *worker) {
	sl := g.sl()
	sl.running.Add(-1)
	if sl.nParked.Load() > 0 {
		g.unpark(w)
	}
}

// unpark moves the oldest parked task onto w's deque.
func (g *Group) unpark(w *worker) {
	sl := g.sl()
	sl.mu.Lock()
	if len(sl.parked) == 0 {
		sl.mu.Unlock()
		return
	}
	f := sl.parked[0]
	sl.parked[0] = nil
	sl.parked = sl.parked[1:]
	sl.nParked.Store(int64(len(sl.parked)))
	sl.mu.Unlock()
	w.pushLocal(f, g)
}
