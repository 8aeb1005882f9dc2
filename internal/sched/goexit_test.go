package sched

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-steal/steal/internal/gid"
	"github.com/go-steal/steal/internal/testkit"
)

// runtime.Goexit in a task ends the goroutine the task runs on, as in
// errgroup, and the task counts as finished. A worker's slot gets a fresh
// goroutine; a goroutine outside the pool (a Wait, or a Go on a full
// limited group, that ran the task) ends, with its frames unwound.

// TestGoexitOnWorkers: many tasks, every third of which ends with
// runtime.Goexit, on workers. Every task is accounted for, a goroutine that
// called Goexit never runs another task (its slot gets a new goroutine),
// the pool's counts stay consistent, Wait returns, and nothing leaks. With
// a limit, the running slot that a Goexit task held is given back (or the
// next Go would wait for ever). The test goroutine waits for each task to
// start before it submits the next, so it never holds a queued task of the
// group and never runs one itself (a Goexit there would end the test).
func TestGoexitOnWorkers(t *testing.T) {
	needGID(t)
	n := testkit.ScaleDown(600, 150)
	for _, limit := range []int{1, 2, -1} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			base := runtime.NumGoroutine()
			testkit.Guard(t, func() {
				var g Group
				g.SetLimit(limit)
				var returned, exited, outside atomic.Int64
				var bad atomic.Int64
				var running maxGauge
				var exitedGoroutines sync.Map // ids of goroutines that called Goexit
				started := make(chan struct{}, 1)
				for i := range n {
					g.Go(func() error {
						running.enter()
						defer running.exit()
						started <- struct{}{}
						id := gid.Current()
						if _, dead := exitedGoroutines.Load(id); dead {
							bad.Add(1)
						}
						if current() == nil {
							outside.Add(1)
							returned.Add(1)
							return nil
						}
						if l := global.live.Load(); l < 1 || int(l) > len(*global.slots.Load()) {
							bad.Add(1)
						}
						if i%3 == 0 {
							exitedGoroutines.Store(id, true)
							defer exited.Add(1)
							runtime.Goexit()
						}
						returned.Add(1)
						return nil
					})
					<-started
				}
				wantNil(t, "Wait()", g.Wait())
				wantExit := int64((n + 2) / 3)
				if e, r := exited.Load(), returned.Load(); e != wantExit || r != int64(n)-wantExit {
					t.Errorf("exited %d, returned %d; want %d, %d", e, r, wantExit, int64(n)-wantExit)
				}
				if o := outside.Load(); o != 0 {
					t.Errorf("%d tasks ran outside the pool", o)
				}
				if b := bad.Load(); b != 0 {
					t.Errorf("%d times a task saw an inconsistent pool, or ran on a goroutine that had called Goexit", b)
				}
				if limit > 0 && running.hi.Load() > int64(limit) {
					t.Errorf("%d tasks of a group limited to %d executed at once", running.hi.Load(), limit)
				}
				// The group works on afterwards.
				var after atomic.Int64
				for range 10 {
					g.Go(func() error { after.Add(1); return nil })
				}
				if err := g.Wait(); err != nil || after.Load() != 10 {
					t.Errorf("after Goexits: Wait() = %v, %d of 10 tasks ran", err, after.Load())
				}
				checkRetired(t)
				testkit.WaitUntil(t, "goroutine count back to baseline", func() bool { return runtime.NumGoroutine() <= base })
			})
			testkit.VerifyNone(t)
		})
	}
}

// TestGoexitInNestedWait: tasks of a nested group call runtime.Goexit
// (when they run on a worker) while a worker or the test goroutine helps in
// the nested Wait. Every task is accounted for, every Wait returns,
// nothing leaks.
func TestGoexitInNestedWait(t *testing.T) {
	needGID(t)
	forLimits(t, []int{1, -1}, func(t *testing.T, limit int) {
		var g Group
		g.SetLimit(limit)
		const outer, inner = 6, 9
		var innerStarted, innerExited, innerReturned, outerStarted atomic.Int64
		for range outer {
			g.Go(func() error {
				outerStarted.Add(1)
				var n Group
				for j := range inner {
					n.Go(func() error {
						innerStarted.Add(1)
						if j%3 == 1 && current() != nil {
							defer innerExited.Add(1)
							runtime.Goexit()
						}
						innerReturned.Add(1)
						return nil
					})
				}
				n.Wait()
				return nil
			})
		}
		wantNil(t, "Wait()", g.Wait())
		if got := outerStarted.Load(); got != outer {
			t.Errorf("%d outer tasks ran, want %d", got, outer)
		}
		// An outer task whose Wait was unwound by a Goexit waits for
		// the rest of its nested group before it ends (see
		// Group.helpUntilDone), so every nested task is done by now.
		if s, e, r := innerStarted.Load(), innerExited.Load(), innerReturned.Load(); s != outer*inner || e+r != outer*inner {
			t.Errorf("nested tasks: started %d, exited %d, returned %d; want %d started, each exited or returned", s, e, r, outer*inner)
		}
		wantNil(t, "second Wait()", g.Wait())
	})
}

// TestGoexitInNestedWaitEndsWaiter: in errgroup a runtime.Goexit ends only
// the goroutine of the task that calls it. Here a task that waits on a
// nested group runs the nested tasks on its own goroutine (it helps, in
// Wait), so a Goexit in one of
// them unwinds the waiting task's frames too. That is the documented
// difference: the waiting task ends as completed, its code after the call
// does not run, every task is accounted for exactly once, Wait returns,
// and the slot gets a fresh goroutine that runs what is still queued. With
// GOMAXPROCS 1 and an idle pool at the start there is one worker, so the
// helper is the one that runs the Goexit: the outcome is deterministic.
// The exiting task is given last (the helper runs it first) or first (the
// helper runs the other task before it, and has not yet subtracted that
// one from the count when the Goexit unwinds it: see worker.help).
func TestGoexitInNestedWaitEndsWaiter(t *testing.T) {
	testkit.SetProcs(t, 1)
	for _, exitFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("exitFirst=%v", exitFirst), func(t *testing.T) {
			guardPool(t, func() {
				checkRetired(t)
				var g Group
				var innerDone, afterWait atomic.Int64
				var reached string
				outerDone := make(chan struct{})
				g.Go(func() error {
					defer close(outerDone) // runs on Goexit too
					var n Group
					plain := func() error { innerDone.Add(1); return nil }
					exiting := func() error {
						defer innerDone.Add(1)
						runtime.Goexit()
						return nil
					}
					if exitFirst {
						n.Go(exiting)
						n.Go(plain)
					} else {
						n.Go(plain)
						n.Go(exiting)
					}
					reached = "before n.Wait"
					n.Wait() // helps: runs the exiting task on this goroutine
					reached = "after n.Wait"
					afterWait.Add(1)
					return nil
				})
				// Not Wait: a Wait here could take the task back and run
				// it on this goroutine, which the Goexit would then end.
				<-outerDone
				wantNil(t, "Wait()", g.Wait())
				const wantReached = "before n.Wait"
				if afterWait.Load() != 0 || reached != wantReached {
					t.Errorf("after a nested task's runtime.Goexit the waiting task reached %q (after-Wait code ran %d times); "+
						"want it ended at %q, as documented", reached, afterWait.Load(), wantReached)
				}
				testkit.WaitUntil(t, "nested tasks done", func() bool { return innerDone.Load() == 2 })
				wantNil(t, "second Wait()", g.Wait())
			})
		})
	}
}

// TestGoexitOutsideEndsCaller: a task that a goroutine outside the pool
// runs while it waits in Wait and
// that calls runtime.Goexit ends that goroutine: its code after the call
// does not run, its deferred calls do. The task counts as finished, the
// goroutine no longer counts as running tasks (runners), the group's other
// tasks run, and a later Wait returns. With GOMAXPROCS 1 the goroutine
// runs its newest task itself unless it loses the processor to a worker
// (to a preemption, or to an assist of the collector) before its Wait: the
// attempts, each one checked, go on until one runs the exiting task on the
// goroutine that waited (untilBuilt).
func TestGoexitOutsideEndsCaller(t *testing.T) {
	onOneProc(t, func() {
		untilBuilt(t, "the exiting task ran on the goroutine that waited", func() bool { return goexitOutside(t) })
	})
}

// goexitOutside makes one attempt of TestGoexitOutsideEndsCaller and
// reports whether the exiting task ran on the goroutine that waited.
func goexitOutside(t *testing.T) bool {
	t.Helper()
	var g Group
	var plainRan, exitedOn atomic.Int64
	var after atomic.Bool
	var callerID atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		callerID.Store(gid.Current())
		g.Go(func() error { plainRan.Add(1); return nil })
		g.Go(func() error {
			exitedOn.Store(gid.Current())
			runtime.Goexit()
			return nil
		})
		g.Wait() // takes the exiting task back (the newest) and runs it
		after.Store(true)
	}()
	<-done
	onCaller := exitedOn.Load() == callerID.Load()
	switch {
	case onCaller && after.Load():
		t.Errorf("the caller went on after a task it ran called Goexit")
	case onCaller && runners.has(callerID.Load()):
		t.Errorf("the ended caller is still in runners")
	}
	testkit.WaitUntil(t, "the group's count reaches zero", func() bool { return g.count() == 0 })
	wantNil(t, "Wait()", g.Wait())
	if got := plainRan.Load(); got != 1 {
		t.Errorf("%d plain tasks ran, want 1 (exiting task on the caller: %v)", got, onCaller)
	}
	return onCaller
}
