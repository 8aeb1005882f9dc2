package workload

import (
	"math"
	"sync/atomic"
	"time"
)

// Sink keeps results alive so that the compiler cannot drop the work.
var Sink atomic.Uint64

// Spin is the unit of CPU work: n rounds of xorshift, a dependent chain the
// compiler cannot fold. It is not inlined, so it costs the same everywhere.
//
//go:noinline
func Spin(seed uint64, n int) uint64 {
	x := seed | 1
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// BatchRounds is Rounds for the task body every flat batch in this
// repository uses: task i stores Spin(i, rounds) in a result slot and
// increments a per-task counter.
func BatchRounds(target time.Duration, n int) int {
	out := make([]uint64, n)
	done := make([]atomic.Uint32, n)
	r := Rounds(target, n, func(i, rounds int) {
		out[i] = Spin(uint64(i), rounds)
		done[i].Add(1)
	})
	for _, v := range out {
		Sink.Add(v)
	}
	return r
}

// Rounds returns the number of Spin rounds for which body(i, rounds), run
// for i = 0, 1, ..., n-1 one after another, takes about target per call.
// body is the whole task (Spin plus the caller's bookkeeping): short
// independent tasks overlap in the CPU, so a round costs less there than in
// one long chain. Rounds measures at two round counts, interpolates, and
// repeats (secant steps) until within 3% of target. Each probe takes the
// fastest of 5 passes, the one least disturbed by other load.
func Rounds(target time.Duration, n int, body func(i, rounds int)) int {
	n = max(1, min(n, int(20*time.Millisecond/target)))
	perTask := func(rounds int) float64 {
		best := time.Duration(math.MaxInt64)
		for range 5 {
			start := time.Now()
			for i := range n {
				body(i, rounds)
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
	return r2
}
