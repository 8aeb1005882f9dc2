package sched

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"weak"

	"github.com/go-steal/steal/internal/gid"
	"go.uber.org/goleak"
)

// ---------------------------------------------------------------------------
// Helpers shared by the tests of this package.

// defaultHangTimeout bounds every guarded test body. It is deliberately
// generous: it only turns a deadlock into a readable failure (with a dump
// of every goroutine) instead of the test binary's 10-minute panic. It is
// never used to judge speed.
const defaultHangTimeout = 60 * time.Second

// hangTimeout is defaultHangTimeout, shortened so that it fires before the
// test binary's own deadline (go test -timeout) does.
// SCHED_HANG_TIMEOUT (a time.Duration string) overrides the default, which
// is handy when experimenting with code that is expected to deadlock.
func hangTimeout(t *testing.T) time.Duration {
	d := defaultHangTimeout
	if s := os.Getenv("SCHED_HANG_TIMEOUT"); s != "" {
		if v, err := time.ParseDuration(s); err == nil && v > 0 {
			d = v
		}
	}
	if dl, ok := t.Deadline(); ok {
		if left := time.Until(dl) - 10*time.Second; left < d {
			d = max(left, 5*time.Second)
		}
	}
	return d
}

// guard runs body on the test goroutine (so body may call t.Fatal). If
// body has not returned after hangTimeout, it prints the stack of every
// goroutine to stderr and panics, which fails the test binary: a hung
// scheduler cannot be unwound, and the dump is what one needs to debug it.
func guard(t *testing.T, body func()) {
	t.Helper()
	d := hangTimeout(t)
	name := t.Name()
	timer := time.AfterFunc(d, func() {
		fmt.Fprintf(os.Stderr, "\nHANG: %s did not finish within %v; all goroutines:\n\n%s\n", name, d, allStacks())
		panic(fmt.Sprintf("hang: %s did not finish within %v (goroutine dump above)", name, d))
	})
	defer timer.Stop()
	body()
}

// allStacks returns the stacks of all goroutines, growing the buffer (up to
// 64 MiB) so that the dump of a deadlocked program is not cut short.
func allStacks() []byte {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= 64<<20 {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}

// waitUntil polls cond until it holds; if it does not within the hang
// timeout, the test fails with a goroutine dump. It never judges speed.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	d := hangTimeout(t) * 9 / 10 // fail here, not in the guard around us
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: still false after %v; all goroutines:\n%s", what, d, allStacks())
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// setProcs sets GOMAXPROCS for the rest of the test.
func setProcs(t *testing.T, n int) {
	old := runtime.GOMAXPROCS(n)
	t.Cleanup(func() { runtime.GOMAXPROCS(old) })
}

// needGID skips tests that depend on telling workers from outsiders.
func needGID(t *testing.T) {
	if !gid.Trusted() {
		t.Skip("goroutine ids are not trusted here: every caller counts as an outsider")
	}
}

// maxGauge tracks a level (for example, tasks executing at once) and the
// highest value it reached.
type maxGauge struct {
	cur, hi atomic.Int64
}

func (m *maxGauge) enter() int64 {
	c := m.cur.Add(1)
	m.observe(c)
	return c
}

func (m *maxGauge) exit() { m.cur.Add(-1) }

func (m *maxGauge) observe(v int64) {
	for {
		h := m.hi.Load()
		if v <= h || m.hi.CompareAndSwap(h, v) {
			return
		}
	}
}

// sampler calls f about every 50 µs on its own goroutine until stop is
// called (it sleeps in between, so it does not count as a running
// goroutine most of the time, which matters to the watchdog).
type sampler struct {
	quit chan struct{}
	done chan struct{}
}

func startSampler(f func()) *sampler {
	s := &sampler{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			f()
			select {
			case <-s.quit:
				f()
				return
			default:
			}
			time.Sleep(50 * time.Microsecond)
		}
	}()
	return s
}

func (s *sampler) stop() {
	close(s.quit)
	<-s.done
}

// poolIdle reports whether the pool has nothing left running: no worker
// occupies a slot, no watchdog runs, no worker counts as blocked, and no
// task is queued.
func poolIdle() bool {
	if global.live.Load() != 0 || global.watching.Load() || global.blocked.Load() != 0 || global.queued() != 0 {
		return false
	}
	global.mu.Lock() // occupied is guarded by mu
	defer global.mu.Unlock()
	for _, w := range *global.slots.Load() {
		if w.occupied {
			return false
		}
	}
	return true
}

// checkRetired waits until the pool has gone idle (poolIdle): after the
// last task, every worker retires once it has been idle for the linger and
// the watchdog exits after its quiet ticks. There is no deadline but the
// hang guard's: a worker or watchdog that never leaves fails the test with
// a goroutine dump.
func checkRetired(t *testing.T) {
	t.Helper()
	waitUntil(t, "every worker retired and the watchdog gone", poolIdle)
	// With no slot occupied, nobody may be left scanning empty deques
	// (after a burst the pool can hold thousands of free slots).
	if u := global.inUse.Load(); u != 0 {
		t.Errorf("no slot is occupied, but scans cover the first %d of %d", u, len(*global.slots.Load()))
	}
}

// fibGroup is fork-join recursion with a nested group per call.
func fibGroup(n int) int {
	if n < 2 {
		return n
	}
	var a, b int
	var g Group
	g.Go(func() error { a = fibGroup(n - 1); return nil })
	g.Go(func() error { b = fibGroup(n - 2); return nil })
	g.Wait()
	return a + b
}

func fibPlain(n int) int {
	if n < 2 {
		return n
	}
	return fibPlain(n-1) + fibPlain(n-2)
}

// ---------------------------------------------------------------------------
// Pool lifecycle: the pool is shared by every group, starts workers on
// demand, and after the last task its workers retire and its watchdog exits
// by themselves (nobody shuts it down).

// TestPoolRetiresAfterWait: after the Wait of a top-level group returns,
// its tasks have all run, and soon no worker occupies a slot and no
// goroutine of the pool remains, whatever the shape of the work. A group
// used again after Wait behaves the same.
func TestPoolRetiresAfterWait(t *testing.T) {
	errBoom := errors.New("boom")
	shapes := []struct {
		name  string
		limit int
		run   func(g *Group, ran *atomic.Int64)
		want  int64
		err   error
	}{
		{"flat", -1, func(g *Group, ran *atomic.Int64) {
			for range 1000 {
				g.Go(func() error { ran.Add(1); return nil })
			}
		}, 1000, nil},
		{"flat-limit1", 1, func(g *Group, ran *atomic.Int64) {
			for range 300 {
				g.Go(func() error { ran.Add(1); return nil })
			}
		}, 300, nil},
		{"flat-limit2-error", 2, func(g *Group, ran *atomic.Int64) {
			for i := range 300 {
				g.Go(func() error {
					ran.Add(1)
					if i == 150 {
						return errBoom
					}
					return nil
				})
			}
		}, 300, errBoom},
		{"nested-fib", -1, func(g *Group, ran *atomic.Int64) {
			for range 4 {
				g.Go(func() error {
					if fibGroup(15) != fibPlain(15) {
						return errors.New("wrong fib")
					}
					ran.Add(1)
					return nil
				})
			}
		}, 4, nil},
		{"spawning", -1, func(g *Group, ran *atomic.Int64) {
			for range 50 {
				g.Go(func() error {
					for range 20 {
						g.Go(func() error { ran.Add(1); return nil })
					}
					ran.Add(1)
					return nil
				})
			}
		}, 50 * 21, nil},
	}
	for _, s := range shapes {
		t.Run(s.name, func(t *testing.T) {
			base := runtime.NumGoroutine()
			guard(t, func() {
				for round := range 3 { // a Group may be used again after Wait
					var ran atomic.Int64
					var g Group
					g.SetLimit(s.limit)
					s.run(&g, &ran)
					if err := g.Wait(); err != s.err {
						t.Errorf("round %d: Wait() = %v, want %v", round, err, s.err)
					}
					if got := ran.Load(); got != s.want {
						t.Errorf("round %d: %d tasks ran, want %d", round, got, s.want)
					}
					if c := g.count(); c != 0 {
						t.Errorf("round %d: count %d after Wait", round, c)
					}
					checkRetired(t)
				}
				waitUntil(t, "goroutine count back to baseline", func() bool { return runtime.NumGoroutine() <= base })
			})
			goleak.VerifyNone(t)
		})
	}
}

// TestPoolRetiresWithoutWait: workers retire after the linger even while a
// group that is never waited on is still in use; the pool starts workers
// again on the group's next Go.
func TestPoolRetiresWithoutWait(t *testing.T) {
	guard(t, func() {
		var g Group
		var wg sync.WaitGroup
		var ran atomic.Int64
		for range 200 {
			wg.Add(1)
			g.Go(func() error {
				defer wg.Done()
				var n Group
				for range 5 {
					n.Go(func() error { ran.Add(1); return nil })
				}
				n.Wait()
				return nil
			})
		}
		wg.Wait()
		waitUntil(t, "idle workers retire", func() bool { return poolIdle() && g.count() == 0 })
		if got := ran.Load(); got != 200*5 {
			t.Errorf("%d nested tasks ran, want %d", got, 200*5)
		}
		goleak.VerifyNone(t)

		// The pool comes back to life: the task runs on a new worker (the
		// test goroutine is blocked on done, not in Wait, so it cannot run
		// the task itself).
		done := make(chan struct{})
		var onWorker atomic.Bool
		g.Go(func() error { onWorker.Store(current() != nil); close(done); return nil })
		<-done
		if gid.Trusted() && !onWorker.Load() {
			t.Errorf("after the workers retired, a task did not run on a worker")
		}
		if err := g.Wait(); err != nil {
			t.Errorf("Wait() = %v", err)
		}
		checkRetired(t)
	})
	goleak.VerifyNone(t)
}

// TestPoolEscapedNestedGroup: a task makes a nested group, Go's a task on
// it that blocks, and returns without waiting (as an errgroup task may
// leave goroutines behind). The outer Wait must return while that task is
// blocked, with the worker that runs it still live; once it is released,
// the pool goes idle, whether the nested group is waited on or not.
func TestPoolEscapedNestedGroup(t *testing.T) {
	for _, procs := range []int{1, 2} {
		for _, how := range []string{"linger", "wait-again"} {
			t.Run(fmt.Sprintf("procs=%d/%s", procs, how), func(t *testing.T) {
				setProcs(t, procs)
				guard(t, func() {
					var g, n Group
					started, release := make(chan struct{}), make(chan struct{})
					var nestedDone atomic.Bool
					g.Go(func() error {
						n.Go(func() error {
							close(started)
							<-release
							nestedDone.Store(true)
							return nil
						})
						return nil
					})
					<-started
					if err := g.Wait(); err != nil { // must not hang
						t.Errorf("Wait() = %v", err)
					}
					if nestedDone.Load() {
						t.Fatalf("the nested task finished before it was released")
					}
					if n.count() != 1 {
						t.Errorf("nested count = %d while its task runs, want 1", n.count())
					}
					if global.live.Load() < 1 {
						t.Errorf("live = %d while a nested task runs on a worker", global.live.Load())
					}
					close(release)
					switch how {
					case "linger":
						waitUntil(t, "nested task done", func() bool { return nestedDone.Load() && n.count() == 0 })
					case "wait-again":
						if err := n.Wait(); err != nil {
							t.Errorf("nested Wait() = %v", err)
						}
						if !nestedDone.Load() {
							t.Errorf("nested Wait returned before its task finished")
						}
						if err := g.Wait(); err != nil {
							t.Errorf("second Wait() = %v", err)
						}
					}
					if g.count() != 0 || n.count() != 0 {
						t.Errorf("counts at the end: outer %d, nested %d", g.count(), n.count())
					}
					checkRetired(t)
				})
				goleak.VerifyNone(t)
			})
		}
	}
}

// TestPoolConcurrentWaits: several goroutines Wait on one group at once
// (each may run the group's tasks that it can reach); all return the same
// error, and the group can be used again.
func TestPoolConcurrentWaits(t *testing.T) {
	errFirst := errors.New("first")
	rounds := 20
	if testing.Short() || raceEnabled {
		rounds = 5
	}
	guard(t, func() {
		var g Group
		for round := range rounds {
			gate := make(chan struct{})
			var ran atomic.Int64
			const tasks = 64
			for i := range tasks {
				g.Go(func() error {
					if i%2 == 0 {
						<-gate
					}
					ran.Add(1)
					if i == 7 {
						return errFirst
					}
					return nil
				})
			}
			const waiters = 8
			errs := make(chan error, waiters)
			var started sync.WaitGroup
			for range waiters {
				started.Add(1)
				go func() {
					started.Done()
					err := g.Wait()
					if c := g.count(); c != 0 {
						t.Errorf("round %d: a Wait returned with count %d", round, c)
					}
					errs <- err
				}()
			}
			started.Wait()
			if round%2 == 0 {
				runtime.Gosched()
			}
			close(gate)
			for range waiters {
				if err := <-errs; err != errFirst {
					t.Errorf("round %d: concurrent Wait() = %v, want %v", round, err, errFirst)
				}
			}
			if got := ran.Load(); got != tasks {
				t.Errorf("round %d: %d tasks ran, want %d", round, got, tasks)
			}
		}
		checkRetired(t)
	})
	goleak.VerifyNone(t)
}

// TestPoolReleasesClosures: once a task has run, neither the injector, nor
// a deque, nor a free task record, nor a waiter that ran it keeps its
// closure alive. Limited groups are included, so that tasks also run on the
// goroutine of a Go that waits for a slot.
func TestPoolReleasesClosures(t *testing.T) {
	guard(t, func() {
		type payload struct{ buf [64]byte }
		const n = 500
		ptrs := make([]weak.Pointer[payload], 0, 2*n)
		var g, limited Group
		limited.SetLimit(2)
		for i := range n {
			obj := &payload{}
			obj.buf[0] = byte(i)
			ptrs = append(ptrs, weak.Make(obj))
			g.Go(func() error {
				var m Group
				inner := &payload{}
				inner.buf[0] = obj.buf[0]
				m.Go(func() error { sink.Add(int64(inner.buf[1])); return nil })
				m.Wait()
				sink.Add(int64(obj.buf[1]))
				return nil
			})
			lobj := &payload{}
			ptrs = append(ptrs, weak.Make(lobj))
			limited.Go(func() error { sink.Add(int64(lobj.buf[1])); return nil })
		}
		if err := g.Wait(); err != nil {
			t.Errorf("Wait() = %v", err)
		}
		if err := limited.Wait(); err != nil {
			t.Errorf("limited Wait() = %v", err)
		}
		runtime.GC()
		runtime.GC()
		alive := 0
		for _, p := range ptrs {
			if p.Value() != nil {
				alive++
			}
		}
		if alive != 0 {
			t.Errorf("%d of %d task closures are still reachable after Wait", alive, len(ptrs))
		}
		runtime.KeepAlive(&g)
		runtime.KeepAlive(&limited)
		checkRetired(t)
	})
	goleak.VerifyNone(t)
}

// ---------------------------------------------------------------------------
// Routing: a Go inside a task on a worker queues on that worker's deque; a
// Go from any other goroutine queues on the injector, in the caller's shard.

// TestRoutingGoInsideTaskUsesDeque: a Go made inside a task pushes onto the
// calling worker's deque (for the task's own group and for a nested
// group), never onto the injector. GOMAXPROCS 1 and an idle pool at the
// start give one worker, so nobody steals from its deque while we look.
func TestRoutingGoInsideTaskUsesDeque(t *testing.T) {
	needGID(t)
	setProcs(t, 1)
	guard(t, func() {
		checkRetired(t)
		var g Group
		const k = 10
		var ran atomic.Int64
		var nested atomic.Pointer[Group]
		done := make(chan struct{})
		g.Go(func() error {
			defer close(done)
			w := current()
			if w == nil {
				t.Errorf("task runs outside the pool, want a worker")
				return nil
			}
			base := w.dq.Len()
			n := new(Group)
			for i := range k {
				g.Go(func() error { ran.Add(1); return nil })
				n.Go(func() error { ran.Add(1); return nil })
				if got := w.dq.Len(); got != base+2*(i+1) {
					t.Errorf("after %d Go pairs inside a task: deque length %d, want %d", i+1, got, base+2*(i+1))
				}
				if global.inj.nonEmpty() {
					t.Errorf("a Go inside a task put a task in the injector")
				}
			}
			nested.Store(n)
			return nil // the worker runs the queued tasks after this one
		})
		// Not Wait yet: a Wait could take the task back from the injector
		// and run it here, outside the pool.
		<-done
		if err := g.Wait(); err != nil {
			t.Errorf("Wait() = %v", err)
		}
		n := nested.Load()
		if n == nil {
			t.Fatal("outer task did not run to its end")
		}
		if err := n.Wait(); err != nil {
			t.Errorf("nested Wait() = %v", err)
		}
		if got := ran.Load(); got != 2*k {
			t.Errorf("%d inner tasks ran, want %d", got, 2*k)
		}
		checkRetired(t)
	})
	goleak.VerifyNone(t)
}

// TestRoutingNoInjectorInsideTasks: with no limit and several workers,
// Go calls inside tasks never touch the injector (only the one outside Go
// does, and its task has been taken by the time it runs). The test
// goroutine does not Wait until every task has run: a Wait outside the
// pool may run tasks itself, and their Go calls are outside Go calls.
func TestRoutingNoInjectorInsideTasks(t *testing.T) {
	needGID(t)
	guard(t, func() {
		var g Group
		var ran atomic.Int64
		var injected, outside atomic.Int64
		g.Go(func() error {
			var spawn func(depth int)
			spawn = func(depth int) {
				for range 4 {
					g.Go(func() error {
						if current() == nil {
							outside.Add(1)
						}
						ran.Add(1)
						if depth > 0 {
							spawn(depth - 1)
						}
						return nil
					})
					if global.inj.nonEmpty() {
						injected.Add(1)
					}
				}
			}
			spawn(3)
			return nil
		})
		const want = 4 + 16 + 64 + 256
		waitUntil(t, "every task ran", func() bool { return ran.Load() == want && g.count() == 0 })
		if err := g.Wait(); err != nil {
			t.Errorf("Wait() = %v", err)
		}
		if n := outside.Load(); n != 0 {
			t.Errorf("%d tasks ran outside the pool although nobody waited", n)
		}
		if n := injected.Load(); n != 0 {
			t.Errorf("the injector held tasks after %d Go calls made inside tasks", n)
		}
		if got := ran.Load(); got != want {
			t.Errorf("%d tasks ran, want %d", got, want)
		}
		checkRetired(t)
	})
	goleak.VerifyNone(t)
}

// TestRoutingOutsideGoUsesInjector: a Go from a goroutine that is not a
// worker queues on the injector, in the caller's own shard, even for a
// group whose other tasks run on workers. With GOMAXPROCS 1 and the only
// worker held busy, the task stays there long enough to be seen.
func TestRoutingOutsideGoUsesInjector(t *testing.T) {
	needGID(t)
	setProcs(t, 1)
	guard(t, func() {
		checkRetired(t)
		var g, n Group
		held, release := make(chan struct{}), make(chan struct{})
		var ran atomic.Int64
		g.Go(func() error {
			n.Go(func() error { ran.Add(1); return nil }) // from inside: a deque
			close(held)
			<-release
			return nil
		})
		<-held
		mine := global.inj.shard()
		before, total := mine.len(), global.inj.len()
		n.Go(func() error { ran.Add(1); return nil }) // from outside
		if got := mine.len(); got != before+1 {
			t.Errorf("after an outside Go the caller's shard holds %d tasks, want %d", got, before+1)
		}
		if got := global.inj.len(); got != total+1 {
			t.Errorf("after an outside Go the injector holds %d tasks, want %d", got, total+1)
		}
		close(release)
		if err := n.Wait(); err != nil {
			t.Errorf("n.Wait() = %v", err)
		}
		if err := g.Wait(); err != nil {
			t.Errorf("g.Wait() = %v", err)
		}
		if got := ran.Load(); got != 2 {
			t.Errorf("%d nested tasks ran, want 2", got)
		}
		checkRetired(t)
	})
	goleak.VerifyNone(t)
}
