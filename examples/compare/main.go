// Command compare runs the same workloads with golang.org/x/sync/errgroup and
// with github.com/go-steal/steal/wsgroup, side by side in one process, and
// prints a table of ns per task and the speedup (errgroup time / wsgroup time).
//
// The workloads are the ones the project sets its goals on. The goals, and
// whether they are met, have one home, BENCHMARKS.md, which states them
// with the runs that measure them; this program prints the figures only:
//
//   - 100k tiny tasks (~12 ns of work each) submitted from outside, no limit;
//   - the same under SetLimit(runtime.GOMAXPROCS(0));
//   - 100k tasks of ~1.1 µs of CPU work each, from outside, no limit;
//   - fib(25) with a new nested group per call (Go(fib(n-1)), Go(fib(n-2)), Wait);
//   - 64 tasks that each sleep 10 ms, no limit (wall time).
//
// Every workload runs once as a warm-up and then -reps times, errgroup and
// wsgroup interleaved; the table shows the median (or, with -best, the minimum)
// of the repetitions. Every run is checked: each task must have run exactly
// once and fib must return the right value; otherwise the program exits with
// status 1. Progress goes to stderr, the tables to stdout.
//
// A second table shows, for each timed wsgroup run, the steals and the
// sleeps of workers it caused: the difference of wsgroup.ReadStats just
// before and just after the run. (Workers publish their counts at the end
// of each busy spell, so the last moments of a run may count in the next.)
//
// Usage:
//
//	go run ./examples/compare            # full sizes, 5 repetitions
//	go run ./examples/compare -quick     # smaller sizes, 3 repetitions
//	go run ./examples/compare -reps 9 -best
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/go-steal/steal/adapter"
	work "github.com/go-steal/steal/internal/workload"
	"github.com/go-steal/steal/wsgroup"
)

// impl names one implementation and makes a new zero group of it, as the
// errgroup API that both *errgroup.Group and *wsgroup.Group satisfy.
type impl struct {
	name     string
	newGroup func() adapter.Group
}

var impls = [2]impl{
	{"errgroup", func() adapter.Group { return new(errgroup.Group) }},
	{"wsgroup", func() adapter.Group { return new(wsgroup.Group) }},
}

// batch is one "n independent tasks submitted from outside" workload. Each
// task does work.Spin(i, rounds), stores the result in out[i] and increments
// done[i] atomically, so after Wait every done[i] must be exactly 1.
type batch struct {
	rounds int
	limit  int // <= 0: no SetLimit call
	out    []uint64
	done   []atomic.Uint32
}

func newBatch(n, rounds, limit int) *batch {
	return &batch{rounds: rounds, limit: limit, out: make([]uint64, n), done: make([]atomic.Uint32, n)}
}

// reset clears the slots before a run.
func (b *batch) reset() {
	clear(b.out)
	clear(b.done)
}

// tune sets b.rounds so that one whole task body (Spin plus the
// bookkeeping) takes about target when the tasks run serially, one after
// another, as they do in the timed serial loop (see work.BatchRounds).
func (b *batch) tune(target time.Duration) int {
	b.rounds = work.BatchRounds(target, len(b.out))
	return b.rounds
}

func (b *batch) task(i int) {
	b.out[i] = work.Spin(uint64(i), b.rounds)
	b.done[i].Add(1)
}

// serial runs the task bodies in a plain loop: the reference cost per task.
func (b *batch) serial() error {
	for i := range b.out {
		b.task(i)
	}
	return nil
}

func (b *batch) run(newGroup func() adapter.Group) error {
	g := newGroup()
	if b.limit > 0 {
		g.SetLimit(b.limit)
	}
	for i := range b.out {
		g.Go(func() error { b.task(i); return nil })
	}
	return g.Wait()
}

func (b *batch) verify() error {
	bad, first := 0, -1
	for i := range b.done {
		if b.done[i].Load() != 1 {
			if first < 0 {
				first = i
			}
			bad++
		}
	}
	var s uint64
	for _, v := range b.out {
		s += v
	}
	work.Sink.Add(s)
	if bad > 0 {
		return fmt.Errorf("%d of %d tasks did not run exactly once (first: task %d ran %d times)",
			bad, len(b.done), first, b.done[first].Load())
	}
	return nil
}

// result is what one workload reports for one implementation (or serial).
type result struct {
	dur    time.Duration   // median or best of the repetitions
	allocs float64         // heap allocations per task, averaged over the repetitions
	stats  []wsgroup.Stats // the scheduler's counts of each repetition (wsgroup only)
	ok     bool
}

// workload is one row (or two) of the table.
type workload struct {
	name   string
	tasks  int
	unit   string // "ns/task" or "ms wall"
	setup  func() // untimed, before every run (may be nil)
	serial func() error
	run    func(impl) error
	verify func() error
}

type options struct {
	reps  int
	best  bool
	quick bool
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "compare: FAIL: "+format+"\n", args...)
	os.Exit(1)
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "compare: "+format+"\n", args...)
}

// measure runs setup (untimed), then f once, timed, after a GC, checks it
// with verify and returns the duration, the number of heap allocations f
// made and what the scheduler counted meanwhile.
func measure(setup func(), f, verify func() error, what string) (time.Duration, uint64, wsgroup.Stats) {
	if setup != nil {
		setup()
	}
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	s0 := wsgroup.ReadStats()
	start := time.Now()
	err := f()
	d := time.Since(start)
	s1 := wsgroup.ReadStats()
	runtime.ReadMemStats(&m1)
	if err != nil {
		fail("%s: Wait returned %v", what, err)
	}
	if err := verify(); err != nil {
		fail("%s: %v", what, err)
	}
	return d, m1.Mallocs - m0.Mallocs, s1.Sub(s0)
}

func summarize(ds []time.Duration, allocs uint64, tasks int, best bool) result {
	slices.Sort(ds)
	d := ds[len(ds)/2]
	if best {
		d = ds[0]
	}
	return result{dur: d, allocs: float64(allocs) / float64(len(ds)*tasks), ok: true}
}

// runWorkload warms up, then runs -reps repetitions with the implementations
// interleaved, and returns serial, errgroup and wsgroup results.
func runWorkload(w workload, o options) (serial, eg, ws result) {
	if w.serial != nil {
		progress("%s: serial", w.name)
		measure(w.setup, w.serial, w.verify, w.name+" (serial, warm-up)")
		var ds []time.Duration
		var allocs uint64
		for range o.reps {
			d, a, _ := measure(w.setup, w.serial, w.verify, w.name+" (serial)")
			ds = append(ds, d)
			allocs += a
		}
		serial = summarize(ds, allocs, w.tasks, o.best)
	}
	progress("%s: warm-up", w.name)
	for _, im := range impls {
		measure(w.setup, func() error { return w.run(im) }, w.verify, w.name+" ("+im.name+", warm-up)")
	}
	var ds [2][]time.Duration
	var allocs [2]uint64
	var stats []wsgroup.Stats // of the wsgroup runs
	for rep := range o.reps {
		progress("%s: repetition %d/%d", w.name, rep+1, o.reps)
		// Alternate which implementation goes first so drift hits both alike.
		order := [2]int{0, 1}
		if rep%2 == 1 {
			order = [2]int{1, 0}
		}
		for _, k := range order {
			im := impls[k]
			d, a, s := measure(w.setup, func() error { return w.run(im) }, w.verify, w.name+" ("+im.name+")")
			ds[k] = append(ds[k], d)
			allocs[k] += a
			if im.name == "wsgroup" {
				stats = append(stats, s)
			}
		}
	}
	eg, ws = summarize(ds[0], allocs[0], w.tasks, o.best), summarize(ds[1], allocs[1], w.tasks, o.best)
	ws.stats = stats
	return serial, eg, ws
}

func perTask(r result, tasks int) float64 {
	return float64(r.dur.Nanoseconds()) / float64(tasks)
}

func ms(r result) float64 { return float64(r.dur.Nanoseconds()) / 1e6 }

func main() {
	var o options
	flag.IntVar(&o.reps, "reps", 5, "timed repetitions per workload (after one warm-up)")
	flag.BoolVar(&o.best, "best", false, "report the best (minimum) repetition instead of the median")
	flag.BoolVar(&o.quick, "quick", false, "smaller sizes (10k tasks, fib(20)) and 3 repetitions unless -reps is given")
	flag.Parse()
	repsSet := false
	flag.Visit(func(f *flag.Flag) { repsSet = repsSet || f.Name == "reps" })
	if o.quick && !repsSet {
		o.reps = 3
	}
	if o.reps < 1 {
		fail("-reps must be at least 1")
	}

	procs := runtime.GOMAXPROCS(0)
	nTasks, fibN, nSleep, sleepFor := 100_000, 25, 64, 10*time.Millisecond
	if o.quick {
		nTasks, fibN = 10_000, 20
	}

	progress("calibrating the task loops (GOMAXPROCS=%d)", procs)
	const tinyTarget, microTarget = 12 * time.Nanosecond, 1100 * time.Nanosecond
	tiny := newBatch(nTasks, 0, 0)
	micro := newBatch(nTasks, 0, 0)
	tinyRounds := tiny.tune(tinyTarget)
	microRounds := micro.tune(microTarget)
	tinyLim := newBatch(nTasks, tinyRounds, procs)
	progress("tiny task: %d rounds, ~1.1µs task: %d rounds", tinyRounds, microRounds)

	batchWorkload := func(name string, b *batch) workload {
		return workload{
			name: name, tasks: len(b.out), unit: "ns/task",
			setup:  b.reset,
			serial: b.serial,
			run:    func(im impl) error { return b.run(im.newGroup) },
			verify: b.verify,
		}
	}

	k := func(n int) string {
		if n%1000 == 0 {
			return fmt.Sprintf("%dk", n/1000)
		}
		return fmt.Sprint(n)
	}

	fibWant, fibTasks := work.FibExpected(fibN)
	var fibGot, fibGotTasks int
	var sleepCount atomic.Int64

	workloads := []workload{
		batchWorkload(k(nTasks)+" tiny (~12ns), no limit", tiny),
		batchWorkload(fmt.Sprintf("%s tiny (~12ns), SetLimit(%d)", k(nTasks), procs), tinyLim),
		batchWorkload(k(nTasks)+" x ~1.1µs, no limit", micro),
		{
			name: fmt.Sprintf("fib(%d), nested group per call", fibN), tasks: fibTasks, unit: "ns/task",
			serial: func() error {
				fibGot, fibGotTasks = work.FibSerial(fibN)
				return nil
			},
			run: func(im impl) (err error) {
				fibGot, fibGotTasks, err = work.Fib(func() work.Group { return im.newGroup() }, fibN)
				return err
			},
			verify: func() error {
				work.Sink.Add(uint64(fibGot))
				if fibGot != fibWant || fibGotTasks != fibTasks {
					return fmt.Errorf("fib(%d) = %d with %d tasks, want %d with %d tasks",
						fibN, fibGot, fibGotTasks, fibWant, fibTasks)
				}
				return nil
			},
		},
		{
			name: fmt.Sprintf("%d x sleep %v, no limit", nSleep, sleepFor), tasks: nSleep, unit: "ms wall",
			setup: func() { sleepCount.Store(0) },
			run: func(im impl) error {
				return work.Sleepers(im.newGroup(), nSleep, sleepFor, &sleepCount)
			},
			verify: func() error {
				if n := sleepCount.Load(); n != int64(nSleep) {
					return fmt.Errorf("%d of %d sleeping tasks ran", n, nSleep)
				}
				return nil
			},
		},
	}

	type row struct {
		cells []string
	}
	var rows []row
	var events [][3]string // by workload: name, steals and sleeps of each wsgroup run
	start := time.Now()
	for _, w := range workloads {
		serial, eg, ws := runWorkload(w, o)
		speedup := fmt.Sprintf("%.2fx", float64(eg.dur)/float64(ws.dur))
		allocs := fmt.Sprintf("%.2f / %.2f", eg.allocs, ws.allocs)
		num := func(r result) string {
			if !r.ok {
				return "-"
			}
			if w.unit == "ms wall" {
				return fmt.Sprintf("%.1f", ms(r))
			}
			return fmt.Sprintf("%.1f", perTask(r, w.tasks))
		}
		rows = append(rows, row{[]string{w.name, fmt.Sprint(w.tasks), w.unit, num(serial), num(eg), num(ws), speedup, allocs}})
		var steals, sleeps []string
		for _, s := range ws.stats {
			steals = append(steals, fmt.Sprint(s.Steals))
			sleeps = append(sleeps, fmt.Sprint(s.Sleeps))
		}
		events = append(events, [3]string{w.name, strings.Join(steals, " "), strings.Join(sleeps, " ")})
		if strings.HasPrefix(w.name, "fib(") {
			// A second row with fib's total time, the unit BENCHMARKS.md gives
			// fib's floor in.
			total := func(r result) string { return fmt.Sprintf("%.2f", ms(r)) }
			rows = append(rows, row{[]string{"  same, total", "-", "ms", total(serial), total(eg), total(ws), speedup, "", "", ""}})
		}
	}
	progress("done in %v", time.Since(start).Round(time.Millisecond))

	stat := "median"
	if o.best {
		stat = "best"
	}
	size := "full"
	if o.quick {
		size = "quick (smaller than the goals are set for)"
	}
	fmt.Printf("errgroup vs wsgroup, %s of %d repetitions after one warm-up, sizes: %s\n\n", stat, o.reps, size)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := []string{"workload", "tasks", "unit", "serial", "errgroup", "wsgroup", "speedup", "allocs/task eg / ws"}
	// AlignRight right-aligns every column; pad the name column ourselves
	// so that the numbers line up on the right and the names on the left.
	wName := len(header[0])
	for _, r := range rows {
		wName = max(wName, len([]rune(r.cells[0])))
	}
	pad := func(s string, w int) string { return s + strings.Repeat(" ", w-len([]rune(s))) }
	line := func(c []string) {
		c = slices.Clone(c)
		c[0] = pad(c[0], wName)
		fmt.Fprintln(tw, strings.Join(c, "\t")+"\t")
	}
	line(header)
	for _, r := range rows {
		line(r.cells)
	}
	tw.Flush()
	fmt.Printf("\nspeedup = errgroup time / wsgroup time (higher is better for wsgroup)\n")
	fmt.Printf("The goals these workloads are measured against, and where they stand, are in BENCHMARKS.md.\n")
	fmt.Printf("GOMAXPROCS=%d NumCPU=%d %s %s/%s; tiny task = %d spin rounds, ~1.1µs task = %d rounds\n",
		procs, runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, tinyRounds, microRounds)

	fmt.Printf("\nwsgroup scheduler events of each timed run, in run order (wsgroup.ReadStats before and after):\n\n")
	tw = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "workload\tsteals\tsleeps\t")
	for _, e := range events {
		fmt.Fprintln(tw, strings.Join(e[:], "\t")+"\t")
	}
	tw.Flush()
}
