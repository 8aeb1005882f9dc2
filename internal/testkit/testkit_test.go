package testkit_test

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-steal/steal/internal/testkit"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

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

func TestWaitGone(t *testing.T) {
	stop := make(chan struct{})
	go parkedHere(stop)
	testkit.WaitUntil(t, "parkedHere started", func() bool {
		return strings.Contains(string(testkit.Stacks()), "testkit_test.parkedHere")
	})
	t.Setenv("STEAL_HANG_TIMEOUT", "20ms")
	f := &fatalTB{TB: t}
	testkit.WaitGone(f, "testkit_test.parkedHere")
	if f.msg == "" {
		t.Error("WaitGone returned while the goroutine was still there")
	}
	close(stop)
	t.Setenv("STEAL_HANG_TIMEOUT", "")
	testkit.WaitGone(t, "testkit_test.parkedHere")
}

func parkedHere(stop chan struct{}) { <-stop }

func TestTimeout(t *testing.T) {
	t.Setenv("STEAL_HANG_TIMEOUT", "3s")
	if d := testkit.Timeout(t); d > 3*time.Second || d < time.Second {
		t.Errorf("Timeout = %v with STEAL_HANG_TIMEOUT=3s", d)
	}
	t.Setenv("STEAL_HANG_TIMEOUT", "nonsense")
	if d := testkit.Timeout(t); d > testkit.DefaultTimeout {
		t.Errorf("Timeout = %v, more than the default", d)
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
}
