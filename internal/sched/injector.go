package sched

import (
	"sync"
	"sync/atomic"
)

// injector is the pool's queue for tasks submitted from goroutines that are
// not its workers: many producers, many consumers, FIFO.
//
// A mutex guards the ring. n mirrors the number of queued tasks; it is
// written with an atomic store while mu is held and read without mu, so an
// idle worker can check for work with one atomic load, and so that the
// sleep protocol's argument (an atomic push, then an atomic read of the
// sleep counters) holds: see package sleep.
type injector struct {
	n    atomic.Int64
	mu   sync.Mutex
	buf  []task // ring; len(buf) is zero or a power of two
	head int    // index of the oldest task
	size int    // number of queued tasks; n == size whenever mu is free
}

const injectorMinCap = 64

// push appends t and reports whether the queue was empty before.
func (q *injector) push(t task) (wasEmpty bool) {
	q.mu.Lock()
	if q.size == len(q.buf) {
		q.resize(max(2*len(q.buf), injectorMinCap))
	}
	q.buf[(q.head+q.size)&(len(q.buf)-1)] = t
	q.size++
	n := q.size
	// Publish the count after the task is in the ring; a consumer that
	// sees n > 0 still takes mu before reading the ring.
	q.n.Store(int64(n))
	q.mu.Unlock()
	return n == 1 // not q.size: that is only ours while we hold mu
}

// popBatch moves up to len(dst) of the oldest tasks into dst, taking about
// half of what is queued (at least one) so the other workers find some
// too, and returns how many it moved.
func (q *injector) popBatch(dst []task) int {
	if q.n.Load() == 0 {
		return 0
	}
	q.mu.Lock()
	k := min(q.size/2+1, q.size, len(dst))
	mask := len(q.buf) - 1
	for i := range k {
		j := (q.head + i) & mask
		dst[i] = q.buf[j]
		q.buf[j] = task{} // let the GC have the closure once it has run
	}
	q.head = (q.head + k) & mask
	q.size -= k
	q.n.Store(int64(q.size))
	if len(q.buf) > 4*injectorMinCap && q.size < len(q.buf)/4 {
		q.resize(len(q.buf) / 2)
	}
	q.mu.Unlock()
	return k
}

// resize moves the queued tasks into a ring of capacity c. mu held.
func (q *injector) resize(c int) {
	buf := make([]task, c)
	for i := range q.size {
		buf[i] = q.buf[(q.head+i)&(len(q.buf)-1)]
	}
	q.buf, q.head = buf, 0
}

// nonEmpty reports whether tasks are queued; one atomic load.
func (q *injector) nonEmpty() bool { return q.n.Load() > 0 }
