package sched

// task is one queued call of a group's function. A task record lives in a
// worker's deque as a *task and is recycled through the free list of the
// worker that ran it; tasks in the injector are stored by value, so an
// outside Go allocates nothing beyond the caller's closure.
type task struct {
	f func() error
	g *Group
}

// newTask takes a record from the worker's free list, or allocates one.
// Owner only.
func (w *worker) newTask(f func() error, g *Group) *task {
	var t *task
	if n := len(w.free); n > 0 {
		t = w.free[n-1]
		w.free = w.free[:n-1]
	} else {
		t = new(task)
	}
	t.f, t.g = f, g
	return t
}

// freeTask clears t (so the GC can collect the closure and group) and keeps
// it for reuse. Records migrate between workers with steals; the cap keeps
// a worker that only steals from hoarding them.
func (w *worker) freeTask(t *task) {
	t.f, t.g = nil, nil
	if len(w.free) < freeTasks {
		w.free = append(w.free, t)
	}
}
