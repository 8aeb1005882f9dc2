// Command profiles shows that a wsgroup task carries the pprof profiler
// labels of the goroutine that called Go, as a goroutine started by
// errgroup's Go inherits them, so that a CPU profile attributes the work
// to the same labels on either group.
//
// It runs the same fan-out twice, on golang.org/x/sync/errgroup and on
// wsgroup, each under its own CPU profile: two endpoints at once, each on a
// goroutine labelled with pprof.Do (endpoint=/search, with twice the work
// of endpoint=/upload), and unlabelled work on a third goroutine, each
// submitting many CPU-bound tasks to a group and waiting for them. From
// each profile it sums the CPU time of the samples in the tasks' busy loop
// per value of the endpoint label, prints each label's share on both
// groups, and exits with status 1 unless the shares agree within 10
// percentage points on every label.
//
// Usage:
//
//	cd examples/profiles && go run .
package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/pprof/profile"
	"golang.org/x/sync/errgroup"

	"github.com/go-steal/steal/wsgroup"
)

const (
	labelKey     = "endpoint"
	noLabel      = "(none)"
	tolerance    = 10.0    // percentage points
	minSamples   = 100     // in each profile's busy loop, to judge the shares
	taskRounds   = 1 << 21 // hashLoop's rounds in a task: a few ms of CPU
	defaultTasks = 150     // tasks per unit of weight: about 1.5 s of CPU a run
)

// endpoints are the fan-out's callers of Go: the label value each runs
// under (noLabel: none) and its weight, its number of tasks in units.
var endpoints = []struct {
	label  string
	weight int
	work   func(int) uint64 // the endpoint's own frame above hashLoop
}{{"/search", 2, search}, {"/upload", 1, upload}, {noLabel, 1, plain}}

// search, upload and plain are the endpoints' tasks: each runs hashLoop
// under a frame of its own, so that a sample tells which endpoint's task
// it caught, whatever its labels say.
//
//go:noinline
func search(n int) uint64 { return hashLoop(n) }

//go:noinline
func upload(n int) uint64 { return hashLoop(n) }

//go:noinline
func plain(n int) uint64 { return hashLoop(n) }

// group is what the fan-out needs of a group: errgroup's and wsgroup's have it.
type group interface {
	Go(func() error)
	Wait() error
}

var groups = []struct {
	name string
	new  func() group
}{
	{"errgroup", func() group { return new(errgroup.Group) }},
	{"wsgroup", func() group { return new(wsgroup.Group) }},
}

var sink atomic.Uint64 // keeps the hash loops' results alive

// hashLoop is the tasks' CPU-bound work, n rounds of FNV-1a. It is not
// inlined, so that the profile's stacks name it.
//
//go:noinline
func hashLoop(n int) uint64 {
	h := uint64(14695981039346656037)
	for i := range n {
		h = (h ^ uint64(i&0xff)) * 1099511628211
	}
	return h
}

// fanOut runs every endpoint at once, each on its own goroutine, labelled
// with pprof.Do, submitting weight×tasks tasks to a group and waiting.
func fanOut(newGroup func() group, tasks int) {
	var wg sync.WaitGroup
	for _, e := range endpoints {
		run := func(context.Context) {
			g := newGroup()
			for range e.weight * tasks {
				g.Go(func() error { sink.Add(e.work(taskRounds)); return nil })
			}
			_ = g.Wait()
		}
		wg.Go(func() {
			if e.label == noLabel {
				run(context.Background())
			} else {
				pprof.Do(context.Background(), pprof.Labels(labelKey, e.label), run)
			}
		})
	}
	wg.Wait()
}

// profileShares runs fanOut under a CPU profile and returns each label's
// share, in percent, of the CPU time in hashLoop, its number of samples,
// and how many of them carry a label other than that of the endpoint whose
// task they caught.
func profileShares(newGroup func() group, tasks int) (map[string]float64, int64, int, error) {
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		return nil, 0, 0, err
	}
	fanOut(newGroup, tasks)
	pprof.StopCPUProfile()
	p, err := profile.Parse(&buf)
	if err != nil {
		return nil, 0, 0, err
	}
	cpu := slices.IndexFunc(p.SampleType, func(t *profile.ValueType) bool { return t.Type == "cpu" })
	if cpu < 0 || p.Period <= 0 {
		return nil, 0, 0, fmt.Errorf("the profile has no cpu values")
	}
	perLabel, total, wrong := map[string]int64{}, int64(0), 0
	for _, s := range p.Sample {
		if !slices.ContainsFunc(s.Location, in("hashLoop")) {
			continue // scheduler, runtime, the fan-out itself
		}
		l := noLabel
		if v := s.Label[labelKey]; len(v) > 0 {
			l = v[0]
		}
		perLabel[l] += s.Value[cpu]
		total += s.Value[cpu]
		for _, e := range endpoints {
			if slices.ContainsFunc(s.Location, in(funcName(e.label))) && l != e.label {
				wrong++
			}
		}
	}
	shares := map[string]float64{}
	for l, v := range perLabel {
		shares[l] = 100 * float64(v) / float64(total)
	}
	return shares, total / p.Period, wrong, nil
}

// in returns a test of whether a location is in the function called name
// (in a test binary the package is not named main: match the suffix).
func in(name string) func(*profile.Location) bool {
	return func(loc *profile.Location) bool {
		return slices.ContainsFunc(loc.Line, func(l profile.Line) bool {
			return l.Function != nil && strings.HasSuffix(l.Function.Name, "."+name)
		})
	}
}

// funcName is the name of the function of the endpoint with label l.
func funcName(l string) string {
	switch l {
	case "/search":
		return "search"
	case "/upload":
		return "upload"
	}
	return "plain"
}

// comparison holds each group's shares and samples, in the order of groups.
type comparison struct {
	shares  []map[string]float64
	samples []int64
	wrong   []int // samples whose label is not their endpoint's
}

// compare profiles the fan-out on every group, doubling tasks, up to three
// times, until every profile has at least need samples in hashLoop.
func compare(tasks int, need int64) (comparison, error) {
	for try := 0; ; try, tasks = try+1, 2*tasks {
		var c comparison
		for _, g := range groups {
			s, n, wrong, err := profileShares(g.new, tasks)
			if err != nil {
				return c, fmt.Errorf("%s: %w", g.name, err)
			}
			c.shares, c.samples, c.wrong = append(c.shares, s), append(c.samples, n), append(c.wrong, wrong)
		}
		if slices.Min(c.samples) >= need {
			return c, nil
		} else if try == 3 {
			return c, fmt.Errorf("too few samples to judge at %d tasks a unit: %v, need %d", tasks, c.samples, need)
		}
	}
}

// diff returns wsgroup's share of label l minus errgroup's, in points.
func (c comparison) diff(l string) float64 { return c.shares[1][l] - c.shares[0][l] }

// agree reports whether the shares agree within tolerance on every label,
// the endpoints' and any other the profiles show.
func (c comparison) agree() bool {
	for _, s := range c.shares {
		for l := range s {
			if math.Abs(c.diff(l)) > tolerance {
				return false
			}
		}
	}
	return true
}

func (c comparison) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-8s %9s %9s %6s\n", "label", groups[0].name, groups[1].name, "diff")
	for _, e := range endpoints {
		fmt.Fprintf(&b, "%-8s %8.1f%% %8.1f%% %+6.1f\n", e.label, c.shares[0][e.label], c.shares[1][e.label], c.diff(e.label))
	}
	fmt.Fprintf(&b, "samples in hashLoop: %d and %d, of which under another endpoint's label: %d and %d\n",
		c.samples[0], c.samples[1], c.wrong[0], c.wrong[1])
	return b.String()
}

func main() {
	c, err := compare(defaultTasks, minSamples)
	if err != nil {
		fmt.Fprintln(os.Stderr, "profiles:", err)
		os.Exit(1)
	}
	fmt.Print(c)
	if !c.agree() {
		fmt.Printf("the shares differ by more than %.0f points on a label\n", tolerance)
		os.Exit(1)
	}
	fmt.Printf("the shares agree within %.0f points on every label\n", tolerance)
}
