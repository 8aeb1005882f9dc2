package wsgroup_test

// Helpers shared by the tests of the package. The hang guard, polling,
// goroutine checks and the GOMAXPROCS sweep come from internal/testkit.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

var errPanicValue = errors.New("wsgroup test: task panic value")

func panicInTask() error { panic(errPanicValue) }

// runCounts records how many times each task of a test ran.
type runCounts struct {
	counts []atomic.Int32
	total  atomic.Int64
}

func newRunCounts(n int) *runCounts { return &runCounts{counts: make([]atomic.Int32, n)} }

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

func (c *concTracker) enter() {
	n := c.cur.Add(1)
	for {
		m := c.max.Load()
		if n <= m || c.max.CompareAndSwap(m, n) {
			return
		}
	}
}

func (c *concTracker) exit() { c.cur.Add(-1) }

// busy does a little work and yields, so that tasks overlap if they can.
func busy() {
	x := 0
	for i := 0; i < 200; i++ {
		x += i * i
	}
	runtime.Gosched()
	spinSink.Add(uint64(x))
}

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

var errStop = errors.New("wsgroup test: stop")

// panicPrefix starts the message of every panic that wsgroup raises on misuse.
const panicPrefix = "wsgroup: "

// defaultHangTimeout is how long a guarded test body may run before it is
// declared hung. It is deliberately generous: it only exists to turn a
// deadlock into a readable failure (with a goroutine dump) instead of the
// go test binary's 10-minute panic. It is never used to judge speed.
// WSGROUP_HANG_TIMEOUT (a time.Duration string) overrides it, which is handy
// when experimenting with code that is expected to deadlock.
const defaultHangTimeout = 60 * time.Second

func hangTimeout() time.Duration {
	if s := os.Getenv("WSGROUP_HANG_TIMEOUT"); s != "" {
		if d, err := time.ParseDuration(s); err == nil && d > 0 {
			return d
		}
	}
	return defaultHangTimeout
}

// waitTimeout runs f on a new goroutine and waits for it to return. If f has
// not returned after d, the test fails with a dump of every goroutine's stack.
//
// f runs on a goroutine other than the test's, so it must report problems
// with t.Error/t.Errorf only (never t.Fatal/t.FailNow/t.Skip).
//
// In the failure path the goroutine running f is abandoned (it leaks);
// that only happens when the test has already failed.
func waitTimeout(t testing.TB, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		abandoned.Store(true)
		t.Fatalf("hang: still not finished after %v; all goroutines:\n%s", d, allStacks())
	}
}

// abandoned is set once a guarded function has been abandoned after a hang:
// its goroutines (and the pool's) stay alive, so later leak checks would only
// report them again (and goleak can choke on their deep stacks).
var abandoned atomic.Bool

// runWithTimeout is waitTimeout with the default hang timeout.
func runWithTimeout(t testing.TB, f func()) {
	t.Helper()
	waitTimeout(t, hangTimeout(), f)
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

// waitWorkersRetired waits until no goroutine of the scheduler (a worker or
// the watchdog) is left, which happens within a linger of the last task;
// it fails the test if some remain after a second.
func waitWorkersRetired(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for {
		stacks := allStacks()
		if !bytes.Contains(stacks, []byte("steal/internal/sched.")) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("scheduler goroutines still running a second after the last task:\n%s", stacks)
		}
		time.Sleep(time.Millisecond)
	}
}

// scale returns long normally and short under -short.
func scale(long, short int) int {
	if testing.Short() {
		return short
	}
	return long
}

// withGOMAXPROCS runs one subtest per value of GOMAXPROCS, setting it for the
// subtest and restoring it afterwards. The subtests must not be parallel:
// GOMAXPROCS is process-wide.
func withGOMAXPROCS(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	for _, p := range []int{1, 2, 4, 8} {
		t.Run(fmt.Sprintf("GOMAXPROCS=%d", p), func(t *testing.T) {
			prev := runtime.GOMAXPROCS(p)
			defer runtime.GOMAXPROCS(prev)
			f(t)
		})
	}
}

// recoverPanic calls f and reports the value it panicked with, if it did.
func recoverPanic(f func()) (v any, panicked bool) {
	panicked = true
	defer func() {
		if panicked {
			v = recover()
		}
	}()
	f()
	panicked = false
	return nil, false
}

// crashChild runs the test binary again, with only the test named test and
// env added to its environment, and returns its output. It fails the test
// unless the child crashed as an unrecovered panic does (exit status 2).
func crashChild(t *testing.T, test, env string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("child exited with %v, want exit status 2 (a crash); output:\n%s", err, out.String())
	}
	return out.String()
}
