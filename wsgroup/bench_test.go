package wsgroup_test

// Benchmarks for the goals BENCHMARKS.md states, each run side by side with
// errgroup in the same process as sub-benchmarks, so that benchstat can
// compare them:
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
	"context"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/go-steal/steal/internal/testkit"
	"github.com/go-steal/steal/internal/workload"
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

// Calibrated once per process, on first use, so plain `go test` pays nothing.
var (
	benchTinyRounds  = sync.OnceValue(func() int { return workload.BatchRounds(12*time.Nanosecond, benchBatchTasks) })
	benchMicroRounds = sync.OnceValue(func() int { return workload.BatchRounds(1100*time.Nanosecond, benchBatchTasks) })
)

// benchReport adds the ns/task metric and the machine's cross-CPU round
// trip (workload.ReportCrossCPU); call it after the timed loop.
func benchReport(b *testing.B, tasksPerOp int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tasksPerOp), "ns/task")
	workload.ReportCrossCPU(b)
}

// benchPeak starts sampling the goroutines (workload.SampleGoroutines) and
// returns the function that stops it and adds the peak-goroutines metric:
// the most goroutines seen at once above those before, that is, errgroup's
// goroutines in flight, or wsgroup's workers (with its monitor and spares).
func benchPeak(b *testing.B) (stop func()) {
	stopSampler := workload.SampleGoroutines()
	return func() { b.ReportMetric(float64(stopSampler()), "peak-goroutines") }
}

// benchBatch runs n tasks of workload.Spin(i, rounds) per iteration, submitted
// from the benchmark goroutine (outside any pool). limit > 0 calls SetLimit.
// Each task increments its own slot, so after the loop every slot must equal
// the number of iterations: a lost or repeated task fails the benchmark.
func benchBatch(b *testing.B, newGroup func() benchGroup, n, rounds, limit int) {
	out := make([]uint64, n)
	done := make([]atomic.Uint32, n)
	b.ReportAllocs()
	defer benchPeak(b)()
	for b.Loop() {
		g := newGroup()
		if limit > 0 {
			g.SetLimit(limit)
		}
		for i := range n {
			g.Go(func() error {
				out[i] = workload.Spin(uint64(i), rounds)
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
			out[i] = workload.Spin(uint64(i), rounds)
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
	workload.Sink.Add(s)
}

// benchInline is the floor of the flat benchmarks: a group whose Go runs
// the task at once on the submitter. The closure escapes through the
// benchGroup interface as it does for the other rows, so this row pays for
// the loop, the closure's allocation and the call: what the submitting
// code costs without any scheduler.
func benchInline() benchGroup { return new(workload.InlineGroup) }

// BenchmarkTiny: 100k tiny tasks (~12 ns each) from outside, no limit.
func BenchmarkTiny(b *testing.B) { benchFlat(b, benchTinyRounds()) }

// BenchmarkTinyLabels: BenchmarkTiny submitted from a goroutine that wears
// profiler labels (pprof.Do), which every task then wears too: against
// BenchmarkTiny, the cost of carrying labels over; inline is the floor.
func BenchmarkTinyLabels(b *testing.B) {
	rounds := benchTinyRounds()
	labels := pprof.Labels("endpoint", "/bench", "span", "0123456789abcdef")
	for _, im := range benchImpls {
		b.Run(im.name, func(b *testing.B) {
			pprof.Do(context.Background(), labels, func(context.Context) {
				benchBatch(b, im.newGroup, benchBatchTasks, rounds, 0)
			})
		})
	}
	b.Run("impl=inline", func(b *testing.B) {
		pprof.Do(context.Background(), labels, func(context.Context) {
			benchBatch(b, benchInline, benchBatchTasks, rounds, 0)
		})
	})
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
func BenchmarkMicro1us(b *testing.B) { benchFlat(b, benchMicroRounds()) }

// benchFlat runs a batch of benchBatchTasks tasks of the given rounds from
// outside, with no limit, on every implementation and on the floors
// (inline and serial).
func benchFlat(b *testing.B, rounds int) {
	for _, im := range benchImpls {
		b.Run(im.name, func(b *testing.B) { benchBatch(b, im.newGroup, benchBatchTasks, rounds, 0) })
	}
	b.Run("impl=inline", func(b *testing.B) { benchBatch(b, benchInline, benchBatchTasks, rounds, 0) })
	b.Run("impl=serial", func(b *testing.B) { benchSerial(b, benchBatchTasks, rounds) })
}

// BenchmarkFib25: fib(25) with a nested group per call (242784 tasks); ns/op
// is the total time of one fib(25). peak-goroutines is counted from an idle
// pool: for wsgroup, its workers, its monitor, spares, and the Waits that
// gave their place up (the goal: at most GOMAXPROCS + 2, a worker each and
// the monitor, and one more); -benchtime=1x makes it one fib(25)'s.
func BenchmarkFib25(b *testing.B) {
	_, wantTasks := workload.FibExpected(benchFibN)
	run := func(b *testing.B, fib func() (int, int)) {
		b.ReportAllocs()
		var val, tasks int
		// Counted from an idle pool: the workers of the rows before would
		// otherwise be in the count the peak is measured above.
		testkit.WaitRetired(b)
		stopPeak := benchPeak(b)
		for b.Loop() {
			val, tasks = fib()
		}
		stopPeak()
		benchReport(b, wantTasks)
		if val != benchFibWant || tasks != wantTasks {
			b.Fatalf("fib(%d) = %d with %d tasks, want %d with %d tasks", benchFibN, val, tasks, benchFibWant, wantTasks)
		}
	}
	for _, im := range benchImpls {
		b.Run(im.name, func(b *testing.B) {
			run(b, func() (int, int) { return benchFib(func() workload.Group { return im.newGroup() }) })
		})
	}
	// The same fib called inside a task, on a worker: the path every task
	// takes once the workers have the root's two tasks, as they do at
	// GOMAXPROCS 2 and above. With one processor the benchmark's own Wait
	// runs the root's tasks outside the pool instead, so this row is what
	// an instruction count of the worker's path measures.
	b.Run("impl=wsgroup-in-task", func(b *testing.B) {
		run(b, func() (val, tasks int) {
			// Not outer.Wait at once, which would take the task back and
			// run it here, outside the pool.
			var outer wsgroup.Group
			done := make(chan struct{})
			outer.Go(func() error {
				defer close(done)
				val, tasks = benchFib(func() workload.Group { return new(wsgroup.Group) })
				return nil
			})
			<-done
			if err := outer.Wait(); err != nil {
				b.Fatal(err)
			}
			return val, tasks
		})
	})
	// The floor for this benchmark's shape: the same closures and a group
	// per call, every task run inline by Go. It allocates what the other
	// rows allocate (the closures, the captured results, a group), so it
	// shows how much of their time is the caller's own allocation and GC,
	// which no scheduler can remove.
	b.Run("impl=inline", func(b *testing.B) {
		run(b, func() (int, int) { return benchFib(func() workload.Group { return new(workload.InlineGroup) }) })
	})
	// The floor per core: the inline program run by GOMAXPROCS goroutines
	// at once, each its own fib(25), ns/op the wall time per fib. What a
	// core can do with this program when every core runs it: the
	// allocator, the collector and the memory are shared as they are
	// under a pool, and no scheduler divides the work better than whole
	// copies of it. Beside inline ÷ P, which assumes that the cores scale
	// the program perfectly, it shows how far they do (allocation-bound
	// code scales less than CPU-bound code).
	b.Run("impl=inline-parallel", func(b *testing.B) {
		b.ReportAllocs()
		testkit.WaitRetired(b)
		var wrong atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				val, tasks := benchFib(func() workload.Group { return new(workload.InlineGroup) })
				if val != benchFibWant || tasks != wantTasks {
					wrong.Add(1)
				}
			}
		})
		benchReport(b, wantTasks)
		if n := wrong.Load(); n != 0 {
			b.Fatalf("%d of the fib(%d) runs returned a wrong value or task count", n, benchFibN)
		}
	})
	b.Run("impl=serial", func(b *testing.B) {
		run(b, func() (int, int) { return workload.FibSerial(benchFibN) })
	})
}

// benchFib runs workload.Fib(benchFibN); its tasks return no error.
func benchFib(newGroup func() workload.Group) (val, tasks int) {
	val, tasks, err := workload.Fib(newGroup, benchFibN)
	if err != nil {
		panic(err)
	}
	return val, tasks
}

// BenchmarkSleep64: 64 tasks that each sleep 10 ms, no limit; ns/op is the
// wall time of the batch (ideal: 10 ms). peak-goroutines is the most
// goroutines seen at once above the count before the run, sampled every
// 100 µs by workload.SampleGoroutines (the sampler not counted):
// errgroup's 64, or the workers wsgroup grew to (and its watchdog).
func BenchmarkSleep64(b *testing.B) {
	for _, im := range benchImpls {
		b.Run(im.name, func(b *testing.B) {
			b.ReportAllocs()
			var ran atomic.Int64
			stopSampler := workload.SampleGoroutines()
			defer func() { b.ReportMetric(float64(stopSampler()), "peak-goroutines") }()
			for b.Loop() {
				if err := workload.Sleepers(im.newGroup(), benchSleepers, benchSleepFor, &ran); err != nil {
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
