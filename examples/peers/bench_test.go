package peers

// The suite. Every workload checks its result (each task ran once, fib's
// value and task count, the sort), so a runtime that loses or repeats a
// task fails the benchmark instead of looking fast.
//
//	go test -run=NONE -bench=. -count=10 -timeout=60m . > peers.txt
//	benchstat -col /impl peers.txt

import (
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/go-steal/steal/internal/workload"
)

func TestMain(m *testing.M) {
	if os.Getenv(burstChildEnv) != "" {
		os.Exit(burstChild())
	}
	// ants starts a default pool (two goroutines) when it is loaded; the
	// pools the benchmarks make are released and must leave nothing.
	goleak.VerifyTestMain(m, goleak.IgnoreCurrent())
}

const (
	batchTasks   = 100_000
	fibN         = 25
	sortLen      = 2_000_000
	sortCutoff   = 16_384
	sleepers     = 64
	sleepFor     = 10 * time.Millisecond
	skewedTasks  = 4_000
	skewedUnitNS = 500 // a cost multiplier of 1 is about this many ns
)

// Calibrated once per process, on first use.
var (
	tinyRounds  = sync.OnceValue(func() int { return rounds(12 * time.Nanosecond) })
	microRounds = sync.OnceValue(func() int { return rounds(1100 * time.Nanosecond) })
	unitRounds  = sync.OnceValue(func() int { return rounds(skewedUnitNS * time.Nanosecond) })
)

func rounds(target time.Duration) int { return workload.BatchRounds(target, batchTasks) }

// slots is the per-task bookkeeping of a flat batch: task i writes out[i]
// and increments done[i]; after b.N batches every done[i] must be b.N.
type slots struct {
	out  []uint64
	done []atomic.Uint32
}

func newSlots(n int) *slots {
	return &slots{out: make([]uint64, n), done: make([]atomic.Uint32, n)}
}

func (s *slots) check(b *testing.B) {
	b.Helper()
	var sum uint64
	for i := range s.done {
		if got := s.done[i].Load(); got != uint32(b.N) {
			b.Fatalf("task %d ran %d times in %d batches", i, got, b.N)
		}
		sum += s.out[i]
	}
	workload.Sink.Add(sum)
}

// flat runs a flat workload on every implementation, plus the serial loop
// (and, when static is set, P goroutines each running one contiguous
// chunk: the static split that work stealing competes with).
func flat(b *testing.B, n, workers int, limited, static bool, cost func(i int) int) {
	body := func(s *slots) func(i int) {
		return func(i int) {
			s.out[i] = workload.Spin(uint64(i), cost(i))
			s.done[i].Add(1)
		}
	}
	// row runs one sub-benchmark: start (on every run of the sub-benchmark)
	// returns batch, which runs the n tasks of f once per op, and stop
	// (nil: nothing), called after the timed loop.
	row := func(name string, start func() (batch func(f func(int)), stop func())) {
		b.Run(name, func(b *testing.B) {
			s := newSlots(n)
			f := body(s)
			batch, stop := start()
			if stop != nil {
				defer stop()
			}
			b.ReportAllocs()
			for b.Loop() {
				batch(f)
			}
			report(b, n)
			s.check(b)
		})
	}
	for _, im := range flatImpls(limited) {
		row(im.name, func() (func(f func(int)), func()) {
			r := im.open(workers)
			return func(f func(int)) { r.batch(n, f) }, r.close
		})
	}
	row("impl=serial", func() (func(f func(int)), func()) {
		return func(f func(int)) {
			for i := range n {
				f(i)
			}
		}, nil
	})
	// The submitter's own floor: the same closure per task, allocated on
	// the heap as every runtime's submission allocates it, and called at
	// once on the submitting goroutine. No runtime fed by one goroutine
	// that allocates a closure per task can beat this per task by more
	// than the number of cores that run the tasks (it only queues, but it
	// still allocates).
	row("impl=inline", func() (func(f func(int)), func()) {
		return func(f func(int)) {
			for i := range n {
				task := func() { f(i) }
				escapeSink = task
				task()
			}
		}, func() { escapeSink = nil }
	})
	if static {
		row("impl=static", func() (func(f func(int)), func()) {
			p := procs()
			return func(f func(int)) {
				var wg sync.WaitGroup
				for c := range p {
					wg.Go(func() {
						for i := c * n / p; i < (c+1)*n/p; i++ {
							f(i)
						}
					})
				}
				wg.Wait()
			}, nil
		})
	}
}

// escapeSink makes impl=inline's closures escape to the heap, as a
// runtime's submission call makes them.
var escapeSink func()

// BenchmarkTiny: 100k tiny tasks (~12 ns of work) submitted from outside;
// the -limit rows use SetLimit(GOMAXPROCS) or its equivalent.
func BenchmarkTiny(b *testing.B) {
	r := tinyRounds()
	flat(b, batchTasks, procs(), true, false, func(int) int { return r })
}

// BenchmarkMicro1us: 100k tasks of ~1.1 µs from outside. The ideal is
// serial's ns/task divided by GOMAXPROCS.
func BenchmarkMicro1us(b *testing.B) {
	r := microRounds()
	flat(b, batchTasks, procs(), false, true, func(int) int { return r })
}

// BenchmarkImbalanced: 4000 tasks whose costs vary 1–100× (about 0.5 to
// 50 µs, half of them under 6.5 µs), the expensive ones at the end
// (workload.Costs). impl=static splits them into GOMAXPROCS contiguous
// chunks, one goroutine each: the split a hand-written loop makes, which
// leaves one goroutine with most of the work.
func BenchmarkImbalanced(b *testing.B) {
	unit := unitRounds()
	costs := workload.Costs(skewedTasks)
	flat(b, skewedTasks, procs(), false, true, func(i int) int { return costs[i] * unit })
}

// BenchmarkSleep64: 64 tasks that each sleep 10 ms; ns/op is the wall time
// of the batch (ideal 10 ms). Pools get 64 workers here: sized for the
// workload, as a user sizes a pool for I/O.
func BenchmarkSleep64(b *testing.B) {
	for _, im := range flatImpls(false) {
		b.Run(im.name, func(b *testing.B) {
			var ran atomic.Int64
			r := im.open(sleepers)
			defer r.close()
			b.ReportAllocs()
			for b.Loop() {
				r.batch(sleepers, func(int) { time.Sleep(sleepFor); ran.Add(1) })
			}
			report(b, sleepers)
			if got, want := ran.Load(), int64(b.N*sleepers); got != want {
				b.Fatalf("%d of %d sleeping tasks ran", got, want)
			}
		})
	}
}

// BenchmarkFib25: fib(25) with a new group per call (242784 tasks); ns/op
// is one whole fib(25).
func BenchmarkFib25(b *testing.B) {
	wantVal, wantTasks := workload.FibExpected(fibN)
	for _, im := range nestedImpls {
		b.Run(im.name, func(b *testing.B) {
			b.ReportAllocs()
			var val, tasks int
			var err error
			for b.Loop() {
				val, tasks, err = workload.Fib(im.newGroup, fibN)
			}
			report(b, wantTasks)
			if err != nil || val != wantVal || tasks != wantTasks {
				b.Fatalf("fib(%d) = %d with %d tasks (%v), want %d with %d", fibN, val, tasks, err, wantVal, wantTasks)
			}
		})
	}
	b.Run("impl=serial", func(b *testing.B) {
		b.ReportAllocs()
		var val, tasks int
		for b.Loop() {
			val, tasks = workload.FibSerial(fibN)
		}
		report(b, wantTasks)
		if val != wantVal || tasks != wantTasks {
			b.Fatalf("fib(%d) = %d with %d tasks", fibN, val, tasks)
		}
	})
}

// BenchmarkQuicksort2M: a recursive quicksort of 2M random ints, a new
// group per split down to 16384 elements, sorted serially below that.
// ns/task is per element; ns/op is one whole sort.
func BenchmarkQuicksort2M(b *testing.B) {
	input := workload.RandomInts(sortLen, 1)
	want := slices.Clone(input)
	slices.Sort(want)
	a := make([]int, sortLen)
	run := func(b *testing.B, sort func()) {
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			copy(a, input)
			b.StartTimer()
			sort()
		}
		report(b, sortLen)
		if !slices.Equal(a, want) {
			b.Fatalf("not sorted")
		}
	}
	for _, im := range nestedImpls {
		b.Run(im.name, func(b *testing.B) {
			run(b, func() {
				if _, err := workload.Quicksort(im.newGroup, a, sortCutoff); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
	b.Run("impl=serial", func(b *testing.B) {
		run(b, func() { workload.QuicksortSerial(a, sortCutoff) })
	})
}
