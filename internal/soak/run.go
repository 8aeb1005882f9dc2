package main

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-steal/steal/adapter"
	"github.com/go-steal/steal/internal/testkit"
	"github.com/go-steal/steal/wsgroup"
)

// config is what a soak runs.
type config struct {
	d        time.Duration // the load phases together
	clients  int
	seed     uint64
	replay   string        // "scenario/kind/seed": run only that
	stall    time.Duration // the most a client may go without finishing a run
	leak     time.Duration // the most goroutines may outlive the load
	verbose  bool
	procs    []int      // what GOMAXPROCS changes among
	mix      []scenario // what the clients draw from
	soloRuns int        // runs of each scenario alone, for the peak goroutines
}

func defaultConfig() config {
	return config{
		d:        60 * time.Second,
		clients:  16,
		seed:     rand.Uint64(),
		stall:    15 * time.Second,
		leak:     2 * time.Second,
		procs:    []int{1, 2, 4},
		mix:      scenarios,
		soloRuns: 5,
	}
}

// selectMix returns the scenarios named in a comma-separated list.
func selectMix(names string) ([]scenario, error) {
	var mix []scenario
	for _, name := range strings.Split(names, ",") {
		i := slices.IndexFunc(scenarios, func(s scenario) bool { return s.name == name })
		if i < 0 {
			return nil, fmt.Errorf("no scenario %q", name)
		}
		mix = append(mix, scenarios[i])
	}
	return mix, nil
}

func parseSeed(s string) (uint64, error) { return strconv.ParseUint(s, 0, 64) }

// kinds are the implementations, in the order of the report's columns.
var kinds = []adapter.Kind{adapter.Wsgroup, adapter.Errgroup}

// counts are what one scenario did on one implementation.
type counts struct {
	runs, tasks atomic.Int64
	loaded      atomic.Int64 // runs under load, not alone
	nanos       atomic.Int64 // their time
	soloPeak    int64        // goroutines above the process's own, one run alone
}

// soak is one run of the command.
type soak struct {
	cfg   config
	out   *syncWriter
	base  int             // goroutines before the soak started anything
	there map[string]bool // their ids: none of them is left by the soak
	count [][]counts      // [scenario][kind]
}

// phase is a stretch of load on one implementation.
type phase struct {
	kind    adapter.Kind
	d       time.Duration
	clients int
	// solo: one client runs the scenarios one at a time, GOMAXPROCS is
	// left alone, and each run's peak goroutines are kept.
	solo bool
	// pick draws the scenario and seed of a client's next run; ok false
	// ends the client.
	pick func(rng *rand.Rand) (sc int, seed uint64, ok bool)
}

// phaseResult is what a phase measured.
type phaseResult struct {
	kind             adapter.Kind
	took             time.Duration
	peakGoroutines   int64
	peakWorkers      int64
	procChanges      int64
	goneAfter        time.Duration // from the end of the load until no goroutine was left
	runs, tasksTotal int64
}

// run runs the soak that cfg describes, writing its report to out, and
// returns the first failure.
func run(cfg config, out io.Writer) error {
	s := &soak{cfg: cfg, out: &syncWriter{w: out}, base: runtime.NumGoroutine()}
	s.there = map[string]bool{}
	for _, g := range goroutines(testkit.Stacks()) {
		s.there[goroutineID(g)] = true
	}
	s.count = make([][]counts, len(cfg.mix))
	for i := range s.count {
		s.count[i] = make([]counts, len(kinds))
	}
	start := time.Now()
	s.printf("soak: seed %#x, %d clients, %v, GOMAXPROCS changing among %v, race detector %s\n",
		cfg.seed, cfg.clients, cfg.d, cfg.procs, onOff(testkit.Race))

	var phases []phase
	if cfg.replay != "" {
		sc, kind, seed, err := s.parseReplay(cfg.replay)
		if err != nil {
			return err
		}
		s.printf("replaying %s from every client\n", cfg.replay)
		phases = []phase{{kind: kind, d: cfg.d, clients: cfg.clients,
			pick: func(*rand.Rand) (int, uint64, bool) { return sc, seed, true }}}
	} else {
		// errgroup's runs alone first: wsgroup's workers outlive a run by a
		// few milliseconds and would count for errgroup.
		wsD := cfg.d * 4 / 5
		phases = []phase{
			s.solo(adapter.Errgroup), s.solo(adapter.Wsgroup),
			{kind: adapter.Wsgroup, d: wsD, clients: cfg.clients, pick: s.picker(adapter.Wsgroup)},
			{kind: adapter.Errgroup, d: cfg.d - wsD, clients: cfg.clients, pick: s.picker(adapter.Errgroup)},
		}
	}
	var results []phaseResult
	for _, p := range phases {
		r, err := s.phase(p)
		if err != nil {
			s.table()
			return s.fail(start, err)
		}
		if !p.solo {
			results = append(results, r)
		}
	}
	s.table()
	for _, r := range results {
		s.printf("%s phase: %v, %d runs, %d tasks, peak goroutines %d (workers %d), %d GOMAXPROCS changes; nothing left %v after the load stopped\n",
			r.kind, r.took.Round(time.Millisecond), r.runs, r.tasksTotal, r.peakGoroutines, r.peakWorkers, r.procChanges, r.goneAfter.Round(time.Millisecond))
	}
	s.printf("%s\n", summary(time.Since(start), cfg.seed, results))
	return nil
}

// summary is the report's last line.
func summary(took time.Duration, seed uint64, results []phaseResult) string {
	var runs, tasks, changes int64
	var parts []string
	for _, r := range results {
		runs += r.runs
		tasks += r.tasksTotal
		changes += r.procChanges
		parts = append(parts, fmt.Sprintf("%s %d runs, %d tasks, peak %d goroutines (%d workers)", r.kind, r.runs, r.tasksTotal, r.peakGoroutines, r.peakWorkers))
	}
	return fmt.Sprintf("soak: PASS in %v: %d runs, %d tasks, every result exact, nothing left after the load; %s; %d GOMAXPROCS changes; seed %#x",
		took.Round(100*time.Millisecond), runs, tasks, strings.Join(parts, "; "), changes, seed)
}

func (s *soak) fail(start time.Time, err error) error {
	s.printf("soak: FAIL after %v (seed %#x): %v\n", time.Since(start).Round(100*time.Millisecond), s.cfg.seed, err)
	return errors.New("failed; see above")
}

func (s *soak) printf(format string, args ...any) { fmt.Fprintf(s.out, format, args...) }

// picker draws any scenario that kind can run.
func (s *soak) picker(kind adapter.Kind) func(rng *rand.Rand) (int, uint64, bool) {
	var can []int
	for i, sc := range s.cfg.mix {
		if sc.both || kind == adapter.Wsgroup {
			can = append(can, i)
		}
	}
	return func(rng *rand.Rand) (int, uint64, bool) { return can[rng.IntN(len(can))], rng.Uint64(), true }
}

// parseReplay reads "scenario/kind/seed".
func (s *soak) parseReplay(key string) (sc int, kind adapter.Kind, seed uint64, err error) {
	parts := strings.Split(key, "/")
	if len(parts) != 3 {
		return 0, "", 0, fmt.Errorf("-replay %q: want scenario/kind/seed", key)
	}
	sc = slices.IndexFunc(s.cfg.mix, func(x scenario) bool { return x.name == parts[0] })
	if sc < 0 {
		return 0, "", 0, fmt.Errorf("-replay %q: no scenario %q", key, parts[0])
	}
	if kind, err = adapter.ParseKind(parts[1]); err != nil {
		return 0, "", 0, fmt.Errorf("-replay %q: %v", key, err)
	}
	if kind == adapter.Errgroup && !s.cfg.mix[sc].both {
		return 0, "", 0, fmt.Errorf("-replay %q: errgroup cannot run %s", key, parts[0])
	}
	if seed, err = parseSeed(parts[2]); err != nil {
		return 0, "", 0, fmt.Errorf("-replay %q: seed: %v", key, err)
	}
	return sc, kind, seed, nil
}

// runKey names a run for a replay.
func (s *soak) runKey(sc int, kind adapter.Kind, seed uint64) string {
	return fmt.Sprintf("%s/%s/%#x", s.cfg.mix[sc].name, kind, seed)
}

// runOne runs scenario sc on kind with seed and counts it.
func (s *soak) runOne(sc, k int, seed uint64, solo bool) (*env, error) {
	e := newEnv(kinds[k], seed)
	e.solo = solo
	t0 := time.Now()
	err := s.cfg.mix[sc].run(e)
	if !solo {
		s.count[sc][k].nanos.Add(int64(time.Since(t0)))
		s.count[sc][k].loaded.Add(1)
	}
	if err != nil {
		key := s.runKey(sc, kinds[k], seed)
		return e, fmt.Errorf("%s: %v\nreplay: go run ./internal/soak -replay %s", key, err, key)
	}
	s.count[sc][k].runs.Add(1)
	s.count[sc][k].tasks.Add(e.tasks.Load())
	return e, nil
}

// solo is the phase that runs each scenario that kind can run a few times
// alone in the process, for the most goroutines a run has at once.
func (s *soak) solo(kind adapter.Kind) phase {
	var runs []int
	for sc, x := range s.cfg.mix {
		if x.both || kind == adapter.Wsgroup {
			for range s.cfg.soloRuns {
				runs = append(runs, sc)
			}
		}
	}
	next := 0
	return phase{kind: kind, d: time.Hour, clients: 1, solo: true,
		pick: func(rng *rand.Rand) (int, uint64, bool) {
			if next == len(runs) {
				return 0, 0, false
			}
			next++
			return runs[next-1], rng.Uint64(), true
		}}
}

// phase runs p's load from every client for p.d while GOMAXPROCS changes,
// then checks that no goroutine is left.
func (s *soak) phase(p phase) (phaseResult, error) {
	k := 0
	for i, kind := range kinds {
		if kind == p.kind {
			k = i
		}
	}
	res := phaseResult{kind: p.kind}
	var before int64
	for sc := range s.count {
		before += s.count[sc][k].runs.Load()
		res.tasksTotal -= s.count[sc][k].tasks.Load()
	}

	start := time.Now()
	since := func() int64 { return int64(time.Since(start)) }
	var (
		stop     atomic.Bool
		failOnce sync.Once
		failure  error
		clients  sync.WaitGroup
		aux      sync.WaitGroup
		last     = make([]atomic.Int64, p.clients) // since, at the client's last finished run
		doing    = make([]atomic.Pointer[string], p.clients)
		peakG    maxGauge
		peakW    maxGauge
		changes  atomic.Int64
	)
	fail := func(err error) {
		failOnce.Do(func() { failure = err })
		stop.Store(true)
	}
	for c := range p.clients {
		clients.Go(func() {
			defer doing[c].Store(nil) // a client that has ended cannot stall
			rng := rand.New(rand.NewPCG(s.cfg.seed, uint64(c)))
			for !stop.Load() {
				sc, seed, ok := p.pick(rng)
				if !ok {
					return
				}
				key := s.runKey(sc, p.kind, seed)
				doing[c].Store(&key)
				e, err := s.runOne(sc, k, seed, p.solo)
				if err != nil {
					fail(fmt.Errorf("client %d, %v into the %s phase%s: %v", c, time.Duration(since()).Round(time.Millisecond), p.kind, soloText(p.solo), err))
					return
				}
				if p.solo {
					cs := &s.count[sc][k]
					cs.soloPeak = max(cs.soloPeak, e.peak.load()-int64(s.base))
				}
				last[c].Store(since())
				if s.cfg.verbose {
					s.printf("client %d: %s ok\n", c, key)
				}
			}
		})
	}
	if !p.solo {
		aux.Go(func() { changes.Store(changeProcs(&stop, s.cfg.procs, s.cfg.seed)) })
	}
	aux.Go(func() {
		for !stop.Load() {
			peakG.see(int64(runtime.NumGoroutine()))
			if p.kind == adapter.Wsgroup {
				peakW.see(int64(wsgroup.ReadStats().Workers))
			}
			time.Sleep(time.Millisecond)
		}
	})
	allDone := make(chan struct{})
	go func() { clients.Wait(); close(allDone) }()

	// Watch for the deadline and for stalled clients until every client
	// has finished its last run (a failure stops them too).
	deadline := time.NewTimer(p.d)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
watch:
	for {
		select {
		case <-allDone:
			break watch
		case <-deadline.C:
			stop.Store(true)
		case <-tick.C:
			now := since()
			for c := range last {
				if now-last[c].Load() > int64(s.cfg.stall) && doing[c].Load() != nil {
					// The stuck client cannot be unwound: leave it, and
					// the goroutines it holds, to the dump.
					fail(fmt.Errorf("STALL: client %d made no progress for %v, running %s\nreplay: go run ./internal/soak -replay %s\nall goroutines:\n%s",
						c, s.cfg.stall, *doing[c].Load(), *doing[c].Load(), testkit.Stacks()))
					break watch
				}
			}
		}
	}
	stop.Store(true)
	aux.Wait()
	res.took = time.Since(start)
	res.peakGoroutines, res.peakWorkers, res.procChanges = peakG.load(), peakW.load(), changes.Load()
	for sc := range s.count {
		res.runs += s.count[sc][k].runs.Load()
		res.tasksTotal += s.count[sc][k].tasks.Load()
	}
	res.runs -= before
	if failure != nil {
		return res, failure
	}
	end := time.Now()
	if left := s.leftovers(); left != nil {
		return res, fmt.Errorf("%d goroutines are left %v after the %s load stopped:\n\n%s", len(left), s.cfg.leak, p.kind, strings.Join(left, "\n\n"))
	}
	res.goneAfter = time.Since(end)
	return res, nil
}

// changeProcs sets GOMAXPROCS to one of procs at random every few
// milliseconds until stop, then back to what it was, and returns how many
// times it changed it.
func changeProcs(stop *atomic.Bool, procs []int, seed uint64) int64 {
	old := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(old)
	rng := rand.New(rand.NewPCG(seed, 1<<63))
	var n int64
	for !stop.Load() {
		time.Sleep(time.Duration(1+rng.IntN(20)) * time.Millisecond)
		if p := procs[rng.IntN(len(procs))]; p != runtime.GOMAXPROCS(p) {
			n++
		}
	}
	return n
}

// leftovers waits up to the leak bound for every goroutine of wsgroup, of
// errgroup and of the soak that the soak started to end, and returns the
// stacks of those still there, or nil.
func (s *soak) leftovers() []string {
	deadline := time.Now().Add(s.cfg.leak)
	for {
		left := ours(testkit.Stacks(), s.there)
		if left == nil || time.Now().After(deadline) {
			return left
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Frames that make a goroutine one the soak must not leave behind: the
// library's, errgroup's, and the soak's own (in a main package the
// function names say main, so its files are matched by path).
var ourFrames = []string{"github.com/go-steal/steal/", "golang.org/x/sync/errgroup", "/internal/soak/"}

// ours returns the stacks, in a dump of every goroutine (runtime.Stack's
// form), of the goroutines that run code of ourFrames, but those whose ids
// are in except.
func ours(dump []byte, except map[string]bool) []string {
	var left []string
	for _, g := range goroutines(dump) {
		if except[goroutineID(g)] {
			continue
		}
		for _, f := range ourFrames {
			if strings.Contains(g, f) {
				left = append(left, g)
				break
			}
		}
	}
	return left
}

// goroutines splits a dump of every goroutine into one stack each.
func goroutines(dump []byte) []string {
	return strings.Split(strings.TrimSpace(string(dump)), "\n\n")
}

// goroutineID returns the id of the goroutine whose stack g is ("goroutine
// 7 [running]:...").
func goroutineID(g string) string {
	if f := strings.Fields(g); len(f) > 1 {
		return f[1]
	}
	return ""
}

// table prints the runs and tasks of each scenario on each implementation,
// and the peak goroutines of a run alone.
func (s *soak) table() {
	s.printf("\n%-20s %39s   %39s\n", "", "wsgroup", "errgroup")
	s.printf("%-20s %10s %12s %8s %7s   %10s %12s %8s %7s\n", "scenario", "runs", "tasks", "peak", "ms/run", "runs", "tasks", "peak", "ms/run")
	for sc, x := range s.cfg.mix {
		s.printf("%-20s", x.name)
		for k := range kinds {
			c := &s.count[sc][k]
			if k == 1 && !x.both {
				s.printf("   %39s", "(wsgroup only)")
				continue
			}
			sep := " "
			if k > 0 {
				sep = "   "
			}
			s.printf("%s%10d %12d %8d %7.2f", sep, c.runs.Load(), c.tasks.Load(), c.soloPeak, float64(c.nanos.Load())/1e6/float64(max(1, c.loaded.Load())))
		}
		s.printf("\n")
	}
	s.printf("runs and tasks (tasks and loop bodies started): every phase, the runs alone included; peak: the most goroutines\n")
	s.printf("one run alone had at once, beyond the process's own; ms/run: the mean time of a run, under its phase's load\n\n")
}

// syncWriter serializes writes from several goroutines.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

func soloText(solo bool) string {
	if solo {
		return " (runs alone)"
	}
	return ""
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
