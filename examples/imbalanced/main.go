// Command imbalanced runs a loop whose indices differ in cost four ways
// and shows how wsgroup.For balances it: serially (the reference), as a
// static split into GOMAXPROCS contiguous chunks, one goroutine each (as
// a hand-written loop splits it), as one errgroup task per index, and as
// wsgroup.For, which splits the range into one part per GOMAXPROCS and
// lets a worker that runs out take half of the longest part left.
//
// It runs two loops. In the linear one the cost of index i grows along the
// index, from 1 to 20 units, so a static split gives the last chunk the
// most work. In the clustered one every index costs 1 unit except every
// tenth index of the first tenth of the range, which costs 1,000, so a
// static split gives the first chunk nearly all the work. Each index
// computes a value (a chain of xorshift rounds, as many as its cost asks),
// and every run is checked: each index ran exactly once and its value is
// the serial run's.
//
// For each way it prints the best wall time of three runs, the speedup
// over the serial loop, and that speedup as a percentage of the ideal, the
// serial time divided by GOMAXPROCS: the share of the cores' time spent in
// the loop's bodies. For the static split it also prints how long each
// chunk's goroutine was busy and their utilization (busy time over wall
// time times GOMAXPROCS), which shows where the missing speedup went:
// cores idle after their chunk ran out. errgroup balances as For does, but
// pays for a goroutine per index.
//
// Usage:
//
//	go run ./examples/imbalanced
//	go run ./examples/imbalanced -n 20000 -unit 1us
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/go-steal/steal/internal/workload"
	"github.com/go-steal/steal/wsgroup"
)

// runs is how many times each way runs each loop; the fastest counts.
const runs = 3

// A shape is a loop: n indices, index i costing cost(i, n) units.
type shape struct {
	name, desc string
	cost       func(i, n int) int
}

var shapes = []shape{
	{"linear", "index i costs 1 + 20·i/n units", func(i, n int) int { return 1 + 20*i/n }},
	{"clustered", "1 unit each, 1,000 for every tenth index of the first tenth", func(i, n int) int {
		if i < n/10 && i%10 == 0 {
			return 1000
		}
		return 1
	}},
}

// A way runs body(i) for each i in [0, n) on p cores, and returns the busy
// time of each of its goroutines if it measures them.
type way struct {
	name string
	run  func(n, p int, body func(i int)) ([]time.Duration, error)
}

var ways = []way{
	{"serial", func(n, _ int, body func(int)) ([]time.Duration, error) {
		for i := range n {
			body(i)
		}
		return nil, nil
	}},
	{"static", func(n, p int, body func(int)) ([]time.Duration, error) {
		busy := make([]time.Duration, p)
		var wg sync.WaitGroup
		for c := range p {
			wg.Go(func() {
				start := time.Now()
				for i := n * c / p; i < n*(c+1)/p; i++ {
					body(i)
				}
				busy[c] = time.Since(start)
			})
		}
		wg.Wait()
		return busy, nil
	}},
	{"errgroup", func(n, _ int, body func(int)) ([]time.Duration, error) {
		var g errgroup.Group
		for i := range n {
			g.Go(func() error { body(i); return nil })
		}
		return nil, g.Wait()
	}},
	{"For", func(n, _ int, body func(int)) ([]time.Duration, error) {
		return nil, wsgroup.For(context.Background(), n, func(_ context.Context, i int) error {
			body(i)
			return nil
		})
	}},
}

// A loop is one shape's work and results: out[i] is index i's value, ran[i]
// how many times it ran in the current run.
type loop struct {
	rounds []int // workload.Spin rounds of each index
	want   []uint64
	out    []uint64
	ran    []atomic.Int32
}

func (l *loop) body(i int) {
	l.out[i] = workload.Spin(uint64(i), l.rounds[i])
	l.ran[i].Add(1)
}

// measure runs w on l runs times, checks each run, and returns the fastest
// run's wall time and busy times. The serial way's first run fills l.want.
func (l *loop) measure(w way, p int) (time.Duration, []time.Duration, error) {
	best, bestBusy := time.Duration(1<<63-1), []time.Duration(nil)
	for range runs {
		clear(l.out)
		for i := range l.ran {
			l.ran[i].Store(0)
		}
		start := time.Now()
		busy, err := w.run(len(l.out), p, l.body)
		wall := time.Since(start)
		if err != nil {
			return 0, nil, err
		}
		if l.want == nil {
			l.want = append([]uint64(nil), l.out...)
		}
		for i := range l.out {
			if got := l.ran[i].Load(); got != 1 || l.out[i] != l.want[i] {
				return 0, nil, fmt.Errorf("%s: index %d ran %d times, value %#x, want once, %#x", w.name, i, got, l.out[i], l.want[i])
			}
		}
		if wall < best {
			best, bestBusy = wall, busy
		}
	}
	return best, bestBusy, nil
}

func main() {
	n := flag.Int("n", 50_000, "number of indices of each loop")
	unit := flag.Duration("unit", 200*time.Nanosecond, "time of one unit of work")
	flag.Parse()
	if *n < 1 || *unit <= 0 {
		fmt.Fprintln(os.Stderr, "imbalanced: -n and -unit must be positive")
		os.Exit(2)
	}
	p := runtime.GOMAXPROCS(0)
	perUnit := workload.BatchRounds(*unit, 10_000) // Spin rounds of one unit
	fmt.Printf("%d indices per loop, a unit of work is %v (%d xorshift rounds), GOMAXPROCS %d, best of %d runs\n",
		*n, *unit, perUnit, p, runs)
	for _, s := range shapes {
		if err := run(s, *n, p, perUnit); err != nil {
			fmt.Fprintln(os.Stderr, "imbalanced: FAIL:", err)
			os.Exit(1)
		}
	}
}

// run prints the table of one shape.
func run(s shape, n, p, perUnit int) error {
	l := &loop{rounds: make([]int, n), out: make([]uint64, n), ran: make([]atomic.Int32, n)}
	units := 0
	for i := range n {
		c := s.cost(i, n)
		units += c
		l.rounds[i] = c * perUnit
	}
	fmt.Printf("\n%s: %s, %d units in all\n", s.name, s.desc, units)
	fmt.Printf("  %-9s %10s %8s %9s\n", "way", "wall", "speedup", "of ideal")
	var serial time.Duration
	for _, w := range ways {
		wall, busy, err := l.measure(w, p)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		first := serial == 0
		if first {
			serial = wall
		}
		speedup := float64(serial) / float64(wall)
		fmt.Printf("  %-9s %10v %7.2fx %8.0f%%%s\n", w.name, round(wall), speedup, 100*speedup/float64(p), busyNote(busy, wall, p))
		if first {
			fmt.Printf("  %-9s %10v %7.2fx %8.0f%%\n", "ideal", round(serial/time.Duration(p)), float64(p), 100.0)
		}
	}
	return nil
}

// busyNote describes the busy times of a way's goroutines, if it has them.
func busyNote(busy []time.Duration, wall time.Duration, p int) string {
	if busy == nil {
		return ""
	}
	var b strings.Builder
	var total time.Duration
	b.WriteString("   goroutines busy")
	for _, d := range busy {
		fmt.Fprintf(&b, " %v", round(d))
		total += d
	}
	fmt.Fprintf(&b, ", utilization %.0f%%", 100*float64(total)/float64(wall)/float64(p))
	return b.String()
}

// round rounds d to three significant digits.
func round(d time.Duration) time.Duration {
	r := time.Duration(1)
	for d/r >= 1000 {
		r *= 10
	}
	return d.Round(r)
}
