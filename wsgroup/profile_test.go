package wsgroup_test

import (
	"bytes"
	"context"
	"fmt"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/go-steal/steal/internal/gstatus"
	"github.com/go-steal/steal/internal/testkit"
	"github.com/go-steal/steal/internal/workload"
	"github.com/go-steal/steal/wsgroup"
)

// Profiles see tasks as they see errgroup's goroutines: a task's CPU
// samples carry the profiler labels of the goroutine that called Go. The
// test takes a real CPU profile and reads it back.

// burnA, burnB and burnNone are the busy loops of the tasks given under
// the labels set=a, set=b and none, each n rounds of workload.Spin under a
// frame of its own: a sample whose stack holds one of them must carry
// that set's labels, and nothing else.

//go:noinline
func burnA(n int) uint64 { return workload.Spin(uint64(n), n) }

//go:noinline
func burnB(n int) uint64 { return workload.Spin(uint64(n), n) }

//go:noinline
func burnNone(n int) uint64 { return workload.Spin(uint64(n), n) }

// labelPaths are the ways a task reaches a goroutine that runs it; each
// runs under its own "path" label, so the profile tells them apart.
//   - outside: Go from the labelled goroutine; its own Wait runs some of
//     the tasks (it takes back its newest ones), the workers the rest.
//   - inside: Go from a task, which then waits: the helping Wait on its
//     worker runs some of the subtasks.
//   - loop: a For's bodies.
var labelPaths = []string{"outside", "inside", "loop"}

// runPath runs the path's tasks, each a call of burn(rounds), tasks of
// them.
func runPath(path string, burn func(int) uint64, tasks, rounds int) error {
	keep := func(v uint64) { workload.Sink.Add(v) }
	switch path {
	case "outside":
		var g wsgroup.Group
		for range tasks {
			g.Go(func() error { keep(burn(rounds)); return nil })
		}
		return g.Wait()
	case "inside":
		var g wsgroup.Group
		for range tasks / 8 {
			g.Go(func() error {
				var sub wsgroup.Group
				for range 8 {
					sub.Go(func() error { keep(burn(rounds)); return nil })
				}
				return sub.Wait()
			})
		}
		return g.Wait()
	case "loop":
		return wsgroup.For(context.Background(), tasks, func(context.Context, int) error {
			keep(burn(rounds))
			return nil
		})
	}
	panic("unknown path " + path)
}

// labelTally is what a profile says about the samples of the burn loops.
type labelTally struct {
	// samples by set (the burn function on the stack) and by the labels
	// the sample carries: "set=a path=loop", or "" for none.
	seen map[string]map[string]int
	// helped counts the samples of a burn loop run by a helping Wait
	// (worker.help on the stack: path inside) and by a Wait outside the
	// pool (helpOutside: path outside).
	helped map[string]int
}

// tally reads a CPU profile.
func tally(t *testing.T, data []byte) labelTally {
	t.Helper()
	p, err := profile.Parse(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("parsing the CPU profile: %v", err)
	}
	lt := labelTally{seen: map[string]map[string]int{}, helped: map[string]int{}}
	for _, s := range p.Sample {
		set, helpedBy := "", ""
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				name := line.Function.Name
				switch {
				case strings.HasSuffix(name, "_test.burnA"):
					set = "a"
				case strings.HasSuffix(name, "_test.burnB"):
					set = "b"
				case strings.HasSuffix(name, "_test.burnNone"):
					set = "none"
				case strings.HasSuffix(name, "sched.(*worker).help"):
					helpedBy = "inside"
				case strings.HasSuffix(name, "sched.(*Group).helpOutside"):
					helpedBy = "outside"
				}
			}
		}
		if set == "" {
			continue
		}
		var labels []string
		for _, k := range []string{"set", "path"} {
			for _, v := range s.Label[k] {
				labels = append(labels, k+"="+v)
			}
		}
		key := strings.Join(labels, " ")
		if lt.seen[set] == nil {
			lt.seen[set] = map[string]int{}
		}
		lt.seen[set][key]++
		if helpedBy != "" && key == fmt.Sprintf("set=%s path=%s", set, helpedBy) {
			lt.helped[helpedBy]++
		}
	}
	return lt
}

// TestProfileLabels: a CPU profile of three goroutines that run every
// path at once, two under labels (set=a, set=b, and the path) and one
// without, attributes each burn loop's samples to its submitter's labels
// only: the labelled sets to theirs, on every path, and the unlabelled
// set, whose tasks run on the same workers right after labelled ones, to
// none. The sample counts depend on the machine; the attribution must be
// exact. If a path got no sample, or no sample was taken in a helping
// Wait, the run had too little CPU time to show it, and the test runs
// again with twice the work.
func TestProfileLabels(t *testing.T) {
	testkit.Guard(t, func() {
		tasks, rounds := 64, 400_000
		for attempt := 1; ; attempt++ {
			lt := profileLabelledRun(t, tasks, rounds)
			if t.Failed() {
				return
			}
			for set, byLabels := range lt.seen {
				for labels, n := range byLabels {
					want := set == "none" && labels == "" ||
						strings.HasPrefix(labels, "set="+set+" path=") && strings.Count(labels, "=") == 2
					if !want {
						t.Errorf("%d samples of the burn loop of set %s carry labels %q", n, set, labels)
					}
				}
			}
			var missing []string
			for _, set := range []string{"a", "b"} {
				for _, path := range labelPaths {
					if lt.seen[set][fmt.Sprintf("set=%s path=%s", set, path)] == 0 {
						missing = append(missing, fmt.Sprintf("set=%s path=%s", set, path))
					}
				}
			}
			if lt.seen["none"][""] == 0 {
				missing = append(missing, "unlabelled")
			}
			for _, by := range []string{"inside", "outside"} {
				if lt.helped[by] == 0 {
					missing = append(missing, "run by a Wait on path "+by)
				}
			}
			if t.Failed() || len(missing) == 0 {
				return
			}
			if attempt == 6 {
				t.Fatalf("after %d runs, the last with %d tasks of %d rounds per path, no sample of: %s", attempt, tasks, rounds, strings.Join(missing, "; "))
			}
			t.Logf("run %d: no sample of: %s; again with twice the work", attempt, strings.Join(missing, "; "))
			rounds *= 2
		}
	})
}

// profileLabelledRun runs the three goroutines of TestProfileLabels under
// a CPU profile and tallies it.
func profileLabelledRun(t *testing.T, tasks, rounds int) labelTally {
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		t.Fatalf("StartCPUProfile: %v", err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 3*len(labelPaths))
	run := func(set string, burn func(int) uint64) {
		defer wg.Done()
		for _, path := range labelPaths {
			do := func(context.Context) { errs <- runPath(path, burn, tasks, rounds) }
			if set == "" {
				do(context.Background())
				continue
			}
			pprof.Do(context.Background(), pprof.Labels("set", set, "path", path), do)
		}
	}
	wg.Add(3)
	go run("a", burnA)
	go run("b", burnB)
	go run("", burnNone)
	wg.Wait()
	pprof.StopCPUProfile()
	close(errs)
	for err := range errs {
		wantNil(t, "a path's Wait", err)
	}
	return tally(t, buf.Bytes())
}

// TestLabelsEveryEntry: whichever call gives the work (Go, TryGo, For,
// ForEach, Map), it runs wearing the labels of the goroutine that made
// the call, read as the profiler reads them.
func TestLabelsEveryEntry(t *testing.T) {
	testkit.Guard(t, func() {
		const n = 1000
		var ok, wrong atomic.Int64
		pprof.Do(context.Background(), pprof.Labels("entry", "all"), func(ctx context.Context) {
			want := gstatus.Labels()
			see := func() {
				if gstatus.Labels() == want {
					ok.Add(1)
				} else {
					wrong.Add(1)
				}
			}
			var g wsgroup.Group
			for i := range n {
				if i%2 == 0 {
					g.Go(func() error { see(); return nil })
				} else if !g.TryGo(func() error { see(); return nil }) {
					t.Error("TryGo refused on a group without a limit")
				}
			}
			wantNil(t, "g.Wait()", g.Wait())
			wantNil(t, "For", wsgroup.For(ctx, n, func(context.Context, int) error { see(); return nil }))
			s := make([]int, n)
			wantNil(t, "ForEach", wsgroup.ForEach(ctx, s, func(context.Context, *int) error { see(); return nil }))
			_, err := wsgroup.Map(ctx, s, func(context.Context, *int) (int, error) { see(); return 0, nil })
			wantNil(t, "Map", err)
		})
		if ok.Load() != 4*n || wrong.Load() != 0 {
			t.Errorf("%d calls wore their caller's labels and %d did not; want all %d", ok.Load(), wrong.Load(), 4*n)
		}
	})
}
