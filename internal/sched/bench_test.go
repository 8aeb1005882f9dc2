package sched

import (
	"sync/atomic"
	"testing"

	"golang.org/x/sync/errgroup"
)

var sink atomic.Int64

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

func BenchmarkTinyOutside(b *testing.B) {
	const n = 100_000
	for b.Loop() {
		var g Group
		for range n {
			g.Go(tiny, true)
		}
		g.Wait()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/task")
}

func BenchmarkTinyOutsideLimit(b *testing.B) {
	const n = 100_000
	for b.Loop() {
		var g Group
		g.SetLimit(2)
		for range n {
			g.Go(tiny, true)
		}
		g.Wait()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/task")
}

func fib(n int) int {
	if n < 2 {
		return n
	}
	var a, b int
	var g Group
	g.Go(func() error { a = fib(n - 1); return nil }, true)
	g.Go(func() error { b = fib(n - 2); return nil }, true)
	g.Wait()
	return a + b
}

func BenchmarkFib25(b *testing.B) {
	for b.Loop() {
		if fib(25) != 75025 {
			b.Fatal("wrong")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*242784), "ns/task")
}

func fibErrgroup(n int) int {
	if n < 2 {
		return n
	}
	var a, b int
	var g errgroup.Group
	g.Go(func() error { a = fibErrgroup(n - 1); return nil })
	g.Go(func() error { b = fibErrgroup(n - 2); return nil })
	g.Wait()
	return a + b
}

func BenchmarkFib25Errgroup(b *testing.B) {
	for b.Loop() {
		if fibErrgroup(25) != 75025 {
			b.Fatal("wrong")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*242784), "ns/task")
}
