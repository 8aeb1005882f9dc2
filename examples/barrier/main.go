// Command barrier times tasks that wait for each other beside busy groups,
// with golang.org/x/sync/errgroup or with wsgroup, in a fresh process: the
// first round counts, as a service's first request would.
//
// Beside the round, -clients goroutines loop without pause over a new group
// of 8 CPU-bound tasks of about 20 µs and its Wait, keeping the CPUs busy.
// A round is one group of -tasks tasks from outside that each wait until
// all have started (a barrier: all must run at once), then its Wait. For
// each GOMAXPROCS of -procs, in turn, it runs -rounds rounds and prints the
// median, the longest and the first round's time.
//
// Usage:
//
//	go run ./examples/barrier -impl errgroup
//	go run ./examples/barrier -impl wsgroup
//	go run ./examples/barrier -impl wsgroup -tasks 10000 -clients 4 -rounds 5 -procs 1,2,4
//
// Each task checks in once: a round that ran a task twice, or not at all,
// cannot end, and one that returns an error exits with status 1.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/go-steal/steal/internal/workload"
	"github.com/go-steal/steal/wsgroup"
)

type group interface {
	Go(func() error)
	Wait() error
}

func main() {
	impl := flag.String("impl", "wsgroup", "wsgroup or errgroup")
	procsList := flag.String("procs", "1,2,4,8", "the GOMAXPROCS settings, in turn")
	rounds := flag.Int("rounds", 30, "rounds per GOMAXPROCS")
	clients := flag.Int("clients", 2, "busy clients beside the rounds")
	tasks := flag.Int("tasks", 32, "tasks that meet at the barrier")
	flag.Parse()
	newGroup := func() group { return new(wsgroup.Group) }
	switch *impl {
	case "wsgroup":
	case "errgroup":
		newGroup = func() group { return new(errgroup.Group) }
	default:
		fmt.Fprintf(os.Stderr, "barrier: -impl %q: want wsgroup or errgroup\n", *impl)
		os.Exit(2)
	}
	units := workload.Rounds(20*time.Microsecond, 1, func(i, r int) { workload.Sink.Add(workload.Spin(uint64(i), r)) })
	for _, ps := range strings.Split(*procsList, ",") {
		procs, err := strconv.Atoi(ps)
		if err != nil || procs < 1 {
			fmt.Fprintf(os.Stderr, "barrier: -procs: %q is not a GOMAXPROCS\n", ps)
			os.Exit(2)
		}
		runtime.GOMAXPROCS(procs)
		var stop atomic.Bool
		var busy sync.WaitGroup
		for range *clients {
			busy.Go(func() {
				for !stop.Load() {
					g := newGroup()
					for range 8 {
						g.Go(func() error { workload.Sink.Add(workload.Spin(1, units)); return nil })
					}
					if err := g.Wait(); err != nil {
						fmt.Fprintln(os.Stderr, "barrier: a busy group:", err)
						os.Exit(1)
					}
				}
			})
		}
		ds := make([]time.Duration, 0, *rounds)
		for range *rounds {
			start := time.Now()
			g := newGroup()
			var arrived sync.WaitGroup
			arrived.Add(*tasks)
			for range *tasks {
				g.Go(func() error {
					arrived.Done()
					arrived.Wait()
					return nil
				})
			}
			if err := g.Wait(); err != nil {
				fmt.Fprintln(os.Stderr, "barrier: the round:", err)
				os.Exit(1)
			}
			ds = append(ds, time.Since(start))
		}
		stop.Store(true)
		busy.Wait()
		first := ds[0]
		slices.Sort(ds)
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		fmt.Printf("%s GOMAXPROCS=%d tasks=%d: p50 %.2f ms, max %.2f ms, first %.2f ms\n",
			*impl, procs, *tasks, ms(ds[len(ds)/2]), ms(ds[len(ds)-1]), ms(first))
	}
}
