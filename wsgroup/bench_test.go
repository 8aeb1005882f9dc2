package wsgroup_test

// Benchmarks for CONTRACT §8, each run side by side with errgroup in the same
// process as sub-benchmarks, so that benchstat can compare them:
//
//	go test -run=NONE -bench=. -count=10 ./wsgroup > bench.txt
//	benchstat -col /impl bench.txt
//
// Every iteration submits the whole batch (100k tasks from outside the pool,
// or one fib(25)) and waits for it. The ns/task metric is the elapsed time
// divided by the number of tasks; allocs are reported too. There are no
// timing assertions here: targets are judged from the numbers, never in tests.
//
// Every identifier in this file starts with "bench" so that it cannot collide
// with the helpers of the other test files of the package.

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/go-steal/steal/wsgroup"
)

// benchGroup is the errgroup API the benchmarks use.
type benchGroup interface {
	Go(f func() error)
	SetLimit(n int)
	Wait() error
}

var (
	_ benchGroup = (*errgroup.Group)(nil)
	_ benchGroup = (*wsgroup.Group)(nil)
)

// benchImpls are the implementations under comparison. The sub-benchmark
// names have the key=value form (impl=errgroup, impl=wsgroup, impl=serial)
// so that `benchstat -col /impl` puts them side by side.
var benchImpls = []struct {
	name     string
	newGroup func() benchGroup
}{
	{"impl=errgroup", func() benchGroup { return new(errgroup.Group) }},
	{"impl=wsgroup", func() benchGroup { return new(wsgroup.Group) }},
}

const (
	benchBatchTasks = 100_000
	benchFibN       = 25
	benchFibWant    = 75025
	benchSleepers   = 64
	benchSleepFor   = 10 * time.Millisecond
)

// benchSink keeps results alive so the compiler cannot drop the work.
var benchSink atomic.Uint64

// benchSpin is the unit of CPU work: n rounds of xorshift, a dependent chain
// the compiler cannot fold.
//
//go:noinline
func benchSpin(seed uint64, n int) uint64 {
	x := seed | 1
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// benchRounds returns the number of benchSpin rounds for which one whole task
// body (as in benchBatch and benchSerial) takes about target when the tasks
// run serially. Short independent tasks overlap in the CPU, so a round costs
// less there than in one long chain: it measures the body at two round
// counts, interpolates, and repeats (secant steps) until within 3% of target.
// Each probe takes the fastest of 5 passes, the least disturbed by other load.
func benchRounds(target time.Duration) int {
	n := max(1, min(benchBatchTasks, int(20*time.Millisecond/target)))
	out := make([]uint64, n)
	done := make([]atomic.Uint32, n)
	perTask := func(rounds int) float64 {
		best := time.Duration(1<<63 - 1)
		for range 5 {
			start := time.Now()
			for i := range n {
				out[i] = benchSpin(uint64(i), rounds)
				done[i].Add(1)
			}
			best = min(best, time.Since(start))
		}
		return float64(best.Nanoseconds()) / float64(n)
	}
	want := float64(target.Nanoseconds())
	// A first guess from one long chain of 1000 rounds.
	r1 := max(1, int(want/(perTask(1000)/1000)))
	r2 := 2 * r1
	t1, t2 := perTask(r1), perTask(r2)
	for range 4 {
		slope := (t2 - t1) / float64(r2-r1)
		if slope <= 0 {
			break
		}
		r := max(1, int(math.Round(float64(r2)+(want-t2)/slope)))
		if r == r2 {
			break
		}
		r1, t1 = r2, t2
		r2, t2 = r, perTask(r)
		if math.Abs(t2-want) <= 0.03*want {
			break
		}
	}
	for _, v := range out {
		benchSink.Add(v)
	}
	return r2
}

// Calibrated once per process, on first use, so plain `go test` pays nothing.
var (
	benchTinyRounds  = sync.OnceValue(func() int { return benchRounds(12 * time.Nanosecond) })
	benchMicroRounds = sync.OnceValue(func() int { return benchRounds(1100 * time.Nanosecond) })
)

// benchReport adds the ns/task metric; call it after the timed loop.
func benchReport(b *testing.B, tasksPerOp int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tasksPerOp), "ns/task")
}

// benchBatch runs n tasks of benchSpin(i, rounds) per iteration, submitted
// from the benchmark goroutine (outside any pool). limit > 0 calls SetLimit.
// Each task increments its own slot, so after the loop every slot must equal
// the number of iterations: a lost or repeated task fails the benchmark.
func benchBatch(b *testing.B, newGroup func() benchGroup, n, rounds, limit int) {
	out := make([]uint64, n)
	done := make([]atomic.Uint32, n)
	b.ReportAllocs()
	for b.Loop() {
		g := newGroup()
		if limit > 0 {
			g.SetLimit(limit)
		}
		for i := range n {
			g.Go(func() error {
				out[i] = benchSpin(uint64(i), rounds)
				done[i].Add(1)
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			b.Fatalf("Wait: %v", err)
		}
	}
	benchReport(b, n)
	benchCheckSlots(b, done, out)
}

// benchSerial runs the same task bodies in a plain loop: the reference.
func benchSerial(b *testing.B, n, rounds int) {
	out := make([]uint64, n)
	done := make([]atomic.Uint32, n)
	b.ReportAllocs()
	for b.Loop() {
		for i := range n {
			out[i] = benchSpin(uint64(i), rounds)
			done[i].Add(1)
		}
	}
	benchReport(b, n)
	benchCheckSlots(b, done, out)
}

func benchCheckSlots(b *testing.B, done []atomic.Uint32, out []uint64) {
	b.Helper()
	var s uint64
	for i := range done {
		if got := done[i].Load(); got != uint32(b.N) {
			b.Fatalf("task %d ran %d times in %d iterations", i, got, b.N)
		}
		s += out[i]
	}
	benchSink.Add(s)
}

// BenchmarkTiny: 100k tiny tasks (~12 ns each) from outside, no limit.
func BenchmarkTiny(b *testing.B) {
	rounds := benchTinyRounds()
	for _, im := range benchImpls {
		b.Run(im.name, func(b *testing.B) { benchBatch(b, im.newGroup, benchBatchTasks, rounds, 0) })
	}
	b.Run("impl=serial", func(b *testing.B) { benchSerial(b, benchBatchTasks, rounds) })
}

// BenchmarkTinyLimit: 100k tiny tasks from outside under SetLimit(GOMAXPROCS).
func BenchmarkTinyLimit(b *testing.B) {
	rounds := benchTinyRounds()
	for _, im := range benchImpls {
		b.Run(im.name, func(b *testing.B) {
			benchBatch(b, im.newGroup, benchBatchTasks, rounds, runtime.GOMAXPROCS(0))
		})
	}
}

// BenchmarkMicro1us: 100k tasks of ~1.1 µs of CPU work from outside, no limit.
// Compare wsgroup's ns/task with serial's divided by GOMAXPROCS (the ideal).
func BenchmarkMicro1us(b *testing.B) {
	rounds := benchMicroRounds()
	for _, im := range benchImpls {
		b.Run(im.name, func(b *testing.B) { benchBatch(b, im.newGroup, benchBatchTasks, rounds, 0) })
	}
	b.Run("impl=serial", func(b *testing.B) { benchSerial(b, benchBatchTasks, rounds) })
}

// benchFib computes fib(n) with a new group per call for n >= 2; it returns
// the value and the number of tasks (Go calls) in its subtree.
func benchFib(newGroup func() benchGroup, n int) (val, tasks int) {
	if n < 2 {
		return n, 0
	}
	g := newGroup()
	var a, b, ta, tb int
	g.Go(func() error { a, ta = benchFib(newGroup, n-1); return nil })
	g.Go(func() error { b, tb = benchFib(newGroup, n-2); return nil })
	if err := g.Wait(); err != nil {
		panic(err) // the tasks return nil
	}
	return a + b, ta + tb + 2
}

func benchFibSerial(n int) (val, tasks int) {
	if n < 2 {
		return n, 0
	}
	a, ta := benchFibSerial(n - 1)
	b, tb := benchFibSerial(n - 2)
	return a + b, ta + tb + 2
}

// BenchmarkFib25: fib(25) with a nested group per call (242784 tasks); ns/op
// is the total time of one fib(25).
func BenchmarkFib25(b *testing.B) {
	_, wantTasks := benchFibSerial(benchFibN)
	run := func(b *testing.B, fib func() (int, int)) {
		b.ReportAllocs()
		var val, tasks int
		for b.Loop() {
			val, tasks = fib()
		}
		benchReport(b, wantTasks)
		if val != benchFibWant || tasks != wantTasks {
			b.Fatalf("fib(%d) = %d with %d tasks, want %d with %d tasks", benchFibN, val, tasks, benchFibWant, wantTasks)
		}
	}
	for _, im := range benchImpls {
		b.Run(im.name, func(b *testing.B) {
			run(b, func() (int, int) { return benchFib(im.newGroup, benchFibN) })
		})
	}
	// The floor for this benchmark's shape: the same closures and a group
	// per call, every task run inline by Go. It allocates what the other
	// rows allocate (the closures, the captured results, a group), so it
	// shows how much of their time is the caller's own allocation and GC,
	// which no scheduler can remove.
	b.Run("impl=inline", func(b *testing.B) {
		run(b, func() (int, int) { return benchFib(func() benchGroup { return new(inlineGroup) }, benchFibN) })
	})
	b.Run("impl=serial", func(b *testing.B) {
		run(b, func() (int, int) { return benchFibSerial(benchFibN) })
	})
}

// inlineGroup runs each task at once, on the caller's goroutine: the
// scheduling-free floor of BenchmarkFib25. Its size matches wsgroup.Group's
// (32 bytes), so it allocates the same.
type inlineGroup struct {
	err  error
	_, _ uintptr
}

func (g *inlineGroup) Go(f func() error) {
	if err := f(); err != nil && g.err == nil {
		g.err = err
	}
}
func (g *inlineGroup) SetLimit(int) {}
func (g *inlineGroup) Wait() error  { return g.err }

// BenchmarkSleep64: 64 tasks that each sleep 10 ms, no limit; ns/op is the
// wall time of the batch (ideal: 10 ms). peak-goroutines is the most
// goroutines seen at once above the count before the run, sampled every
// 100 µs by a goroutine of its own (not counted): errgroup's 64, or the
// workers wsgroup grew to (and its watchdog).
func BenchmarkSleep64(b *testing.B) {
	for _, im := range benchImpls {
		b.Run(im.name, func(b *testing.B) {
			b.ReportAllocs()
			var ran atomic.Int64
			base := runtime.NumGoroutine()
			var peak atomic.Int64
			stop, stopped := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(stopped)
				tick := time.NewTicker(100 * time.Microsecond)
				defer tick.Stop()
				for {
					select {
					case <-stop:
						return
					case <-tick.C:
						if n := int64(runtime.NumGoroutine() - base - 1); n > peak.Load() {
							peak.Store(n)
						}
					}
				}
			}()
			defer func() {
				close(stop)
				<-stopped
				b.ReportMetric(float64(peak.Load()), "peak-goroutines")
			}()
			for b.Loop() {
				g := im.newGroup()
				for range benchSleepers {
					g.Go(func() error {
						time.Sleep(benchSleepFor)
						ran.Add(1)
						return nil
					})
				}
				if err := g.Wait(); err != nil {
					b.Fatalf("Wait: %v", err)
				}
			}
			benchReport(b, benchSleepers)
			if got, want := ran.Load(), int64(b.N*benchSleepers); got != want {
				b.Fatalf("%d of %d sleeping tasks ran", got, want)
			}
		})
	}
}
