package sched

import (
	"testing"
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
