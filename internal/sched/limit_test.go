package sched

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-steal/steal/internal/gid"
	"github.com/go-steal/steal/internal/testkit"
)

// Limits: SetLimit(n) sizes nothing; it bounds the group's active tasks (a
// Go from outside waits for a slot), and at most n of the group's tasks
// execute at once, whatever the number of workers and wherever they run.
// A Go inside a task (or inside a task run by an outside Wait) on a full
// group sets its task aside instead of blocking.

// TestLimitBoundsRunningTasks: under SetLimit(n), never more than n of the
// group's tasks execute at once, with tasks that block, tasks that spawn
// more tasks of the group from inside (set aside at the limit), and tasks
// that wait in nested groups (where the helping goroutine could pick up
// more tasks of the group). In the "crowd" variant a fan-out of blocking
// tasks of another group keeps many more workers than n alive meanwhile,
// so the bound cannot come from a shortage of workers.
func TestLimitBoundsRunningTasks(t *testing.T) {
	tasks := testkit.ScaleDown(400, 120)
	procs := runtime.GOMAXPROCS(0)
	for _, crowd := range []bool{false, true} {
		for _, limit := range []int{1, 2, 3, procs + 2} {
			if crowd && limit > 2 {
				continue
			}
			t.Run(fmt.Sprintf("limit=%d/crowd=%v", limit, crowd), func(t *testing.T) {
				guardPool(t, func() {
					var other Group
					const crowdSize = 24
					crowdGate := make(chan struct{})
					if crowd {
						var started atomic.Int64
						for range crowdSize {
							other.Go(func() error { started.Add(1); <-crowdGate; return nil })
						}
						testkit.WaitUntil(t, "the crowd's tasks all started", func() bool { return started.Load() == crowdSize })
					}
					var g Group
					g.SetLimit(limit)
					var running, live maxGauge
					var ran atomic.Int64
					var body func(i int) func() error
					body = func(i int) func() error {
						return func() error {
							running.enter()
							defer running.exit()
							live.observe(int64(global.live.Load()))
							ran.Add(1)
							switch i % 5 {
							case 0: // blocks: tempts the pool to add workers
								time.Sleep(50 * time.Microsecond)
							case 1: // more tasks of the group, from inside
								if i < tasks {
									g.Go(body(tasks + i))
								}
							case 2: // a nested group, waited on here (helping)
								var n Group
								for j := range 4 {
									n.Go(func() error {
										if j == 0 {
											time.Sleep(20 * time.Microsecond)
										}
										return nil
									})
								}
								n.Wait()
							case 3:
								runtime.Gosched()
							}
							return nil
						}
					}
					for i := range tasks {
						g.Go(body(i))
					}
					wantNil(t, "Wait()", g.Wait())
					close(crowdGate)
					wantNil(t, "crowd Wait()", other.Wait())
					want := int64(tasks + (tasks+4)/5)
					if got := ran.Load(); got != want {
						t.Errorf("%d tasks ran, want %d", got, want)
					}
					if hi := running.hi.Load(); hi > int64(limit) {
						t.Errorf("%d tasks of a group limited to %d executed at once", hi, limit)
					}
					t.Logf("at most %d of the group's tasks at once, with up to %d live workers", running.hi.Load(), live.hi.Load())
					if crowd && live.hi.Load() <= int64(limit) {
						t.Errorf("the crowd did not keep more than %d workers alive (saw %d): the test no longer builds its case", limit, live.hi.Load())
					}
				})
			})
		}
	}
}

// TestLimitReuseNewLimit: a group used again after Wait with a different
// limit respects the new one.
func TestLimitReuseNewLimit(t *testing.T) {
	guardPool(t, func() {
		var g Group
		for _, limit := range []int{1, 3, -1, 2, 1} {
			g.SetLimit(limit)
			var running maxGauge
			for range 100 {
				g.Go(func() error {
					running.enter()
					defer running.exit()
					time.Sleep(10 * time.Microsecond)
					return nil
				})
			}
			wantNil(t, "Wait()", g.Wait())
			if limit > 0 {
				if hi := running.hi.Load(); hi > int64(limit) {
					t.Errorf("limit %d: %d tasks at once", limit, hi)
				}
			}
		}
	})
}

// TestLimitParkingInNestedWait: a task A of a limited group queues a task
// B of a nested group and then more tasks of its own group from inside (at
// the limit they are set aside: a Go inside a task does not block), and
// waits on the nested group. Whatever the goroutines that help do
// meanwhile, B must run without more than limit of the group's tasks
// executing at once, and nothing may deadlock: recursive use under a limit
// completes. Meanwhile goroutines
// outside call Go on the group too (they wait for a slot, running the
// group's tasks that they can reach).
func TestLimitParkingInNestedWait(t *testing.T) {
	needGID(t)
	forLimits(t, []int{1, 2}, func(t *testing.T, limit int) {
		var g Group
		g.SetLimit(limit)
		const inside, outside = 20, 20
		var running maxGauge
		var ran, outsideRan atomic.Int64
		var bRan atomic.Int64
		var parkedSeen maxGauge
		groupTask := func(extra func()) func() error {
			return func() error {
				running.enter()
				defer running.exit()
				if extra != nil {
					extra()
				}
				ran.Add(1)
				return nil
			}
		}
		aStarted := make(chan struct{})
		var outsiders sync.WaitGroup
		for a := range limit {
			g.Go(groupTask(func() {
				var n Group
				n.Go(func() error {
					if sl := g.slow.Load(); sl != nil {
						parkedSeen.observe(sl.nParked.Load())
					}
					bRan.Add(1)
					return nil
				})
				for range inside {
					g.Go(groupTask(nil))
				}
				if a == 0 {
					close(aStarted)
				}
				wantNil(t, "nested Wait()", n.Wait())
			}))
		}
		<-aStarted
		for range outside {
			outsiders.Add(1)
			go func() {
				defer outsiders.Done()
				g.Go(groupTask(func() { outsideRan.Add(1) }))
			}()
		}
		outsiders.Wait()
		wantNil(t, "Wait()", g.Wait())
		if got, want := ran.Load(), int64(limit*(1+inside)+outside); got != want {
			t.Errorf("%d tasks of the group ran, want %d", got, want)
		}
		if got := outsideRan.Load(); got != outside {
			t.Errorf("%d tasks from outside ran, want %d", got, outside)
		}
		if got := bRan.Load(); got != int64(limit) {
			t.Errorf("%d nested tasks ran, want %d", got, limit)
		}
		if hi := running.hi.Load(); hi > int64(limit) {
			t.Errorf("%d tasks of a group limited to %d executed at once", hi, limit)
		}
		t.Logf("at most %d tasks parked while a nested task ran", parkedSeen.hi.Load())
	})
}

// TestLimitNestedGroupOwnLimit: a nested group with a limit of its own,
// filled from inside a task (the caller runs queued work instead of
// blocking) and from inside its own tasks, never runs more than its limit
// at once, and every task runs.
func TestLimitNestedGroupOwnLimit(t *testing.T) {
	guardPool(t, func() {
		var g Group
		const outer, perGroup = 8, 40
		var ran atomic.Int64
		var over atomic.Int64
		for range outer {
			g.Go(func() error {
				var n Group
				n.SetLimit(2)
				var running maxGauge
				var body func(depth int) func() error
				body = func(depth int) func() error {
					return func() error {
						if running.enter() > 2 {
							over.Add(1)
						}
						defer running.exit()
						ran.Add(1)
						if depth > 0 {
							n.Go(body(depth - 1)) // from inside its own task
						}
						runtime.Gosched()
						return nil
					}
				}
				for range perGroup {
					n.Go(body(1))
				}
				return n.Wait()
			})
		}
		wantNil(t, "Wait()", g.Wait())
		if got, want := ran.Load(), int64(outer*perGroup*2); got != want {
			t.Errorf("%d tasks ran, want %d", got, want)
		}
		if n := over.Load(); n != 0 {
			t.Errorf("%d times a nested group limited to 2 ran more than 2 tasks", n)
		}
	})
}

// TestLimitRunningCountPacked: the executing count shares the state word
// with the active count and the flag bits; filling one never disturbs the
// others.
func TestLimitRunningCountPacked(t *testing.T) {
	var g Group
	g.state.Or(bitDone | bitSlot)
	for range 3 {
		g.state.Add(oneTask)
	}
	for range 5 {
		g.state.Add(oneRunning)
	}
	s := g.state.Load()
	if countOf(s) != 3 || runningOf(s) != 5 || s&flagBits != bitDone|bitSlot {
		t.Fatalf("state %#x: count %d, running %d, flags %#x; want 3, 5, %#x", s, countOf(s), runningOf(s), s&flagBits, bitDone|bitSlot)
	}
	g.state.Add(^uint64(oneRunning - 1))
	g.state.Add(^uint64(2*oneTask - 1))
	s = g.state.Load()
	if countOf(s) != 1 || runningOf(s) != 4 || s&flagBits != bitDone|bitSlot {
		t.Fatalf("state %#x after decrements: count %d, running %d, flags %#x; want 1, 4, %#x", s, countOf(s), runningOf(s), s&flagBits, bitDone|bitSlot)
	}
	// The largest active count does not spill into the executing count.
	var h Group
	h.state.Add(uint64(1<<countBits-1) * oneTask)
	if s := h.state.Load(); countOf(s) != 1<<countBits-1 || runningOf(s) != 0 {
		t.Fatalf("a full active count reads as count %d, running %d", countOf(s), runningOf(s))
	}
}

// TestGoInTaskOnFullGroupDoesNotBlock: a Go made inside a task on a full
// limited group whose slots are held by tasks running elsewhere does not
// wait for a slot (the slot holders might be waiting for the caller): it
// sets the task aside and returns, and at most limit of the
// group's tasks execute at once all the same.
func TestGoInTaskOnFullGroupDoesNotBlock(t *testing.T) {
	needGID(t)
	forLimits(t, []int{1, 2}, func(t *testing.T, limit int) {
		var g Group
		g.SetLimit(limit)
		var holders atomic.Int64
		var running maxGauge
		// The holders wait for the task below, which calls g.Go:
		// errgroup's Go would block there, waiting for a slot that
		// only its own return frees.
		submitted := make(chan struct{})
		for range limit {
			g.Go(func() error {
				running.enter()
				defer running.exit()
				holders.Add(1)
				<-submitted
				return nil
			})
		}
		testkit.WaitUntil(t, "the holders hold every slot", func() bool { return holders.Load() == int64(limit) })
		var extraRan atomic.Int64
		var other Group
		other.Go(func() error {
			for range 5 {
				g.Go(func() error {
					running.enter()
					defer running.exit()
					extraRan.Add(1)
					return nil
				})
			}
			close(submitted)
			return nil
		})
		<-submitted
		wantNil(t, "other.Wait()", other.Wait())
		wantNil(t, "Wait()", g.Wait())
		if got := extraRan.Load(); got != 5 {
			t.Errorf("%d of the tasks queued above the limit ran, want 5", got)
		}
		if hi := running.hi.Load(); hi > int64(limit) {
			t.Errorf("%d tasks of a group limited to %d executed at once", hi, limit)
		}
	})
}

// TestOutsideNestedGoDoesNotBlock: a task that a goroutine outside the pool
// runs while it waits (in runners) and that calls Go on a full limited
// group follows the rule for Go inside a task: it does not wait for a slot
// (here the slot is held by the very task that calls Go, as in recursion
// under SetLimit, which would deadlock errgroup), it sets the task aside
// until a slot frees, and at most limit tasks of the group execute at once.
// With GOMAXPROCS 1 the Wait takes the parent task back and runs it unless
// the test goroutine loses the processor to the worker first: attempts,
// each one checked, go on until the parent runs on the test goroutine.
func TestOutsideNestedGoDoesNotBlock(t *testing.T) {
	onOneProc(t, func() {
		me := gid.Current()
		untilBuilt(t, "the parent task ran on the test goroutine", func() bool {
			var g Group
			g.SetLimit(1)
			var running maxGauge
			var ranHere atomic.Bool
			var children atomic.Int64
			child := func() error {
				running.enter()
				defer running.exit()
				children.Add(1)
				return nil
			}
			parent := func() error {
				running.enter()
				defer running.exit()
				if gid.Current() == me {
					ranHere.Store(true)
				}
				for range 3 {
					g.Go(child) // full: the slot is this task's
				}
				return nil
			}
			g.Go(parent)
			wantNil(t, "Wait()", g.Wait())
			if got := children.Load(); got != 3 {
				t.Errorf("%d child tasks ran, want 3", got)
			}
			if hi := running.hi.Load(); hi > 1 {
				t.Errorf("%d tasks of a group limited to 1 executed at once", hi)
			}
			return ranHere.Load()
		})
	})
}

// TestOutsideGoOnFullGroupWaitsForSlotOnly: a Go from outside on a full
// limited group waits for a slot, as errgroup's does; it must not make the
// caller wait for anything more. Here one slot is held by a task A that
// ends by itself a moment later, and the other by a task B, still queued,
// that waits for something the caller does only after its Go returns.
// errgroup completes this program (the Go gets A's slot); a Go that runs B
// on the caller's goroutine while it waits for a slot never returns. The
// caller is released after the hang bound, so a failure does not hang the
// test binary.
func TestOutsideGoOnFullGroupWaitsForSlotOnly(t *testing.T) {
	forProcs(t, []int{1, 2}, func(t *testing.T, procs int) {
		checkRetired(t)
		var g Group
		g.SetLimit(2)
		aStarted, releaseA := make(chan struct{}), make(chan struct{})
		g.Go(func() error { close(aStarted); <-releaseA; return nil })
		<-aStarted
		afterA := time.AfterFunc(10*time.Millisecond, func() { close(releaseA) })
		defer afterA.Stop()
		ch := make(chan struct{})
		var closeCh sync.Once
		returned := make(chan struct{})
		go func() {
			defer close(returned)
			g.Go(func() error { <-ch; return nil }) // B
			g.Go(func() error { return nil })       // full: must wait for A's slot
			closeCh.Do(func() { close(ch) })
		}()
		const bound = 5 * time.Second // a hang bound: errgroup takes about 10 ms
		select {
		case <-returned:
		case <-time.After(bound):
			t.Errorf("a Go on a full limited group did not return within %v although a slot freed after 10 ms; all goroutines:\n%s", bound, testkit.Stacks())
			closeCh.Do(func() { close(ch) }) // release the caller
			<-returned
		}
		wantNil(t, "Wait()", g.Wait())
	})
}

// TestLimitQuickParkHint: an outside Go's park for a slot that ends
// within quickPark marks the group (bitQuick) so that its next waits
// yield longer before parking, and a longer park clears the mark; the
// mark leaves the counts alone, and a limited group with the mark set
// counts, admits and finishes its tasks as one without it.
func TestLimitQuickParkHint(t *testing.T) {
	var g Group
	g.learnPark(quickPark / 10)
	if g.state.Load()&bitQuick == 0 {
		t.Fatalf("a park of %v left the hint clear", quickPark/10)
	}
	g.learnPark(quickPark / 10) // set already: no change
	if s := g.state.Load(); s != bitQuick {
		t.Fatalf("state %#x after two short parks, want only the hint (%#x)", s, uint64(bitQuick))
	}
	g.learnPark(10 * quickPark)
	if s := g.state.Load(); s != 0 {
		t.Fatalf("state %#x after a long park, want 0", s)
	}

	guardPool(t, func() {
		var g Group
		g.SetLimit(2)
		g.state.Or(bitQuick)
		n := testkit.ScaleDown(20000, 2000)
		var running maxGauge
		var ran atomic.Int64
		for range n {
			g.Go(func() error {
				running.enter()
				defer running.exit()
				ran.Add(1)
				return nil
			})
		}
		wantNil(t, "Wait", g.Wait())
		if got := ran.Load(); got != int64(n) {
			t.Fatalf("%d of %d tasks ran", got, n)
		}
		if m := running.hi.Load(); m > 2 {
			t.Fatalf("%d tasks ran at once under SetLimit(2)", m)
		}
		// (A flag bit may be left set by a park that found nothing to
		// wait for: harmless, and not what this checks.)
		if s := g.state.Load(); countOf(s) != 0 || runningOf(s) != 0 {
			t.Fatalf("state %#x once the group is done: %d tasks, %d running, want none", s, countOf(s), runningOf(s))
		}
	})
}

// TestLimitedTasksTakeRunningSlots: every task of a limited group holds a
// running slot while it executes, however it was queued: from outside (the
// injector), from inside a task (the worker's deque), or set aside at the
// limit. A worker reads the group's limit only for tasks queued while the
// group had one (task.plain), so a task queued as plain by mistake would
// run without a slot.
func TestLimitedTasksTakeRunningSlots(t *testing.T) {
	forLimits(t, []int{1, 2}, func(t *testing.T, limit int) {
		var g Group
		g.SetLimit(limit)
		var slotless, ran atomic.Int64
		check := func() error {
			ran.Add(1)
			if runningOf(g.state.Load()) == 0 {
				slotless.Add(1)
			}
			return nil
		}
		const outer, inner = 8, 3
		for range outer {
			g.Go(func() error {
				for range inner {
					g.Go(check)
				}
				return check()
			})
		}
		wantNil(t, "g.Wait()", g.Wait())
		if n := ran.Load(); n != outer*(inner+1) {
			t.Fatalf("%d tasks ran, want %d", n, outer*(inner+1))
		}
		if n := slotless.Load(); n != 0 {
			t.Errorf("%d of %d tasks of a group limited to %d ran without a running slot", n, outer*(inner+1), limit)
		}
	})
}
