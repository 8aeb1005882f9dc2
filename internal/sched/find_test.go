package sched

import "testing"

// The search order of an idle worker (worker.find): its own deque, the
// injector, the other workers' deques, and the two turns that keep one
// source from starving behind another that never empties. The workers
// here are never started: the test calls find itself, as the worker's
// owner, on a pool of its own.

// findPool returns a pool with two unstarted workers in its scan set, the
// searcher w and the victim v, and one injector shard.
func findPool() (p *Pool, w, v *worker) {
	p = newPool()
	p.inj = injector{shards: make([]queue, 1), mask: 0}
	w, v = p.newWorker(0), p.newWorker(1)
	p.active.Store(&scanSet{list: []*worker{w, v}})
	return p, w, v
}

// sourceTask makes a task record of group g for a deque.
func sourceTask(w *worker, g *Group) *task {
	return w.newTask(fn{f: func() error { return nil }}, g, false, true)
}

// searchFor calls w.find up to turn times, while the source that comes
// first in the ordinary order stays busy: each task of group busy that find
// returns is recycled and refill queues another. It returns the task of
// group want once find returns it, and how many of busy's came first; it
// fails the test if find returns nothing, another group's task, or, within
// turn searches, never want's.
func searchFor(t *testing.T, w *worker, turn int, want, busy *Group, refill func()) (got *task, before int) {
	t.Helper()
	for range turn {
		x := w.find()
		switch {
		case x == nil:
			t.Fatalf("after %d tasks of the busy source: find found nothing, with tasks in both sources", before)
		case x.g.Load() == want:
			return x, before
		case x.g.Load() == busy:
			before++
			w.freeTask(x)
			refill()
		default:
			t.Fatalf("find returned a task of an unknown group")
		}
	}
	t.Fatalf("%d searches took %d tasks of the busy source and never the other one's", turn, before)
	return nil, before
}

// TestFindStealsBeforeABusyInjector: while tasks from outside keep the
// injector from running dry, a task on another worker's deque (one stuck in
// a task, whose slot the hand-off has not handed on) is still stolen, on
// the steal turn, within stealEvery searches; before it, the searches
// serve the injector, in the ordinary order.
func TestFindStealsBeforeABusyInjector(t *testing.T) {
	p, w, v := findPool()
	var outside, stuck Group
	inject := func() { p.inj.push(job{fn: fn{f: func() error { return nil }}, g: &outside, plain: true}) }
	v.dq.Push(sourceTask(v, &stuck))
	inject()
	// Each injected task taken, another arrives: the injector never runs dry.
	if _, injected := searchFor(t, w, stealEvery, &stuck, &outside, inject); injected == 0 {
		t.Errorf("the other deque's task was stolen before any injected task: the injector comes first, but on the steal turn")
	}
	if v.dq.Len() != 0 {
		t.Errorf("after the steal the other deque holds %d tasks, want 0", v.dq.Len())
	}
}

// TestFindServesTheInjectorBeforeABusyDeque: while a worker's own deque
// never empties (each task it runs pushes another), a task from outside is
// still taken, on the injector's turn, within injectEvery searches; before
// it, the searches serve the worker's own deque.
func TestFindServesTheInjectorBeforeABusyDeque(t *testing.T) {
	p, w, _ := findPool()
	var own, outside Group
	push := func() { w.dq.Push(sourceTask(w, &own)) } // the task's own Go
	push()
	p.inj.push(job{fn: fn{f: func() error { return nil }}, g: &outside, plain: true})
	got, popped := searchFor(t, w, injectEvery, &outside, &own, push)
	if popped == 0 {
		t.Errorf("the injected task was taken before any task of the worker's own deque: the deque comes first, but on the injector's turn")
	}
	if !got.injected {
		t.Errorf("the task taken from the injector is not marked injected")
	}
}
