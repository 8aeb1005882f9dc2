package sched

import (
	"math/rand/v2"
	"testing"
)

// TestFreeListReturnsWhatWasFreed: newTask hands back the records freeTask
// kept, newest first, each once, whatever the free list's slots above its
// length still hold from earlier takes; past the records kept it allocates.
// A model stack, driven by a seeded random mix of takes and frees in the
// orders a worker's tasks end in (newest first, and out of order as steals
// and nested Waits make them), says what each take must return.
func TestFreeListReturnsWhatWasFreed(t *testing.T) {
	var w worker
	g := new(Group)
	rng := rand.New(rand.NewPCG(1, 2))
	var (
		model []*task // what the free list holds, newest last
		out   []*task // records taken and not yet freed
		seen  = map[*task]bool{}
		peak  int // the longest the free list got
	)
	for step := range 20000 {
		// Bursts past the cap now and then: freeTasks+8 takes in a row,
		// whose records the random mix that follows frees again.
		burst := step%5000 < freeTasks+8
		if len(out) == 0 || burst || (len(out) < freeTasks+8 && rng.IntN(2) == 0) {
			got := w.newTask(fn{}, g, false, true)
			if n := len(model); n > 0 {
				if want := model[n-1]; got != want {
					t.Fatalf("step %d: newTask returned %p, want %p, the record freed last", step, got, want)
				}
				model = model[:n-1]
			} else if seen[got] {
				t.Fatalf("step %d: newTask returned %p with the free list empty, a record it had handed out before", step, got)
			}
			seen[got] = true
			for _, o := range out {
				if o == got {
					t.Fatalf("step %d: newTask returned %p, which is still in use", step, got)
				}
			}
			out = append(out, got)
			continue
		}
		// Free the newest record taken most of the time, as a run of a
		// Wait's own tasks does, and any other now and then.
		i := len(out) - 1
		if rng.IntN(4) == 0 {
			i = rng.IntN(len(out))
		}
		x := out[i]
		out = append(out[:i], out[i+1:]...)
		// freeTask keeps x while the list is within its capacity or
		// below freeTasks.
		if n := len(model); n < cap(w.free) || n < freeTasks {
			model = append(model, x)
		}
		w.freeTask(x)
		peak = max(peak, len(w.free))
		if len(w.free) != len(model) {
			t.Fatalf("step %d: the free list holds %d records, want %d", step, len(w.free), len(model))
		}
		if c := cap(w.free); c > 2*freeTasks {
			t.Fatalf("step %d: the free list's capacity grew to %d, past twice its cap %d", step, c, freeTasks)
		}
	}
	if peak < freeTasks {
		t.Errorf("the free list held at most %d records; the test should fill it to its cap %d", peak, freeTasks)
	}
}
