// Command compare runs the same workloads with golang.org/x/sync/errgroup and
// with github.com/go-steal/steal/wsgroup, side by side in one process, and
// prints a table of ns per task and the speedup (errgroup time / wsgroup time).
//
// The workloads are the anchors of CONTRACT §8:
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
// status 1. Progress goes to stderr, the table to stdout.
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
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/go-steal/steal/wsgroup"
)

// group is the part of the errgroup API the workloads use; both
// *errgroup.Group and *wsgroup.Group satisfy it.
type group interface {
	Go(f func() error)
	SetLimit(n int)
	Wait() error
}

var (
	_ group = (*errgroup.Group)(nil)
	_ group = (*wsgroup.Group)(nil)
)

// impl names one implementation and makes a new zero group of it.
type impl struct {
	name     string
	newGroup func() group
}

var impls = [2]impl{
	{"errgroup", func() group { return new(errgroup.Group) }},
	{"wsgroup", func() group { return new(wsgroup.Group) }},
}

// sink keeps results alive so the compiler cannot drop the work.
var sink atomic.Uint64

// spin is the unit of CPU work: n rounds of xorshift, a dependent chain the
// compiler cannot fold. It is not inlined so its cost is the same everywhere.
//
//go:noinline
func spin(seed uint64, n int) uint64 {
	x := seed | 1
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// calibrate returns the number of spin rounds that take about target when
// spin runs alone (a first guess; tune refines it for the whole task body).
func calibrate(target time.Duration) int {
	const probeRounds = 1000
	const calls = 2000
	best := time.Duration(1<<63 - 1)
	var acc uint64
	for try := 0; try < 7; try++ {
		start := time.Now()
		for i := range calls {
			acc += spin(uint64(i), probeRounds)
		}
		if d := time.Since(start); d < best {
			best = d
		}
	}
	sink.Add(acc)
	perRound := float64(best.Nanoseconds()) / float64(calls*probeRounds)
	return max(1, int(math.Round(float64(target.Nanoseconds())/perRound)))
}

// batch is one "n independent tasks submitted from outside" workload. Each
// task does spin(i, rounds), stores the result in out[i] and increments
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

func (b *batch) reset() {
	clear(b.out)
	clear(b.done)
}

// tune sets b.rounds so that one whole task body (spin plus the bookkeeping)
// takes about target when the tasks run serially, one after another, as they
// do in the timed serial loop. Independent short tasks overlap in the CPU, so
// a round costs less there than in calibrate's long chain: tune measures the
// cost at two round counts, interpolates, and repeats (secant steps) until
// the cost is within 3% of target. Each probe takes the fastest of 5 passes,
// which is the least disturbed by other processes.
func (b *batch) tune(target time.Duration) int {
	// Probe with the real batch (cache effects included), ~20 ms a pass.
	n := max(1, min(len(b.out), int(20*time.Millisecond/target)))
	perTask := func(rounds int) float64 {
		b.rounds = rounds
		best := time.Duration(1<<63 - 1)
		for range 5 {
			start := time.Now()
			for i := range n {
				b.task(i)
			}
			best = min(best, time.Since(start))
		}
		return float64(best.Nanoseconds()) / float64(n)
	}
	want := float64(target.Nanoseconds())
	r1, r2 := b.rounds, 2*b.rounds
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
	b.rounds = r2
	b.reset()
	return b.rounds
}

func (b *batch) task(i int) {
	b.out[i] = spin(uint64(i), b.rounds)
	b.done[i].Add(1)
}

// serial runs the task bodies in a plain loop: the reference cost per task.
func (b *batch) serial() error {
	for i := range b.out {
		b.task(i)
	}
	return nil
}

func (b *batch) run(newGroup func() group) error {
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
	sink.Add(s)
	if bad > 0 {
		return fmt.Errorf("%d of %d tasks did not run exactly once (first: task %d ran %d times)",
			bad, len(b.done), first, b.done[first].Load())
	}
	return nil
}

// fibGroup computes fib(n) with a new group per call for n >= 2 and returns
// the value and the number of tasks (Go calls) made in its subtree. The task
// count travels through the results, so a task that never ran shows up as a
// wrong count without a shared counter that would add contention.
func fibGroup(newGroup func() group, n int) (val, tasks int, err error) {
	if n < 2 {
		return n, 0, nil
	}
	g := newGroup()
	var a, b, ta, tb int
	g.Go(func() (err error) { a, ta, err = fibGroup(newGroup, n-1); return })
	g.Go(func() (err error) { b, tb, err = fibGroup(newGroup, n-2); return })
	if err := g.Wait(); err != nil {
		return 0, 0, err
	}
	return a + b, ta + tb + 2, nil
}

// fibSerial is the plain recursion with the same task count.
func fibSerial(n int) (val, tasks int) {
	if n < 2 {
		return n, 0
	}
	a, ta := fibSerial(n - 1)
	b, tb := fibSerial(n - 2)
	return a + b, ta + tb + 2
}

// fibExpected returns fib(n) and the number of tasks fibGroup makes for n.
func fibExpected(n int) (val, tasks int) {
	// calls(n) = 2*fib(n+1) - 1; every call but the root is one task.
	f0, f1 := 0, 1
	for range n {
		f0, f1 = f1, f0+f1
	}
	return f0, 2*f1 - 2
}

// result is what one workload reports for one implementation (or serial).
type result struct {
	dur    time.Duration // median or best of the repetitions
	allocs float64       // heap allocations per task, averaged over the repetitions
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
	// target reports the CONTRACT §8 target as text and whether it is met.
	target func(serial, eg, ws result) (string, string)
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
// with verify and returns the duration and the number of heap allocations f
// made.
func measure(setup func(), f, verify func() error, what string) (time.Duration, uint64) {
	if setup != nil {
		setup()
	}
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	start := time.Now()
	err := f()
	d := time.Since(start)
	runtime.ReadMemStats(&m1)
	if err != nil {
		fail("%s: Wait returned %v", what, err)
	}
	if err := verify(); err != nil {
		fail("%s: %v", what, err)
	}
	return d, m1.Mallocs - m0.Mallocs
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
			d, a := measure(w.setup, w.serial, w.verify, w.name+" (serial)")
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
	for rep := range o.reps {
		progress("%s: repetition %d/%d", w.name, rep+1, o.reps)
		// Alternate which implementation goes first so drift hits both alike.
		order := [2]int{0, 1}
		if rep%2 == 1 {
			order = [2]int{1, 0}
		}
		for _, k := range order {
			im := impls[k]
			d, a := measure(w.setup, func() error { return w.run(im) }, w.verify, w.name+" ("+im.name+")")
			ds[k] = append(ds[k], d)
			allocs[k] += a
		}
	}
	return serial, summarize(ds[0], allocs[0], w.tasks, o.best), summarize(ds[1], allocs[1], w.tasks, o.best)
}

func perTask(r result, tasks int) float64 {
	return float64(r.dur.Nanoseconds()) / float64(tasks)
}

func ms(r result) float64 { return float64(r.dur.Nanoseconds()) / 1e6 }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

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
	tiny := newBatch(nTasks, calibrate(tinyTarget), 0)
	micro := newBatch(nTasks, calibrate(microTarget), 0)
	tinyRounds := tiny.tune(tinyTarget)
	microRounds := micro.tune(microTarget)
	tinyLim := newBatch(nTasks, tinyRounds, procs)
	progress("tiny task: %d rounds, ~1.1µs task: %d rounds", tinyRounds, microRounds)

	batchWorkload := func(name string, b *batch, target func(serial, eg, ws result) (string, string)) workload {
		return workload{
			name: name, tasks: len(b.out), unit: "ns/task",
			setup:  b.reset,
			serial: b.serial,
			run:    func(im impl) error { return b.run(im.newGroup) },
			verify: b.verify,
			target: target,
		}
	}

	k := func(n int) string {
		if n%1000 == 0 {
			return fmt.Sprintf("%dk", n/1000)
		}
		return fmt.Sprint(n)
	}

	fibWant, fibTasks := fibExpected(fibN)
	var fibGot, fibGotTasks int
	var sleepCount atomic.Int64

	workloads := []workload{
		batchWorkload(k(nTasks)+" tiny (~12ns), no limit", tiny,
			func(_, eg, ws result) (string, string) {
				// The target is against the best third-party pool, which this
				// program does not run.
				return "≥8× best peer pool (peers not run here)", "-"
			}),
		batchWorkload(fmt.Sprintf("%s tiny (~12ns), SetLimit(%d)", k(nTasks), procs), tinyLim,
			func(_, eg, ws result) (string, string) {
				return "≥2× errgroup", yesNo(perTask(eg, nTasks) >= 2*perTask(ws, nTasks))
			}),
		batchWorkload(k(nTasks)+" x ~1.1µs, no limit", micro,
			func(serial, _, ws result) (string, string) {
				want := 0.9 * float64(procs)
				got := float64(serial.dur) / float64(ws.dur)
				return fmt.Sprintf("serial/wsgroup ≥ %.2f (is %.2f)", want, got), yesNo(got >= want)
			}),
		{
			name: fmt.Sprintf("fib(%d), nested group per call", fibN), tasks: fibTasks, unit: "ns/task",
			serial: func() error {
				fibGot, fibGotTasks = fibSerial(fibN)
				return nil
			},
			run: func(im impl) (err error) {
				fibGot, fibGotTasks, err = fibGroup(im.newGroup, fibN)
				return err
			},
			verify: func() error {
				sink.Add(uint64(fibGot))
				if fibGot != fibWant || fibGotTasks != fibTasks {
					return fmt.Errorf("fib(%d) = %d with %d tasks, want %d with %d tasks",
						fibN, fibGot, fibGotTasks, fibWant, fibTasks)
				}
				return nil
			},
			target: func(_, eg, ws result) (string, string) {
				return "≥30× errgroup", yesNo(eg.dur >= 30*ws.dur)
			},
		},
		{
			name: fmt.Sprintf("%d x sleep %v, no limit", nSleep, sleepFor), tasks: nSleep, unit: "ms wall",
			setup: func() { sleepCount.Store(0) },
			run: func(im impl) error {
				g := im.newGroup()
				for range nSleep {
					g.Go(func() error {
						time.Sleep(sleepFor)
						sleepCount.Add(1)
						return nil
					})
				}
				return g.Wait()
			},
			verify: func() error {
				if n := sleepCount.Load(); n != int64(nSleep) {
					return fmt.Errorf("%d of %d sleeping tasks ran", n, nSleep)
				}
				return nil
			},
			target: func(_, eg, ws result) (string, string) {
				return "wsgroup ≤ 1.3× errgroup wall", yesNo(float64(ws.dur) <= 1.3*float64(eg.dur))
			},
		},
	}

	type row struct {
		cells []string
	}
	var rows []row
	start := time.Now()
	for _, w := range workloads {
		serial, eg, ws := runWorkload(w, o)
		target, met := w.target(serial, eg, ws)
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
		rows = append(rows, row{[]string{w.name, fmt.Sprint(w.tasks), w.unit, num(serial), num(eg), num(ws), speedup, allocs, target, met}})
		if strings.HasPrefix(w.name, "fib(") {
			// A second row with fib's total time, the unit of the §8 anchor.
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
		size = "quick (smaller than CONTRACT §8)"
	}
	fmt.Printf("errgroup vs wsgroup, %s of %d repetitions after one warm-up, sizes: %s\n\n", stat, o.reps, size)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := []string{"workload", "tasks", "unit", "serial", "errgroup", "wsgroup", "speedup", "allocs/task eg / ws", "target (CONTRACT §8)", "met"}
	// AlignRight right-aligns every column; pad the text columns ourselves so
	// that the numbers line up on the right and the words on the left.
	wName, wTarget := len(header[0]), len(header[8])
	for _, r := range rows {
		wName = max(wName, len([]rune(r.cells[0])))
		wTarget = max(wTarget, len([]rune(r.cells[8])))
	}
	pad := func(s string, w int) string { return s + strings.Repeat(" ", w-len([]rune(s))) }
	line := func(c []string) {
		c = slices.Clone(c)
		c[0] = pad(c[0], wName)
		c[8] = pad(c[8], wTarget)
		fmt.Fprintln(tw, strings.Join(c, "\t")+"\t")
	}
	line(header)
	for _, r := range rows {
		line(r.cells)
	}
	tw.Flush()
	fmt.Printf("\nspeedup = errgroup time / wsgroup time (higher is better for wsgroup)\n")
	fmt.Printf("GOMAXPROCS=%d NumCPU=%d %s %s/%s; tiny task = %d spin rounds, ~1.1µs task = %d rounds\n",
		procs, runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, tinyRounds, microRounds)
}
