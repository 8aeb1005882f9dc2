package sched

import (
	"fmt"
	"github.com/go-steal/steal/internal/sched/handoff"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-steal/steal/internal/gstatus"
	"github.com/go-steal/steal/internal/testkit"
)

// Known blocking (package handoff, status.go): where the workers' goroutine statuses are
// read, a worker blocked in a task is handed on by whoever reads its
// status next, and a worker that is not blocked (CPU-bound, descheduled,
// waiting for the collector) never counts as blocked.

// needStatus skips a test of the status reads in a build or process where
// they are off (another Go release or architecture, or STEAL_GSTATUS=off):
// the fallback is tested by the rest of the suite there.
func needStatus(t *testing.T) {
	t.Helper()
	if !handoff.StatusOn() {
		t.Skip("this build does not read goroutine statuses (package gstatus is off)")
	}
}

// needReader skips t where no check can ever turn the status reader on:
// the explorer's build, STEAL_GSTATUS=off, a port without a reader. Unlike
// needStatus, it holds before the first check has run.
func needReader(t *testing.T) {
	t.Helper()
	if err := handoff.StatusUnavailable(); err != nil {
		t.Skipf("statuses are never read here: %v", err)
	}
}

// handedOff returns the pool's count of hand-offs of kind.
func handedOff(kind int) uint64 { return global.ho.HandedOff(kind) }

// byReads runs f as subtest "by=statuses" where statuses are read (with
// handoff.KindBlocked, the kind of hand-off they make), and as "by=counts"
// with statuses turned off (with handoff.KindOffCPU: the fallback's proof by
// the runtime's counts, package handoff, counts.go).
func byReads(t *testing.T, f func(t *testing.T, kind int)) {
	t.Run("by=statuses", func(t *testing.T) {
		needStatus(t)
		f(t, handoff.KindBlocked)
	})
	t.Run("by=counts", func(t *testing.T) {
		defer gstatus.SetOff(true)()
		f(t, handoff.KindOffCPU)
	})
}

// TestStatusPosterHandsOff: with the monitor switched off, every worker is
// blocked in a task (each way of blocking of TestHandOffBlocked), and the
// task that would release them is queued behind them, from outside or on
// the deque of a worker that then blocks. Only the posters' checks can
// hand a slot on, by the workers' statuses or, with statuses off, by the
// runtime's counts: the test goroutine keeps posting empty tasks (of
// another group) from outside until the releasing task has run, and that
// task checks that a worker was handed on (then, that the hand-off was
// counted as one of a worker blocked, or off the CPU).
func TestStatusPosterHandsOff(t *testing.T) {
	byReads(t, func(t *testing.T, kind int) {
		testPosterHandsOff(t, kind, statusBlockers(), []int{1, 2, 4}, false)
	})
}

// TestStatusLocalPosterHandsOff: TestStatusPosterHandsOff with the posts
// made inside a task: one worker runs a task that keeps giving empty tasks
// to a group of its own (onto its deque), and every other worker is
// blocked in a task, the last of them with the releasing task on its
// deque. With the monitor off, only the checks of those posts, a Go inside
// a task on a saturated pool, can hand a slot on.
func TestStatusLocalPosterHandsOff(t *testing.T) {
	byReads(t, func(t *testing.T, kind int) {
		for _, b := range statusBlockers() {
			for _, procs := range []int{2, 4} {
				t.Run(fmt.Sprintf("%s/procs=%d", b.name, procs), func(t *testing.T) {
					withRescueOff(t, procs, true, func() {
						block, release := b.make(t, procs-1)
						// Before the posts start: a worker running the
						// poster's first empty tasks may be handed on as
						// well, if the system stops its thread meanwhile.
						before := handedOff(kind)
						var poster Group
						var released atomic.Int32 // 1 + what detachedFor read
						var posts atomic.Int64
						poster.Go(func() error {
							var other Group
							for released.Load() == 0 {
								other.Go(func() error { return nil })
								posts.Add(1)
								runtime.Gosched() // the blocked goroutines must get to block
							}
							return other.Wait()
						})
						testkit.WaitUntil(t, "the poster posting", func() bool { return posts.Load() > 0 })
						var g Group
						blockBehind(t, &g, procs-1, "inside", block, func() error {
							released.Store(1 + int32(detachedFor(detachHandOff)))
							release()
							return nil
						})
						wantNil(t, "Wait()", poster.Wait())
						if released.Load() == 1 {
							t.Errorf("the releasing task ran with no worker handed off")
						} else {
							testkit.WaitUntil(t, "the hand-off counted", func() bool { return handedOff(kind) > before })
						}
						wantNil(t, "Wait()", g.Wait())
						t.Logf("%d posts in all", posts.Load())
					})
				})
			}
		}
	})
}

// TestStatusPosterChecksBesideStalledMonitor: TestStatusPosterHandsOff
// with a monitor that runs but never ticks (handoff.MonitorStalled), as
// one that gets no processor beside goroutines that never block: the
// posters see it running, and must still make their checks. By statuses
// only: the fallback's proof by the runtime's counts needs a moment with
// few goroutines running or runnable, which the stalled monitor's polls
// beside the busy workers and the poster may deny it for as long as the
// posts go on.
func TestStatusPosterChecksBesideStalledMonitor(t *testing.T) {
	needStatus(t)
	testPosterHandsOff(t, handoff.KindBlocked, statusBlockers()[:1], []int{1, 2}, true)
}

// testPosterHandsOff is TestStatusPosterHandsOff for the given blockers
// and GOMAXPROCS values, with the monitor off or, if stalled, started but
// stalled.
func testPosterHandsOff(t *testing.T, kind int, blockers []blocker, procsList []int, stalled bool) {
	for _, b := range blockers {
		for _, procs := range procsList {
			for _, from := range []string{"outside", "inside"} {
				t.Run(fmt.Sprintf("%s/procs=%d/%s", b.name, procs, from), func(t *testing.T) {
					withRescueOff(t, procs, true, func() {
						if stalled {
							handoff.MonitorStalled.Store(true)
							handoff.MonitorOff.Store(false)
						}
						block, release := b.make(t, procs)
						var g Group
						before := handedOff(kind)
						released := make(chan int, 1)
						blockBehind(t, &g, procs, from, block, func() error {
							released <- detachedFor(detachHandOff)
							release()
							return nil
						})
						var other Group
						posts := 0
						var d int
					post:
						for {
							select {
							case d = <-released:
								break post
							default:
								// One post at a time, then the processor
								// given up: the posts are the checks'
								// occasions, and the blocked workers' own
								// goroutines must get to block.
								other.Go(func() error { return nil })
								posts++
								runtime.Gosched()
							}
						}
						if stalled && !global.ho.Watching() {
							t.Errorf("no monitor ran beside the posts: the test did not build its case")
						}
						if d == 0 {
							t.Errorf("the releasing task ran with no worker handed off")
						} else {
							// Of the kind the posters' checks make here. A
							// hand-off is counted once its worker is
							// detached and its deque drained, which may
							// have let the releasing task run already.
							testkit.WaitUntil(t, "the hand-off counted", func() bool { return handedOff(kind) > before })
						}
						wantNil(t, "Wait()", g.Wait())
						wantNil(t, "Wait()", other.Wait())
						t.Logf("%d posts until the releasing task ran", posts)
					})
				})
			}
		}
	}
}

// TestStatusPosterTakesBack: with the monitor switched off and every
// worker blocked, the only poster is a client that posts a round of
// tasks from outside and runs them itself in its Wait, which takes them
// back from its shard, again and again. Its checks (one saturated post in
// handoff.CheckEvery) must come all the same, and hand a blocked worker
// on. The client starts where its shard holds one task more than a
// multiple of CheckEvery, so that a count of what the shard holds (which
// each round raises by its tasks and lowers again) would never reach the
// next multiple.
func TestStatusPosterTakesBack(t *testing.T) {
	byReads(t, func(t *testing.T, kind int) {
		const round = 8 // tasks; below CheckEvery-1
		for _, procs := range []int{1, 2} {
			t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
				withRescueOff(t, procs, true, func() {
					// This goroutine's shard, where its posts go.
					q := global.inj.shard()
					every := uint64(handoff.CheckEvery)
					// Tasks that workers take raise the shard's count for
					// good: enough of them that the blocking tasks below
					// leave it at 1 modulo CheckEvery.
					pad := (every + 1 - (q.pubCount()+uint64(procs))%every) % every
					var g Group
					var ran sync.WaitGroup
					ran.Add(int(pad))
					for range pad {
						g.Go(func() error { ran.Done(); return nil })
					}
					ran.Wait() // not g.Wait, which would take them back
					wantNil(t, "Wait()", g.Wait())
					ch := make(chan struct{})
					var started atomic.Int32
					for range procs {
						g.Go(func() error { started.Add(1); <-ch; return nil })
					}
					testkit.WaitUntil(t, "every worker blocked", func() bool { return started.Load() == int32(procs) })
					if c := q.pubCount() % every; c != 1 {
						t.Fatalf("the shard holds %d modulo %d tasks, want 1: something else posted there", c, every)
					}
					before := handedOff(kind)
					rounds := 0
					for handedOff(kind) == before {
						var other Group
						for range round {
							other.Go(func() error { return nil })
						}
						wantNil(t, "Wait()", other.Wait())
						rounds++
					}
					close(ch)
					wantNil(t, "Wait()", g.Wait())
					t.Logf("a worker handed on after %d rounds of %d tasks taken back", rounds, round)
				})
			})
		}
	})
}

// statusBlockers are blockers with the pipes replaced by one pipe per
// blocked task: readers of one file wait for its read lock, a runtime
// semaphore that the collector uses too, which therefore never counts as
// blocked (only the monitor's long bound hands such a worker on).
func statusBlockers() []blocker {
	var bs []blocker
	for _, b := range blockers {
		switch b.name {
		case "pipe", "syscall":
			blocking := b.name == "syscall"
			b.make = func(t *testing.T, n int) (func(), func()) {
				blocks, releases := make([]func(), n), make([]func(), n)
				for i := range n {
					blocks[i], releases[i] = pipeBlocker(t, 1, blocking)
				}
				var next atomic.Int32
				return func() { blocks[next.Add(1)-1]() }, func() {
					for _, r := range releases {
						r()
					}
				}
			}
		}
		bs = append(bs, b)
	}
	return bs
}

// TestStatusCPUBoundNotBlocked: CPU-bound tasks from outside, with more
// goroutines than processors spinning beside them (so that the workers
// wait for a CPU, runnable, much of the time) and tasks always queued: no
// worker is ever handed on as blocked, by a status or by the counts. The
// monitor and the posters check all along, since the pool is saturated.
func TestStatusCPUBoundNotBlocked(t *testing.T) {
	byReads(t, testCPUBoundNotBlocked)
}

func testCPUBoundNotBlocked(t *testing.T, kind int) {
	n := testkit.ScaleDown(20_000, 4_000)
	for _, procs := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			testkit.SetProcs(t, procs)
			guardPool(t, func() {
				var stop atomic.Bool
				var hogs sync.WaitGroup
				for range 2 * procs {
					hogs.Add(1)
					go func() {
						defer hogs.Done()
						for !stop.Load() {
						}
					}()
				}
				before := handedOff(kind)
				var g Group
				var ran atomic.Int64
				work := func() error {
					spin(20 * time.Microsecond)
					ran.Add(1)
					return nil
				}
				goFrom(&g, "outside", n, work)
				wantNil(t, "Wait()", g.Wait())
				stop.Store(true)
				hogs.Wait()
				if got := ran.Load(); got != int64(n) {
					t.Errorf("%d of %d tasks ran", got, n)
				}
				if d := handedOff(kind) - before; d != 0 {
					t.Errorf("%d CPU-bound workers handed off as blocked, want none", d)
				}
			})
		})
	}
}

// TestStatusOffFallsBack: with the status reads switched off (as on a Go
// release the reader does not know), a worker blocked in a task is still
// handed on, by the monitor's fallback, and never counted as blocked by a
// status.
func TestStatusOffFallsBack(t *testing.T) {
	testkit.SetProcs(t, 2)
	guardPool(t, func() {
		restore := gstatus.SetOff(true)
		defer restore()
		before := handedOff(handoff.KindBlocked)
		var g Group
		ch := make(chan struct{})
		for range 2 {
			g.Go(func() error { <-ch; return nil })
		}
		g.Go(func() error { close(ch); return nil })
		wantNil(t, "Wait()", g.Wait())
		if d := handedOff(handoff.KindBlocked) - before; d != 0 {
			t.Errorf("%d workers handed off as blocked by a status while statuses are off", d)
		}
	})
}

// TestStatusStartsWithFirstWorker checks, in a process of its own, that
// the status check starts when the pool starts its first worker, not at
// import nor only once the pool is saturated (when its probes would wait
// for processors the pool's work holds): nothing has started it before
// the first Go; the first Go, whose post starts the first worker, has.
// Then fan-outs of blocking tasks saturate the pool until a check has
// decided the reader (one that ran out of time on a busy machine is tried
// again at a later saturation), and every task runs meanwhile, handed on
// by the fallback until the reader is on. Where statuses are never read,
// no check starts, and the test is skipped.
func TestStatusStartsWithFirstWorker(t *testing.T) {
	needReader(t)
	if os.Getenv(childVar) != "firstworker" {
		testkit.Child(t, "TestStatusStartsWithFirstWorker", childVar+"=firstworker")
		return
	}
	testkit.SetProcs(t, 2)
	guardPool(t, func() {
		if gstatus.Started() {
			t.Fatal("the status check started before the pool was used")
		}
		var g Group
		g.Go(func() error { return nil })
		if !gstatus.Started() {
			t.Fatal("the first Go started a worker, but not the status check")
		}
		wantNil(t, "Wait()", g.Wait())
		rounds := 0
		testkit.WaitUntil(t, "saturating the pool decides the status reader", func() bool {
			<-testkit.FanOut(&g, 16, nil)
			wantNil(t, "Wait()", g.Wait())
			rounds++
			return gstatus.Decided()
		})
		err := gstatus.Prove()
		t.Logf("decided after %d fan-outs: %v", rounds, err)
		if err == nil && !handoff.StatusOn() {
			t.Fatal("the check passed, but statuses are not read")
		}
	})
}

// TestStatusRampsBlockingFanOut: 64 tasks queued from outside that all
// block (on a channel closed once all have started) start on goroutines of
// their own, and a hand-off that finds every other worker blocked also
// starts a worker for each queued task (handoff.KindBlocked's ramp) instead of
// one replacement each: the ramp is seen to happen. (How many hand-offs it
// saves depends on whether the workers started last are already blocked
// when it looks, which a loaded machine decides; so the count is logged,
// not bounded.)
func TestStatusRampsBlockingFanOut(t *testing.T) {
	needStatus(t)
	const n = 64
	for _, procs := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			testkit.SetProcs(t, procs)
			guardPool(t, func() {
				rampsBefore := global.ho.Ramps()
				for round := range 3 { // the first round starts goroutines, the next ones reuse spares
					before := handedOff(handoff.KindBlocked)
					var g Group
					var started atomic.Int32
					all := make(chan struct{})
					for range n {
						g.Go(func() error {
							if started.Add(1) == n {
								close(all)
							}
							<-all
							return nil
						})
					}
					<-all // not Wait, which would run a task itself
					wantNil(t, "Wait()", g.Wait())
					t.Logf("round %d: %d blocked workers handed on for %d blocking tasks", round, handedOff(handoff.KindBlocked)-before, n)
				}
				if global.ho.Ramps() == rampsBefore {
					t.Errorf("three fan-outs of %d blocking tasks, and no hand-off ramped up", n)
				}
			})
		})
	}
}

// TestStatusRuntimeWaitHandedOnAfterBound: at GOMAXPROCS 1, two tasks read
// one pipe and the task that writes to it is queued behind them. The
// first reader parks in the poller (blocked) and is handed on; the second
// waits for the file's read lock, a runtime semaphore, which never reads
// blocked. The pool is at its capacity with the writer queued: only the
// monitor's bound for workers that stand still (runWait) hands the second
// reader's slot on, and without it the program would stall, where
// errgroup runs all three at once.
func TestStatusRuntimeWaitHandedOnAfterBound(t *testing.T) {
	needStatus(t)
	testkit.SetProcs(t, 1)
	guardPool(t, func() {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		defer w.Close()
		var g Group
		var started atomic.Int32
		read := func() error {
			started.Add(1)
			var b [1]byte
			_, err := r.Read(b[:])
			return err
		}
		g.Go(read)
		testkit.WaitUntil(t, "the first reader started", func() bool { return started.Load() == 1 })
		g.Go(read)
		testkit.WaitUntil(t, "the second reader started", func() bool { return started.Load() == 2 })
		wrote := make(chan struct{})
		g.Go(func() error {
			defer close(wrote)
			_, err := w.Write([]byte{1, 2})
			return err
		})
		<-wrote // not Wait, which would run the writer itself
		wantNil(t, "Wait()", g.Wait())
	})
}

// TestStatusSparesPatientWait: a Wait that waits in its worker's place
// (worker.waitPatiently) reads blocked, on a channel, for as long as it
// waits; it is waiting on purpose, for a bounded time, and the status
// checks must leave its place alone (handoff's Slot.blockedFor), where they would hand on
// a worker whose task read blocked this long. The test makes the checks
// itself (the monitor is off, see whilePatient), as a poster that finds
// the pool saturated would, one after another for a millisecond: twenty
// times the least gap between two reads that find a worker blocked.
func TestStatusSparesPatientWait(t *testing.T) {
	needStatus(t)
	whilePatient(t, func() {
		before := handedOff(handoff.KindBlocked)
		first := time.Now()
		testkit.WaitUntil(t, "a millisecond of checks", func() bool {
			global.ho.Saturated(0, &current().rec)
			return time.Since(first) > time.Millisecond
		})
		if n := handedOff(handoff.KindBlocked) - before; n != 0 || detachedFor(detachHandOff) != 0 {
			t.Errorf("the checks handed on %d workers, with a Wait waiting in its worker's place", n)
		}
	})
}
