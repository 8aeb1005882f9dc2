// Package testkit holds what the project's tests share: a hang guard that
// turns a deadlock into a failure with a dump of every goroutine, polling
// with the same bound, goroutine checks, the GOMAXPROCS sweep that stress
// tests run at, test sizes for -short, and crash tests in a child process.
//
// Every bound here only turns a hang into a readable failure; none judges
// speed. STEAL_HANG_TIMEOUT (a time.Duration such as "5s") overrides the
// default bound, which helps when trying code that is expected to hang.
//
// The goroutine checks wait for events, never for a time: the scheduler's
// workers retire a linger after their last task, which on a busy machine
// (another test suite on the same cores, the race detector) can take longer
// than goleak's own retries. So a leak check first waits until the
// scheduler's goroutines are gone (VerifyNone, and Settled for
// goleak.VerifyTestMain), and a worker that never retires still fails it,
// at the hang bound, with the dump.
package testkit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// DefaultTimeout is how long a guarded test may run before it is declared
// hung, unless STEAL_HANG_TIMEOUT says otherwise or the test binary's own
// deadline (go test -timeout) comes sooner.
const DefaultTimeout = 60 * time.Second

// Timeout returns the hang bound for t: DefaultTimeout or
// STEAL_HANG_TIMEOUT, shortened to end ten seconds before t's deadline (but
// to no less than five seconds), so that the guard, not the test binary,
// reports the hang.
func Timeout(t testing.TB) time.Duration {
	d := DefaultTimeout
	if s := os.Getenv("STEAL_HANG_TIMEOUT"); s != "" {
		if v, err := time.ParseDuration(s); err == nil && v > 0 {
			d = v
		}
	}
	if dl, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if end, ok := dl.Deadline(); ok {
			if left := time.Until(end) - 10*time.Second; left < d {
				d = max(left, 5*time.Second)
			}
		}
	}
	return d
}

// Guard runs body on the calling goroutine, so body may call t.Fatal. If
// body has not returned within Timeout(t), Guard writes the stack of every
// goroutine to standard error and panics from a timer goroutine, which
// ends the test binary: a hung scheduler cannot be unwound, and the dump
// is what one needs to find out why it hung.
func Guard(t testing.TB, body func()) {
	t.Helper()
	d := Timeout(t)
	name := t.Name()
	timer := time.AfterFunc(d, func() {
		fmt.Fprintf(os.Stderr, "\nHANG: %s did not finish within %v; all goroutines:\n\n%s\n", name, d, Stacks())
		panic(fmt.Sprintf("hang: %s did not finish within %v (goroutine dump above)", name, d))
	})
	defer timer.Stop()
	body()
}

// WaitUntil polls cond until it reports true. If it still reports false
// after nine tenths of Timeout(t) (so that WaitUntil inside a Guard fails
// first), the test fails with what, and a dump of every goroutine.
func WaitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	d := Timeout(t) * 9 / 10
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: still not so after %v; all goroutines:\n%s", what, d, Stacks())
			return // for a t whose Fatalf returns
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// Stacks returns the stacks of all goroutines, growing its buffer up to 64
// MiB so that the dump of a deadlocked program is not cut short.
func Stacks() []byte {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= 64<<20 {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}

// schedFrames are the bottom frames of the scheduler's own goroutines: its
// workers and its watchdog.
var schedFrames = [][]byte{[]byte("steal/internal/sched.(*worker).run("), []byte("steal/internal/sched.(*Pool).watchdog(")}

// SchedRunning reports whether a goroutine of the scheduler (a worker or
// the watchdog) is running, in the dump of every goroutine that Stacks
// returns.
func SchedRunning(dump []byte) bool {
	for _, f := range schedFrames {
		if bytes.Contains(dump, f) {
			return true
		}
	}
	return false
}

// WaitRetired waits until no goroutine of the scheduler is left: its workers
// retire a linger after their last task, and its watchdog a little later.
// It fails as WaitUntil does.
func WaitRetired(t testing.TB) {
	t.Helper()
	WaitUntil(t, "every worker of the scheduler retired and the watchdog gone", func() bool { return !SchedRunning(Stacks()) })
}

// VerifyNone checks that t leaked no goroutine: it waits for the scheduler
// to retire (WaitRetired), then checks every goroutine with
// goleak.VerifyNone.
func VerifyNone(t testing.TB) {
	t.Helper()
	WaitRetired(t)
	goleak.VerifyNone(t)
}

// Settled wraps m for goleak.VerifyTestMain: after the tests have passed,
// Run waits until the scheduler has retired (for as long as DefaultTimeout;
// past that goleak reports what is left), so that goleak checks what the
// tests leaked, not workers still within their linger. After a failure it
// does not wait: the binary fails anyway, and goleak lists what is left.
func Settled(m goleak.TestingM) goleak.TestingM { return settled{m} }

type settled struct{ m goleak.TestingM }

func (s settled) Run() int {
	code := s.m.Run()
	if code != 0 {
		return code
	}
	for deadline := time.Now().Add(DefaultTimeout); SchedRunning(Stacks()) && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	return code
}

// Procs are the values of GOMAXPROCS that ForProcs runs a test at.
var Procs = []int{1, 2, 4, 8}

// ForProcs runs f as one subtest per value in Procs, with GOMAXPROCS set to
// that value for the subtest and restored afterwards. The subtests must
// not be parallel: GOMAXPROCS is process-wide.
func ForProcs(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	for _, p := range Procs {
		t.Run(fmt.Sprintf("GOMAXPROCS=%d", p), func(t *testing.T) {
			SetProcs(t, p)
			f(t)
		})
	}
}

// ForBool runs f as two subtests: one named off, with false, then one named
// on, with true.
func ForBool(t *testing.T, off, on string, f func(t *testing.T, v bool)) {
	t.Helper()
	t.Run(off, func(t *testing.T) { f(t, false) })
	t.Run(on, func(t *testing.T) { f(t, true) })
}

// Parallel runs f(0), ..., f(n-1), each on a goroutine of its own, and
// returns once all of them have returned. f must not call t.Fatal (it does
// not run on the test goroutine); t.Error is fine.
func Parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { f(i) })
	}
	wg.Wait()
}

// Goer is a group that FanOut can give tasks to: wsgroup's Group, the
// scheduler's, errgroup's.
type Goer interface{ Go(f func() error) }

// FanOut gives g n tasks that each block until all n have started, so that
// the pool must grow to run them all at once, and then call then (when it
// is not nil) and return nil. The channel it returns is closed once the
// last of the n tasks has started.
func FanOut(g Goer, n int, then func()) <-chan struct{} {
	var started atomic.Int64
	all := make(chan struct{})
	for range n {
		g.Go(func() error {
			if started.Add(1) == int64(n) {
				close(all)
			}
			<-all
			if then != nil {
				then()
			}
			return nil
		})
	}
	return all
}

// CollectAlways starts a goroutine that runs the garbage collector again
// and again (runtime.GC in a loop), a storm of collections, until the
// returned stop is called; stop returns once the goroutine has.
func CollectAlways() (stop func()) {
	var done atomic.Bool
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		for !done.Load() {
			runtime.GC()
		}
	}()
	return func() {
		done.Store(true)
		<-exited
	}
}

// SetProcs sets GOMAXPROCS to n for the rest of t.
func SetProcs(t testing.TB, n int) {
	old := runtime.GOMAXPROCS(n)
	t.Cleanup(func() { runtime.GOMAXPROCS(old) })
}

// Scale returns long, or short under -short.
func Scale(long, short int) int {
	if testing.Short() {
		return short
	}
	return long
}

// ScaleDown returns long, or short under -short or the race detector.
func ScaleDown(long, short int) int {
	if testing.Short() || Race {
		return short
	}
	return long
}

// Recover calls f and reports the value it panicked with, if it did
// (including a nil value).
func Recover(f func()) (v any, panicked bool) {
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

// Child runs the test binary again with only the test named test and env
// (each "NAME=value") added to its environment, verbosely, and returns the
// child's output. It fails t unless the child passed that test. A test
// that must start in a fresh process (one that checks what happens at a
// package's first use, or under a setting read once per process) calls
// it, and runs its body when it finds env set. A child that runs out of
// time fails t with the stacks of its goroutines (childCommand).
func Child(t testing.TB, test string, env ...string) string {
	t.Helper()
	cmd, ctx, cancel := childCommand(t, test, env, "-test.v")
	defer cancel()
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: "+test)) {
		t.Fatalf("child running %s with %v: %v%s; output:\n%s", test, env, err, cutShort(ctx), out)
	}
	return string(out)
}

// childLimit, when not zero, bounds how long a child process may run
// (childCommand); tests of this package set it.
var childLimit time.Duration

// childCommand returns the command that runs the test binary again with
// only the test named test, env added to its environment and args after
// its own (and -test.short if the parent has it), the context that bounds
// it, and the cancel that releases that. A child that is still running ten
// seconds before t's deadline (or after childLimit) is sent SIGQUIT,
// which makes the Go runtime write the stack of every goroutine and exit,
// whatever its goroutines do, and is killed if it has not exited five
// seconds later. So a child whose own hang guard cannot fire (its timer's
// goroutine never gets a processor) fails the parent with a dump, before
// the test binary's timeout ends the parent and leaves the child running.
func childCommand(t testing.TB, test string, env []string, args ...string) (*exec.Cmd, context.Context, context.CancelFunc) {
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if dl, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if end, ok := dl.Deadline(); ok {
			ctx, cancel = context.WithDeadline(ctx, end.Add(-10*time.Second))
		}
	}
	if childLimit > 0 {
		var c2 context.CancelFunc
		ctx, c2 = context.WithTimeout(ctx, childLimit)
		c1 := cancel
		cancel = func() { c2(); c1() }
	}
	if testing.Short() {
		args = append(args, "-test.short") // the child sizes itself as its parent
	}
	cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"-test.run=^" + test + "$", "-test.count=1"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Cancel = func() error { return cmd.Process.Signal(quitSignal) }
	cmd.WaitDelay = 5 * time.Second
	return cmd, ctx, cancel
}

// quitSignal is what childCommand sends a child that runs out of time:
// SIGQUIT, on which the Go runtime writes every goroutine's stack and
// exits. (Where the system has no such signal, sending it fails, and the
// child is killed.)
var quitSignal os.Signal = syscall.SIGQUIT

// cutShort says, for a child that ended, whether its deadline (ctx, from
// childCommand) ended it.
func cutShort(ctx context.Context) string {
	if ctx.Err() != nil {
		return " (the child ran out of time: it was sent SIGQUIT, and the stacks of its goroutines are in its output)"
	}
	return ""
}

// CrashChild runs the test binary again with only the test named test,
// env (each "NAME=value") added to its environment, and returns the child's
// output. It fails t unless the child ended as an unrecovered panic ends a
// program: exit status 2, before it ran out of time (childCommand).
func CrashChild(t testing.TB, test string, env ...string) string {
	t.Helper()
	cmd, ctx, cancel := childCommand(t, test, env)
	defer cancel()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || ctx.Err() != nil {
		t.Fatalf("child exited with %v%s, want exit status 2 (a crash); output:\n%s", err, cutShort(ctx), out.String())
	}
	return out.String()
}
