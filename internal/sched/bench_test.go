package sched

import (
	"context"
	"runtime/pprof"
	"testing"
	"unsafe"

	"github.com/go-steal/steal/internal/gstatus"
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
// itself: a Go outside the pool reads the caller's labels (a call), and
// worker.call compares them with the worker's before the task and loads the
// worker's labels after it (through its proven labels word, or with a
// call where there is none), and sets them both ways when the task has
// some. The rows are per task; the floor row builds the task's record
// alone, without the labels.
func BenchmarkLabelCarry(b *testing.B) {
	b.Run("floor", func(b *testing.B) {
		var f fn
		for b.Loop() {
			f = fn{f: tiny}
		}
		_ = f
	})
	w := &worker{labels: gstatus.LabelsWord()} // the benchmark goroutine plays the worker too
	b.Run("labels=none", func(b *testing.B) {
		var home unsafe.Pointer
		for b.Loop() {
			f := fn{f: tiny, labels: (*worker)(nil).wears()} // Group.submitted, outside the pool
			if f.labels != home {                            // worker.call, before
				gstatus.SetLabels(f.labels)
			}
			if w.wears() != home { // worker.call, after
				gstatus.SetLabels(home)
			}
		}
	})
	// With labels, each round also puts the submitter's labels back on the
	// goroutine first: one set more than a task costs.
	b.Run("labels=some", func(b *testing.B) {
		pprof.Do(context.Background(), pprof.Labels("k", "v"), func(context.Context) {
			submitter := gstatus.Labels()
			var home unsafe.Pointer
			for b.Loop() {
				gstatus.SetLabels(submitter)
				f := fn{f: tiny, labels: (*worker)(nil).wears()}
				gstatus.SetLabels(home) // the worker wears none between tasks
				if f.labels != home {
					gstatus.SetLabels(f.labels)
				}
				if w.wears() != home {
					gstatus.SetLabels(home)
				}
			}
			gstatus.SetLabels(submitter)
		})
	})
}
