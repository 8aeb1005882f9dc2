package sched

// Detaching. A worker that cannot run other tasks for a while is detached:
// it stops counting against GOMAXPROCS (Pool.capacity), so another worker
// starts in its place at once, and it leaves the scan set (Pool.active), so
// that no search pays for it, however many workers are blocked. Two things
// detach a worker, each with a bit of detachedBy:
//
//   - detachWait: the worker itself, when it is about to block in one of our
//     waits (worker.block: a Wait whose group's tasks run elsewhere);
//     cleared by worker.unblock;
//   - detachMonitor: the monitor (watchdog.go), when the worker's task has
//     not moved for a sample while tasks wait: it is blocked in the task
//     (a channel, a sleep, a system call, a lock) or runs long. Another
//     worker has its place by then, so when the task returns the worker
//     stays detached: it takes queued tasks one at a time, as long as it
//     finds any, the way errgroup would have a goroutine for each, and
//     leaves when it finds none (worker.serve). A nested task, returning
//     into the task below it, reattaches instead (worker.afterTask). The
//     monitor's ramp starts workers detached this way from the start.
//
// A worker that leaves detached never rejoins the scan set, so a wave of
// thousands of blocking tasks costs each a detach and a leave, and no
// search and no change of the scan set grows with the wave.
//
// The worker keeps its slot and stays the owner of its deque while
// detached; only the counts and the scan set change, under the pool's mu.
// Its deque must then not hold tasks nobody looks for, and two sides empty
// it into the injector (drain), on two orders that pair up (Dekker's):
//
//   - the detacher stores detachedBy (under mu), then drains: every steal
//     loads the deque's bottom after that store;
//   - the owner, which may push while detached (its task goes on running),
//     pushes, which stores bottom, then loads detachedBy (worker.pushed),
//     and drains itself if it is set.
//
// Both are sequentially consistent atomics, so either the detacher's steals
// see the push, or the owner's load sees the bit. The tempting version, the
// owner checking the bit before it pushes and skipping the deque when set,
// loses a task: load (clear), detach and drain (empty), push — and the task
// sits in a deque that no search visits.
//
// Tasks drained from a deque are injected like tasks from outside: they
// lose their place in the deque's LIFO order, which only mattered to the
// owner, and are counted as injected (worker.afterTask batches their
// completions), which is correct for any task.

// The reasons a worker is detached: bits of worker.detachedBy.
const (
	detachWait    = 1 << 0
	detachMonitor = 1 << 1
)

// detach marks w detached for why, if w occupies its slot and was not
// detached for why already, and reports whether it did. seq, when
// nonzero, must still be w's task sequence number (the monitor detaches a
// worker only if its task has not moved since the sample). If w was
// attached, it leaves the scan set and its deque is drained.
func (p *Pool) detach(w *worker, why uint32, seq uint32) bool {
	p.mu.Lock()
	old := w.detachedBy.Load()
	if !w.occupied || old&why != 0 || seq != 0 && w.seq.Load() != seq {
		p.mu.Unlock()
		return false
	}
	w.detachedBy.Store(old | why)
	if old == 0 {
		p.countDetached()
		p.setActive(w, false)
	}
	p.mu.Unlock()
	if old == 0 {
		p.drain(w)
	}
	return true
}

// countDetached counts one more detached worker, under mu.
func (p *Pool) countDetached() {
	n := p.detached.Add(1)
	for hi := p.detachedHi.Load(); n > hi && !p.detachedHi.CompareAndSwap(hi, n); hi = p.detachedHi.Load() {
	}
}

// reattach clears why from w's detachedBy; when no reason is left, w
// counts against GOMAXPROCS again and rejoins the scan set. Called by w's
// occupant.
func (w *worker) reattach(why uint32) {
	p := w.pool
	p.mu.Lock()
	old := w.detachedBy.Load()
	if old&why != 0 {
		w.detachedBy.Store(old &^ why)
		if old == why {
			p.detached.Add(-1)
			p.setActive(w, true)
		}
	}
	p.mu.Unlock()
}

// pushed is called by w's occupant after each push onto its deque: if w is
// detached, nobody looks in that deque, so it drains it (see above).
func (w *worker) pushed() {
	if w.detachedBy.Load() != 0 {
		w.pool.drain(w)
	}
}

// drain moves every task of w's deque into the injector. Anyone may call
// it: it takes the tasks as a thief does.
func (p *Pool) drain(w *worker) {
	for {
		t, retry := w.dq.Steal()
		if t == nil {
			if retry {
				continue
			}
			return
		}
		// The record is not recycled: free lists belong to workers.
		p.inject(job{f: t.f, g: t.g.Load()})
	}
}
