package testkit_test

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/go-steal/steal/internal/testkit"
	"github.com/go-steal/steal/wsgroup"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(testkit.Settled(m)) }

// A hung body ends the binary with the dump; the child hangs on purpose.
func TestGuardEndsAHang(t *testing.T) {
	if os.Getenv("TESTKIT_HANG") == "1" {
		block := make(chan struct{})
		testkit.Guard(t, func() { <-block })
		return
	}
	out := testkit.CrashChild(t, "TestGuardEndsAHang", "TESTKIT_HANG=1", "STEAL_HANG_TIMEOUT=50ms")
	for _, want := range []string{"HANG: TestGuardEndsAHang", "all goroutines", "testkit_test.TestGuardEndsAHang"} {
		if !strings.Contains(out, want) {
			t.Errorf("child's output lacks %q:\n%s", want, out)
		}
	}
}

// A child that never ends, and has no hang guard of its own (as one whose
// guard cannot fire), is sent SIGQUIT when it runs out of time: it writes
// the stack of every goroutine, and the parent fails with them. (The
// child blocks rather than spins: the runtime writes no stack for a
// goroutine running on another thread at that moment. A pending timer
// keeps the runtime from calling it a deadlock.)
func TestChildEndsAHang(t *testing.T) {
	if os.Getenv("TESTKIT_BLOCK") == "1" {
		time.AfterFunc(time.Hour, func() {})
		<-make(chan struct{})
		return
	}
	defer testkit.SetChildLimit(time.Second)()
	for name, run := range map[string]func(testing.TB){
		"Child":      func(r testing.TB) { testkit.Child(r, "TestChildEndsAHang", "TESTKIT_BLOCK=1") },
		"CrashChild": func(r testing.TB) { testkit.CrashChild(r, "TestChildEndsAHang", "TESTKIT_BLOCK=1") },
	} {
		t.Run(name, func(t *testing.T) {
			// fatalTB has no deadline: only the limit ends the child.
			f := &fatalTB{TB: t}
			testkit.Guard(t, func() { run(f) })
			for _, want := range []string{"ran out of time", "SIGQUIT: quit", "testkit_test.TestChildEndsAHang"} {
				if !strings.Contains(f.msg, want) {
					t.Errorf("the failure lacks %q:\n%s", want, f.msg)
				}
			}
		})
	}
}

func TestGuardReturns(t *testing.T) {
	ran := false
	testkit.Guard(t, func() { ran = true })
	if !ran {
		t.Fatal("Guard did not run its body")
	}
}

// fatalTB records Fatalf instead of ending the test.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
}

func TestWaitUntil(t *testing.T) {
	t.Setenv("STEAL_HANG_TIMEOUT", "20ms")
	f := &fatalTB{TB: t}
	testkit.WaitUntil(f, "never", func() bool { return false })
	if !strings.HasPrefix(f.msg, "never: still not so after") || !strings.Contains(f.msg, "goroutine ") {
		t.Errorf("WaitUntil on a false condition failed with %q, want the condition and a dump", f.msg)
	}
	f.msg = ""
	n := 0
	testkit.WaitUntil(f, "third time", func() bool { n++; return n == 3 })
	if f.msg != "" || n != 3 {
		t.Errorf("WaitUntil on a condition true at the third look: failed %q after %d looks", f.msg, n)
	}
}

// fakeM is a goleak.TestingM whose Run calls run.
type fakeM struct{ run func() int }

func (m fakeM) Run() int { return m.run() }

// TestSettled: after tests that passed, Settled's Run returns once the
// scheduler has retired, here once a task that outlived the tests has
// ended; after tests that failed, it returns their code although the task
// still runs. (That it returns at once then is a matter of time, which no
// test asserts: a Settled that waited would return after DefaultTimeout.)
func TestSettled(t *testing.T) {
	for _, code := range []int{0, 1} {
		release := make(chan struct{})
		var g wsgroup.Group
		m := fakeM{func() int {
			g.Go(func() error { <-release; return nil })
			testkit.WaitUntil(t, "the task's worker started", func() bool { return testkit.SchedRunning(testkit.Stacks()) })
			if code == 0 {
				// Settled must wait for this: the scheduler is still
				// running when the tests return.
				time.AfterFunc(10*time.Millisecond, func() { close(release) })
			}
			return code
		}}
		if got := testkit.Settled(m).Run(); got != code {
			t.Errorf("Run() = %d, want the tests' %d", got, code)
		}
		if code == 0 && testkit.SchedRunning(testkit.Stacks()) {
			t.Error("Settled returned while the scheduler still ran, after tests that passed")
		}
		if code != 0 {
			close(release)
		}
		if err := g.Wait(); err != nil {
			t.Fatalf("Wait() = %v", err)
		}
	}
	testkit.VerifyNone(t)
}

// TestWaitRetired: while a task blocks on a worker, the scheduler is seen
// running and WaitRetired fails at its bound; once the task has ended, the
// workers retire by themselves and WaitRetired returns.
func TestWaitRetired(t *testing.T) {
	stop := make(chan struct{})
	var g wsgroup.Group
	g.Go(func() error { <-stop; return nil })
	testkit.WaitUntil(t, "the task's worker started", func() bool { return testkit.SchedRunning(testkit.Stacks()) })
	t.Setenv("STEAL_HANG_TIMEOUT", "20ms")
	f := &fatalTB{TB: t}
	testkit.WaitRetired(f)
	if f.msg == "" {
		t.Error("WaitRetired returned while a worker ran a task")
	}
	close(stop)
	if err := g.Wait(); err != nil {
		t.Fatalf("Wait() = %v", err)
	}
	t.Setenv("STEAL_HANG_TIMEOUT", "")
	testkit.WaitRetired(t)
	if testkit.SchedRunning(testkit.Stacks()) {
		t.Error("WaitRetired returned while the scheduler still runs")
	}
}

func TestTimeout(t *testing.T) {
	t.Setenv("STEAL_HANG_TIMEOUT", "3s")
	if d := testkit.Timeout(t); d > 3*time.Second || d < time.Second {
		t.Errorf("Timeout = %v with STEAL_HANG_TIMEOUT=3s", d)
	}
	t.Setenv("STEAL_HANG_TIMEOUT", "")
	def := testkit.Timeout(t)
	if def > testkit.DefaultTimeout || def < 5*time.Second {
		t.Errorf("Timeout = %v unset, want at most the default and at least five seconds", def)
	}
	t.Setenv("STEAL_HANG_TIMEOUT", "nonsense")
	if d := testkit.Timeout(t); d != def {
		t.Errorf("Timeout = %v with STEAL_HANG_TIMEOUT=nonsense, want %v, as unset", d, def)
	}
}

func TestForProcs(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	var seen []int
	testkit.ForProcs(t, func(t *testing.T) { seen = append(seen, runtime.GOMAXPROCS(0)) })
	if fmt.Sprint(seen) != fmt.Sprint(testkit.Procs) {
		t.Errorf("ran at GOMAXPROCS %v, want %v", seen, testkit.Procs)
	}
	if after := runtime.GOMAXPROCS(0); after != before {
		t.Errorf("GOMAXPROCS is %d after ForProcs, was %d", after, before)
	}
}

func TestForBool(t *testing.T) {
	var seen []string
	testkit.ForBool(t, "off", "on", func(t *testing.T, v bool) {
		seen = append(seen, fmt.Sprintf("%s=%v", t.Name(), v))
	})
	if got, want := strings.Join(seen, " "), "TestForBool/off=false TestForBool/on=true"; got != want {
		t.Errorf("ForBool ran %q, want %q", got, want)
	}
}

func TestParallel(t *testing.T) {
	const n = 8
	var ran [n]atomic.Int32
	var here atomic.Int32
	inside := make(chan struct{})
	testkit.Guard(t, func() {
		testkit.Parallel(n, func(i int) {
			ran[i].Add(1)
			if here.Add(1) == n {
				close(inside)
			}
			<-inside // every call runs at once, each on a goroutine of its own
		})
	})
	for i := range ran {
		if c := ran[i].Load(); c != 1 {
			t.Errorf("f(%d) ran %d times, want once", i, c)
		}
	}
}

// group runs each task on a goroutine of its own, as errgroup does, but
// holds back the task at index held until hold is closed.
type group struct {
	wg      sync.WaitGroup
	n, held int
	hold    chan struct{}
}

func (g *group) Go(f func() error) {
	i := g.n
	g.n++
	g.wg.Go(func() {
		if i == g.held {
			<-g.hold
		}
		_ = f()
	})
}

func TestFanOut(t *testing.T) {
	const n = 16
	g := &group{held: n - 1, hold: make(chan struct{})}
	var then atomic.Int32
	testkit.Guard(t, func() {
		all := testkit.FanOut(g, n, func() { then.Add(1) })
		time.Sleep(10 * time.Millisecond)
		if c := then.Load(); c != 0 {
			t.Errorf("then ran %d times before the last task started", c)
		}
		select {
		case <-all:
			t.Errorf("the channel was closed before the last task started")
		default:
		}
		close(g.hold)
		<-all
		g.wg.Wait()
		g = &group{held: -1}
		testkit.FanOut(g, 3, nil)
		g.wg.Wait()
	})
	if c := then.Load(); c != n {
		t.Errorf("then ran %d times, want %d", c, n)
	}
}

func TestRecover(t *testing.T) {
	if v, ok := testkit.Recover(func() { panic("x") }); !ok || v != "x" {
		t.Errorf("Recover of panic(\"x\") = %v, %v", v, ok)
	}
	if v, ok := testkit.Recover(func() {}); ok || v != nil {
		t.Errorf("Recover of a clean return = %v, %v", v, ok)
	}
}

func TestScale(t *testing.T) {
	want := 10
	if testing.Short() {
		want = 1
	}
	if got := testkit.Scale(10, 1); got != want {
		t.Errorf("Scale(10, 1) = %d, want %d", got, want)
	}
	if testkit.Race {
		want = 1
	}
	if got := testkit.ScaleDown(10, 1); got != want {
		t.Errorf("ScaleDown(10, 1) = %d, want %d (race detector: %v)", got, want, testkit.Race)
	}
}
