package wsgroup_test

// Helpers shared by the tests of the package. The hang guard, polling,
// goroutine checks and the GOMAXPROCS sweep come from internal/testkit.

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/go-steal/steal/internal/testkit"
	"github.com/go-steal/steal/internal/workload"
	"github.com/go-steal/steal/wsgroup"
)

// ---- Values ----

// errPanicValue is what panicInTask panics with.
var errPanicValue = errors.New("wsgroup test: task panic value")

// panicInTask is a task that panics with errPanicValue; crash outputs and
// PanicError stacks are checked for its name.
func panicInTask() error { panic(errPanicValue) }

// errStop is the error of a task or a cancellation that stops a group.
var errStop = errors.New("wsgroup test: stop")

// errDoom is the error of the tests that make a group fail, as errgroup's
// own tests name it.
var errDoom = errors.New("wsgroup_test: doomed")

// panicPrefix starts the message of every panic that wsgroup raises on misuse.
const panicPrefix = "wsgroup: "

// ---- Checks ----

// wantNil fails t unless err, the result of what (a call such as
// "g.Wait()"), is nil.
func wantNil(t testing.TB, what string, err error) {
	t.Helper()
	if err != nil {
		t.Errorf("%s = %v, want nil", what, err)
	}
}

// runCounts records how many times each task of a test ran.
type runCounts struct {
	counts []atomic.Int32
	total  atomic.Int64
}

// newRunCounts returns the counts of n tasks.
func newRunCounts(n int) *runCounts { return &runCounts{counts: make([]atomic.Int32, n)} }

// ran counts a run of task i.
func (c *runCounts) ran(i int) {
	c.counts[i].Add(1)
	c.total.Add(1)
}

// check reports an error unless every task in [from, len) ran exactly once.
func (c *runCounts) check(t testing.TB, from int) {
	t.Helper()
	want := int64(len(c.counts) - from)
	if got := c.total.Load(); got != want {
		t.Errorf("%d task runs in all, want %d", got, want)
	}
	bad := 0
	for i := from; i < len(c.counts); i++ {
		if n := c.counts[i].Load(); n != 1 {
			if bad < 10 {
				t.Errorf("task %d ran %d times, want exactly once", i, n)
			}
			bad++
		}
	}
	if bad > 10 {
		t.Errorf("... and %d more tasks did not run exactly once", bad-10)
	}
}

// concTracker tracks how many tasks of one group execute at once.
type concTracker struct {
	cur, max atomic.Int32
}

// enter counts a task that starts executing.
func (c *concTracker) enter() {
	n := c.cur.Add(1)
	for {
		m := c.max.Load()
		if n <= m || c.max.CompareAndSwap(m, n) {
			return
		}
	}
}

// exit counts a task that stops executing.
func (c *concTracker) exit() { c.cur.Add(-1) }

// loopHits counts, per index, how often a loop ran it.
type loopHits []atomic.Int32

// body is a For body that counts its index.
func (h loopHits) body(_ context.Context, i int) error {
	h[i].Add(1)
	return nil
}

// check fails the test unless every index ran exactly once.
func (h loopHits) check(t *testing.T, what string) {
	t.Helper()
	bad := 0
	for i := range h {
		if c := h[i].Load(); c != 1 {
			if bad++; bad <= 5 {
				t.Errorf("%s: index %d of %d ran %d times, want 1", what, i, len(h), c)
			}
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d indices in all did not run exactly once", what, bad)
	}
}

// ---- Workloads ----

// runTasks gives g n tasks that each call body, waits, and checks that
// Wait returned nil and that every task ran.
func runTasks(t testing.TB, g *wsgroup.Group, n int, body func()) {
	t.Helper()
	var ran atomic.Int32
	for range n {
		g.Go(func() error { ran.Add(1); body(); return nil })
	}
	wantNil(t, "Wait()", g.Wait())
	if got := ran.Load(); got != int32(n) {
		t.Errorf("ran %d tasks, want %d", got, n)
	}
}

// busy does a little work and yields, so that tasks overlap if they can.
func busy() {
	x := 0
	for i := 0; i < 200; i++ {
		x += i * i
	}
	runtime.Gosched()
	spinSink.Add(uint64(x))
}

// spinSink keeps busy's work from being optimized away.
var spinSink atomic.Uint64

// treeSize is the number of nodes of a complete k-ary tree of the given
// depth, numbered in heap order from 0: node id's children are
// id*k+1 .. id*k+k.
func treeSize(k, depth int) int {
	n, level := 0, 1
	for d := 0; d <= depth; d++ {
		n += level
		level *= k
	}
	return n
}

// binaryTree returns a task at depth d that counts itself in ran and,
// above depth, gives g two tasks one level deeper: 2^(depth-d+1)-1 tasks
// in all.
func binaryTree(g *wsgroup.Group, ran *atomic.Int64, d, depth int) func() error {
	return func() error {
		ran.Add(1)
		if d < depth {
			g.Go(binaryTree(g, ran, d+1, depth))
			g.Go(binaryTree(g, ran, d+1, depth))
		}
		return nil
	}
}

// fibGroups computes fib(n) with a new group per call (workload.Fib).
func fibGroups(n int) int {
	v, _, err := workload.Fib(func() workload.Group { return new(wsgroup.Group) }, n)
	if err != nil {
		panic(err)
	}
	return v
}

// ---- Goroutines ----

// guardOnOwnGoroutine runs f under testkit.Guard on a goroutine of its own,
// waits for that goroutine to end, and reports whether f returned. It is
// for an f whose Wait may run a task that calls runtime.Goexit: such a
// Goexit ends the goroutine of that Wait, as documented, and f with it
// (the checks after that Wait are not reached), so the caller must check
// after guardOnOwnGoroutine what holds in both cases. That goroutine must
// not be the test's, which would end the test.
func guardOnOwnGoroutine(t testing.TB, f func()) (returned bool) {
	t.Helper()
	testkit.Guard(t, func() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			f()
			returned = true
		}()
		<-done
	})
	return returned
}
