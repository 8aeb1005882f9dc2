package sched

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-steal/steal/internal/gid"
	"go.uber.org/goleak"
)

// ---------------------------------------------------------------------------
// Limits: SetLimit(n) sizes nothing; it bounds the group's active tasks (a
// Go from outside waits for a slot), and at most n of the group's tasks
// execute at once, whatever the number of workers and wherever they run.

// TestLimitBoundsRunningTasks: under SetLimit(n), never more than n of the
// group's tasks execute at once, with tasks that block, tasks that spawn
// more tasks of the group from inside (set aside at the limit), and tasks
// that wait in nested groups (where the helping goroutine could pick up
// more tasks of the group). In the "crowd" variant a fan-out of blocking
// tasks of another group keeps many more workers than n alive meanwhile,
// so the bound cannot come from a shortage of workers.
func TestLimitBoundsRunningTasks(t *testing.T) {
	tasks := 400
	if testing.Short() || raceEnabled {
		tasks = 120
	}
	procs := runtime.GOMAXPROCS(0)
	for _, crowd := range []bool{false, true} {
		for _, limit := range []int{1, 2, 3, procs + 2} {
			if crowd && limit > 2 {
				continue
			}
			t.Run(fmt.Sprintf("limit=%d/crowd=%v", limit, crowd), func(t *testing.T) {
				guard(t, func() {
					var other Group
					const crowdSize = 24
					crowdGate := make(chan struct{})
					if crowd {
						var started atomic.Int64
						for range crowdSize {
							other.Go(func() error { started.Add(1); <-crowdGate; return nil })
						}
						waitUntil(t, "the crowd's tasks all started", func() bool { return started.Load() == crowdSize })
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
					if err := g.Wait(); err != nil {
						t.Errorf("Wait() = %v", err)
					}
					close(crowdGate)
					if err := other.Wait(); err != nil {
						t.Errorf("crowd Wait() = %v", err)
					}
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
					checkRetired(t)
				})
				goleak.VerifyNone(t)
			})
		}
	}
}

// TestLimitReuseNewLimit: a group used again after Wait with a different
// limit respects the new one.
func TestLimitReuseNewLimit(t *testing.T) {
	guard(t, func() {
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
			if err := g.Wait(); err != nil {
				t.Errorf("Wait() = %v", err)
			}
			if limit > 0 {
				if hi := running.hi.Load(); hi > int64(limit) {
					t.Errorf("limit %d: %d tasks at once", limit, hi)
				}
			}
		}
		checkRetired(t)
	})
	goleak.VerifyNone(t)
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
	for _, limit := range []int{1, 2} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			guard(t, func() {
				var g Group
				g.SetLimit(limit)
				const inside, outside = 20, 20
				var running maxGauge
				var ran, outsideRan atomic.Int64
				var bRan atomic.Int64
				var parkedSeen atomic.Int64
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
								parkedSeen.Store(max(parkedSeen.Load(), sl.nParked.Load()))
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
						if err := n.Wait(); err != nil {
							t.Errorf("nested Wait() = %v", err)
						}
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
				if err := g.Wait(); err != nil {
					t.Errorf("Wait() = %v", err)
				}
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
				t.Logf("at most %d tasks parked while a nested task ran", parkedSeen.Load())
				checkRetired(t)
			})
			goleak.VerifyNone(t)
		})
	}
}

// TestLimitNestedGroupOwnLimit: a nested group with a limit of its own,
// filled from inside a task (the caller runs queued work instead of
// blocking) and from inside its own tasks, never runs more than its limit
// at once, and every task runs.
func TestLimitNestedGroupOwnLimit(t *testing.T) {
	guard(t, func() {
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
		if err := g.Wait(); err != nil {
			t.Errorf("Wait() = %v", err)
		}
		if got, want := ran.Load(), int64(outer*perGroup*2); got != want {
			t.Errorf("%d tasks ran, want %d", got, want)
		}
		if n := over.Load(); n != 0 {
			t.Errorf("%d times a nested group limited to 2 ran more than 2 tasks", n)
		}
		checkRetired(t)
	})
	goleak.VerifyNone(t)
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

// ---------------------------------------------------------------------------
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
	n := 600
	if testing.Short() || raceEnabled {
		n = 150
	}
	for _, limit := range []int{1, 2, -1} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			base := runtime.NumGoroutine()
			guard(t, func() {
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
				if err := g.Wait(); err != nil {
					t.Errorf("Wait() = %v", err)
				}
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
				waitUntil(t, "goroutine count back to baseline", func() bool { return runtime.NumGoroutine() <= base })
			})
			goleak.VerifyNone(t)
		})
	}
}

// TestGoexitInNestedWait: tasks of a nested group call runtime.Goexit
// (when they run on a worker) while a worker or the test goroutine helps in
// the nested Wait. Every task is accounted for, every Wait returns,
// nothing leaks.
func TestGoexitInNestedWait(t *testing.T) {
	needGID(t)
	for _, limit := range []int{1, -1} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			guard(t, func() {
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
				if err := g.Wait(); err != nil {
					t.Errorf("Wait() = %v", err)
				}
				if got := outerStarted.Load(); got != outer {
					t.Errorf("%d outer tasks ran, want %d", got, outer)
				}
				// An outer task whose Wait was unwound by a Goexit waits for
				// the rest of its nested group before it ends (see
				// Group.helpUntilDone), so every nested task is done by now.
				if s, e, r := innerStarted.Load(), innerExited.Load(), innerReturned.Load(); s != outer*inner || e+r != outer*inner {
					t.Errorf("nested tasks: started %d, exited %d, returned %d; want %d started, each exited or returned", s, e, r, outer*inner)
				}
				if err := g.Wait(); err != nil {
					t.Errorf("second Wait() = %v", err)
				}
				checkRetired(t)
			})
			goleak.VerifyNone(t)
		})
	}
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
func TestGoexitInNestedWaitEndsWaiter(t *testing.T) {
	for _, where := range []string{"Wait"} {
		t.Run(where, func(t *testing.T) {
			setProcs(t, 1)
			guard(t, func() {
				checkRetired(t)
				var g Group
				var innerDone, afterWait atomic.Int64
				var reached string
				outerDone := make(chan struct{})
				g.Go(func() error {
					defer close(outerDone) // runs on Goexit too
					var n Group
					exiting := func() error {
						defer innerDone.Add(1)
						runtime.Goexit()
						return nil
					}
					plain := func() error { innerDone.Add(1); return nil }
					switch where {
					case "Wait":
						n.Go(plain)
						n.Go(exiting)
						reached = "before n.Wait"
						n.Wait() // helps: runs exiting on this goroutine
					case "limited-Go":
						n.SetLimit(1)
						n.Go(plain)
						n.Go(exiting) // at the limit: runs plain first
						reached = "before the third n.Go"
						n.Go(plain) // at the limit: runs exiting here
						reached = "before n.Wait"
						n.Wait()
					}
					reached = "after n.Wait"
					afterWait.Add(1)
					return nil
				})
				// Not Wait: a Wait here could take the task back and run it
				// on this goroutine, which the Goexit would then end.
				<-outerDone
				if err := g.Wait(); err != nil {
					t.Errorf("Wait() = %v", err)
				}
				wantReached := map[string]string{"Wait": "before n.Wait", "limited-Go": "before the third n.Go"}[where]
				if afterWait.Load() != 0 || reached != wantReached {
					t.Errorf("after a nested task's runtime.Goexit the waiting task reached %q (after-Wait code ran %d times); "+
						"want it ended at %q, as documented", reached, afterWait.Load(), wantReached)
				}
				waitUntil(t, "nested tasks done", func() bool { return innerDone.Load() == 2 })
				if err := g.Wait(); err != nil {
					t.Errorf("second Wait() = %v", err)
				}
				checkRetired(t)
			})
			goleak.VerifyNone(t)
		})
	}
}

// TestGoexitOutsideEndsCaller: a task that a goroutine outside the pool
// runs while it waits in Wait and
// that calls runtime.Goexit ends that goroutine: its code after the call
// does not run, its deferred calls do. The task counts as finished, the
// goroutine no longer counts as running tasks (runners), the group's other
// tasks run, and a later Wait returns. With GOMAXPROCS 1 the goroutine
// runs its newest task itself before any worker gets the processor; should
// a worker win that race now and then, the attempt is made again.
func TestGoexitOutsideEndsCaller(t *testing.T) {
	needGID(t)
	for _, where := range []string{"Wait"} {
		t.Run(where, func(t *testing.T) {
			setProcs(t, 1)
			guard(t, func() {
				const attempts = 20
				built := 0
				for range attempts {
					if goexitOutside(t, where) {
						built++
					}
				}
				if built == 0 {
					t.Errorf("in %d attempts the exiting task never ran on the goroutine that waited", attempts)
				}
				t.Logf("%d of %d attempts ran the exiting task on the waiting goroutine", built, attempts)
				checkRetired(t)
			})
			goleak.VerifyNone(t)
		})
	}
}

// goexitOutside makes one attempt of TestGoexitOutsideEndsCaller and
// reports whether the exiting task ran on the goroutine that waited.
func goexitOutside(t *testing.T, where string) bool {
	t.Helper()
	var g Group
	if where == "limited-Go" {
		g.SetLimit(1)
	}
	var plainRan, exitedOn atomic.Int64
	var after atomic.Bool
	var callerID atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		callerID.Store(gid.Current())
		exiting := func() error {
			exitedOn.Store(gid.Current())
			runtime.Goexit()
			return nil
		}
		plain := func() error { plainRan.Add(1); return nil }
		switch where {
		case "Wait":
			g.Go(plain)
			g.Go(exiting)
			g.Wait() // takes exiting back (the newest) and runs it
		case "limited-Go":
			g.Go(exiting)
			g.Go(plain) // full: runs exiting while it waits
		}
		after.Store(true)
	}()
	<-done
	onCaller := exitedOn.Load() == callerID.Load()
	wantPlain := int64(1)
	switch {
	case onCaller && after.Load():
		t.Errorf("%s: the caller went on after a task it ran called Goexit", where)
	case onCaller && runners.has(callerID.Load()):
		t.Errorf("%s: the ended caller is still in runners", where)
	case onCaller && where == "limited-Go":
		wantPlain = 0 // its Go never returned, so it was never queued
	}
	waitUntil(t, "the group's count reaches zero", func() bool { return g.count() == 0 })
	if err := g.Wait(); err != nil {
		t.Errorf("%s: Wait() = %v", where, err)
	}
	if got := plainRan.Load(); got != wantPlain {
		t.Errorf("%s: %d plain tasks ran, want %d (exiting task on the caller: %v)", where, got, wantPlain, onCaller)
	}
	return onCaller
}
