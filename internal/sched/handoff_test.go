package sched

import (
	"fmt"
	"github.com/go-steal/steal/internal/sched/handoff"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-steal/steal/internal/testkit"
)

// Hand-off: a worker blocked in a task (not in one of our waits) gives its
// slot to another goroutine once the monitor has seen it stuck, so that the
// tasks queued behind it run. These tests wait for events, never for a
// time: a hand-off that does not happen is a hang, reported by the guard.

// blocker is a way for a task to block: block(i) blocks until release
// (called once, by another task) lets every blocked task go on.
type blocker struct {
	name string
	make func(t *testing.T, n int) (block func(), release func())
}

var blockers = []blocker{
	{"sleep", func(t *testing.T, n int) (func(), func()) {
		var go_ atomic.Bool
		return func() {
				for !go_.Load() {
					time.Sleep(time.Millisecond)
				}
			},
			func() { go_.Store(true) }
	}},
	{"channel", func(t *testing.T, n int) (func(), func()) {
		ch := make(chan struct{})
		return func() { <-ch }, func() { close(ch) }
	}},
	{"mutex", func(t *testing.T, n int) (func(), func()) {
		var mu sync.Mutex
		passed := 0 // under mu
		mu.Lock()
		return func() { mu.Lock(); passed++; mu.Unlock() }, mu.Unlock
	}},
	{"pipe", func(t *testing.T, n int) (func(), func()) {
		return pipeBlocker(t, n, false)
	}},
	{"syscall", func(t *testing.T, n int) (func(), func()) {
		// Fd puts the pipe in blocking mode: each read is a system call
		// that blocks its thread, not a goroutine parked by the netpoller.
		return pipeBlocker(t, n, true)
	}},
}

// pipeBlocker blocks in a one-byte read from a pipe, n readers in all; the
// release writes n bytes.
func pipeBlocker(t *testing.T, n int, blocking bool) (func(), func()) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	if blocking {
		r.Fd()
	}
	return func() {
			var b [1]byte
			if _, err := r.Read(b[:]); err != nil {
				t.Errorf("read from the pipe: %v", err)
			}
		}, func() {
			if _, err := w.Write(make([]byte, n)); err != nil {
				t.Errorf("write to the pipe: %v", err)
			}
		}
}

// TestHandOffBlocked: every worker is blocked in a task (a sleep, a
// channel, a mutex, a pipe read parked in the netpoller or blocking its
// thread in a system call), and the one task that would release them is
// queued behind them: from outside, or on the deque of a worker that then
// blocks. Only a hand-off of a blocked worker's slot (and, inside, of its
// deque) runs it. The releasing task also checks that the monitor has
// detached a worker, which nothing else does.
func TestHandOffBlocked(t *testing.T) {
	for _, b := range blockers {
		for _, procs := range []int{1, 2, 4, 8} {
			for _, from := range []string{"outside", "inside"} {
				t.Run(fmt.Sprintf("%s/procs=%d/%s", b.name, procs, from), func(t *testing.T) {
					testkit.SetProcs(t, procs)
					guardPool(t, func() {
						block, release := b.make(t, procs)
						var g Group
						released := make(chan int, 1)
						blockBehind(t, &g, procs, from, block, func() error {
							released <- detachedFor(detachHandOff)
							release()
							return nil
						})
						if d := <-released; d == 0 {
							t.Errorf("the releasing task ran with no worker detached by the monitor")
						}
						wantNil(t, "Wait()", g.Wait())
					})
				})
			}
		}
	}
}

// TestHandOffProgress is the progress guarantee: tasks queued behind workers
// that are stuck in tasks that never end by themselves still run, whatever
// keeps the workers stuck: blocked, or running on the CPU (here, spinning
// until the queued task has run) while other goroutines keep every CPU
// busy. The bound is the hang guard's; the log shows how long it took
// against the monitor's period.
func TestHandOffProgress(t *testing.T) {
	for _, stuck := range []string{"blocked", "spinning"} {
		for _, procs := range []int{1, 2, 4} {
			t.Run(fmt.Sprintf("%s/procs=%d", stuck, procs), func(t *testing.T) {
				testkit.SetProcs(t, procs)
				guardPool(t, func() {
					// Other goroutines that keep every CPU busy.
					var stop atomic.Bool
					var hogs sync.WaitGroup
					for range procs {
						hogs.Add(1)
						go func() {
							defer hogs.Done()
							for !stop.Load() {
							}
						}()
					}
					defer func() { stop.Store(true); hogs.Wait() }()
					var g Group
					var started atomic.Int32
					ran := make(chan struct{})
					for range procs {
						g.Go(func() error {
							started.Add(1)
							if stuck == "blocked" {
								<-ran
							} else {
								for !isClosed(ran) {
								}
							}
							return nil
						})
					}
					testkit.WaitUntil(t, "every worker stuck", func() bool { return started.Load() == int32(procs) })
					begin := time.Now()
					g.Go(func() error { close(ran); return nil })
					<-ran
					t.Logf("the queued task ran %v after it was queued", time.Since(begin))
					wantNil(t, "Wait()", g.Wait())
				})
			})
		}
	}
}

// blockBehind blocks every worker of a pool of procs in a task of g that
// calls block, and queues last behind them: from outside once every
// worker is blocked, or from inside, onto the deque of a worker whose
// task then blocks. All workers but one are blocked first, so that the
// last one's deque is the only place left.
func blockBehind(t *testing.T, g *Group, procs int, from string, block func(), last func() error) {
	t.Helper()
	var started atomic.Int32
	blockTask := func() error { started.Add(1); block(); return nil }
	for range procs - 1 {
		g.Go(blockTask)
	}
	testkit.WaitUntil(t, "the blocking tasks started", func() bool { return started.Load() == int32(procs-1) })
	switch from {
	case "outside":
		g.Go(blockTask)
		testkit.WaitUntil(t, "every worker blocked", func() bool { return started.Load() == int32(procs) })
		g.Go(last)
	case "inside":
		g.Go(func() error {
			var m Group
			m.Go(last) // onto this worker's deque
			if err := blockTask(); err != nil {
				return err
			}
			return m.Wait()
		})
	default:
		panic("blockBehind: from is neither outside nor inside: " + from)
	}
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestHandOffGCStorm: CPU-bound tiny tasks while the garbage collector runs
// all the time (GOGC=1 and runtime.GC in a loop) never grow the pool past
// GOMAXPROCS+2, also with more Ps than CPUs (4 on the machines this runs
// on), whose workers' threads the system does not always run. Every task
// ends quickly, so every worker's task sequence moves between samples,
// whatever the collector does; no worker is handed on as blocked by a
// status, or as off the CPU by the runtime's counts (which a worker
// parked in an assist while the collector marks would look, and which the
// fallback therefore does not count while it marks). A worker that does
// not run at all for the monitor's bounds (the system runs other
// processes on its CPU) is handed on after them, as documented; the pool
// grows by those and no more.
func TestHandOffGCStorm(t *testing.T) {
	byReads(t, testGCStorm)
}

func testGCStorm(t *testing.T, kind int) {
	n := testkit.ScaleDown(100_000, 10_000)
	for _, procs := range []int{1, 2, 4} {
		for _, from := range []string{"outside", "inside"} {
			t.Run(fmt.Sprintf("procs=%d/%s", procs, from), func(t *testing.T) {
				testkit.SetProcs(t, procs)
				defer debug.SetGCPercent(debug.SetGCPercent(1))
				guardPool(t, func() {
					stopStorm := testkit.CollectAlways()
					var live maxGauge
					s := startSampler(func() { live.observe(int64(global.live.Load())) })
					before := handedOff(kind)
					stuckBefore, rampsBefore := handedOff(handoff.KindBound), global.ho.Ramps()
					var g Group
					var ran atomic.Int64
					tiny := func() error {
						sink.Add(int64(len(make([]byte, 64)))) // garbage
						ran.Add(1)
						return nil
					}
					goFrom(&g, from, n, tiny)
					wantNil(t, "Wait()", g.Wait())
					s.stop()
					stopStorm()
					if got := ran.Load(); got != int64(n) {
						t.Errorf("%d of %d tasks ran", got, n)
					}
					t.Logf("%d tiny tasks beside a GC storm: at most %d live workers; %d handed on after standing still long, %d ramps",
						n, live.hi.Load(), handedOff(handoff.KindBound)-stuckBefore, global.ho.Ramps()-rampsBefore)
					// Statuses tell a wait for the collector from a block;
					// the counts cannot tell it from one outside marking,
					// which the pool's bound below still covers (see
					// package handoff, counts.go).
					if d := handedOff(kind) - before; d != 0 && kind == handoff.KindBlocked {
						t.Errorf("%d workers waiting for the collector handed off as blocked, want none", d)
					} else if d != 0 {
						t.Logf("%d workers waiting for the collector outside marking handed off as off the CPU", d)
					}
					// Each worker handed on runs one goroutine more until
					// its task returns (Blocking tasks in package
					// wsgroup's documentation says so): those the counts
					// handed on, and those handed on after standing still
					// long, which a worker whose thread the system does
					// not run for that long does (a machine busier than
					// its CPUs: the suite runs beside others, under
					// -race). Growth beyond them is the bug.
					bound := int64(handedOff(handoff.KindBound) - stuckBefore)
					extra := bound
					if kind == handoff.KindOffCPU {
						extra += int64(handedOff(kind) - before)
					}
					if hi, most := live.hi.Load(), int64(procs+2)+extra; hi > most {
						t.Errorf("CPU-bound tasks beside a GC storm grew the pool to %d live workers, want ≤ GOMAXPROCS+2+%d (handed on by the counts, or after standing still long) = %d", hi, extra, most)
					}
				})
			})
		}
	}
}

// TestSparesReused: waves of blocking tasks, one right after another, run
// on the goroutines that the previous wave left as spares: a wave creates
// fewer goroutines than it has tasks. A wave that comes after the spares'
// linger (a busy machine may delay it) creates them anew, so the test runs
// waves until one reuses; a spare that never parks, or one handed a slot
// and never woken, makes that never happen, or leaves a goroutine behind,
// which guardPool reports.
func TestSparesReused(t *testing.T) {
	const procs, n = 2, 32
	testkit.SetProcs(t, procs)
	guardPool(t, func() {
		wave := func() {
			var g Group
			<-testkit.FanOut(&g, n, nil)
			wantNil(t, "Wait()", g.Wait())
		}
		wave()
		waves := 0
		testkit.WaitUntil(t, "a wave of blocking tasks reuses spares", func() bool {
			before := goroutinesCreated(t)
			wave()
			waves++
			created := goroutinesCreated(t) - before
			t.Logf("wave %d: %d blocking tasks, %d goroutines created", waves, n, created)
			return created < n/2
		})
	})
}
