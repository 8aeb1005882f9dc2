package sched

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-steal/steal/internal/sched/handoff"
	"github.com/go-steal/steal/internal/testkit"
)

// The idle, wake and retire protocols with their safety nets switched off
// (switches.go): no monitor, and (except where a worker must retire) no
// linger. A lost wake-up or a task left behind by a retiring worker is then
// a hang, which the hang guard reports, not a delay of a sample period or
// a linger that no test would measure.

// withRescueOff runs body at GOMAXPROCS procs on an idle pool with the
// monitor off and, unless keepLinger, the idle linger off. Afterwards it
// switches both back on (and a stalled monitor's switch off: a body may
// run a monitor that never ticks instead, handoff.MonitorStalled) and waits until every worker has retired, waking
// the sleepers now and then: a worker that read lingerOff before it was
// cleared sleeps until woken. (Not at every poll: each wake-up starts a
// worker's linger over.)
func withRescueOff(t *testing.T, procs int, keepLinger bool, body func()) {
	t.Helper()
	testkit.SetProcs(t, procs)
	reset := func() {
		handoff.MonitorOff.Store(false)
		handoff.MonitorStalled.Store(false)
		lingerOff.Store(false)
		testHookPair.Store(nil)
	}
	t.Cleanup(reset) // also after a failure inside body
	guardPool(t, func() {
		checkRetired(t)
		handoff.MonitorOff.Store(true)
		lingerOff.Store(!keepLinger)
		body()
		reset()
		polls := 0
		testkit.WaitUntil(t, "the workers retire once the linger is back", func() bool {
			if polls++; polls%200 == 1 {
				global.sleep.WakeAll()
			}
			return poolIdle()
		})
	})
}

// TestNoRescueWake: every worker sleeps (without a linger); a task queued
// from outside, or pushed onto its deque by a task (once every other
// worker sleeps) that then blocks on a channel until that task has run,
// must wake a sleeper. Nothing else would run it.
func TestNoRescueWake(t *testing.T) {
	rounds := testkit.ScaleDown(20, 5)
	for _, procs := range []int{2, 4} {
		for _, from := range []string{"outside", "inside"} {
			t.Run(fmt.Sprintf("procs=%d/%s", procs, from), func(t *testing.T) {
				withRescueOff(t, procs, false, func() {
					startWorkers(t, procs)
					for range rounds {
						testkit.WaitUntil(t, "every worker asleep", func() bool {
							return global.sleep.Load().Sleeping() == procs
						})
						var g Group
						done := make(chan struct{})
						switch from {
						case "outside":
							g.Go(func() error { close(done); return nil })
						case "inside":
							g.Go(func() error {
								// The worker that took this task woke
								// another (work often comes in batches):
								// wait until it sleeps again.
								for global.sleep.Load().Sleeping() != procs-1 {
									runtime.Gosched()
								}
								var m Group
								m.Go(func() error { close(done); return nil })
								<-done // blocks this worker: a sleeper must take the task
								return m.Wait()
							})
						}
						<-done
						wantNil(t, "Wait()", g.Wait())
					}
				})
			})
		}
	}
}

// startWorkers brings the pool up to n workers, by running n tasks that each
// wait until all n have started (no Wait meanwhile, which could run them).
// Each task reads the live count while all n are still inside a task, so
// no worker can have retired yet: after its task a worker may linger and
// retire before this function returns, where the tests want it to.
func startWorkers(t *testing.T, n int) {
	t.Helper()
	var g Group
	var started, read atomic.Int32
	var seen atomic.Int32 // n, or a live count other than n that a task read
	seen.Store(int32(n))
	barrier := func(c *atomic.Int32) {
		for c.Add(1); c.Load() < int32(n); {
			runtime.Gosched()
		}
	}
	var wg sync.WaitGroup
	wg.Add(n)
	for range n {
		g.Go(func() error {
			defer wg.Done()
			barrier(&started)
			if l := global.live.Load(); l != int32(n) {
				seen.Store(l)
			}
			barrier(&read)
			return nil
		})
	}
	wg.Wait()
	wantNil(t, "Wait()", g.Wait())
	if l := seen.Load(); l != int32(n) {
		t.Fatalf("%d live workers while %d tasks waited for each other, want %d", l, n, n)
	}
}

// TestNoRescueRetireLastLook: the last worker to retire has given up its
// slot but still counts as idle when a task is queued from outside (by a
// hook in release, on the retiring goroutine, which is no longer a worker).
// The post relies on that idle worker and starts none; the worker's last
// look at the queues must find the task and keep the slot to run it.
func TestNoRescueRetireLastLook(t *testing.T) {
	for _, procs := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			withRescueOff(t, procs, true, func() {
				var g Group
				done := make(chan struct{})
				var fired atomic.Bool
				hook := func(at pairStep, w *worker, live int32) {
					if at == retireStop && live == 0 && fired.CompareAndSwap(false, true) {
						g.Go(func() error { close(done); return nil })
					}
				}
				testHookPair.Store((*pairHook)(&hook))
				startWorkers(t, procs) // they linger, then retire
				<-done
				wantNil(t, "Wait()", g.Wait())
			})
		})
	}
}

// TestNoRescueRetireLastLookDeque: the last look of a retiring worker must
// cover the deques of the workers that stay, not only the injector. A task
// T, on worker B, forks a no-op task that starts a second worker A; A runs
// it, lingers and retires. While A has given up its slot but still counts
// as idle (the hook in release), T pushes a task U onto B's own deque, then
// blocks on a channel until U has run. The push sees A idle, so it wakes
// nobody and starts no worker; B is blocked, and no other worker is left
// to steal. U is in a deque, not the injector: only A's last look over the
// deques can find it, and A must then keep its slot and run it.
func TestNoRescueRetireLastLookDeque(t *testing.T) {
	for _, procs := range []int{2, 4} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			withRescueOff(t, procs, true, func() {
				var g Group
				retiring := make(chan struct{}) // A is in release, still idle
				pushed := make(chan struct{})   // U is in B's deque, announced
				done := make(chan struct{})     // U ran
				var fired atomic.Bool
				var a, ranOn atomic.Pointer[worker]
				hook := func(at pairStep, w *worker, live int32) {
					// live is 1 when A leaves: only B, blocked in T, is left.
					if at == retireStop && live == 1 && fired.CompareAndSwap(false, true) {
						a.Store(w)
						close(retiring)
						<-pushed
					}
				}
				testHookPair.Store((*pairHook)(&hook))
				g.Go(func() error { // T
					g.Go(func() error { return nil }) // no worker is idle: starts A
					<-retiring
					g.Go(func() error { // U, onto B's deque
						ranOn.Store(current())
						close(done)
						return nil
					})
					close(pushed)
					<-done // blocks B: A must take U
					return nil
				})
				// Not g.Wait yet: an outside Wait would steal U itself.
				<-done
				wantNil(t, "Wait()", g.Wait())
				if ranOn.Load() != a.Load() {
					t.Errorf("U ran in slot %p, not in the slot %p that the retiring worker took back", ranOn.Load(), a.Load())
				}
			})
		})
	}
}

// TestNoRescueRetireAgainstPost: the last worker retires (Pool.release: it
// gives its slot up, stops counting as inactive, then looks at the queues)
// while a Go from outside posts a task (Pool.inject: it pushes the task,
// moves the jobs event counter, then decides from the idle workers it
// counted and the pool's room whether to start a worker), in every order
// of their steps. Each party is held before each of its steps
// (testHookPair) and let go one step at a time. Whatever the order, one of
// them must take the task on: the retiring worker keeps its slot for it,
// or the poster starts a worker (see maybeSpawn). Nothing else would run
// it.
func TestNoRescueRetireAgainstPost(t *testing.T) {
	for _, order := range interleavings("R", "P", 3, 3) {
		t.Run(order, func(t *testing.T) {
			withRescueOff(t, 1, true, func() {
				retirer, poster := newStepper(3), newStepper(3)
				hook := func(at pairStep, w *worker, live int32) {
					switch {
					case at == retireDone:
						retirer.finish()
					case at >= postPush:
						poster.hold(at)
					default:
						retirer.hold(at)
					}
				}
				startWorkers(t, 1) // it lingers, then retires
				testHookPair.Store((*pairHook)(&hook))
				var g Group
				ran := make(chan struct{})
				retirer.first() // the worker is in release
				go func() {
					g.Go(func() error { close(ran); return nil })
					poster.finish()
				}()
				poster.first()
				for _, party := range order {
					if party == 'R' {
						retirer.step()
					} else {
						poster.step()
					}
				}
				<-ran // not Wait, which would run the task itself
				wantNil(t, "Wait()", g.Wait())
			})
		})
	}
}

// stepper holds one party of a pairing before each of its steps (hold, on
// the party's goroutine) and lets it take them one at a time (first and
// step, on the test's); after the last one, the party says it is done
// (finish).
type stepper struct {
	at     chan pairStep // the party is held before this step
	resume chan struct{} // lets it take that step
	done   chan struct{} // closed by finish
	left   atomic.Int32  // holds still to come
	steps  int           // holds in all
	taken  int           // steps let go
}

func newStepper(steps int) *stepper {
	s := &stepper{at: make(chan pairStep), resume: make(chan struct{}), done: make(chan struct{}), steps: steps}
	s.left.Store(int32(steps))
	return s
}

// hold holds the party before step at, unless it has been held steps
// times already.
func (s *stepper) hold(at pairStep) {
	if s.left.Add(-1) < 0 {
		return
	}
	s.at <- at
	<-s.resume
}

// finish says that the party has taken its last step; called again
// later (the party goes through its steps again), it does nothing.
func (s *stepper) finish() {
	if s.left.Add(-1) == -1 {
		close(s.done)
	}
}

// first waits until the party is held before its first step.
func (s *stepper) first() { <-s.at }

// step lets the party take the step it is held before, and waits until it
// is held before the next one, or, after the last, until it is done.
func (s *stepper) step() {
	s.resume <- struct{}{}
	if s.taken++; s.taken < s.steps {
		<-s.at
	} else {
		<-s.done
	}
}

// interleavings returns every order of n steps of a party named a and m of
// one named b, as strings such as "RRPRPP".
func interleavings(a, b string, n, m int) []string {
	switch {
	case n == 0:
		return []string{strings.Repeat(b, m)}
	case m == 0:
		return []string{strings.Repeat(a, n)}
	}
	var all []string
	for _, rest := range interleavings(a, b, n-1, m) {
		all = append(all, a+rest)
	}
	for _, rest := range interleavings(a, b, n, m-1) {
		all = append(all, b+rest)
	}
	return all
}
