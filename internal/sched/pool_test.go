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

// poolOf returns the pool g is bound to; g must have had a Go.
func poolOf(t *testing.T, g *Group) *Pool {
	t.Helper()
	p := g.pool.Load()
	if p == nil {
		t.Fatal("group has no pool after Go")
	}
	return p
}

// checkDrained asserts what an outside Wait on the owner guarantees: no
// worker occupies a slot, no watchdog runs.
func checkDrained(t *testing.T, p *Pool) {
	t.Helper()
	if n := p.live.Load(); n != 0 {
		t.Errorf("after the owner's Wait: %d live workers, want 0", n)
	}
	if p.watching.Load() {
		t.Errorf("after the owner's Wait: the watchdog still runs")
	}
	for _, w := range *p.slots.Load() {
		if w.occupied {
			t.Errorf("after the owner's Wait: slot %d still occupied", w.index)
		}
	}
}

// fibGroup is fork-join recursion with a nested group per call.
func fibGroup(n int) int {
	if n < 2 {
		return n
	}
	var a, b int
	var g Group
	g.Go(func() error { a = fibGroup(n - 1); return nil }, true)
	g.Go(func() error { b = fibGroup(n - 2); return nil }, true)
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
// Pool lifecycle (CONTRACT §4, last point).

// TestPoolShutdownAfterWait: once an outside Wait on the owner returns,
// no worker occupies a slot and no goroutine of the pool remains.
func TestPoolShutdownAfterWait(t *testing.T) {
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
				g.Go(func() error { ran.Add(1); return nil }, true)
			}
		}, 1000, nil},
		{"flat-limit1", 1, func(g *Group, ran *atomic.Int64) {
			for range 300 {
				g.Go(func() error { ran.Add(1); return nil }, true)
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
				}, true)
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
				}, true)
			}
		}, 4, nil},
		{"spawning", -1, func(g *Group, ran *atomic.Int64) {
			for range 50 {
				g.Go(func() error {
					for range 20 {
						g.Go(func() error { ran.Add(1); return nil }, true)
					}
					ran.Add(1)
					return nil
				}, true)
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
					p := poolOf(t, &g)
					if err := g.Wait(); err != s.err {
						t.Errorf("round %d: Wait() = %v, want %v", round, err, s.err)
					}
					checkDrained(t, p)
					if got := ran.Load(); got != s.want {
						t.Errorf("round %d: %d tasks ran, want %d", round, got, s.want)
					}
				}
				waitUntil(t, "goroutine count back to baseline", func() bool { return runtime.NumGoroutine() <= base })
			})
			goleak.VerifyNone(t)
		})
	}
}

// TestPoolRetiresWithoutWait: the workers of a pool whose group is never
// waited on retire after the linger; the pool starts workers again on the
// next Go.
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
					n.Go(func() error { ran.Add(1); return nil }, true)
				}
				n.Wait()
				return nil
			}, true)
		}
		p := poolOf(t, &g)
		wg.Wait()
		waitUntil(t, "idle workers retire", func() bool {
			return p.live.Load() == 0 && !p.watching.Load() && g.count() == 0
		})
		if got := ran.Load(); got != 200*5 {
			t.Errorf("%d nested tasks ran, want %d", got, 200*5)
		}
		goleak.VerifyNone(t)

		// The pool comes back to life.
		done := make(chan struct{})
		g.Go(func() error { close(done); return nil }, true)
		<-done
		if g.pool.Load() != p {
			t.Errorf("the group was bound to another pool")
		}
		if err := g.Wait(); err != nil {
			t.Errorf("Wait() = %v", err)
		}
		checkDrained(t, p)
	})
	goleak.VerifyNone(t)
}

// TestPoolEscapedNestedGroup: a task of the owner makes a nested group,
// Go's a task on it that blocks, and returns without waiting (as an
// errgroup task may leave goroutines behind). The owner's Wait must return
// while that task is blocked, without shutting the pool down under it;
// once it is released, the pool drains.
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
						}, true)
						return nil
					}, true)
					<-started
					p := poolOf(t, &g)
					if n.pool.Load() != p {
						t.Fatalf("the nested group is not bound to the owner's pool")
					}
					if err := g.Wait(); err != nil { // must not hang
						t.Errorf("Wait() = %v", err)
					}
					if nestedDone.Load() {
						t.Fatalf("the nested task finished before it was released")
					}
					if p.pendingNested() <= 0 {
						t.Errorf("pendingNested() = %d while a nested task runs", p.pendingNested())
					}
					if p.live.Load() < 1 {
						t.Errorf("live = %d while a nested task runs on a worker", p.live.Load())
					}
					close(release)
					switch how {
					case "linger":
						waitUntil(t, "nested task done and pool drained", func() bool {
							return nestedDone.Load() && p.live.Load() == 0 && !p.watching.Load()
						})
						if n.count() != 0 || g.count() != 0 {
							t.Errorf("counts after drain: nested %d, owner %d", n.count(), g.count())
						}
					case "wait-again":
						if err := n.Wait(); err != nil {
							t.Errorf("nested Wait() = %v", err)
						}
						if !nestedDone.Load() {
							t.Errorf("nested Wait returned before its task finished")
						}
						waitUntil(t, "nested completion counted", func() bool { return p.pendingNested() == 0 })
						if err := g.Wait(); err != nil {
							t.Errorf("second Wait() = %v", err)
						}
						checkDrained(t, p)
					}
				})
				goleak.VerifyNone(t)
			})
		}
	}
}

// TestPoolConcurrentWaits: several goroutines Wait on the owner at once;
// all return the same error and the pool is drained after each.
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
				}, true)
			}
			p := poolOf(t, &g)
			const waiters = 8
			errs := make(chan error, waiters)
			var started sync.WaitGroup
			for range waiters {
				started.Add(1)
				go func() {
					started.Done()
					err := g.Wait()
					if l := p.live.Load(); l != 0 {
						t.Errorf("round %d: a Wait returned with %d live workers", round, l)
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
			checkDrained(t, p)
			if p.stop.Load() {
				t.Errorf("round %d: pool still marked stopping after all Waits returned", round)
			}
		}
	})
	goleak.VerifyNone(t)
}

// TestPoolReleasesClosures: once a task has run, neither the injector, nor
// a deque, nor a free task record keeps its closure alive.
func TestPoolReleasesClosures(t *testing.T) {
	guard(t, func() {
		type payload struct{ buf [64]byte }
		const n = 500
		ptrs := make([]weak.Pointer[payload], 0, 2*n)
		var g Group
		for i := range n {
			obj := &payload{}
			obj.buf[0] = byte(i)
			ptrs = append(ptrs, weak.Make(obj))
			g.Go(func() error {
				var m Group
				inner := &payload{}
				inner.buf[0] = obj.buf[0]
				m.Go(func() error { sink.Add(int64(inner.buf[1])); return nil }, true)
				m.Wait()
				sink.Add(int64(obj.buf[1]))
				return nil
			}, true)
		}
		if err := g.Wait(); err != nil {
			t.Errorf("Wait() = %v", err)
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
			t.Errorf("%d of %d task closures are still reachable after Wait", alive, n)
		}
		runtime.KeepAlive(&g)
	})
	goleak.VerifyNone(t)
}

// ---------------------------------------------------------------------------
// Routing (CONTRACT §3).

// TestRoutingGoInsideTaskUsesDeque: a Go made inside a task pushes onto the
// calling worker's deque (for the task's own group and for a nested group),
// never onto the injector. A pool of one worker (SetLimit(1)) makes the
// deque length deterministic.
func TestRoutingGoInsideTaskUsesDeque(t *testing.T) {
	needGID(t)
	guard(t, func() {
		var g Group
		g.SetLimit(1)
		const k = 10
		var ran atomic.Int64
		var outerRan atomic.Bool
		var nested atomic.Pointer[Group]
		g.Go(func() error {
			outerRan.Store(true)
			p := g.pool.Load()
			w := current()
			if w == nil || w.pool != p {
				t.Errorf("task runs on %v, want a worker of its group's pool", w)
				return nil
			}
			base := w.dq.Len()
			var n Group
			for i := range k {
				g.Go(func() error { ran.Add(1); return nil }, true)
				n.Go(func() error { ran.Add(1); return nil }, true)
				if got := w.dq.Len(); got != base+2*(i+1) {
					t.Errorf("after %d Go pairs inside a task: deque length %d, want %d", i+1, got, base+2*(i+1))
				}
				if p.inj.nonEmpty() {
					t.Errorf("a Go inside a task put a task in the injector")
				}
			}
			if n.pool.Load() != p {
				t.Errorf("nested group bound to %p, want the worker's pool %p", n.pool.Load(), p)
			}
			if p.owner != &g {
				t.Errorf("pool owner is %p, want the outer group %p", p.owner, &g)
			}
			nested.Store(&n)
			return nil // the worker runs the queued tasks after this one
		}, true)
		if err := g.Wait(); err != nil {
			t.Errorf("Wait() = %v", err)
		}
		if n := nested.Load(); n != nil {
			if err := n.Wait(); err != nil {
				t.Errorf("nested Wait() = %v", err)
			}
		}
		if !outerRan.Load() {
			t.Fatal("outer task did not run")
		}
		if got := ran.Load(); got != 2*k {
			t.Errorf("%d inner tasks ran, want %d", got, 2*k)
		}
	})
	goleak.VerifyNone(t)
}

// TestRoutingNoInjectorInsideTasks: with no limit and several workers,
// Go calls inside tasks never touch the injector (only the one outside Go
// does, and its task has been taken by the time it runs).
func TestRoutingNoInjectorInsideTasks(t *testing.T) {
	needGID(t)
	guard(t, func() {
		var g Group
		var ran atomic.Int64
		var injected atomic.Int64
		g.Go(func() error {
			p := g.pool.Load()
			var spawn func(depth int)
			spawn = func(depth int) {
				for range 4 {
					g.Go(func() error {
						ran.Add(1)
						if depth > 0 {
							spawn(depth - 1)
						}
						return nil
					}, true)
					if p.inj.nonEmpty() {
						injected.Add(1)
					}
				}
			}
			spawn(3)
			return nil
		}, true)
		if err := g.Wait(); err != nil {
			t.Errorf("Wait() = %v", err)
		}
		if n := injected.Load(); n != 0 {
			t.Errorf("the injector held tasks after %d Go calls made inside tasks", n)
		}
		if got, want := ran.Load(), int64(4+16+64+256); got != want {
			t.Errorf("%d tasks ran, want %d", got, want)
		}
	})
	goleak.VerifyNone(t)
}

// TestRoutingOutsideGoUsesInjector: a Go on a nested group from a goroutine
// that is not a worker of its pool (the test goroutine, or a worker of
// another pool) goes to the pool's injector. The pool has one worker
// (SetLimit(1)), held busy, so the task stays there for us to see.
func TestRoutingOutsideGoUsesInjector(t *testing.T) {
	needGID(t)
	guard(t, func() {
		var g, n Group
		g.SetLimit(1)
		bound, release := make(chan struct{}), make(chan struct{})
		var ran atomic.Int64
		g.Go(func() error {
			n.Go(func() error { ran.Add(1); return nil }, true) // binds n to this pool
			close(bound)
			<-release
			return nil
		}, true)
		<-bound
		p := poolOf(t, &g)
		if n.pool.Load() != p {
			t.Fatalf("nested group not bound to the owner's pool")
		}
		if p.inj.nonEmpty() {
			t.Fatalf("injector not empty before the outside Go")
		}
		n.Go(func() error { ran.Add(1); return nil }, true) // from outside
		if !p.inj.nonEmpty() {
			t.Errorf("an outside Go did not use the injector")
		}
		if p.pendingNested() <= 0 {
			t.Errorf("pendingNested() = %d with nested tasks queued, want > 0", p.pendingNested())
		}

		// From a worker of another pool: also the injector.
		var other Group
		otherDone := make(chan struct{})
		var dqLen int = -1
		other.Go(func() error {
			defer close(otherDone)
			w := current()
			if w == nil || w.pool != other.pool.Load() {
				t.Errorf("task of the other group not on its worker")
				return nil
			}
			before := w.dq.Len()
			n.Go(func() error { ran.Add(1); return nil }, true)
			dqLen = w.dq.Len() - before
			return nil
		}, true)
		<-otherDone
		if dqLen != 0 {
			t.Errorf("a Go on a group of another pool changed the caller's deque by %d", dqLen)
		}
		if err := other.Wait(); err != nil {
			t.Errorf("other.Wait() = %v", err)
		}
		if !p.inj.nonEmpty() {
			t.Errorf("injector empty while its only worker is held")
		}
		close(release)
		if err := n.Wait(); err != nil {
			t.Errorf("n.Wait() = %v", err)
		}
		if err := g.Wait(); err != nil {
			t.Errorf("g.Wait() = %v", err)
		}
		if got := ran.Load(); got != 3 {
			t.Errorf("%d nested tasks ran, want 3", got)
		}
		checkDrained(t, p)
	})
	goleak.VerifyNone(t)
}

// TestRoutingBinding: a group whose first Go is outside owns a new pool; one
// whose first Go is inside a task binds to that worker's pool, even with a
// limit of its own, and tasks of both run on that pool's workers.
func TestRoutingBinding(t *testing.T) {
	needGID(t)
	guard(t, func() {
		var g Group
		var wrongWorker atomic.Int64
		onPool := func(p *Pool) {
			if w := current(); w == nil || w.pool != p {
				wrongWorker.Add(1)
			}
		}
		for range 8 {
			g.Go(func() error {
				p := g.pool.Load()
				onPool(p)
				var n, m Group
				m.SetLimit(1)
				for range 4 {
					n.Go(func() error { onPool(p); return nil }, true)
					m.Go(func() error { onPool(p); return nil }, true)
				}
				if n.pool.Load() != p || m.pool.Load() != p {
					t.Errorf("nested groups bound to %p and %p, want %p", n.pool.Load(), m.pool.Load(), p)
				}
				n.Wait()
				m.Wait()
				return nil
			}, true)
		}
		p := poolOf(t, &g)
		if p.owner != &g {
			t.Errorf("a group first used outside does not own its pool")
		}
		if err := g.Wait(); err != nil {
			t.Errorf("Wait() = %v", err)
		}
		if n := wrongWorker.Load(); n != 0 {
			t.Errorf("%d tasks did not run on a worker of the pool", n)
		}
	})
	goleak.VerifyNone(t)
}

// TestPoolShutdownAfterNestedGroupsClose: each task of the owner waits on a
// nested group whose tasks other workers steal and finish. When the
// owner's Wait returns, every nested group has closed, so the shutdown must
// not be skipped: no worker may be left. (A nested group's close must be
// visible to Pool.pendingNested no later than its zero count is visible to
// the task waiting on it.)
func TestPoolShutdownAfterNestedGroupsClose(t *testing.T) {
	iters := 3000
	if testing.Short() || raceEnabled {
		iters = 1000
	}
	for _, procs := range []int{2, 4} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			setProcs(t, procs)
			guard(t, func() {
				left, example := 0, ""
				for i := range iters {
					var g Group
					g.Go(func() error {
						var n Group
						n.Go(func() error { spin(20 * time.Microsecond); return nil }, true)
						n.Go(func() error { spin(20 * time.Microsecond); return nil }, true)
						return n.Wait()
					}, true)
					if err := g.Wait(); err != nil {
						t.Fatalf("Wait() = %v", err)
					}
					p := g.pool.Load()
					if l := p.live.Load(); l != 0 {
						pn := p.pendingNested()
						waitUntil(t, "workers retire", func() bool { return p.live.Load() == 0 })
						if left++; left == 1 {
							example = fmt.Sprintf("iteration %d: %d live workers, pendingNested() = %d then, %d once they retired",
								i, l, pn, p.pendingNested())
						}
					}
				}
				if left != 0 {
					t.Errorf("%d of %d owner Waits returned with workers left; first: %s", left, iters, example)
				}
			})
			goleak.VerifyNone(t)
		})
	}
}
