package sched

import "github.com/go-steal/steal/internal/explore/atomic"

// job is one queued call of a group's function, by value: how the
// injector stores it, so an outside Go allocates nothing beyond the
// caller's closure.
type job struct {
	fn
	g     *Group
	plain bool // see task.plain
}

// task is a job in a worker's deque: a record that lives there as a *task
// and is recycled through the free list of the worker that ran it.
type task struct {
	fn // read only by whoever claimed the task
	// g is atomic because a thief that steals only some tasks (help:
	// only the waited group's) reads g of the oldest task before it has
	// claimed it, while the worker that did claim it may already be reusing
	// the record. The reuse stores it plainly (newTask): such a thief's
	// claim fails whatever it read.
	g atomic.Pointer[Group]
	// injected: the task came from the injector (see worker.afterTask).
	// Read, like f, only by whoever claimed the task.
	injected bool
	// plain: when the task was queued, its group had no limit and was not
	// in skip-queued mode (Group.plain). Neither can change while the task
	// is active, since SetLimit and the modes refuse while any task is, so
	// the worker that runs it reads neither again: the line that holds them
	// also holds the group's count, which an outside submitter writes with
	// every Go, and a worker's read of it for every task made each of those
	// Go calls wait for the line to come back (30 ns of a tiny task's
	// 130). Read, like f, only by whoever claimed the task.
	plain bool
}

// newTask takes a record from the worker's free list, or allocates one.
// Owner only.
func (w *worker) newTask(f fn, g *Group, injected, plain bool) *task {
	var t *task
	if n := len(w.free); n > 0 {
		t = w.free[n-1]
		w.free = w.free[:n-1]
	} else {
		t = new(task)
	}
	t.fn = f
	// The owner's store (atomic.StoreOwnedPointer): pushing the record
	// publishes it with a sequentially consistent store, and a thief that
	// reads it before then is looking at a record it cannot claim.
	atomic.StoreOwnedPointer(&t.g, g)
	t.injected = injected
	t.plain = plain
	return t
}

// freeTask clears t's closure and labels (so the GC can collect them) and
// keeps t for reuse. It leaves g, which the next newTask overwrites:
// clearing it would be one more write for a thief's peek to race with, and
// a group is small. Records migrate between workers with steals; the cap
// keeps a worker that only steals from hoarding them.
//
// The free list is a stack whose slots above its length still hold the
// records newTask took from them (newTask shortens it and clears nothing).
// A record that comes back to the slot it was taken from, as it does when
// the Wait of the task whose Go queued it pops it back, is not stored
// again: a pointer store costs the collector's write barrier while it
// marks (see deque.Deque.Push, which skips its store the same way).
// append grows the list only below freeTasks, so its capacity, which
// bounds it, stays within the growth of one append past that.
func (w *worker) freeTask(t *task) {
	t.fn = fn{}
	if n := len(w.free); n < cap(w.free) {
		w.free = w.free[:n+1]
		if w.free[n] != t {
			w.free[n] = t
		}
	} else if n < freeTasks {
		w.free = append(w.free, t)
	}
}
