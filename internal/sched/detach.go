package sched

// Detaching (the transitions themselves, detach and reattach, are in
// slots.go). A worker that cannot run other tasks for a while is detached:
// it stops counting against GOMAXPROCS (Pool.capacity), so another worker
// starts in its place at once, and it leaves the scan set (Pool.active), so
// that no search pays for it, however many workers are blocked. Two things
// detach a worker, each with a bit of detachedBy:
//
//   - detachWait: the worker itself, when it is about to block in one of our
//     waits (worker.block: a Wait whose group's tasks run elsewhere);
//     cleared by worker.unblock;
//   - detachHandOff: the hand-off (package handoff: the monitor, or a
//     poster's check), through poolView.HandOn, when the worker stands
//     still in its task while tasks wait: it is blocked in the task (a
//     channel, a sleep, a system call, a lock) or runs long. Another
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
		p.inject(job{fn: t.fn, g: t.g.Load(), plain: t.plain})
	}
}
