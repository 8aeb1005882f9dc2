package sched

import (
	"math/bits"
	"runtime"

	"github.com/go-steal/steal/internal/explore/atomic"
	"github.com/go-steal/steal/internal/explore/xsync"
	"github.com/go-steal/steal/internal/gid"
)

// injector is the scheduler's queue for tasks submitted by goroutines that
// are not workers: a fixed array of shards, each a FIFO queue. A submitter
// pushes onto the shard that its goroutine id hashes to, so that hundreds
// of goroutines submitting at once spread over the shards' locks instead of
// queueing on one (ForkJoinPool shards its external submissions the same
// way, by a per-thread probe). Workers take from every shard (takeBatch),
// starting at a different shard each time. A submitter that then waits for
// its group may take its own newest tasks back (unpushIf) and run them.
//
// The shard count is fixed when the injector is made, from the number of
// CPUs, not from GOMAXPROCS, which may change while the process runs;
// sharding only spreads contention, so a stale count costs nothing but
// some of that spreading.
type injector struct {
	shards []queue
	mask   uint64
}

// newInjector makes an injector with shardsFor(NumCPU) shards.
func newInjector() injector {
	n := shardsFor(runtime.NumCPU())
	return injector{shards: make([]queue, n), mask: uint64(n - 1)}
}

// shardsFor returns the shard count for a machine with cpus CPUs: four per
// CPU, so that two submitters running at once rarely share a shard (which
// matters for unpushIf: a submitter takes back only its group's tasks, and
// only from the newest end), rounded up to a power of two, at most
// maxShards, which bounds a worker's scan of the shards.
func shardsFor(cpus int) int {
	n := 1 << bits.Len(uint(max(4*cpus, 2)-1))
	return min(n, maxShards)
}

// shard returns the calling goroutine's shard.
func (in *injector) shard() *queue {
	h := uint64(gid.Current()) * 0x9E3779B97F4A7C15
	return &in.shards[(h>>32)&in.mask]
}

// push queues j on the calling goroutine's shard and returns the number
// of tasks ever pushed there: a count of the caller's own posts, most of
// the time, without a counter shared by all (see handoff.Handoff.Saturated).
func (in *injector) push(j job) uint64 { return in.shard().push(j) }

// unpushIf takes back the newest task of the calling goroutine's shard if
// it belongs to g, and returns its function (the zero fn otherwise).
func (in *injector) unpushIf(g *Group) fn { return in.shard().unpushIf(g) }

// takeBatch moves a batch of the oldest tasks of one non-empty shard into
// dst and returns how many it moved. start picks the shard to look at
// first; the others follow in order.
//
// The batch is the shard's fair share for one of workers+1 takers, at
// least one task and at most what queue.popBatch takes (about half), and
// at most most, unless the shard holds more than injectHigh tasks. A
// burst of tiny tasks is taken in batches of up to len(dst), which
// amortizes the shard's lock; a few tasks of a request are spread one by
// one over the workers (and the submitter, who may take its own back),
// so that tasks that block are not queued behind each other in one deque.
func (in *injector) takeBatch(dst []job, start uint64, workers, most int) int {
	for i := range uint64(len(in.shards)) {
		q := &in.shards[(start+i)&in.mask]
		n := q.len()
		if n == 0 {
			continue
		}
		if n > injectHigh {
			most = len(dst)
		}
		share := min(max(n/(workers+1), 1), len(dst), most)
		if k := q.popBatch(dst[:share]); k > 0 {
			return k
		}
	}
	return 0
}

// nonEmpty reports whether any shard holds tasks. Each shard's answer errs
// towards non-empty (queue.nonEmpty), so a true answer may be stale, but a
// task pushed before the call, and not taken since, is always seen: the
// sleep protocol needs exactly that (package sleep).
func (in *injector) nonEmpty() bool {
	for i := range in.shards {
		if in.shards[i].nonEmpty() {
			return true
		}
	}
	return false
}

// takenTotal returns the number of tasks consumers have taken from all
// shards: it grows whenever a worker takes from the injector.
func (in *injector) takenTotal() uint64 {
	var n uint64
	for i := range in.shards {
		n += in.shards[i].taken.Load()
	}
	return n
}

// len reports about how many tasks are queued in all shards.
func (in *injector) len() int {
	n := 0
	for i := range in.shards {
		n += in.shards[i].len()
	}
	return n
}

// queue is one shard of the injector: many producers, many consumers,
// FIFO, plus unpushIf, which takes the newest task back.
//
// It is a two-lock queue (after Michael and Scott) over a linked list of
// fixed-size pages. Producers serialize on the tail lock and consumers on
// headMu, so a producer never waits for a consumer or the reverse. The two
// sides meet at two counters of the tasks pushed and taken:
//
//   - pub holds the producers' lock (its low bit, tailLocked) and the
//     number of tasks published (the rest), in one word so that one store
//     both publishes a task and releases the lock: a push is one CAS (to
//     lock) and one store, where a mutex beside the count cost a third
//     atomic operation. The count changes only under the lock: a producer
//     stores count+1 after the task is in its slot (a consumer that loads a
//     count ≥ i+1 sees slot i written: the store synchronizes before the
//     load), and unpushIf, which holds headMu as well, lowers it.
//   - taken is written only by consumers, under headMu.
//
// The tail lock spins, then yields; it never parks. It is held for a slot
// write, and a submitter's shard is chosen by its goroutine id, so two
// producers rarely meet on one shard.
//
// Slot i lives in page i/pageLen at offset i%pageLen. A producer that
// fills the last slot of a page links a new page before it publishes that
// slot, so a consumer that takes it finds the link. Consumers read only
// slots below the published count, so they never touch a slot being
// written; a consumer drops its reference to a page once it has taken all
// of its slots, and by then the producers have moved on too, so the GC
// frees it.
//
// unpushIf is the one operation that lowers the count, and it holds both
// locks: no producer is writing a slot, and no consumer is between its load
// of the count and its store of taken, so the slot it takes back is one no
// consumer has read or will read. It lowers the count only while it is
// above taken, so published ≥ taken always holds. Outside the locks the
// count may be seen to decrease; nonEmpty still finds every task it must
// (see there).
//
// The zero queue is empty and ready to use.
type queue struct {
	_     [64]byte
	pub   atomic.Uint64 // published<<1 | tailLocked
	_     [56]byte
	taken atomic.Uint64 // tasks taken by consumers
	_     [56]byte

	// Producers' side, guarded by the tail lock (pub's low bit).
	tail    *page  // page holding slot published
	tailOff int    // published % pageLen, kept to avoid the division
	pushes  uint64 // tasks ever pushed: push's result (unpushIf takes a task back, not its push)
	_       [40]byte

	// Consumers' side, on a line of its own: a consumer that polls the
	// shard does not take the line that the producer writes next.
	headMu  xsync.Mutex
	head    *page // page holding slot taken (consumers)
	headOff int
	_       [64]byte

	// spare is one emptied page kept for the next producer that needs
	// one, so a steady stream of tasks allocates nothing. A consumer puts
	// a page here only after taking all of its slots, when no producer
	// refers to it any more (see above) and every slot is already clear.
	spare atomic.Pointer[page]
}

// The tail lock: pub's low bit.
const (
	tailLocked = 1
	onePub     = 2 // one published task in pub
)

const pageLen = 256

type page struct {
	slots [pageLen]job
	next  *page // written by the producer that fills this page, before publishing past it
}

// pubCount returns the number of tasks published.
func (q *queue) pubCount() uint64 { return q.pub.Load() / onePub }

// lockTail takes the tail lock and returns the published count. The CAS
// that sets the bit synchronizes with the store that last cleared it, so
// the holder sees the previous holder's writes to tail and tailOff.
func (q *queue) lockTail() uint64 {
	for i := 0; ; i++ {
		if w := q.pub.Load(); w&tailLocked == 0 && q.pub.CompareAndSwap(w, w|tailLocked) {
			return w / onePub
		}
		if i >= tailSpins {
			// The holder may have been preempted, and the runtime puts a
			// preempted goroutine on its global run queue: only a
			// Gosched, which queues us behind it there, lets it run
			// with one P. (goyield would keep us on the local queue,
			// ahead of it, for ever at GOMAXPROCS 1.) Its cost, the
			// wake-up of an idle P's thread, comes only after tailSpins
			// failed tries: a holder that long in the lock is rare.
			xsync.Gosched()
		}
	}
}

// unlockTail stores the published count n and releases the tail lock, in
// one store: it publishes the slots written below n and the writes to the
// producers' fields alike.
func (q *queue) unlockTail(n uint64) { q.pub.Store(n * onePub) }

// push appends t and returns the number of tasks ever pushed onto q, t
// included. That count only grows; the published count does not (the
// tempting result: a submitter that pushes k tasks and takes them back
// would see the same k counts again and again, and a poster's check on
// one count in checkEvery might never come).
func (q *queue) push(t job) uint64 {
	p := q.lockTail()
	if q.tail == nil {
		q.lazyInit()
	}
	q.tail.slots[q.tailOff] = t
	q.tailOff++
	if q.tailOff == pageLen {
		// Link the next page before publishing this page's last slot:
		// a consumer that takes it moves on to next.
		b := q.spare.Swap(nil)
		if b == nil {
			b = new(page)
		}
		q.tail.next = b
		q.tail, q.tailOff = b, 0
	}
	q.pushes++
	n := q.pushes // read under the lock
	// Publish and unlock: the slot write above synchronizes before any
	// consumer's load of pub that observes p+1.
	q.unlockTail(p + 1)
	return n
}

// lazyInit makes the first page, shared by both ends. It runs under the
// tail lock before the first publish; consumers only look at head after
// they have seen published > taken, which this publish synchronizes
// before.
func (q *queue) lazyInit() {
	b := new(page)
	q.tail = b
	q.head = b
}

// unpushIf removes the newest task if it belongs to g and returns its
// function, or returns the zero fn. A submitter calls it to run its own
// group's tasks while it waits (the newest are most likely its own).
//
// It takes back only a task in the tail page (tailOff > 0): the pages are
// linked forwards only, and a task at the end of the previous page is
// rare enough to leave to the workers.
func (q *queue) unpushIf(g *Group) fn {
	// Cheap refusal first, without the locks: nothing queued. This read
	// may be stale; the check is repeated under the locks.
	if !q.nonEmpty() {
		return fn{}
	}
	p := q.lockTail()
	q.headMu.Lock()
	var f fn
	// Under both locks published and taken are stable: producers hold the
	// tail lock to publish, consumers hold headMu from their load of pub
	// to their store of taken.
	if p > q.taken.Load() && q.tailOff > 0 {
		s := &q.tail.slots[q.tailOff-1]
		if s.g == g {
			f = s.fn
			*s = job{}
			q.tailOff--
			p--
		}
	}
	// Store the count before releasing headMu: a consumer that loaded the
	// old count after we release it would take the slot just cleared.
	q.unlockTail(p)
	q.headMu.Unlock()
	return f
}

// popBatch moves up to len(dst) of the oldest tasks into dst, taking about
// half of what is queued (at least one) so the other workers find some
// too, and returns how many it moved.
func (q *queue) popBatch(dst []job) int {
	if !q.nonEmpty() {
		return 0
	}
	q.headMu.Lock()
	taken := q.taken.Load()
	avail := int(q.pubCount() - taken)
	if avail <= 0 {
		q.headMu.Unlock()
		return 0
	}
	k := min(avail/2+1, len(dst))
	for i := range k {
		dst[i] = q.takeHead()
	}
	q.taken.Store(taken + uint64(k))
	q.headMu.Unlock()
	return k
}

// takeHead moves the oldest task out of its slot and returns it; the
// caller holds headMu, has seen that task published, and stores taken.
func (q *queue) takeHead() job {
	s := &q.head.slots[q.headOff]
	j := *s
	*s = job{} // let the GC have the closure once it has run
	q.headOff++
	if q.headOff == pageLen {
		// All of this page was taken; the producer linked next before
		// publishing the last slot, which we saw.
		done := q.head
		q.head, q.headOff = done.next, 0
		done.next = nil
		q.spare.Store(done)
	}
	return j
}

// nonEmpty reports whether tasks are queued: two atomic loads, taken first.
// A task pushed before the call and not taken since is always seen: taken
// is loaded first and only grows, and the published count, loaded second,
// counts the task (it is lowered only when the newest task is taken back, and a taken
// back task is taken too). A true answer may be stale.
func (q *queue) nonEmpty() bool {
	t := q.taken.Load()
	return int64(q.pubCount()-t) > 0
}

// len reports about how many tasks are queued (never negative).
func (q *queue) len() int {
	t := q.taken.Load()
	return max(int(int64(q.pubCount()-t)), 0)
}
