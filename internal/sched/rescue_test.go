package sched

import (
	"fmt"
	"github.com/go-steal/steal/internal/sched/handoff"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-steal/steal/internal/testkit"
)

// The idle, wake and retire protocols with their safety nets switched off
// (switches.go): no monitor, and (except where a worker must retire) no
// linger. A lost wake-up or a task left behind by a retiring worker is then
// a hang, which the hang guard reports, not a delay of a sample period or
// a linger that no test would measure.

// withRescueOff runs body at GOMAXPROCS procs on an idle pool with the
// monitor off and, unless keepLinger, the idle linger off. Afterwards it
// switches both back on and waits until every worker has retired, waking
// the sleepers now and then: a worker that read lingerOff before it was
// cleared sleeps until woken. (Not at every poll: each wake-up starts a
// worker's linger over.)
func withRescueOff(t *testing.T, procs int, keepLinger bool, body func()) {
	t.Helper()
	testkit.SetProcs(t, procs)
	reset := func() {
		handoff.MonitorOff.Store(false)
		lingerOff.Store(false)
		testHookRelease.Store(nil)
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
func startWorkers(t *testing.T, n int) {
	t.Helper()
	var g Group
	var started atomic.Int32
	var wg sync.WaitGroup
	wg.Add(n)
	for range n {
		g.Go(func() error {
			defer wg.Done()
			for started.Add(1); started.Load() < int32(n); {
				runtime.Gosched()
			}
			return nil
		})
	}
	wg.Wait()
	wantNil(t, "Wait()", g.Wait())
	if l := global.live.Load(); l != int32(n) {
		t.Fatalf("%d live workers after %d tasks that waited for each other, want %d", l, n, n)
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
				hook := func(w *worker, live int32) {
					if live == 0 && fired.CompareAndSwap(false, true) {
						g.Go(func() error { close(done); return nil })
					}
				}
				testHookRelease.Store(&hook)
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
				hook := func(w *worker, live int32) {
					// live is 1 when A leaves: only B, blocked in T, is left.
					if live == 1 && fired.CompareAndSwap(false, true) {
						a.Store(w)
						close(retiring)
						<-pushed
					}
				}
				testHookRelease.Store(&hook)
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
