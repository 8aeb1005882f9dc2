package sched

import (
	"context"
	"runtime/pprof"
	"testing"
	"unsafe"
)

// The benchmarks of the public API, side by side with errgroup, are in
// package wsgroup. This one has no twin there: it drives the scheduler
// directly with a task that allocates nothing (a plain function value, no
// closure), so that allocs/op counts the scheduler's own allocations on
// the path of an outside Go that waits for a slot (polling, running the
// group's own tasks, parking).

func tiny() error {
	x := 1
	for i := range 8 {
		x = x*31 + i
	}
	if x == 0 {
		sink.Add(1)
	}
	return nil
}

func BenchmarkTinyOutsideLimit(b *testing.B) {
	const n = 100_000
	b.ReportAllocs()
	for b.Loop() {
		var g Group
		g.SetLimit(2)
		for range n {
			g.Go(tiny)
		}
		g.Wait()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/task")
}

// BenchmarkLabelCarry is what carrying profiler labels adds to a task, by
// itself: Go reads the caller's labels, and callTask compares them with the
// worker's before the task and reads the goroutine's labels after it (and
// sets them both ways when the task has some). The rows are per task.
func BenchmarkLabelCarry(b *testing.B) {
	run := func(b *testing.B) {
		var home unsafe.Pointer
		for b.Loop() {
			f := fn{f: tiny, labels: getProfLabel()} // Group.submitted
			if f.labels != home {                    // callTask, before
				setProfLabel(f.labels)
			}
			if getProfLabel() != home { // callTask, after
				setProfLabel(home)
			}
		}
	}
	b.Run("labels=none", run)
	b.Run("labels=some", func(b *testing.B) {
		pprof.Do(context.Background(), pprof.Labels("k", "v"), func(context.Context) {
			// A worker runs the task: it wears none between tasks, so
			// the labels are set before and taken off after.
			l := getProfLabel()
			var home unsafe.Pointer
			for b.Loop() {
				setProfLabel(l) // the submitter's goroutine wears them
				f := fn{f: tiny, labels: getProfLabel()}
				setProfLabel(home)
				if f.labels != home {
					setProfLabel(f.labels)
				}
				if getProfLabel() != home {
					setProfLabel(home)
				}
			}
			setProfLabel(l)
		})
	})
}
