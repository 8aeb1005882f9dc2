package sched

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"weak"

	"github.com/go-steal/steal/internal/testkit"
)

// The queue tests (one shard of the injector) use push, popBatch and
// nonEmpty, so that they hold for any FIFO queue behind them, and then
// unpushIf, which takes the newest task back. Tasks are told apart by their
// g pointer, or, where unpushIf returns only the function, by the jobID
// their function returns.

// taskIDs returns n tasks with distinct g pointers and a map back to the
// index of each.
func taskIDs(n int) ([]job, map[*Group]int) {
	gs := make([]Group, n)
	ts := make([]job, n)
	ids := make(map[*Group]int, n)
	for i := range gs {
		ts[i] = job{g: &gs[i]}
		ids[&gs[i]] = i
	}
	return ts, ids
}

// checkBatch asserts the batch rule: popBatch takes about half of what is
// queued, at least one, at most len(dst) and at most what is queued.
func checkBatch(t *testing.T, queued, dstLen, k int) {
	t.Helper()
	if queued == 0 {
		if k != 0 {
			t.Fatalf("popBatch on an empty queue returned %d", k)
		}
		return
	}
	lo := min((queued+1)/2, dstLen) // half, rounded up
	hi := min(queued/2+1, dstLen)   // half plus one
	if k < 1 || k < lo || k > hi {
		t.Fatalf("popBatch with %d queued and len(dst) = %d took %d, want %d..%d (about half, at least one)", queued, dstLen, k, max(lo, 1), hi)
	}
}

func TestQueueEmpty(t *testing.T) {
	var q queue
	if q.nonEmpty() {
		t.Fatal("zero queue reports nonEmpty")
	}
	ts, _ := taskIDs(1)
	dst := []job{ts[0], ts[0]}
	if k := q.popBatch(dst); k != 0 {
		t.Fatalf("popBatch on a zero queue = %d", k)
	}
	if dst[0].g != ts[0].g || dst[1].g != ts[0].g {
		t.Fatal("popBatch on an empty queue wrote into dst")
	}
	q.push(ts[0])
	if !q.nonEmpty() {
		t.Fatal("nonEmpty false after push")
	}
	if k := q.popBatch(dst); k != 1 || dst[0].g != ts[0].g {
		t.Fatalf("popBatch = %d, %p; want 1, %p", k, dst[0].g, ts[0].g)
	}
	if q.nonEmpty() {
		t.Fatal("nonEmpty true after the only task was taken")
	}
	if k := q.popBatch(dst); k != 0 {
		t.Fatalf("popBatch after draining = %d", k)
	}
}

// TestQueueFIFO pushes a long run of tasks (enough to grow whatever
// storage backs the queue several times) and pops them with batches of
// varied sizes: they come out in order, by the batch rule.
func TestQueueFIFO(t *testing.T) {
	const n = 5000
	ts, ids := taskIDs(n)
	var q queue
	for i := range ts {
		q.push(ts[i])
		if !q.nonEmpty() {
			t.Fatalf("nonEmpty false after %d pushes", i+1)
		}
	}
	sizes := []int{1, 2, 3, 7, 64, 500, 1}
	next, queued := 0, n
	for i := 0; queued > 0; i++ {
		dst := make([]job, sizes[i%len(sizes)])
		k := q.popBatch(dst)
		checkBatch(t, queued, len(dst), k)
		for j := range k {
			if got := ids[dst[j].g]; got != next {
				t.Fatalf("popped task %d, want %d (FIFO)", got, next)
			}
			next++
		}
		queued -= k
		if q.nonEmpty() != (queued > 0) {
			t.Fatalf("nonEmpty() = %v with %d queued", q.nonEmpty(), queued)
		}
	}
}

// TestQueueModel runs random pushes and pops against a slice model:
// the head wraps around, the storage grows and shrinks at arbitrary
// offsets, and order, batch sizes and nonEmpty match the model throughout.
func TestQueueModel(t *testing.T) {
	seeds := 20
	if testing.Short() {
		seeds = 5
	}
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		ts, ids := taskIDs(20000)
		var q queue
		var model []int // ids, oldest first
		pushed := 0
		dst := make([]job, 200)
		for step := 0; step < 3000; step++ {
			// Phases of growth and of draining, so that the queue swings
			// between empty and a few thousand tasks.
			growing := (step/300)%2 == 0
			if r.IntN(3) != 0 == growing && pushed < len(ts) {
				for range 1 + r.IntN(40) {
					if pushed == len(ts) {
						break
					}
					q.push(ts[pushed])
					model = append(model, pushed)
					pushed++
				}
			} else {
				l := 1 + r.IntN(len(dst))
				if r.IntN(2) == 0 {
					l = 1 + r.IntN(3)
				}
				k := q.popBatch(dst[:l])
				checkBatch(t, len(model), l, k)
				for j := range k {
					if got := ids[dst[j].g]; got != model[j] {
						t.Fatalf("seed %d step %d: popped %d, want %d", seed, step, got, model[j])
					}
				}
				model = model[k:]
			}
			if q.nonEmpty() != (len(model) > 0) {
				t.Fatalf("seed %d step %d: nonEmpty() = %v with %d queued", seed, step, q.nonEmpty(), len(model))
			}
		}
		for len(model) > 0 {
			k := q.popBatch(dst)
			checkBatch(t, len(model), len(dst), k)
			for j := range k {
				if got := ids[dst[j].g]; got != model[j] {
					t.Fatalf("seed %d drain: popped %d, want %d", seed, got, model[j])
				}
			}
			model = model[k:]
		}
		if q.nonEmpty() {
			t.Fatalf("seed %d: nonEmpty after draining", seed)
		}
	}
}

// TestQueueClearsSlots: a task taken from the queue is no longer
// referenced by it (the GC can collect the closure once it has run), while
// the tasks still queued stay reachable.
func TestQueueClearsSlots(t *testing.T) {
	type payload struct{ buf [32]byte }
	const n, take = 700, 450
	var q queue
	ptrs := make([]weak.Pointer[payload], n)
	for i := range n {
		obj := &payload{}
		obj.buf[0] = byte(i)
		ptrs[i] = weak.Make(obj)
		q.push(job{fn: fn{f: func() error { sink.Add(int64(obj.buf[1])); return nil }}})
	}
	dst := make([]job, 64)
	for taken := 0; taken < take; {
		k := q.popBatch(dst[:min(len(dst), take-taken)])
		if k == 0 {
			t.Fatal("popBatch returned 0 with tasks queued")
		}
		taken += k
	}
	clear(dst)
	runtime.GC()
	runtime.GC()
	for i := range n {
		alive := ptrs[i].Value() != nil
		if i < take && alive {
			t.Fatalf("task %d was taken, but the queue still keeps its closure alive", i)
		}
		if i >= take && !alive {
			t.Fatalf("task %d is still queued, but its closure was collected", i)
		}
	}
	// Drain, and the rest goes too.
	for q.popBatch(dst) > 0 {
	}
	clear(dst)
	runtime.GC()
	runtime.GC()
	for i := range n {
		if ptrs[i].Value() != nil {
			t.Fatalf("task %d: closure alive after the queue was drained", i)
		}
	}
	runtime.KeepAlive(&q)
}

// TestQueueShrinks: after a burst of many queued tasks is drained, the
// queue does not keep storage in proportion to the burst.
func TestQueueShrinks(t *testing.T) {
	n := 200_000
	if testing.Short() {
		n = 50_000
	}
	var ms runtime.MemStats
	heap := func() uint64 {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	var g Group
	f := func() error { return nil }
	q := new(queue)
	before := heap()
	for range n {
		q.push(job{fn: fn{f: f}, g: &g})
	}
	peak := heap() - before
	dst := make([]job, injectBatch)
	for q.popBatch(dst) > 0 {
	}
	after := heap()
	retained := int64(after) - int64(before)
	runtime.KeepAlive(q)
	if peak < uint64(n)*8 {
		t.Fatalf("measurement broken: %d queued tasks took %d bytes", n, peak)
	}
	if retained > int64(peak/8) {
		t.Errorf("after draining %d tasks the queue retains %d bytes (peak %d)", n, retained, peak)
	}
}

// TestQueueSteadyStateAllocs: a steady stream of pushes, pops and unpushes
// does not allocate (so that an outside Go allocates nothing beyond the
// caller's closure).
func TestQueueSteadyStateAllocs(t *testing.T) {
	if testkit.Race {
		t.Skip("the race detector allocates")
	}
	var g Group
	f := func() error { return nil }
	var q queue
	dst := make([]job, injectBatch)
	taken := 0
	allocs := testing.AllocsPerRun(2000, func() {
		for range 32 {
			q.push(job{fn: fn{f: f}, g: &g})
		}
		if q.unpushIf(&g).f != nil { // nil when the newest task ends a page
			taken++
		}
		for q.popBatch(dst) > 0 {
		}
	})
	if taken == 0 {
		t.Errorf("unpushIf never took a task back")
	}
	if allocs != 0 {
		t.Errorf("%v allocations per 32 pushes, an unpush and the pops that drain them, want 0", allocs)
	}
}

// TestQueueConcurrent: producers and consumers at once. Every task is
// taken exactly once, and each batch holds any one producer's tasks in the
// order they were pushed. With a single consumer, each producer's tasks
// come out in push order overall.
func TestQueueConcurrent(t *testing.T) {
	perProducer := testkit.ScaleDown(20000, 3000)
	for _, consumers := range []int{1, 4} {
		const producers = 4
		n := producers * perProducer
		ts, ids := taskIDs(n) // producer p pushes ids p*perProducer + 0, 1, ...
		taken := make([]atomic.Int32, n)
		var total atomic.Int64
		var q queue
		var wg sync.WaitGroup
		testkit.Guard(t, func() {
			for p := range producers {
				wg.Go(func() {
					for i := range perProducer {
						q.push(ts[p*perProducer+i])
						if i%64 == 0 {
							runtime.Gosched()
						}
					}
				})
			}
			for c := range consumers {
				wg.Go(func() {
					dst := make([]job, 1+c*21)
					last := make([]int, producers)
					for i := range last {
						last[i] = -1
					}
					for total.Load() < int64(n) {
						k := q.popBatch(dst)
						if k == 0 {
							runtime.Gosched()
							continue
						}
						if k > len(dst) {
							t.Errorf("popBatch returned %d > len(dst) %d", k, len(dst))
							return
						}
						inBatch := make([]int, producers)
						for i := range inBatch {
							inBatch[i] = -1
						}
						for _, tk := range dst[:k] {
							id, ok := ids[tk.g]
							if !ok {
								t.Errorf("popped a task that was never pushed")
								return
							}
							taken[id].Add(1)
							p, seq := id/perProducer, id%perProducer
							if seq <= inBatch[p] {
								t.Errorf("producer %d: task %d after %d in one batch", p, seq, inBatch[p])
							}
							inBatch[p] = seq
							if consumers == 1 && seq <= last[p] {
								t.Errorf("producer %d: task %d popped after %d", p, seq, last[p])
							}
							last[p] = seq
						}
						total.Add(int64(k))
					}
				})
			}
			wg.Wait()
		})
		for id := range taken {
			if c := taken[id].Load(); c != 1 {
				t.Fatalf("consumers=%d: task %d taken %d times", consumers, id, c)
			}
		}
		if q.nonEmpty() {
			t.Errorf("consumers=%d: nonEmpty after every task was taken", consumers)
		}
	}
}

// jobID is what the function of a job made by idJob returns: unpushIf
// hands back only the function, so the function tells which job it was.
type jobID int

func (j jobID) Error() string { return fmt.Sprintf("job %d", int(j)) }

// idOf calls f and returns the id it reports. Only the test goroutine may
// call it (it may call t.Fatal); others use jobIDOf.
func idOf(t *testing.T, f func() error) int {
	t.Helper()
	id, ok := jobIDOf(f)
	if !ok {
		t.Fatalf("a job has no function or one that returns no jobID (a hole in the queue?)")
	}
	return id
}

// jobIDOf calls f and returns the id it reports, or false if f is nil or
// reports none.
func jobIDOf(f func() error) (int, bool) {
	if f == nil {
		return 0, false
	}
	var id jobID
	if !errors.As(f(), &id) {
		return 0, false
	}
	return int(id), true
}

// idJob returns job id of group g.
func idJob(id int, g *Group) job {
	return job{fn: fn{f: func() error { return jobID(id) }}, g: g}
}

// popAll drains q and returns the ids of its jobs, oldest first.
func popAll(t *testing.T, q *queue) []int {
	t.Helper()
	var ids []int
	dst := make([]job, 7)
	for {
		k := q.popBatch(dst)
		if k == 0 {
			return ids
		}
		for _, j := range dst[:k] {
			ids = append(ids, idOf(t, j.f))
		}
	}
}

// TestQueueUnpushIf: unpushIf takes back the newest task only if it is
// g's; the rest stays in FIFO order; a task already taken is never taken
// back.
func TestQueueUnpushIf(t *testing.T) {
	var g, h Group
	var q queue
	if f := q.unpushIf(&g).f; f != nil {
		t.Fatal("unpushIf on a zero queue returned a task")
	}
	for i := range 6 {
		gr := &g
		if i%2 == 1 {
			gr = &h
		}
		q.push(idJob(i, gr)) // 0 g, 1 h, 2 g, 3 h, 4 g, 5 h
	}
	if f := q.unpushIf(&g).f; f != nil {
		t.Fatalf("unpushIf(g) took job %d while the newest is h's", idOf(t, f))
	}
	if f := q.unpushIf(&h).f; f == nil || idOf(t, f) != 5 {
		t.Fatalf("unpushIf(h) did not take back job 5")
	}
	if f := q.unpushIf(&g).f; f == nil || idOf(t, f) != 4 {
		t.Fatalf("unpushIf(g) did not take back job 4")
	}
	if got := q.len(); got != 4 {
		t.Fatalf("len() = %d after two unpushes of six, want 4", got)
	}
	// Interleave: take the oldest, push, take back.
	dst := make([]job, 1)
	if k := q.popBatch(dst); k != 1 || idOf(t, dst[0].f) != 0 {
		t.Fatalf("popBatch did not return job 0 first")
	}
	q.push(idJob(6, &g))
	if f := q.unpushIf(&g).f; f == nil || idOf(t, f) != 6 {
		t.Fatalf("unpushIf(g) did not take back job 6")
	}
	if got, want := popAll(t, &q), []int{1, 2, 3}; !slices.Equal(got, want) {
		t.Fatalf("after the unpushes the queue holds %v, want %v in that order", got, want)
	}
	if q.nonEmpty() {
		t.Fatal("nonEmpty after draining")
	}
	// Pushed and taken by a consumer: nothing to take back.
	q.push(idJob(7, &g))
	if k := q.popBatch(dst); k != 1 {
		t.Fatalf("popBatch = %d, want 1", k)
	}
	if f := q.unpushIf(&g).f; f != nil {
		t.Fatalf("unpushIf took back job %d, which a consumer had taken", idOf(t, f))
	}
	// Taken back down to empty, then used again.
	q.push(idJob(8, &g))
	q.push(idJob(9, &g))
	for _, want := range []int{9, 8} {
		if f := q.unpushIf(&g).f; f == nil || idOf(t, f) != want {
			t.Fatalf("unpushIf did not take back job %d", want)
		}
	}
	if q.nonEmpty() || q.len() != 0 {
		t.Fatalf("nonEmpty() = %v, len() = %d after every task was taken back", q.nonEmpty(), q.len())
	}
	if f := q.unpushIf(&g).f; f != nil {
		t.Fatal("unpushIf on an emptied queue returned a task")
	}
	q.push(idJob(10, &g))
	if got, want := popAll(t, &q), []int{10}; !slices.Equal(got, want) {
		t.Fatalf("after emptying by unpushes, push then pop gave %v, want %v", got, want)
	}
}

// TestQueueUnpushIfBlockBoundary: unpushIf does not reach back into the
// previous page: with the newest task in the last slot of a full page
// (the producer has linked a fresh, empty tail page) it takes nothing,
// and the queue is intact; once a task lands in the new page, that one
// can be taken back.
func TestQueueUnpushIfBlockBoundary(t *testing.T) {
	var g Group
	for _, before := range []int{0, 3} { // tasks taken before the boundary
		var q queue
		next := 0
		for range pageLen {
			q.push(idJob(next, &g))
			next++
		}
		dst := make([]job, before+1)
		if before > 0 {
			if k := q.popBatch(dst[:before]); k != before {
				t.Fatalf("popBatch = %d, want %d", k, before)
			}
		}
		if f := q.unpushIf(&g).f; f != nil {
			t.Fatalf("before=%d: unpushIf took job %d from the previous page", before, idOf(t, f))
		}
		q.push(idJob(next, &g))
		if f := q.unpushIf(&g).f; f == nil || idOf(t, f) != next {
			t.Fatalf("before=%d: unpushIf did not take back job %d, the only one in the tail page", before, next)
		}
		// Now the tail page is empty again: nothing to take back.
		if f := q.unpushIf(&g).f; f != nil {
			t.Fatalf("before=%d: unpushIf took job %d across the boundary", before, idOf(t, f))
		}
		got := popAll(t, &q)
		if len(got) != pageLen-before {
			t.Fatalf("before=%d: %d tasks left, want %d", before, len(got), pageLen-before)
		}
		for i, id := range got {
			if id != before+i {
				t.Fatalf("before=%d: task %d popped at position %d (FIFO broken)", before, id, i)
			}
		}
	}
}

// TestQueueUnpushModel runs random pushes (of a few groups), pops and
// unpushes against a slice model that knows where the pages end: each
// unpushIf takes back exactly the task the model says (the newest, if it
// is the group's and not the last of a previous page), and order, batch
// sizes, len and nonEmpty match the model throughout.
func TestQueueUnpushModel(t *testing.T) {
	seeds := 20
	if testing.Short() {
		seeds = 5
	}
	groups := make([]Group, 3)
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 11))
		var q queue
		type entry struct{ id, g int }
		var model []entry // oldest first
		published := 0    // tasks pushed less those taken back: the model of the slot index
		next := 0
		dst := make([]job, 100)
		for step := 0; step < 4000; step++ {
			switch op := r.IntN(10); {
			case op < 4: // push a run
				for range 1 + r.IntN(30) {
					gi := r.IntN(len(groups))
					q.push(idJob(next, &groups[gi]))
					model = append(model, entry{next, gi})
					next++
					published++
				}
			case op < 7: // pop a batch
				l := 1 + r.IntN(len(dst))
				k := q.popBatch(dst[:l])
				checkBatch(t, len(model), l, k)
				for j := range k {
					if got := idOf(t, dst[j].f); got != model[j].id {
						t.Fatalf("seed %d step %d: popped %d, want %d", seed, step, got, model[j].id)
					}
				}
				model = model[k:]
			default: // unpush
				gi := r.IntN(len(groups))
				want := -1
				if n := len(model); n > 0 && model[n-1].g == gi && published%pageLen != 0 {
					want = model[n-1].id
				}
				f := q.unpushIf(&groups[gi]).f
				switch {
				case want < 0 && f != nil:
					t.Fatalf("seed %d step %d: unpushIf(group %d) took job %d, want nothing", seed, step, gi, idOf(t, f))
				case want >= 0 && f == nil:
					t.Fatalf("seed %d step %d: unpushIf(group %d) took nothing, want job %d", seed, step, gi, want)
				case want >= 0 && idOf(t, f) != want:
					t.Fatalf("seed %d step %d: unpushIf(group %d) took job %d, want %d", seed, step, gi, idOf(t, f), want)
				}
				if want >= 0 {
					model = model[:len(model)-1]
					published--
				}
			}
			if q.nonEmpty() != (len(model) > 0) || q.len() != len(model) {
				t.Fatalf("seed %d step %d: nonEmpty() = %v, len() = %d with %d queued", seed, step, q.nonEmpty(), q.len(), len(model))
			}
		}
		got := popAll(t, &q)
		if len(got) != len(model) {
			t.Fatalf("seed %d: drained %d tasks, model has %d", seed, len(got), len(model))
		}
		for i := range got {
			if got[i] != model[i].id {
				t.Fatalf("seed %d drain: popped %d, want %d", seed, got[i], model[i].id)
			}
		}
	}
}

// TestQueueUnpushConcurrent: producers push their own group's tasks and
// now and then take their newest back, while consumers pop batches. Every
// task is taken exactly once, by a consumer or by its own producer's
// unpushIf: none is lost, none is taken twice.
func TestQueueUnpushConcurrent(t *testing.T) {
	perProducer := testkit.ScaleDown(20000, 3000)
	const producers, consumers = 4, 3
	n := producers * perProducer
	groups := make([]Group, producers)
	taken := make([]atomic.Int32, n)
	var total, unpushed atomic.Int64
	var q queue
	var wg sync.WaitGroup
	testkit.Guard(t, func() {
		for p := range producers {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(p), 5))
				for i := range perProducer {
					id := p*perProducer + i
					q.push(idJob(id, &groups[p]))
					if r.IntN(3) == 0 {
						if f := q.unpushIf(&groups[p]).f; f != nil {
							got, ok := jobIDOf(f)
							if !ok {
								t.Errorf("producer %d took back a job with no id", p)
								return
							}
							if got/perProducer != p {
								t.Errorf("producer %d took back job %d of producer %d", p, got, got/perProducer)
							}
							taken[got].Add(1)
							total.Add(1)
							unpushed.Add(1)
						}
					}
					if i%64 == 0 {
						runtime.Gosched()
					}
				}
			})
		}
		for range consumers {
			wg.Go(func() {
				dst := make([]job, 16)
				for total.Load() < int64(n) {
					k := q.popBatch(dst)
					if k == 0 {
						runtime.Gosched()
						continue
					}
					for _, j := range dst[:k] {
						id, ok := jobIDOf(j.f)
						if !ok {
							t.Errorf("popped a job with no id (a hole in the queue?)")
							total.Store(int64(n)) // stop everyone
							return
						}
						taken[id].Add(1)
					}
					total.Add(int64(k))
				}
			})
		}
		wg.Wait()
	})
	for id := range taken {
		if c := taken[id].Load(); c != 1 {
			t.Fatalf("task %d taken %d times", id, c)
		}
	}
	if q.nonEmpty() {
		t.Errorf("nonEmpty after every task was taken")
	}
	if unpushed.Load() == 0 {
		t.Errorf("no task was taken back: the test no longer builds its case")
	}
	t.Logf("%d of %d tasks taken back by their producers", unpushed.Load(), n)
}

// testInjector returns an injector with n shards (a power of two).
func testInjector(n int) injector {
	return injector{shards: make([]queue, n), mask: uint64(n - 1)}
}

// TestInjectorShards: takeBatch finds tasks in any shard, whatever shard
// it starts at, and takes each batch from one shard; nonEmpty and len see
// a task in any shard.
func TestInjectorShards(t *testing.T) {
	const shards = 8
	var g Group
	dst := make([]job, 16)
	for home := range shards {
		for start := range uint64(2 * shards) {
			in := testInjector(shards)
			if in.nonEmpty() || in.len() != 0 {
				t.Fatal("a new injector is not empty")
			}
			if k := in.takeBatch(dst, start, 0, len(dst)); k != 0 {
				t.Fatalf("takeBatch on an empty injector = %d", k)
			}
			in.shards[home].push(idJob(1, &g))
			if !in.nonEmpty() || in.len() != 1 {
				t.Fatalf("task in shard %d: nonEmpty() = %v, len() = %d", home, in.nonEmpty(), in.len())
			}
			if k := in.takeBatch(dst, start, 0, len(dst)); k != 1 || idOf(t, dst[0].f) != 1 {
				t.Fatalf("task in shard %d, start %d: takeBatch = %d", home, start, k)
			}
			if in.nonEmpty() {
				t.Fatalf("nonEmpty after the only task was taken")
			}
		}
	}
	// Two shards hold tasks: each batch comes from one of them, the first
	// in order from start.
	in := testInjector(shards)
	for i := range 4 {
		in.shards[2].push(idJob(200+i, &g))
		in.shards[5].push(idJob(500+i, &g))
	}
	if got := in.len(); got != 8 {
		t.Fatalf("len() = %d, want 8", got)
	}
	for _, c := range []struct {
		start uint64
		from  int
	}{{3, 5}, {6, 2}, {2, 2}, {5 + shards, 5}} {
		k := in.takeBatch(dst[:1], c.start, 0, 1)
		if k != 1 || idOf(t, dst[0].f)/100 != c.from {
			t.Fatalf("start %d: took %d tasks, the first from shard %d; want one from shard %d", c.start, k, idOf(t, dst[0].f)/100, c.from)
		}
	}
	for in.nonEmpty() {
		k := in.takeBatch(dst, 0, 0, len(dst))
		from := idOf(t, dst[0].f) / 100
		for _, j := range dst[:k] {
			if idOf(t, j.f)/100 != from {
				t.Fatalf("one batch mixed tasks of shards %d and %d", from, idOf(t, j.f)/100)
			}
		}
	}
}

// TestInjectorBatchShare: takeBatch takes at least one task, at most about
// half of the shard (queue.popBatch's rule) and at most len(dst), and no
// more than the shard's share for one of workers+1 takers.
func TestInjectorBatchShare(t *testing.T) {
	var g Group
	for _, n := range []int{1, 2, 3, 7, 64, 300} {
		for _, workers := range []int{0, 1, 3, 16} {
			for _, dstLen := range []int{1, 8, injectBatch} {
				in := testInjector(2)
				for i := range n {
					in.shards[1].push(idJob(i, &g))
				}
				dst := make([]job, dstLen)
				k := in.takeBatch(dst, 0, workers, len(dst))
				hi := min(dstLen, n/2+1, max(n/(workers+1), 1))
				if k < 1 || k > hi {
					t.Fatalf("%d queued, %d workers, len(dst) %d: took %d, want 1..%d", n, workers, dstLen, k, hi)
				}
				for i, j := range dst[:k] {
					if idOf(t, j.f) != i {
						t.Fatalf("%d queued, %d workers: batch position %d holds task %d (FIFO)", n, workers, i, idOf(t, j.f))
					}
				}
				if got := in.len(); got != n-k {
					t.Fatalf("%d queued, took %d: len() = %d", n, k, got)
				}
			}
		}
	}
}

// TestInjectorCallerShard: push queues on the calling goroutine's shard,
// and unpushIf takes back from that shard only: a goroutine whose shard is
// another does not see the task.
func TestInjectorCallerShard(t *testing.T) {
	needGID(t)
	var g Group
	in := testInjector(8)
	mine := in.shard()
	in.push(idJob(1, &g))
	if mine.len() != 1 || in.len() != 1 {
		t.Fatalf("after push: the caller's shard holds %d, the injector %d; want 1 and 1", mine.len(), in.len())
	}
	// Find a goroutine with another shard (ids are spread over 8 shards;
	// a few tries suffice).
	var other bool
	for range 100 {
		var f func() error
		var differs bool
		done := make(chan struct{})
		go func() {
			defer close(done)
			if differs = in.shard() != mine; differs {
				f = in.unpushIf(&g).f
			}
		}()
		<-done
		if differs {
			if f != nil {
				t.Fatalf("a goroutine with another shard took back the task")
			}
			other = true
			break
		}
	}
	if !other {
		t.Fatalf("100 goroutines all hashed to the test goroutine's shard")
	}
	if f := in.unpushIf(&g).f; f == nil || idOf(t, f) != 1 {
		t.Fatalf("the pushing goroutine could not take its task back")
	}
	if in.nonEmpty() {
		t.Fatal("nonEmpty after the task was taken back")
	}
}

// TestShardsFor: the shard count is a power of two (the mask needs it), at
// least four per CPU up to the cap, never above maxShards, and at least 2.
func TestShardsFor(t *testing.T) {
	prev := 0
	for cpus := -1; cpus <= 300; cpus++ {
		n := shardsFor(cpus)
		if n&(n-1) != 0 {
			t.Fatalf("shardsFor(%d) = %d, not a power of two", cpus, n)
		}
		if n > maxShards || n < 2 {
			t.Fatalf("shardsFor(%d) = %d, want 2..%d", cpus, n, maxShards)
		}
		if want := min(4*cpus, maxShards); n < want {
			t.Fatalf("shardsFor(%d) = %d, want at least %d", cpus, n, want)
		}
		if cpus > 0 && n >= 8*cpus && n > 2 {
			t.Fatalf("shardsFor(%d) = %d: more than needed to round 4 per CPU up", cpus, n)
		}
		if n < prev {
			t.Fatalf("shardsFor(%d) = %d < shardsFor(%d) = %d", cpus, n, cpus-1, prev)
		}
		prev = n
	}
	if n := len(global.inj.shards); n != shardsFor(runtime.NumCPU()) || global.inj.mask != uint64(n-1) {
		t.Fatalf("the pool's injector has %d shards, mask %#x; want %d, %#x", n, global.inj.mask, shardsFor(runtime.NumCPU()), shardsFor(runtime.NumCPU())-1)
	}
}
