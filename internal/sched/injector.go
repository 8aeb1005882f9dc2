package sched

import (
	"sync"
	"sync/atomic"
)

// injector is the pool's queue for tasks submitted from goroutines that are
// not its workers: many producers, many consumers, FIFO.
//
// It is a two-lock queue (after Michael and Scott) over a linked list of
// fixed-size blocks. Producers serialize on tailMu and consumers on headMu,
// so a producer never waits for a consumer or the reverse. The two sides
// meet at two counters of the tasks ever pushed and taken:
//
//   - published is written only by producers, under tailMu, with an atomic
//     store after the task is in its slot: a consumer that loads published
//     ≥ i+1 sees slot i written (the store synchronizes before the load).
//   - taken is written only by consumers, under headMu.
//
// Slot i lives in block i/blockLen at offset i%blockLen. A producer that
// fills the last slot of a block links a new block before it publishes that
// slot, so a consumer that takes it finds the link. Consumers read only
// slots below published, so they never touch a slot being written; a
// consumer drops its reference to a block once it has taken all of its
// slots, and by then the producers have moved on too, so the GC frees it.
//
// The counters also give the emptiness test that the sleep protocol needs:
// nonEmpty loads both atomically (see package sleep).
type injector struct {
	_         [64]byte
	published atomic.Uint64 // tasks pushed and visible; producers write
	_         [56]byte
	taken     atomic.Uint64 // tasks taken; consumers write
	_         [56]byte

	tailMu  sync.Mutex
	tail    *block // block holding slot published (producers)
	tailOff int    // published % blockLen, kept to avoid the division

	headMu  sync.Mutex
	head    *block // block holding slot taken (consumers)
	headOff int

	// spare is one emptied block kept for the next producer that needs
	// one, so a steady stream of tasks allocates nothing. A consumer puts
	// a block here only after taking all of its slots, when no producer
	// refers to it any more (see above) and every slot is already clear.
	spare atomic.Pointer[block]
}

const blockLen = 256

type block struct {
	slots [blockLen]job
	next  *block // written by the producer that fills this block, before publishing past it
}

// push appends t.
func (q *injector) push(t job) {
	q.tailMu.Lock()
	if q.tail == nil {
		q.lazyInit()
	}
	q.tail.slots[q.tailOff] = t
	q.tailOff++
	if q.tailOff == blockLen {
		// Link the next block before publishing this block's last slot:
		// a consumer that takes it moves on to next.
		b := q.spare.Swap(nil)
		if b == nil {
			b = new(block)
		}
		q.tail.next = b
		q.tail, q.tailOff = b, 0
	}
	p := q.published.Load() + 1
	// Publish: the slot write above synchronizes before any consumer's
	// load of published that observes p.
	q.published.Store(p)
	q.tailMu.Unlock()
}

// lazyInit makes the first block, shared by both ends. It runs under tailMu
// before the first publish; consumers only look at head after they have
// seen published > taken, which this publish synchronizes before.
func (q *injector) lazyInit() {
	b := new(block)
	q.tail = b
	q.head = b
}

// popBatch moves up to len(dst) of the oldest tasks into dst, taking about
// half of what is queued (at least one) so the other workers find some
// too, and returns how many it moved.
func (q *injector) popBatch(dst []job) int {
	if !q.nonEmpty() {
		return 0
	}
	q.headMu.Lock()
	taken := q.taken.Load()
	avail := int(q.published.Load() - taken)
	if avail <= 0 {
		q.headMu.Unlock()
		return 0
	}
	k := min(avail/2+1, len(dst))
	for i := range k {
		s := &q.head.slots[q.headOff]
		dst[i] = *s
		*s = job{} // let the GC have the closure once it has run
		q.headOff++
		if q.headOff == blockLen {
			// All of this block was taken; the producer linked next
			// before publishing the last slot, which we saw.
			done := q.head
			q.head, q.headOff = done.next, 0
			done.next = nil
			q.spare.Store(done)
		}
	}
	q.taken.Store(taken + uint64(k))
	q.headMu.Unlock()
	return k
}

// nonEmpty reports whether tasks are queued: two atomic loads, taken first
// (so that the answer errs towards non-empty: published only grows).
func (q *injector) nonEmpty() bool {
	t := q.taken.Load()
	return q.published.Load() > t
}

// len reports about how many tasks are queued.
func (q *injector) len() int {
	t := q.taken.Load()
	return int(q.published.Load() - t)
}
