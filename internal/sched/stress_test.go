package sched

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-steal/steal/internal/testkit"
)

// ---------------------------------------------------------------------------
// Lost wake-ups under churn: the idle protocol must never leave a task
// queued while every worker sleeps or retires.

// churn is the state of one run of TestChurnLostWakeups.
type churn struct {
	submitted, ran, twice atomic.Int64
}

// task returns a task of g that runs at most once (a second run is
// counted in twice) and, while depth > 0, spawns more: tasks of its own
// group, and a nested group that it waits on. Its shape is derived from
// seed, so tasks need no shared random source.
func (c *churn) task(g *Group, seed uint64, depth int) func() error {
	c.submitted.Add(1)
	var once atomic.Bool
	return func() error {
		if !once.CompareAndSwap(false, true) {
			c.twice.Add(1)
			return nil
		}
		c.ran.Add(1)
		if depth == 0 {
			return nil
		}
		x := seed*0x9E3779B97F4A7C15 + 1
		x ^= x >> 29
		switch x % 4 {
		case 0: // same group, from inside
			for i := range 1 + x>>8%3 {
				g.Go(c.task(g, x+i, depth-1))
			}
		case 1: // a nested group, waited on here
			var n Group
			for i := range 1 + x>>8%3 {
				n.Go(c.task(&n, x+i, depth-1))
			}
			n.Wait()
		case 2: // both
			g.Go(c.task(g, x+7, depth-1))
			var n Group
			n.Go(c.task(&n, x+9, depth-1))
			n.Wait()
		}
		return nil
	}
}

// gap pauses the submitter between two Go calls, in one of several ways, so
// that the workers are caught in every phase of the idle protocol:
// searching, yielding, sleepy, asleep, lingering. Yielding a random number
// of times walks an idle worker through its rounds of searches (at
// GOMAXPROCS 1 one round per yield) up to and past the point where it gets
// sleepy; a real sleep (at least the timer granularity, which can be a
// millisecond) lets it fall asleep.
func gap(r *rand.Rand) {
	switch r.IntN(8) {
	case 0, 1:
	case 2, 3, 4:
		for range r.IntN(2 * 40) {
			runtime.Gosched()
		}
	case 5, 6:
		spin(time.Duration(r.IntN(30)) * time.Microsecond)
	default:
		time.Sleep(time.Duration(10+r.IntN(50)) * time.Microsecond)
	}
}

// TestChurnLostWakeups: thousands of tiny top-level groups, each fed a few
// tasks with pauses in between, so that workers go idle and to sleep
// between posts, and tasks that spawn tasks. Every task runs exactly once
// and nothing hangs (a lost wake-up shows as a hang, caught by the guard).
func TestChurnLostWakeups(t *testing.T) {
	groups := 5000
	if testing.Short() {
		groups = 500
	}
	forProcs(t, []int{1, 2, 4}, func(t *testing.T, procs int) {
		var c churn
		r := rand.New(rand.NewPCG(uint64(procs), 99))
		for i := range groups {
			var g Group
			switch i % 8 {
			case 3:
				g.SetLimit(1)
			case 5:
				g.SetLimit(2)
			}
			k := 1 + r.IntN(4)
			for j := range k {
				g.Go(c.task(&g, r.Uint64(), r.IntN(3)))
				if j < k-1 {
					gap(r)
				}
			}
			if r.IntN(4) == 0 {
				gap(r) // let the workers go idle before Wait
			}
			if err := g.Wait(); err != nil {
				t.Fatalf("group %d: Wait() = %v", i, err)
			}
			if c.ran.Load() != c.submitted.Load() {
				t.Fatalf("group %d: Wait returned with %d of %d tasks run", i, c.ran.Load(), c.submitted.Load())
			}
			if n := c.twice.Load(); n != 0 {
				t.Fatalf("group %d: %d tasks ran twice", i, n)
			}
		}
		t.Logf("%d groups, %d tasks", groups, c.submitted.Load())
	})
}

// TestChurnOneGroup: the same, but one long-lived group fed in bursts with
// pauses long enough for the workers to sleep or retire, never waited on
// until the end.
func TestChurnOneGroup(t *testing.T) {
	rounds := testkit.ScaleDown(3000, 400)
	forProcs(t, []int{1, 2, 4}, func(t *testing.T, procs int) {
		var c churn
		var g Group
		r := rand.New(rand.NewPCG(uint64(procs), 5))
		var wg sync.WaitGroup
		for i := range rounds {
			k := 1 + r.IntN(3)
			for range k {
				wg.Add(1)
				f := c.task(&g, r.Uint64(), r.IntN(3))
				g.Go(func() error { defer wg.Done(); return f() })
				gap(r)
			}
			if i%50 == 49 {
				// Wait for this batch without Wait (which would run
				// the group's tasks itself): only the wake-up
				// protocol gets the tasks run.
				wg.Wait()
				if i%100 == 99 {
					time.Sleep(2 * linger) // let the workers retire
				}
			}
		}
		wantNil(t, "Wait()", g.Wait())
		if c.ran.Load() != c.submitted.Load() || c.twice.Load() != 0 {
			t.Errorf("ran %d of %d tasks, %d twice", c.ran.Load(), c.submitted.Load(), c.twice.Load())
		}
	})
}

// ---------------------------------------------------------------------------
// Differential test against a reference errgroup.

// testGroup is what a random program needs of a group.
type testGroup interface {
	Go(f func() error)
	Wait() error
	SetLimit(n int)
}

// schedGroup adapts Group.
type schedGroup struct{ g Group }

func (s *schedGroup) Go(f func() error) { s.g.Go(f) }
func (s *schedGroup) Wait() error       { return s.g.Wait() }
func (s *schedGroup) SetLimit(n int)    { s.g.SetLimit(n) }

// refGroup is the reference: errgroup's semantics in the plainest form,
// one goroutine per task, a WaitGroup, the first error, a semaphore for the
// limit.
type refGroup struct {
	wg   sync.WaitGroup
	sem  chan struct{}
	once sync.Once
	err  error
}

func (r *refGroup) Go(f func() error) {
	if r.sem != nil {
		r.sem <- struct{}{}
	}
	r.wg.Add(1)
	go func() {
		defer func() {
			if r.sem != nil {
				<-r.sem
			}
			r.wg.Done()
		}()
		if err := f(); err != nil {
			r.once.Do(func() { r.err = err })
		}
	}()
}

func (r *refGroup) Wait() error { r.wg.Wait(); return r.err }

func (r *refGroup) SetLimit(n int) {
	if n < 0 {
		r.sem = nil
		return
	}
	r.sem = make(chan struct{}, n)
}

// A random program: a tree of groups and tasks.
type progGroup struct {
	id    int
	limit int // ≤ 0: none
	tasks []*progTask
}

type progTask struct {
	id     int
	fail   bool
	spawn  []*progTask  // Go'd on the task's own group, from inside it
	nested []*progGroup // made, filled and waited on inside the task
	yield  bool
}

// taskErr is the error task id returns.
type taskErr int

func (e taskErr) Error() string { return fmt.Sprintf("task %d failed", int(e)) }

type progGen struct {
	r              *rand.Rand
	budget         int
	nTasks, nGroup int
}

func (p *progGen) group(depth int) *progGroup {
	pg := &progGroup{id: p.nGroup}
	p.nGroup++
	if p.r.IntN(4) == 0 {
		pg.limit = 1 + p.r.IntN(3)
	}
	for range 1 + p.r.IntN(5) {
		if p.budget <= 0 {
			break
		}
		// errgroup deadlocks when a task Go's on its own group at the
		// limit; the reference is errgroup, so limited groups get no
		// same-group spawns.
		pg.tasks = append(pg.tasks, p.task(depth, pg.limit <= 0))
	}
	return pg
}

func (p *progGen) task(depth int, maySpawn bool) *progTask {
	p.budget--
	tk := &progTask{id: p.nTasks, fail: p.r.IntN(5) == 0, yield: p.r.IntN(3) == 0}
	p.nTasks++
	if depth > 0 {
		if maySpawn {
			for range p.r.IntN(3) {
				if p.budget > 0 {
					tk.spawn = append(tk.spawn, p.task(depth-1, true))
				}
			}
		}
		for range p.r.IntN(3) {
			if p.budget > 0 {
				tk.nested = append(tk.nested, p.group(depth-1))
			}
		}
	}
	return tk
}

// failing returns the ids of the failing tasks of pg (its own tasks and
// their same-group spawns).
func (pg *progGroup) failing() []int {
	var ids []int
	var walk func(tk *progTask)
	walk = func(tk *progTask) {
		if tk.fail {
			ids = append(ids, tk.id)
		}
		for _, s := range tk.spawn {
			walk(s)
		}
	}
	for _, tk := range pg.tasks {
		walk(tk)
	}
	return ids
}

func (pg *progGroup) all(f func(*progGroup)) {
	f(pg)
	var walk func(tk *progTask)
	walk = func(tk *progTask) {
		for _, s := range tk.spawn {
			walk(s)
		}
		for _, n := range tk.nested {
			n.all(f)
		}
	}
	for _, tk := range pg.tasks {
		walk(tk)
	}
}

// progRun records what one execution of a program did.
type progRun struct {
	ran   []atomic.Int32 // by task id
	waits []atomic.Int64 // by group id: 0 not waited, 1 nil, 2+id task id's error
	other atomic.Int64   // Waits that returned an error of no task
}

func runProg(pg *progGroup, nTasks, nGroups int, newGroup func() testGroup) *progRun {
	run := &progRun{ran: make([]atomic.Int32, nTasks), waits: make([]atomic.Int64, nGroups)}
	run.group(pg, newGroup)
	return run
}

func (run *progRun) group(pg *progGroup, newGroup func() testGroup) error {
	g := newGroup()
	if pg.limit > 0 {
		g.SetLimit(pg.limit)
	}
	for _, tk := range pg.tasks {
		g.Go(run.task(tk, g, newGroup))
	}
	err := g.Wait()
	var te taskErr
	switch {
	case err == nil:
		run.waits[pg.id].Store(1)
	case errors.As(err, &te):
		run.waits[pg.id].Store(2 + int64(te))
	default:
		run.other.Add(1)
	}
	return err
}

func (run *progRun) task(tk *progTask, g testGroup, newGroup func() testGroup) func() error {
	return func() error {
		run.ran[tk.id].Add(1)
		for _, s := range tk.spawn {
			g.Go(run.task(s, g, newGroup))
		}
		if tk.yield {
			runtime.Gosched()
		}
		for _, n := range tk.nested {
			run.group(n, newGroup)
		}
		if tk.fail {
			return taskErr(tk.id)
		}
		return nil
	}
}

// TestDifferentialAgainstReference runs random programs (trees of tasks,
// same-group spawns, nested groups with and without limits, failing tasks)
// on Group and on refGroup, and compares: each task runs exactly once in
// both, and each Wait returns nil in both or, in both, the error of one of
// its group's failing tasks (the same one when only one fails).
func TestDifferentialAgainstReference(t *testing.T) {
	programs := testkit.ScaleDown(400, 150)
	testkit.Guard(t, func() {
		for seed := range programs {
			gen := &progGen{r: rand.New(rand.NewPCG(uint64(seed), 2024)), budget: 20 + seed%120}
			prog := gen.group(4)
			want := runProg(prog, gen.nTasks, gen.nGroup, func() testGroup { return new(refGroup) })
			got := runProg(prog, gen.nTasks, gen.nGroup, func() testGroup { return new(schedGroup) })
			for id := range gen.nTasks {
				if w, g := want.ran[id].Load(), got.ran[id].Load(); w != 1 || g != 1 {
					t.Fatalf("program %d: task %d ran %d times (reference: %d), want once", seed, id, g, w)
				}
			}
			if want.other.Load() != 0 || got.other.Load() != 0 {
				t.Fatalf("program %d: a Wait returned an error no task returned", seed)
			}
			prog.all(func(pg *progGroup) {
				fails := pg.failing()
				w, g := want.waits[pg.id].Load(), got.waits[pg.id].Load()
				switch {
				case w == 0 || g == 0:
					t.Fatalf("program %d: group %d not waited (reference %d, sched %d)", seed, pg.id, w, g)
				case len(fails) == 0:
					if w != 1 || g != 1 {
						t.Fatalf("program %d: group %d has no failing task; Wait codes %d (reference) and %d", seed, pg.id, w, g)
					}
				default:
					if w == 1 || g == 1 {
						t.Fatalf("program %d: group %d has failing tasks %v; Wait returned nil (reference code %d, sched code %d)", seed, pg.id, fails, w, g)
					}
					if !slices.Contains(fails, int(g-2)) || !slices.Contains(fails, int(w-2)) {
						t.Fatalf("program %d: group %d: Wait returned task %d's error (reference: %d), want one of %v", seed, pg.id, g-2, w-2, fails)
					}
					if len(fails) == 1 && w != g {
						t.Fatalf("program %d: group %d: errors differ: %d vs reference %d", seed, pg.id, g-2, w-2)
					}
				}
			})
		}
	})
	testkit.VerifyNone(t)
}

// TestChurnBlockingPairs: pairs of tasks from outside where the first
// blocks until the second has run. A worker that takes both in one batch
// from the injector runs the first and leaves the second in its deque;
// another worker that was getting sleepy meanwhile must notice it (the
// batch is announced like any push) instead of sleeping, lingering and
// retiring with the task stuck behind a blocked one. Gaps of varied length
// between pairs catch the idle workers in every phase. The limit variant
// adds the outside Go's wait for a slot.
func TestChurnBlockingPairs(t *testing.T) {
	pairs := testkit.ScaleDown(20000, 4000)
	for _, procs := range []int{2, 4} {
		for _, limit := range []int{-1, procs} {
			t.Run(fmt.Sprintf("procs=%d/limit=%d", procs, limit), func(t *testing.T) {
				testkit.SetProcs(t, procs)
				testkit.Guard(t, func() {
					r := rand.New(rand.NewPCG(uint64(procs), 3))
					var g Group
					g.SetLimit(limit)
					for i := range pairs {
						second, firstDone := make(chan struct{}), make(chan struct{})
						g.Go(func() error { <-second; close(firstDone); return nil })
						g.Go(func() error { close(second); return nil })
						<-firstDone
						if i%64 == 0 {
							g.Wait() // now and then a fresh start
						}
						for range r.IntN(3 * 40) {
							runtime.Gosched()
						}
					}
					wantNil(t, "Wait()", g.Wait())
				})
				testkit.VerifyNone(t)
			})
		}
	}
}
