//go:build explore

package sched

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	stdatomic "sync/atomic"
	"testing"

	"github.com/go-steal/steal/internal/explore"
	"github.com/go-steal/steal/internal/explore/xsync"
	"github.com/go-steal/steal/internal/gid"
	"github.com/go-steal/steal/internal/sleep"
)

// The scheduler under the interleaving explorer (package explore): a
// program of groups runs on a fresh pool, with the real submission paths
// (an outside Go into the injector, a Go inside a task onto the worker's
// deque), the real workers (spawned, finding, stealing, sleeping, lingering,
// retiring, and parked as spares to be handed the next slot) and the real
// Wait (helping from outside, helping on a
// worker, parking), and every schedule with at most a few preemptions is
// run.
//
// Properties, checked on every schedule:
//
//   - every task runs exactly once;
//   - Wait returns only after every task of its group has returned, and
//     each Wait returns exactly once;
//   - a group's count of unfinished tasks never exceeds the tasks given to
//     it (a count decremented twice wraps around) and is zero at the end:
//     termination is detected once, after the last task;
//   - no lost wake-up, in every state: no task is queued while a worker
//     sleeps, no worker is searching (awake and idle) and no operation
//     that owes a wake-up (a post, a worker's hand-over when it finds work
//     or leaves) is in flight; and at a quiescent state (no thread can
//     run, so only a timer could end the wait) no task is queued. The
//     second catches a stall that a linger timeout would later have ended;
//   - the pool ends empty: every worker retired and the sleep counters at
//     zero;
//   - then its statistics are exact: Tasks counts every task that ran, and
//     every worker started has retired.
//
// The pool gets one injector shard (the shard is chosen by goroutine id,
// which differs from run to run) and a size of 4, above the number of
// workers these programs can use, and an outside Wait polls the count for
// one round before it parks. The hand-off's monitor samples the real clock and
// the runtime, which no schedule can replay, so it does not run here: a
// program that needed its compensation would stall, and fail. The idle
// protocol is cut to one search round before sleepiness, as in package
// sleep's exploration.
//
// Run with: go test -tags explore -run Explore ./internal/sched

// probeGroup is a group under test with what its tasks did.
type probeGroup struct {
	g       Group
	given   int               // tasks given to it (Go calls so far)
	ran     []stdatomic.Int32 // by task id: times run
	waits   stdatomic.Int32   // Waits returned
	waiters int32             // Waits the program makes, if not 1
}

func newProbeGroup(tasks int) *probeGroup {
	return &probeGroup{ran: make([]stdatomic.Int32, tasks)}
}

// goTask gives task id (body f, may be nil) to the group.
func (pg *probeGroup) goTask(id int, f func()) {
	pg.given++
	pg.give(id, f)
}

// give gives task id (body f, may be nil) to the group, as goTask does,
// from a goroutine that may call it at the same time as another one: it
// leaves given to the program, which must set it before it waits.
func (pg *probeGroup) give(id int, f func()) {
	pg.g.Go(func() error {
		if f != nil {
			f()
		}
		pg.ran[id].Add(1)
		return nil
	})
}

// goTaskErr gives task id, which returns err, to the group.
func (pg *probeGroup) goTaskErr(id int, err error) {
	pg.given++
	pg.g.Go(func() error {
		pg.ran[id].Add(1)
		return err
	})
}

// wait waits for the group and checks that every task given so far ran
// exactly once before Wait returned.
func (pg *probeGroup) wait(s *explore.Schedule, name string) {
	if err := pg.g.Wait(); err != nil {
		s.Errorf("%s: Wait returned %v", name, err)
	}
	pg.waits.Add(1)
	for id := range pg.given {
		if n := pg.ran[id].Load(); n != 1 {
			s.Errorf("%s: Wait returned with task %d run %d times", name, id, n)
		}
	}
}

// countOK is the count property of one group.
func (pg *probeGroup) countOK(name string) error {
	if c := pg.g.count(); c < 0 || c > int64(len(pg.ran)) {
		return fmt.Errorf("%s: count %d of unfinished tasks, with %d tasks in the program", name, c, len(pg.ran))
	}
	return nil
}

// lostWakeUp is the no-lost-wake-up property of pool p.
func lostWakeUp(p *Pool) error {
	c := p.sleep.Load()
	if q := p.queued(); q > 0 && c.Sleeping() > 0 && c.AwakeIdle() == 0 && postsInFlight.Load() == 0 {
		return fmt.Errorf("lost wake-up: %d task(s) queued, %d worker(s) asleep, none searching, no post in flight", q, c.Sleeping())
	}
	return nil
}

// schedProgram is one configuration: prog runs as the schedule's main
// thread (outside the pool) on a fresh pool.
type schedProgram struct {
	name string
	prog func(s *explore.Schedule, groups func(...*probeGroup))
	// randomOnly: too many schedules for the exhaustive search within
	// its bound (an outside Wait's polling alone makes each of its loads
	// a point of choice), so only the random search (PCT) runs it.
	randomOnly bool
	// helpsJoin: the program is there to have a Wait run tasks of a
	// group joined inside its group's task (join.go); the exploration
	// fails if no schedule did.
	helpsJoin bool
}

func (sp schedProgram) run(s *explore.Schedule) {
	p := newPool()
	p.inj = injector{shards: make([]queue, 1), mask: 0}
	global = p
	var groups []*probeGroup
	track := func(gs ...*probeGroup) {
		for i, pg := range gs {
			name := fmt.Sprintf("group %d", len(groups)+i)
			s.Always(func() error { return pg.countOK(name) })
		}
		groups = append(groups, gs...)
	}
	s.Always(func() error { return lostWakeUp(p) })
	s.AtQuiescence(func() error {
		if q := p.queued(); q > 0 {
			return fmt.Errorf("stall: %d task(s) queued and no thread can run (only a timer would end it)", q)
		}
		return nil
	})
	// At the end of the schedule, when every thread (the workers too)
	// has returned.
	s.AtQuiescence(func() error {
		if p.live.Load() != 0 {
			return nil // workers still to linger out and retire
		}
		for i, pg := range groups {
			if c := pg.g.count(); c != 0 {
				return fmt.Errorf("group %d: count %d after every worker left", i, c)
			}
			for id := range pg.ran {
				if n := pg.ran[id].Load(); n != 1 && id < pg.given {
					return fmt.Errorf("group %d: task %d ran %d times", i, id, n)
				}
			}
		}
		if c := p.sleep.Load(); c.Inactive() != 0 || c.Sleeping() != 0 {
			return fmt.Errorf("sleep counters after every worker left: %d inactive, %d sleeping", c.Inactive(), c.Sleeping())
		}
		var ran uint64
		for _, pg := range groups {
			for id := range pg.ran {
				ran += uint64(pg.ran[id].Load())
			}
		}
		if st := p.readStats(); st.Tasks != ran || st.WorkersStarted != st.WorkersRetired {
			return fmt.Errorf("stats after every worker left: %d tasks counted, %d ran; %d workers started, %d retired",
				st.Tasks, ran, st.WorkersStarted, st.WorkersRetired)
		}
		return nil
	})
	sp.prog(s, track)
	for i, pg := range groups {
		want := max(pg.waiters, 1)
		if n := pg.waits.Load(); n != want {
			s.Errorf("group %d: %d Waits returned, want %d", i, n, want)
		}
	}
}

func schedPrograms() []schedProgram {
	return []schedProgram{
		// Two tasks from outside, then Wait: the injector, a spawn, the
		// outside Wait helping (taking back its own task) and parking.
		{name: "outside-2", prog: func(s *explore.Schedule, track func(...*probeGroup)) {
			pg := newProbeGroup(2)
			track(pg)
			pg.goTask(0, nil)
			pg.goTask(1, nil)
			pg.wait(s, "group 0")
		}},
		// A task forks a child onto its worker's deque and returns: the
		// local push, its wake-up or spawn, a steal, the batched
		// completions and the outside Wait.
		{name: "fork", prog: func(s *explore.Schedule, track func(...*probeGroup)) {
			pg := newProbeGroup(2)
			track(pg)
			pg.goTask(0, func() { pg.goTask(1, nil) })
			pg.wait(s, "group 0")
		}},
		// Two tasks from outside; the first forks a child, perhaps after
		// the worker of the second has gone to sleep: the child's push
		// must wake it (or the other worker must find the child).
		{name: "fork-wakes-sleeper", prog: func(s *explore.Schedule, track func(...*probeGroup)) {
			pg := newProbeGroup(3)
			track(pg)
			pg.goTask(0, func() { pg.goTask(2, nil) })
			pg.goTask(1, nil)
			pg.wait(s, "group 0")
		}},
		// A worker retires, and a second task from outside comes as it
		// gives up its slot, or after: the last look of the retiring
		// worker, the post that relies on it, the goroutine parking as a
		// spare and being handed the next slot (or a new goroutine
		// started when the spare is not parked yet), and the spares
		// leaving at the end. The main thread parks until the last worker
		// gives up its slot (a hook in release), so that the linger can
		// pass (it passes only when no thread can run), and then until a
		// worker has run the second task.
		{name: "retire-reuse", prog: func(s *explore.Schedule, track func(...*probeGroup)) {
			first, second := newProbeGroup(1), newProbeGroup(1)
			track(first, second)
			retired := xsync.NewParker()
			var fired stdatomic.Bool
			hook := func(at pairStep, w *worker, live int32) {
				if at == retireStop && live == 0 && fired.CompareAndSwap(false, true) {
					retired.Unpark()
				}
			}
			testHookPair.Store((*pairHook)(&hook))
			defer testHookPair.Store(nil)
			first.goTask(0, nil)
			first.wait(s, "group 0")
			retired.Park()
			// The main thread parks until the second task has run, not
			// in Wait, which would run it itself: only a worker may.
			ran := xsync.NewParker()
			second.goTask(0, ran.Unpark)
			ran.Park()
			second.wait(s, "group 1")
		}},
		// A limit of one: the second outside Go waits for a slot (polls,
		// yields, parks) until the first task finishes and wakes it.
		{name: "limit-1", prog: func(s *explore.Schedule, track func(...*probeGroup)) {
			pg := newProbeGroup(2)
			track(pg)
			pg.g.SetLimit(1)
			pg.goTask(0, nil)
			pg.goTask(1, nil)
			pg.wait(s, "group 0")
		}},
		// A task of another group gives a task to a limited group whose
		// slot another task holds: the Go sets the task aside, and the
		// slot holder, ending meanwhile, must start it (or the Go, seeing
		// the slot free after all, starts it itself).
		{name: "set-aside", prog: func(s *explore.Schedule, track func(...*probeGroup)) {
			limited, other := newProbeGroup(2), newProbeGroup(1)
			track(limited, other)
			limited.g.SetLimit(1)
			limited.goTask(0, nil)
			other.goTask(0, func() { limited.goTask(1, nil) })
			other.wait(s, "group 1")
			limited.wait(s, "group 0")
		}},
		// Two tasks fail at once in a group with a context: the first
		// error recorded is the one Wait returns and the context's cause.
		{name: "first-error", prog: func(s *explore.Schedule, track func(...*probeGroup)) {
			pg := newProbeGroup(2)
			track(pg)
			ctx, cancel := context.WithCancelCause(context.Background())
			pg.g.SetContext(ctx, cancel)
			errA, errB := errors.New("a"), errors.New("b")
			pg.goTaskErr(0, errA)
			pg.goTaskErr(1, errB)
			err := pg.g.Wait()
			pg.waits.Add(1)
			if err != errA && err != errB {
				s.Errorf("Wait returned %v, want one of the tasks' errors", err)
			}
			if cause := context.Cause(ctx); cause != err {
				s.Errorf("the context's cause is %v, Wait returned %v", cause, err)
			}
			for id := range pg.ran {
				if n := pg.ran[id].Load(); n != 1 {
					s.Errorf("task %d ran %d times", id, n)
				}
			}
		}},
		// A task makes a nested group with two tasks and waits for it on
		// its worker (helping), inside an outer group waited from outside.
		{name: "nested", prog: func(s *explore.Schedule, track func(...*probeGroup)) {
			outer, inner := newProbeGroup(1), newProbeGroup(2)
			track(outer, inner)
			outer.goTask(0, func() {
				inner.goTask(0, nil)
				inner.goTask(1, nil)
				inner.wait(s, "group 1")
			})
			outer.wait(s, "group 0")
		}},
		// A task forks two tasks of a nested group and waits for them on
		// its worker, while the main thread, told of the two Go calls,
		// waits for the same group from outside. The helping Wait
		// subtracts the tasks it ran itself all at once (worker.help):
		// when they are all that is left, which must wake the main
		// thread if it parked, or, when another worker or the main
		// thread took a task, before it blocks, so that the last task
		// to end wakes it.
		{name: "wait-twice", prog: func(s *explore.Schedule, track func(...*probeGroup)) {
			outer, inner := newProbeGroup(1), newProbeGroup(2)
			inner.waiters = 2
			track(outer, inner)
			given := xsync.NewParker()
			outer.goTask(0, func() {
				inner.goTask(0, nil)
				inner.goTask(1, nil)
				given.Unpark()
				inner.wait(s, "group 1 in the task")
			})
			given.Park()
			inner.wait(s, "group 1 outside")
			outer.wait(s, "group 0")
		}, randomOnly: true},
		// Two tasks give a task each to one group, on their workers or on
		// the main thread (helping in Wait), at the same time; the group
		// is waited for once both have: the count must take both.
		{name: "go-from-two", prog: func(s *explore.Schedule, track func(...*probeGroup)) {
			outer, shared := newProbeGroup(2), newProbeGroup(2)
			track(outer, shared)
			outer.goTask(0, func() { shared.give(0, nil) })
			outer.goTask(1, func() { shared.give(1, nil) })
			outer.wait(s, "group 0")
			shared.given = 2
			shared.wait(s, "group 1")
		}, randomOnly: true},
		// A join that helps a thief: a task forks a task of a nested group
		// g and waits for g on its worker; when another worker has taken
		// g's task (the thief), that task forks two tasks of its own
		// nested group and waits for them, and the first Wait, with
		// nothing of g's to run, runs the thief's tasks (join.go). The
		// thief may end its task (running both of its tasks itself)
		// while the helper's search is under way: the helper then finds
		// the chain gone, or holds a task that the thief's Wait still
		// waits for.
		{name: "help-thief", prog: func(s *explore.Schedule, track func(...*probeGroup)) {
			outer, g, inner := newProbeGroup(1), newProbeGroup(1), newProbeGroup(2)
			track(outer, g, inner)
			outer.goTask(0, func() {
				g.goTask(0, func() {
					inner.goTask(0, nil)
					inner.goTask(1, nil)
					inner.wait(s, "group 2")
				})
				g.wait(s, "group 1")
			})
			outer.wait(s, "group 0")
		}, randomOnly: true, helpsJoin: true},
		// Two joins of one group at once: tasks of two groups, a and b,
		// each wait for a group h whose task forks two tasks of a nested
		// group and waits for them, while the task that gave them all
		// waits for a and then b on its worker. Both Waits for h record
		// themselves (enterJoin: the later store stays), and the helping
		// Waits for a and b follow whichever record they read, through h
		// to the nested group's tasks. A task of h or of the nested group
		// that the Wait for a (or b) runs must be one that Wait waits
		// for: a's task (b's) is inside its Wait for h, and for a nested
		// task, h's task inside its Wait for the nested group, for as
		// long as the helped task runs (join.go's rule).
		{name: "two-joins", prog: func(s *explore.Schedule, track func(...*probeGroup)) {
			outer, h, inner, a, b := newProbeGroup(1), newProbeGroup(1), newProbeGroup(2), newProbeGroup(1), newProbeGroup(1)
			h.waiters = 2
			track(outer, h, inner, a, b)
			var outerG stdatomic.Int64                   // the goroutine of outer's task
			var outerWaits stdatomic.Pointer[probeGroup] // a or b while outer's task waits for it
			var inWait [2]stdatomic.Bool                 // a's task, b's task inside its Wait for h
			var hInWait stdatomic.Bool                   // h's task inside its Wait for inner
			// helped checks a task of h (nested false) or of inner run by
			// outer's task while it waits for a or b.
			helped := func(nested bool) {
				if gid.Current() != outerG.Load() {
					return
				}
				for i, x := range []*probeGroup{a, b} {
					if outerWaits.Load() != x {
						continue
					}
					if !inWait[i].Load() || nested && !hInWait.Load() {
						group := 1
						if nested {
							group = 2
						}
						s.Errorf("the Wait for group %d ran a task of group %d that it does not wait for", 3+i, group)
					}
				}
			}
			outer.goTask(0, func() {
				outerG.Store(gid.Current())
				h.goTask(0, func() {
					helped(false)
					inner.goTask(0, func() { helped(true) })
					inner.goTask(1, func() { helped(true) })
					hInWait.Store(true)
					inner.wait(s, "group 2")
					hInWait.Store(false)
				})
				for i, x := range []*probeGroup{a, b} {
					x.goTask(0, func() {
						inWait[i].Store(true)
						h.wait(s, fmt.Sprintf("group 1 in a task of group %d", 3+i))
						inWait[i].Store(false)
					})
				}
				for _, x := range []*probeGroup{a, b} {
					outerWaits.Store(x)
					x.wait(s, "group 3 or 4")
					outerWaits.Store(nil)
				}
			})
			outer.wait(s, "group 0")
		}, randomOnly: true, helpsJoin: true},
		// A group starts again from two goroutines at once, while the
		// record of its last use's Wait is still there: a task of p waits
		// for g, returns from that Wait and gives g a task, as a task of
		// another group does too, while the task that gave p's task waits
		// for p on its worker. That Wait must not run g's new tasks: no
		// task of p waits for them (join.go's rule, and enterJoin on why
		// the record goes before either task is queued). p's task stays
		// active until both tasks are queued, so that the Wait for p may
		// find them.
		{name: "restart-two", prog: func(s *explore.Schedule, track func(...*probeGroup)) {
			outer, p, g, r := newProbeGroup(1), newProbeGroup(1), newProbeGroup(3), newProbeGroup(1)
			g.waiters = 2
			track(outer, p, g, r)
			restart, given := xsync.NewParker(), xsync.NewParker()
			var outerG stdatomic.Int64 // the goroutine of outer's task
			var waitsP stdatomic.Bool  // outer's task is inside its Wait for p
			var pInG stdatomic.Bool    // p's task is inside its Wait for g
			helped := func() {
				if gid.Current() == outerG.Load() && waitsP.Load() && !pInG.Load() {
					s.Errorf("the Wait for group 1 ran a task of group 2 that it does not wait for")
				}
			}
			outer.goTask(0, func() {
				outerG.Store(gid.Current())
				r.goTask(0, func() {
					restart.Park()
					g.give(2, helped)
					given.Unpark()
				})
				p.goTask(0, func() {
					g.goTask(0, nil)
					pInG.Store(true)
					g.wait(s, "group 2's first use")
					pInG.Store(false)
					restart.Unpark()
					g.give(1, helped)
					given.Park() // p stays active until both are queued
				})
				waitsP.Store(true)
				p.wait(s, "group 1")
				waitsP.Store(false)
				r.wait(s, "group 3")
			})
			outer.wait(s, "group 0")
			g.given = 3
			g.wait(s, "group 2's second use")
		}, randomOnly: true},
		// A loop over two indices from outside: two range-stealing
		// participants, one of which the caller runs while it waits; a
		// participant done with its own index steals another's.
		{name: "loop", prog: func(s *explore.Schedule, track func(...*probeGroup)) {
			exploreLoop(s, track, 2, -1)
		}},
		// A loop whose index 0 fails: For returns the error, and no index
		// runs twice.
		{name: "loop-error", prog: func(s *explore.Schedule, track func(...*probeGroup)) {
			exploreLoop(s, track, 2, 0)
		}},
	}
}

// exploreLoop runs For over n indices, index fail returning an error (none
// if fail < 0), and checks what it returns and that each index ran at most
// once, and exactly once if none failed. The loop runs as n tasks (one
// range each, n being below the pool's size), which the pool's statistics
// count: a probe group stands for them, its tasks marked run once For has
// returned, which it does after its tasks.
func exploreLoop(s *explore.Schedule, track func(...*probeGroup), n, fail int) {
	tasks := newProbeGroup(n)
	track(tasks)
	defer func() {
		tasks.given = n
		for id := range n {
			tasks.ran[id].Store(1)
		}
		tasks.waits.Add(1)
	}()
	errFail := errors.New("fail")
	ran := make([]stdatomic.Int32, n)
	err := For(context.Background(), n, func(_ context.Context, i int) error {
		ran[i].Add(1)
		if i == fail {
			return errFail
		}
		return nil
	}, nil)
	want := error(nil)
	if fail >= 0 {
		want = errFail
	}
	if err != want {
		s.Errorf("For returned %v, want %v", err, want)
	}
	for i := range ran {
		if c := ran[i].Load(); c > 1 || fail < 0 && c != 1 {
			s.Errorf("index %d ran %d times", i, c)
		}
	}
}

// exploreSched runs the programs under strategy(program).
func exploreSched(t *testing.T, strategy func() explore.Strategy, schedules int, exhaustive bool) {
	defer func(r, sp int) { sleep.Rounds, sleep.SpinRounds = r, sp }(sleep.Rounds, sleep.SpinRounds)
	sleep.Rounds, sleep.SpinRounds = 1, 0
	defer func(n int) { submitPolls = n }(submitPolls)
	submitPolls = 1
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	saved := global
	defer func() { global = saved }()
	for _, sp := range schedPrograms() {
		if exhaustive && sp.randomOnly {
			continue
		}
		n := schedules
		if sp.helpsJoin && n > 0 {
			// The join is rare among random schedules (a few in
			// 2,000): a program there to show it runs that many
			// even under -short, where fewer may hold none.
			n = max(n, helpsJoinSchedules)
		}
		t.Run(sp.name, func(t *testing.T) {
			helps := joinHelps.Load()
			res := explore.Explore(t, explore.Options{Strategy: strategy(), MaxSchedules: n, Budget: explore.Budget()}, sp.run)
			helps = joinHelps.Load() - helps
			t.Logf("%v; %d tasks run by a Wait of another group (join.go)", res, helps)
			if sp.helpsJoin && helps == 0 && !t.Failed() {
				t.Errorf("no schedule had a Wait run a task of a group joined inside its own group's task")
			}
		})
	}
}

func TestExploreSched(t *testing.T) {
	bound := explore.Bound(1, 1)
	exploreSched(t, func() explore.Strategy { return explore.Exhaustive(bound) }, 0, true)
}

// helpsJoinSchedules is the number of random schedules a program with
// helpsJoin runs at least (see exploreSched).
const helpsJoinSchedules = 2000

func TestExploreSchedPCT(t *testing.T) {
	exploreSched(t, func() explore.Strategy { return explore.PCT(1, 3) }, explore.Schedules(300, helpsJoinSchedules), false)
}
