// Command quicksort sorts random ints with a recursive parallel quicksort,
// a new wsgroup.Group per split (recursive fork-join with nested groups),
// checks that the result is sorted, and prints the speedup over the same
// quicksort run serially.
//
// Usage:
//
//	go run ./examples/quicksort            # 2M ints, 3 runs each
//	go run ./examples/quicksort -n 500000 -runs 5
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/go-steal/steal/internal/workload"
	"github.com/go-steal/steal/wsgroup"
)

// cutoff is the size below which a part is sorted serially: splitting
// further costs more than it wins.
const cutoff = 16 << 10

// parallel sorts a: partition (around the median of three, with the
// benchmarks' workload.Partition), then sort the two halves as two tasks of
// a new group, and wait for both. Wait, called inside a task, runs the
// group's own queued tasks instead of blocking the worker.
func parallel(a []int) {
	if len(a) <= cutoff {
		slices.Sort(a)
		return
	}
	p := workload.Partition(a)
	var g wsgroup.Group
	g.Go(func() error { parallel(a[:p]); return nil })
	g.Go(func() error { parallel(a[p+1:]); return nil })
	g.Wait() // the tasks return no error
}

// serial is the same algorithm on one goroutine.
func serial(a []int) { workload.QuicksortSerial(a, cutoff) }

var (
	n    = flag.Int("n", 2_000_000, "number of ints to sort")
	runs = flag.Int("runs", 3, "timed runs of each version (the median is reported)")
)

func main() {
	if flag.Parse(); *n < 1 || *runs < 1 {
		fmt.Fprintln(os.Stderr, "quicksort: -n and -runs must be positive")
		os.Exit(2)
	}

	input := workload.RandomInts(*n, 1)
	want := slices.Clone(input)
	slices.Sort(want)

	a := make([]int, *n)
	measure := func(name string, sort func([]int)) time.Duration {
		var ds []time.Duration
		for i := range *runs {
			copy(a, input)
			start := time.Now()
			sort(a)
			d := time.Since(start)
			if !slices.Equal(a, want) {
				fmt.Fprintf(os.Stderr, "quicksort: FAIL: %s run %d left the ints unsorted\n", name, i+1)
				os.Exit(1)
			}
			fmt.Fprintf(os.Stderr, "  %s run %d/%d: %v\n", name, i+1, *runs, d.Round(time.Microsecond))
			ds = append(ds, d)
		}
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	s := measure("serial", serial)
	p := measure("wsgroup", parallel)
	fmt.Printf("sorted %d ints (checked against slices.Sort), median of %d runs\n", *n, *runs)
	fmt.Printf("  serial   %10v\n", s.Round(time.Microsecond))
	fmt.Printf("  wsgroup  %10v   speedup %.2fx on GOMAXPROCS=%d\n", p.Round(time.Microsecond), float64(s)/float64(p), runtime.GOMAXPROCS(0))
}
