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

// TestFindStealsBeforeABusyInjector: while tasks from outside keep the
// injector from running dry, a task on another worker's deque (one stuck in
// a task, whose slot the hand-off has not handed on) is still stolen, on
// the steal turn, within stealEvery searches; before it, the searches
// serve the injector, in the ordinary order.
func TestFindStealsBeforeABusyInjector(t *testing.T) {
	p, w, v := findPool()
	var outside, stuck Group
	v.dq.Push(sourceTask(v, &stuck))
	p.inj.push(job{fn: fn{f: func() error { return nil }}, g: &outside, plain: true})
	injected := 0
	for range stealEvery {
		got := w.find()
		if got == nil {
			t.Fatalf("after %d injected tasks: find found nothing, with a task in the injector and one on the other deque", injected)
		}
		switch got.g.Load() {
		case &stuck:
			if injected == 0 {
				t.Errorf("the other deque's task was stolen before any injected task: the injector comes first, but on the steal turn")
			}
			if v.dq.Len() != 0 {
				t.Errorf("after the steal the other deque holds %d tasks, want 0", v.dq.Len())
			}
			return
		case &outside:
			injected++
			w.freeTask(got)
			// Another task from outside arrives: the injector never runs dry.
			p.inj.push(job{fn: fn{f: func() error { return nil }}, g: &outside, plain: true})
		default:
			t.Fatalf("find returned a task of an unknown group")
		}
	}
	t.Fatalf("%d searches took %d tasks from a busy injector and never the other deque's task", stealEvery, injected)
}

// TestFindServesTheInjectorBeforeABusyDeque: while a worker's own deque
// never empties (each task it runs pushes another), a task from outside is
// still taken, on the injector's turn, within injectEvery searches; before
// it, the searches serve the worker's own deque.
func TestFindServesTheInjectorBeforeABusyDeque(t *testing.T) {
	p, w, _ := findPool()
	var own, outside Group
	w.dq.Push(sourceTask(w, &own))
	p.inj.push(job{fn: fn{f: func() error { return nil }}, g: &outside, plain: true})
	popped := 0
	for range injectEvery {
		got := w.find()
		if got == nil {
			t.Fatalf("after %d own tasks: find found nothing, with tasks on its deque and in the injector", popped)
		}
		switch got.g.Load() {
		case &outside:
			if popped == 0 {
				t.Errorf("the injected task was taken before any task of the worker's own deque: the deque comes first, but on the injector's turn")
			}
			if !got.injected {
				t.Errorf("the task taken from the injector is not marked injected")
			}
			return
		case &own:
			popped++
			w.freeTask(got)
			w.dq.Push(sourceTask(w, &own)) // the task's own Go: the deque never empties
		default:
			t.Fatalf("find returned a task of an unknown group")
		}
	}
	t.Fatalf("%d searches popped %d tasks of a busy deque and never took the injector's task", injectEvery, popped)
}
