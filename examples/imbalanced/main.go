// Command imbalanced runs skewed work two ways and shows how work stealing
// balances it: tasks whose cost grows from 1 to 100 units along the index
// (most cheap, the last ones expensive), run with static chunking (one
// contiguous chunk per goroutine, as a hand-written loop splits it) and as
// one wsgroup task each. For both it prints the wall time, each worker
// goroutine's busy time and the utilization (busy time over wall time times
// workers).
//
// Usage:
//
//	go run ./examples/imbalanced
//	go run ./examples/imbalanced -tasks 8000 -unit 2us
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petermattis/goid"

	"github.com/go-steal/steal/wsgroup"
)

// spin busy-waits for d: CPU work whose cost does not depend on caches.
func spin(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

// cost is task i's cost in units: 1 + 99·(i/n)³.
func cost(i, n int) int {
	x := float64(i) / float64(n)
	return 1 + int(99*x*x*x)
}

// busy records how long each goroutine spent running tasks.
type busy struct {
	mu sync.Mutex
	by map[int64]time.Duration
}

func (b *busy) add(d time.Duration) {
	id := goid.Get()
	b.mu.Lock()
	b.by[id] += d
	b.mu.Unlock()
}

func (b *busy) report(name string, wall time.Duration, workers int) {
	var ds []time.Duration
	var total time.Duration
	for _, d := range b.by {
		ds = append(ds, d)
		total += d
	}
	slices.SortFunc(ds, func(a, b time.Duration) int { return int(b - a) })
	fmt.Printf("%-8s wall %8v  utilization %5.1f%%  busy per worker goroutine:", name, wall.Round(time.Millisecond), 100*float64(total)/float64(wall)/float64(workers))
	for _, d := range ds {
		fmt.Printf(" %v", d.Round(time.Millisecond))
	}
	fmt.Println()
}

func main() {
	tasks := flag.Int("tasks", 4000, "number of tasks")
	unit := flag.Duration("unit", 5*time.Microsecond, "cost of one unit of work (a task costs 1 to 100 units)")
	flag.Parse()
	if *tasks < 1 || *unit <= 0 {
		fmt.Fprintln(os.Stderr, "imbalanced: -tasks and -unit must be positive")
		os.Exit(2)
	}
	n, p := *tasks, runtime.GOMAXPROCS(0)
	var units int
	for i := range n {
		units += cost(i, n)
	}
	fmt.Printf("%d tasks, %d units of %v (%v of work), %d workers (GOMAXPROCS)\n\n",
		n, units, *unit, (time.Duration(units) * *unit).Round(time.Millisecond), p)

	var ran atomic.Int64
	run := func(b *busy, i int) {
		start := time.Now()
		spin(time.Duration(cost(i, n)) * *unit)
		b.add(time.Since(start))
		ran.Add(1)
	}

	// Static chunking: goroutine c gets tasks [c*n/p, (c+1)*n/p).
	fmt.Fprintln(os.Stderr, "running static chunks...")
	st := &busy{by: map[int64]time.Duration{}}
	start := time.Now()
	var wg sync.WaitGroup
	for c := range p {
		wg.Go(func() {
			for i := c * n / p; i < (c+1)*n/p; i++ {
				run(st, i)
			}
		})
	}
	wg.Wait()
	staticWall := time.Since(start)

	// One task per item; idle workers steal.
	fmt.Fprintln(os.Stderr, "running wsgroup...")
	ws := &busy{by: map[int64]time.Duration{}}
	start = time.Now()
	var g wsgroup.Group
	for i := range n {
		g.Go(func() error { run(ws, i); return nil })
	}
	g.Wait() // the tasks return no error
	wsWall := time.Since(start)

	if got := ran.Load(); got != int64(2*n) {
		fmt.Fprintf(os.Stderr, "imbalanced: FAIL: %d of %d tasks ran\n", got, 2*n)
		os.Exit(1)
	}
	st.report("static", staticWall, p)
	ws.report("wsgroup", wsWall, p)
	fmt.Printf("\nwsgroup is %.2fx faster than static chunks\n", float64(staticWall)/float64(wsWall))
}
