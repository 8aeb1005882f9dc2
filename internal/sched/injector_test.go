package sched

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"weak"
)

// The injector tests use only push, popBatch and nonEmpty, so that they
// hold for any queue behind them. Tasks are told apart by their g pointer.

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

func TestInjectorEmpty(t *testing.T) {
	var q injector
	if q.nonEmpty() {
		t.Fatal("zero injector reports nonEmpty")
	}
	ts, _ := taskIDs(1)
	dst := []job{ts[0], ts[0]}
	if k := q.popBatch(dst); k != 0 {
		t.Fatalf("popBatch on a zero injector = %d", k)
	}
	if dst[0].g != ts[0].g || dst[1].g != ts[0].g {
		t.Fatal("popBatch on an empty injector wrote into dst")
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

// TestInjectorFIFO pushes a long run of tasks (enough to grow whatever
// storage backs the queue several times) and pops them with batches of
// varied sizes: they come out in order, by the batch rule.
func TestInjectorFIFO(t *testing.T) {
	const n = 5000
	ts, ids := taskIDs(n)
	var q injector
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

// TestInjectorModel runs random pushes and pops against a slice model:
// the head wraps around, the storage grows and shrinks at arbitrary
// offsets, and order, batch sizes and nonEmpty match the model throughout.
func TestInjectorModel(t *testing.T) {
	seeds := 20
	if testing.Short() {
		seeds = 5
	}
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		ts, ids := taskIDs(20000)
		var q injector
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

// TestInjectorClearsSlots: a task taken from the injector is no longer
// referenced by it (the GC can collect the closure once it has run), while
// the tasks still queued stay reachable.
func TestInjectorClearsSlots(t *testing.T) {
	type payload struct{ buf [32]byte }
	const n, take = 700, 450
	var q injector
	ptrs := make([]weak.Pointer[payload], n)
	for i := range n {
		obj := &payload{}
		obj.buf[0] = byte(i)
		ptrs[i] = weak.Make(obj)
		q.push(job{f: func() error { sink.Add(int64(obj.buf[1])); return nil }})
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
			t.Fatalf("task %d was taken, but the injector still keeps its closure alive", i)
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

// TestInjectorShrinks: after a burst of many queued tasks is drained, the
// injector does not keep storage in proportion to the burst.
func TestInjectorShrinks(t *testing.T) {
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
	q := new(injector)
	before := heap()
	for range n {
		q.push(job{f: f, g: &g})
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
		t.Errorf("after draining %d tasks the injector retains %d bytes (peak %d)", n, retained, peak)
	}
}

// TestInjectorSteadyStateAllocs: a steady stream of pushes and pops does
// not allocate (CONTRACT §8: an outside Go allocates nothing beyond the
// caller's closure).
func TestInjectorSteadyStateAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	var g Group
	f := func() error { return nil }
	var q injector
	dst := make([]job, injectBatch)
	allocs := testing.AllocsPerRun(2000, func() {
		for range 32 {
			q.push(job{f: f, g: &g})
		}
		for q.popBatch(dst) > 0 {
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per 32 pushes and the pops that drain them, want 0", allocs)
	}
}

// TestInjectorConcurrent: producers and consumers at once. Every task is
// taken exactly once, and each batch holds any one producer's tasks in the
// order they were pushed. With a single consumer, each producer's tasks
// come out in push order overall.
func TestInjectorConcurrent(t *testing.T) {
	perProducer := 20000
	if testing.Short() || raceEnabled {
		perProducer = 3000
	}
	for _, consumers := range []int{1, 4} {
		const producers = 4
		n := producers * perProducer
		ts, ids := taskIDs(n) // producer p pushes ids p*perProducer + 0, 1, ...
		taken := make([]atomic.Int32, n)
		var total atomic.Int64
		var q injector
		var wg sync.WaitGroup
		guard(t, func() {
			for p := range producers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range perProducer {
						q.push(ts[p*perProducer+i])
						if i%64 == 0 {
							runtime.Gosched()
						}
					}
				}()
			}
			for c := range consumers {
				wg.Add(1)
				go func() {
					defer wg.Done()
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
				}()
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
