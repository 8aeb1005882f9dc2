package sched

import (
	"context"
	"fmt"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/go-steal/steal/internal/gid"
	"github.com/go-steal/steal/internal/gstatus"
	"github.com/go-steal/steal/internal/testkit"
)

// Waiting: a Wait runs its own group's tasks that it can reach (outside
// the pool: its own newest tasks in the injector, and the oldest task of a
// worker's deque when it is the group's), and a worker whose Wait has
// nothing left to run blocks and lets the pool replace it.

// TestOutsideWaitRunsOwnTasks: a Wait outside the pool takes back its
// group's newest tasks from its own shard of the injector and runs them,
// newest first, while it is in runners; it stops at a task of another
// group, which it does not run. With GOMAXPROCS 1 the worker that the
// first Go starts gets the processor only if the test's goroutine loses it
// (to a preemption, or to an assist of the collector) before its Wait has
// taken the tasks, and then takes some or all of them. Such a round shows
// little about the Wait, so rounds go on (each one checked) until one in
// which the Wait took back and ran all its group's tasks; a Wait that never takes them
// back keeps the test going until it fails (untilBuilt).
func TestOutsideWaitRunsOwnTasks(t *testing.T) {
	onOneProc(t, func() {
		untilBuilt(t, "a Wait that ran all its group's tasks", func() bool { return outsideWaitRound(t) })
	})
}

// outsideWaitRound makes one round of TestOutsideWaitRunsOwnTasks and
// reports whether the Wait ran all its group's tasks, each taken back from
// the injector.
func outsideWaitRound(t *testing.T) bool {
	t.Helper()
	me := gid.Current()
	var g, h Group
	var mu sync.Mutex
	var order []int
	var notRunner, hHere, ran atomic.Int64
	taken := global.inj.takenTotal()
	h.Go(func() error {
		if gid.Current() == me {
			hHere.Add(1)
		}
		return nil
	})
	const k = 5
	for i := range k {
		g.Go(func() error {
			ran.Add(1)
			if gid.Current() == me {
				if !runners.has(me) {
					notRunner.Add(1)
				}
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
			}
			return nil
		})
	}
	wantNil(t, "Wait()", g.Wait())
	if hHere.Load() != 0 {
		t.Errorf("g's Wait ran a task of another group")
	}
	if runners.has(me) {
		t.Errorf("the waiting goroutine is still in runners after Wait")
	}
	if n := notRunner.Load(); n != 0 {
		t.Errorf("%d tasks ran on the waiting goroutine while it was not in runners", n)
	}
	if n := ran.Load(); n != k {
		t.Errorf("%d of g's %d tasks ran before Wait returned", n, k)
	}
	wantNil(t, "h.Wait()", h.Wait())
	mu.Lock()
	got := order
	mu.Unlock()
	// A worker that got the processor first took the oldest tasks from the
	// injector (h's task, which h's Wait may also take back, and maybe
	// some of g's), and the Wait may have stolen some of them from its
	// deque: the order says something only when the Wait ran them all and
	// workers took no more than h's task from the injector.
	clean := len(got) == k && global.inj.takenTotal()-taken <= 1
	if clean {
		for i, v := range got {
			if v != k-1-i {
				t.Errorf("the Wait ran its tasks in the order %v, want newest first", got)
				break
			}
		}
	}
	return clean
}

// TestOutsideWaitSkipsOtherGroups: when a task of another group was queued
// after the group's own tasks, in the same shard, a Wait takes back none of
// them (it takes only the newest, and only its group's): it runs no task of
// another group, and the workers run the rest.
func TestOutsideWaitSkipsOtherGroups(t *testing.T) {
	onOneProc(t, func() {
		me := gid.Current()
		var g, h Group
		var gHere, hHere atomic.Int64
		hDone := make(chan struct{})
		for range 3 {
			g.Go(func() error {
				if gid.Current() == me {
					gHere.Add(1)
				}
				return nil
			})
		}
		h.Go(func() error {
			if gid.Current() == me {
				hHere.Add(1)
			}
			close(hDone)
			return nil
		})
		wantNil(t, "Wait()", g.Wait())
		<-hDone // not h.Wait, which may run h's task here
		if n := hHere.Load(); n != 0 {
			t.Errorf("g's Wait ran a task of another group")
		}
		t.Logf("%d of g's 3 tasks ran on the waiting goroutine (taken from a worker's deque)", gHere.Load())
		wantNil(t, "h.Wait()", h.Wait())
	})
}

// TestOutsideWaitStealsOwnTasks: a Wait outside the pool also takes the
// oldest task of a worker's deque when it is its group's. A task of
// another group pushes the group's tasks on its worker's deque and then
// blocks; the Wait must run them all. At GOMAXPROCS 1 with the monitor
// off, that worker is the only one the pool may run, and nothing hands its
// slot on once it blocks (no Go finds the pool saturated after that): no
// other goroutine can take the tasks, and a Wait that does not take them
// hangs the test, which the hang guard reports.
func TestOutsideWaitStealsOwnTasks(t *testing.T) {
	needGID(t)
	withRescueOff(t, 1, false, func() {
		me := gid.Current()
		var g, h Group
		const k = 8
		var here, ran atomic.Int64
		pushed, release := make(chan struct{}), make(chan struct{})
		h.Go(func() error {
			for range k {
				g.Go(func() error {
					if gid.Current() == me {
						here.Add(1)
					}
					ran.Add(1)
					return nil
				})
			}
			close(pushed)
			<-release
			return nil
		})
		<-pushed
		wantNil(t, "Wait()", g.Wait())
		close(release)
		wantNil(t, "h.Wait()", h.Wait())
		if got := ran.Load(); got != k {
			t.Errorf("%d of %d tasks ran", got, k)
		}
		if n := here.Load(); n != k {
			t.Errorf("the Wait took %d of its group's %d tasks from the deque of the blocked worker", n, k)
		}
	})
}

// TestBlockedInWait: a worker that blocks in a Wait on a group whose tasks
// run elsewhere counts as blocked, which raises the pool's capacity, so
// tasks queued behind it still run; once it returns, the count goes back.
func TestBlockedInWait(t *testing.T) {
	onOneProc(t, func() {
		var other Group
		otherGate, otherStarted := make(chan struct{}), make(chan struct{})
		other.Go(func() error { close(otherStarted); <-otherGate; return nil })
		<-otherStarted // on a worker, so the Wait below has nothing to help with

		var g Group
		inWait := make(chan struct{})
		var waiterOnWorker atomic.Bool
		g.Go(func() error {
			waiterOnWorker.Store(current() != nil)
			close(inWait)
			other.Wait()
			return nil
		})
		<-inWait
		if !waiterOnWorker.Load() {
			t.Fatalf("the waiting task does not run on a worker")
		}
		testkit.WaitUntil(t, "the worker counts as blocked", func() bool { return detachedFor(detachWait) == 1 })
		if c, want := global.capacity(), global.size.Load()+global.detached.Load(); c != want || c < global.size.Load()+1 {
			t.Errorf("capacity() = %d with one worker blocked in a Wait and %d detached, want %d", c, global.detached.Load(), want)
		}
		const behind = 10
		var ran atomic.Int64
		for range behind {
			g.Go(func() error { ran.Add(1); return nil })
		}
		testkit.WaitUntil(t, "tasks queued behind the blocked worker run", func() bool { return ran.Load() == behind })
		if b := detachedFor(detachWait); b != 1 {
			t.Errorf("%d workers blocked in a Wait while the worker still waits, want 1", b)
		}
		close(otherGate)
		wantNil(t, "Wait()", g.Wait())
		wantNil(t, "other.Wait()", other.Wait())
		if b := detachedFor(detachWait); b != 0 {
			t.Errorf("%d workers blocked in a Wait after the wait ended", b)
		}
	})
}

// whilePatient runs, at GOMAXPROCS 2 with the monitor off and a Wait's
// patience an hour long, a Wait on a worker whose group's last task runs
// on the other worker and calls during once the Wait waits in its
// worker's place (worker.waitPatiently); then the task returns, and its
// end must wake the Wait. A lost wake-up is a hang.
func whilePatient(t *testing.T, during func()) {
	t.Helper()
	withRescueOff(t, 2, false, func() {
		patienceLong.Store(true)
		defer patienceLong.Store(false)
		runWaiter(t, "worker", func() {
			me := current()
			var g Group
			goElsewhere(t, &g, "the Wait waits in its worker's place", me.rec.Patient, during)
			wantNil(t, "g.Wait()", g.Wait())
			if me.rec.Patient() {
				t.Errorf("the worker still reads patient after its Wait returned")
			}
		})
	})
}

// goElsewhere gives g, from a task on a worker, a task that starts on
// another worker (it returns once the task has started, so the caller's
// Wait cannot run it) and that waits until cond holds, then calls then and
// returns.
func goElsewhere(t *testing.T, g *Group, what string, cond func() bool, then func()) {
	t.Helper()
	started := make(chan struct{})
	g.Go(func() error {
		close(started)
		testkit.WaitUntil(t, what, cond)
		then()
		return nil
	})
	<-started
}

// TestPatientWaitWokenByLastTask: a Wait that waits in its worker's place
// is woken by its group's last task (whilePatient).
func TestPatientWaitWokenByLastTask(t *testing.T) {
	whilePatient(t, func() {})
}

// TestWaitRanOwnThenBlocks: a Wait on a worker runs one of its group's
// tasks itself while the other runs on the other worker, then finds
// nothing to help with and blocks; the other task returns only once the
// Wait has blocked. The Wait must have subtracted the task it ran before
// it blocked (worker.help), or the count never reaches zero and the Wait
// hangs.
func TestWaitRanOwnThenBlocks(t *testing.T) {
	testkit.SetProcs(t, 2)
	guardPool(t, func() {
		rounds, here := testkit.Scale(20, 5), 0
		for range rounds {
			runWaiter(t, "worker", func() {
				me := current()
				var g Group
				goElsewhere(t, &g, "the Wait blocked after running its own task", func() bool {
					return detachedFor(detachWait) == 1
				}, func() {})
				var ranHere atomic.Bool
				g.Go(func() error { ranHere.Store(current() == me); return nil })
				wantNil(t, "g.Wait()", g.Wait())
				if ranHere.Load() {
					here++
				}
			})
		}
		// A worker handed the blocked task's slot may steal the second
		// task before the Wait pops it; then that round proves nothing.
		t.Logf("the Wait ran the second task itself in %d of %d rounds", here, rounds)
	})
}

// TestWaitRunsOwnTasksInRuns: a Wait inside a task runs its group's tasks
// from its worker's deque, newest first, in runs (worker.runOwn): each task
// on the waiting goroutine, with the waited group as the innermost running
// one (join.go), one level deeper than the waiting task, under the labels
// of its submitter: the waiting task's own for some, others given in a
// pprof.Do, and after a task that set labels of its own, the next one
// still wears its submitter's. A task that panics in a group that records
// panics ends a run: the older tasks still run, each once, and Wait raises
// the panic. After it, the waiting task wears its own labels, its group is
// the running one again and its depth is back. With one processor and the
// monitor off, no other worker can take a task from the deque.
func TestWaitRunsOwnTasksInRuns(t *testing.T) {
	needGID(t)
	withRescueOff(t, 1, false, func() {
		const k, panicAt, setsOwn = 12, 6, 9
		var g Group
		var (
			order       [k]int
			ran         atomic.Int64
			wrong       []string
			mu          sync.Mutex
			recovered   any
			waiterState string
		)
		bad := func(format string, args ...any) {
			mu.Lock()
			wrong = append(wrong, fmt.Sprintf(format, args...))
			mu.Unlock()
		}
		own := pprof.WithLabels(context.Background(), pprof.Labels("k", "own"))
		other := pprof.WithLabels(context.Background(), pprof.Labels("k", "other"))
		done := make(chan struct{})
		labelled("waiter", func(lw unsafe.Pointer) {
			g.Go(func() error {
				defer close(done)
				w, me := current(), gid.Current()
				if w == nil {
					bad("the waiting task runs outside the pool")
					return nil
				}
				depth := w.depth
				var n Group
				n.SetRecoverPanics(func(v any, _ []byte, _ *atomic.Int64) error { return fmt.Errorf("recovered: %v", v) })
				for i := range k {
					task := func(want unsafe.Pointer) func() error {
						return func() error {
							order[ran.Add(1)-1] = i
							if gid.Current() != me {
								bad("task %d ran on another goroutine", i)
							} else if w.running.group() != &n || w.depth != depth+1 {
								bad("task %d ran with running group %p at depth %d; want %p at %d", i, w.running.group(), w.depth, &n, depth+1)
							}
							if got := gstatus.Labels(); got != want {
								bad("task %d wore labels %p, want its submitter's %p", i, got, want)
							}
							if i == setsOwn {
								pprof.SetGoroutineLabels(own)
							}
							if i == panicAt {
								panic(i)
							}
							return nil
						}
					}
					if i%3 == 0 {
						// Not labelled: pprof.Do would leave the
						// goroutine wearing its parent context's labels.
						pprof.SetGoroutineLabels(other)
						n.Go(task(gstatus.Labels()))
						gstatus.SetLabels(lw)
					} else {
						n.Go(task(lw))
					}
				}
				recovered, _ = testkit.Recover(func() { n.Wait() })
				if got := gstatus.Labels(); got != lw || w.running.group() != &g || w.depth != depth {
					waiterState = fmt.Sprintf("labels %p (want %p), running group %p (want %p), depth %d (want %d)",
						got, lw, w.running.group(), &g, w.depth, depth)
				}
				return nil
			})
		})
		<-done
		wantNil(t, "g.Wait()", g.Wait())
		for _, s := range wrong {
			t.Error(s)
		}
		if waiterState != "" {
			t.Errorf("after its Wait, the waiting task has %s", waiterState)
		}
		if got := ran.Load(); got != k {
			t.Fatalf("%d of %d tasks ran", got, k)
		}
		for j, i := range order {
			if i != k-1-j {
				t.Errorf("tasks ran in the order %v; want newest first", order)
				break
			}
		}
		if err, ok := recovered.(error); !ok || err.Error() != fmt.Sprintf("recovered: %d", panicAt) {
			t.Errorf("Wait raised %v; want the recorded panic of task %d", recovered, panicAt)
		}
	})
}

// TestWaitPopsOnlyItsGroupsTasks: a Wait inside a task pops from its
// worker's deque only tasks of the group it waits for. A task of another
// group queued by the same task stays for later, whether it lies under the
// group's tasks (the run of them stops at it: worker.runOwn) or on top of
// them (the Wait does not pop it: worker.help); run on the waiting
// goroutine before the Wait returns, it could wait for something that the
// waiting task does only after (the trap help's comment shows). With one
// processor and the monitor off, no other worker takes a task from the
// deque unless the Wait blocks and gives its place up; then that worker,
// not the waiting goroutine, may run the other task.
func TestWaitPopsOnlyItsGroupsTasks(t *testing.T) {
	needGID(t)
	for _, otherOnTop := range []bool{false, true} {
		t.Run(fmt.Sprintf("otherOnTop=%v", otherOnTop), func(t *testing.T) {
			withRescueOff(t, 1, false, func() {
				var g, n, other Group
				var (
					waiter    int64
					waited    atomic.Bool // n's Wait has returned
					ranEarly  atomic.Bool // other's task ran on the waiter during the Wait
					nRan      atomic.Int64
					otherDone = make(chan struct{})
					gDone     = make(chan struct{})
					onWorker  bool
				)
				g.Go(func() error {
					defer close(gDone)
					waiter, onWorker = gid.Current(), current() != nil
					queueOther := func() {
						other.Go(func() error {
							if gid.Current() == waiter && !waited.Load() {
								ranEarly.Store(true)
							}
							close(otherDone)
							return nil
						})
					}
					if !otherOnTop {
						queueOther()
					}
					for range 3 {
						n.Go(func() error { nRan.Add(1); return nil })
					}
					if otherOnTop {
						queueOther()
					}
					err := n.Wait()
					waited.Store(true)
					return err
				})
				// Not g.Wait at once, which would take the task back
				// and run it here, outside the pool.
				<-gDone
				wantNil(t, "g.Wait()", g.Wait())
				<-otherDone
				wantNil(t, "other.Wait()", other.Wait())
				if !onWorker {
					t.Fatalf("the waiting task ran outside the pool: the test did not build its case")
				}
				if ranEarly.Load() {
					t.Errorf("n's Wait ran a task of another group from its deque")
				}
				if got := nRan.Load(); got != 3 {
					t.Errorf("%d of n's 3 tasks ran", got)
				}
			})
		})
	}
}
