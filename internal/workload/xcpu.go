package workload

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// CrossCPU measures what it costs this machine, right now, to move a cache
// line from one CPU to another and back: the fastest of xcpuPasses passes
// (the one least disturbed by other goroutines, the collector's among
// them) of the time two goroutines take to hand a counter back and forth
// once, each spinning until it is its turn. It reports false, and measures
// nothing, when GOMAXPROCS is 1: two spinners on one P would measure the
// runtime's preemption instead.
//
// The benchmarks report it beside each row (ReportCrossCPU), because on a
// shared or virtual machine it is not a constant. On the 2-CPU virtual
// machines this project is measured on, it moves between about 50 ns and
// 350-700 ns for seconds at a time (presumably as the host places the
// virtual CPUs), and every design that hands each task from the CPU that
// submits it to another pays it several times per task (BENCHMARKS.md,
// "The slow mode of tiny tasks is the machine's", has the figures).
func CrossCPU() (roundTrip time.Duration, ok bool) {
	if runtime.GOMAXPROCS(0) < 2 {
		return 0, false
	}
	best := xcpuPass(xcpuExchanges)
	for range xcpuPasses - 1 {
		best = min(best, xcpuPass(xcpuExchanges))
	}
	return best, true
}

// ReportCrossCPU adds CrossCPU to b as the metric xcpu-ns, where
// GOMAXPROCS > 1. Call it after the timed loop: it spins two goroutines
// for a few milliseconds at most.
func ReportCrossCPU(b *testing.B) {
	if d, ok := CrossCPU(); ok {
		b.ReportMetric(float64(d.Nanoseconds()), "xcpu-ns")
	}
}

const (
	xcpuPasses    = 5
	xcpuExchanges = 2000
	// xcpuSpins is how long a spinner waits for its turn before it yields
	// its P: another goroutine (a worker still finishing, the runtime's
	// background work) may hold the other P, and then the partner needs
	// this one to run at all. A pass slowed that way is not the fastest.
	xcpuSpins = 1 << 10
)

// xcpuPass times n exchanges: the main goroutine waits for even values of
// the counter and makes them odd, the partner the reverse; each exchange
// is two moves of the counter's cache line, one each way.
func xcpuPass(n int64) time.Duration {
	var c atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := int64(1); i < 2*n; i += 2 {
			xcpuWait(&c, i)
			c.Store(i + 1)
		}
	}()
	start := time.Now()
	for i := int64(0); i < 2*n; i += 2 {
		xcpuWait(&c, i)
		c.Store(i + 1)
	}
	<-done
	return time.Since(start) / time.Duration(n)
}

// xcpuWait spins until c holds v, yielding now and then (xcpuSpins).
func xcpuWait(c *atomic.Int64, v int64) {
	for spins := 0; c.Load() != v; spins++ {
		if spins == xcpuSpins {
			// Gosched, not the runtime's goyield: a partner that was
			// preempted waits on the global run queue, and a Gosched
			// queues us behind it there; goyield would keep us ahead of
			// it on the P's own queue, with one P until the scheduler's
			// periodic look at the global queue (every 61st schedule).
			// The thread it may wake is the probe's own cost, after
			// xcpuSpins polls, outside the timed work of any benchmark.
			runtime.Gosched()
			spins = 0
		}
	}
}
