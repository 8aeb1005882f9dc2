package sched

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-steal/steal/internal/testkit"
)

// Blocking sites (sites.go): a site whose tasks were handed on as blocked
// runs its next tasks on goroutines of their own; a site of CPU-bound
// tasks never does; a mark runs out; and a task on its own goroutine keeps
// a task's semantics (errors, recovered panics, Goexit, crashes).

// clearSites forgets every site, so that a test starts from a table
// without marks (the table is process-wide).
func clearSites(t *testing.T) {
	t.Helper()
	ForgetSites()
	t.Cleanup(ForgetSites)
}

// marked reports whether f's site is marked, without spending its budget.
func marked(f func() error) bool {
	s := sites.slot(siteOf(f))
	return s.pc.Load() == siteOf(f) && s.budget.Load() > 0
}

// TestBlockingSiteRunsOnOwnGoroutine: tasks of one func literal that
// block on a channel until all of them have started are handed on (the
// first round), which marks their site; in the next round every task of
// the site runs on a goroutine that is no worker, and no worker is handed
// on. Tasks of a CPU-bound site run beside them on the workers all along,
// and their site is never marked.
func TestBlockingSiteRunsOnOwnGoroutine(t *testing.T) {
	needStatus(t)
	const n = 16
	for _, procs := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			testkit.SetProcs(t, procs)
			clearSites(t)
			guardPool(t, func() {
				var onWorker, cpuRan atomic.Int32
				round := func() {
					var g Group
					var started atomic.Int32
					all := make(chan struct{})
					blocking := func() error {
						if current() != nil {
							onWorker.Add(1)
						}
						if started.Add(1) == n {
							close(all)
						}
						<-all
						return nil
					}
					// One func value for the CPU-bound site: an inlined
					// cpuTask makes a closure function of its own at
					// each call site, and so a site of its own.
					cpu := cpuTask(&cpuRan)
					for range n {
						g.Go(blocking)
						g.Go(cpu)
					}
					<-all
					wantNil(t, "Wait()", g.Wait())
					if !marked(blocking) {
						t.Errorf("the blocking tasks' site is not marked after a round")
					}
					if marked(cpu) {
						t.Errorf("the CPU-bound tasks' site is marked")
					}
				}
				round()
				if onWorker.Load() == 0 {
					t.Fatalf("no blocking task ran on a worker in the first round")
				}
				onWorker.Store(0)
				before := handedOff(handOffBlocked)
				round()
				if k := onWorker.Load(); k != 0 {
					t.Errorf("%d of %d tasks of a site marked blocking ran on workers", k, n)
				}
				if d := handedOff(handOffBlocked) - before; d != 0 {
					t.Errorf("%d workers handed on as blocked in the second round, want none", d)
				}
				if got := cpuRan.Load(); got != 2*n {
					t.Errorf("%d CPU-bound tasks ran, want %d", got, 2*n)
				}
			})
		})
	}
}

// cpuTask returns a task that does a little CPU work.
func cpuTask(ran *atomic.Int32) func() error {
	return func() error {
		sink.Add(int64(fibPlain(12)))
		ran.Add(1)
		return nil
	}
}

// TestSiteMarkRunsOut: a mark is good for siteBudget tasks of its site;
// the next one is the probe, tried on the pool, while the tasks after it
// still start on their own goroutines; siteStrikes probes in a row that
// end without blocking clear the mark, and one that blocks marks the site
// again.
func TestSiteMarkRunsOut(t *testing.T) {
	clearSites(t)
	f := func() error { return nil }
	if sites.blocking(f) {
		t.Fatalf("a site never marked reads blocking")
	}
	sites.ended(f) // a task of an unmarked site ends: nothing to clear
	for _, probeBlocks := range []bool{true, false} {
		sites.mark(f)
		for i := range siteBudget - 1 {
			if !sites.blocking(f) {
				t.Fatalf("the mark ran out after %d tasks, want %d", i, siteBudget-1)
			}
		}
		sites.ended(f) // a task that started before the mark ran out
		if sites.blocking(f) {
			t.Fatalf("the task after %d is not the probe", siteBudget-1)
		}
		for range 10 {
			if !sites.blocking(f) {
				t.Fatalf("a task after the probe, before it ended, goes to the pool")
			}
		}
		if probeBlocks {
			sites.mark(f)
			if !sites.blocking(f) {
				t.Fatalf("a probe that blocked did not mark the site again")
			}
			clearSites(t)
			continue
		}
		for strike := 1; strike < siteStrikes; strike++ {
			sites.ended(f) // a probe that did not block: a strike, a new budget
			for i := range siteBudget - 1 {
				if !sites.blocking(f) {
					t.Fatalf("after strike %d, the new budget ran out after %d tasks, want %d", strike, i, siteBudget-1)
				}
			}
			if sites.blocking(f) {
				t.Fatalf("after strike %d, the task after %d is not the probe", strike, siteBudget-1)
			}
		}
		sites.ended(f)
		if sites.blocking(f) {
			t.Fatalf("%d probes in a row that did not block left the site marked", siteStrikes)
		}
	}
}

// errOwn is what the own-goroutine tasks fail or panic with.
var errOwn = errors.New("own goroutine")

// TestOwnGoroutineKeepsTaskSemantics: a task of a marked site, run on a
// goroutine of its own, reports its error to Wait, has its panic recovered
// and raised again by Wait in a group that recovers panics, ends as
// finished when it calls runtime.Goexit, and counts in a limited group's
// slots.
func TestOwnGoroutineKeepsTaskSemantics(t *testing.T) {
	clearSites(t)
	guardPool(t, func() {
		t.Run("error", func(t *testing.T) {
			f := func() error { return errOwn }
			sites.mark(f)
			var g Group
			g.Go(f)
			if err := g.Wait(); !errors.Is(err, errOwn) {
				t.Errorf("Wait() = %v, want %v", err, errOwn)
			}
		})
		t.Run("recovered panic", func(t *testing.T) {
			f := func() error { panic(errOwn) }
			sites.mark(f)
			var g Group
			g.SetRecoverPanics(func(v any, _ []byte, _ *atomic.Int64) error { return fmt.Errorf("recovered: %v", v) })
			g.Go(f)
			v, panicked := testkit.Recover(func() { _ = g.Wait() })
			if err, _ := v.(error); !panicked || err == nil || !strings.Contains(err.Error(), errOwn.Error()) {
				t.Errorf("Wait panicked %v with %v, want the recovered panic", panicked, v)
			}
		})
		t.Run("Goexit", func(t *testing.T) {
			ran := make(chan struct{})
			f := func() error { close(ran); runtime.Goexit(); return nil }
			sites.mark(f)
			var g Group
			g.Go(f)
			<-ran
			wantNil(t, "Wait()", g.Wait())
		})
		t.Run("limit", func(t *testing.T) {
			const limit, n = 2, 16
			var active, most atomic.Int32
			release := make(chan struct{})
			f := func() error {
				a := active.Add(1)
				for m := most.Load(); a > m && !most.CompareAndSwap(m, a); m = most.Load() {
				}
				<-release
				active.Add(-1)
				return nil
			}
			sites.mark(f)
			var g Group
			g.SetLimit(limit)
			done := make(chan struct{})
			go func() {
				defer close(done)
				for range n {
					g.Go(f) // blocks at the limit, as errgroup's does
				}
			}()
			testkit.WaitUntil(t, "the limit's tasks are running", func() bool { return active.Load() == limit })
			close(release)
			<-done
			wantNil(t, "Wait()", g.Wait())
			if m := most.Load(); m > limit {
				t.Errorf("%d tasks of a group limited to %d ran at once", m, limit)
			}
		})
	})
}

// ownCrashEnv makes TestOwnGoroutineCrashChild panic in a task on its own
// goroutine.
const ownCrashEnv = "STEAL_OWN_CRASH"

// TestOwnGoroutineCrashChild is the child of TestOwnGoroutineCrash.
func TestOwnGoroutineCrashChild(t *testing.T) {
	if os.Getenv(ownCrashEnv) == "" {
		t.Skip("the child of TestOwnGoroutineCrash")
	}
	f := func() error { panic(errOwn) }
	sites.mark(f)
	var g Group
	g.Go(f)
	// Not Wait: like errgroup's, it may return while the panic unwinds,
	// before the program ends.
	select {}
}

// TestOwnGoroutineCrash: a task on its own goroutine whose group does not
// recover panics crashes the program with the runtime's own report of the
// panic, raised again above the task, as a panic on errgroup's goroutine
// does; not with the report for a task that ran on someone else's
// goroutine.
func TestOwnGoroutineCrash(t *testing.T) {
	out := testkit.CrashChild(t, "TestOwnGoroutineCrashChild", ownCrashEnv+"=1")
	for _, want := range []string{"panic: " + errOwn.Error(), "[recovered, repanicked]"} {
		if !strings.Contains(out, want) {
			t.Errorf("crash output lacks %q; output:\n%s", want, out)
		}
	}
	for _, bad := range []string{"all goroutines are asleep", "[in a task that ran"} {
		if strings.Contains(out, bad) {
			t.Errorf("crash output has %q; output:\n%s", bad, out)
		}
	}
}
