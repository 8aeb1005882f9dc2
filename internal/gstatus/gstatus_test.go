package gstatus

import (
	"errors"
	"os"
	"runtime"
	"testing"

	"github.com/go-steal/steal/internal/testkit"
)

// requireOn decides the reader (Prove) and skips t when it is off on
// purpose (STEAL_GSTATUS=off) or by design (a port without a reader), and
// fails it when the check failed on a port that has one.
func requireOn(t testing.TB) {
	t.Helper()
	switch err := Prove(); {
	case err == nil && On():
	case errors.Is(err, errEnvOff), errors.Is(err, errUnsupported):
		t.Skipf("reader off: %v", err)
	default:
		t.Fatalf("reader off: the check failed: %v", err)
	}
}

func TestStatusString(t *testing.T) {
	want := map[Status]string{
		Unknown: "Unknown", Running: "Running", Runnable: "Runnable", Syscall: "Syscall",
		Blocked: "Blocked", Waiting: "Waiting", Waiting + 1: "Status(6)", 255: "Status(255)",
	}
	for s, w := range want {
		if got := s.String(); got != w {
			t.Errorf("Status(%d).String() = %q, want %q", uint8(s), got, w)
		}
	}
}

func TestZeroHandleReadsUnknown(t *testing.T) {
	if got := (Handle{}).Read(); got != Unknown {
		t.Fatalf("zero Handle reads %v, want Unknown", got)
	}
}

func TestSelfReadsRunning(t *testing.T) {
	requireOn(t)
	h := Self()
	if h == (Handle{}) {
		t.Fatal("Self returned the zero Handle with the reader on")
	}
	if got := h.Read(); got != Running {
		t.Fatalf("the calling goroutine reads %v, want Running", got)
	}
}

func TestSetOff(t *testing.T) {
	requireOn(t)
	h := Self()

	restore := SetOff(true)
	if On() {
		t.Error("On() after SetOff(true)")
	}
	if got := Self(); got != (Handle{}) {
		t.Errorf("Self() after SetOff(true) = %+v, want the zero Handle", got)
	}
	if got := h.Read(); got != Unknown {
		t.Errorf("a Handle taken before SetOff(true) reads %v, want Unknown", got)
	}

	// SetOff(false) inside turns it back on, and its restore off again.
	inner := SetOff(false)
	if !On() || h.Read() != Running {
		t.Errorf("after SetOff(false): On() = %v, Read = %v; want true, Running", On(), h.Read())
	}
	inner()
	if On() {
		t.Error("On() after the inner restore, want the outer SetOff(true) back")
	}

	restore()
	if !On() {
		t.Fatal("!On() after restore")
	}
	if got := h.Read(); got != Running {
		t.Errorf("after restore the calling goroutine reads %v, want Running", got)
	}
	if Self() != h {
		t.Errorf("after restore Self() = %+v, want %+v", Self(), h)
	}
}

// childVar marks a child process (testkit.Child) that runs one test's
// body, in a process of its own.
const childVar = "GSTATUS_TEST_CHILD"

// TestEnvOff checks that STEAL_GSTATUS=off turns the reader off for the
// whole process without a check, and that SetOff cannot turn it on. Unless
// it is already set, the test runs itself in a child process with it set.
func TestEnvOff(t *testing.T) {
	if os.Getenv(envVar) != "off" {
		testkit.Child(t, "TestEnvOff", envVar+"=off")
		return
	}
	Start()
	err := Prove()
	if On() || !errors.Is(err, errEnvOff) || checkTime != 0 || Self() != (Handle{}) {
		t.Fatalf("with %s=off: On() = %v, Prove() = %v, check took %v, Self() = %+v; want false, %v, no check, the zero Handle",
			envVar, On(), err, checkTime, Self(), errEnvOff)
	}
	restore := SetOff(false)
	defer restore()
	if On() || Self() != (Handle{}) {
		t.Fatalf("SetOff(false) turned on a reader that %s=off turned off", envVar)
	}
}

// TestCheckAtFirstUse checks, in a process of its own, that nothing runs
// before the first Start: the reader is undecided, no goroutine of the
// check is there, and a Handle taken meanwhile reads Unknown. Start
// returns at once and the check runs on a goroutine of its own, which is
// gone once the reader is decided; once it passes, the Handles taken
// before read their goroutines' states.
func TestCheckAtFirstUse(t *testing.T) {
	if os.Getenv(childVar) != "first-use" {
		testkit.Child(t, "TestCheckAtFirstUse", childVar+"=first-use")
		return
	}
	if s := state.Load(); s != stateUndecided || checkTime != 0 {
		t.Fatalf("before the first Start: state %d, check took %v; want undecided, none", s, checkTime)
	}
	goroutines := runtime.NumGoroutine()
	release, exited := make(chan struct{}), make(chan struct{})
	handle := make(chan Handle, 1)
	go func() {
		defer close(exited)
		handle <- Self()
		<-release
	}()
	defer func() { close(release); <-exited }()
	parked, running := <-handle, Self()
	if supported && os.Getenv(envVar) != "off" && (parked == Handle{} || running == Handle{}) {
		t.Fatalf("Self() before the check = %+v, %+v; want Handles to read later", parked, running)
	}
	if parked.Read() != Unknown || running.Read() != Unknown || On() {
		t.Fatalf("before the check: Read() = %v, %v, On() = %v; want Unknown, Unknown, false", parked.Read(), running.Read(), On())
	}
	Start()
	Start() // a second call starts nothing more
	testkit.WaitUntil(t, "the check decides the reader", func() bool {
		s := state.Load()
		return s == stateOn || s == stateOff
	})
	// The goroutine that ran the check returns right after it decided:
	// wait for it, and for the probes, to be gone.
	testkit.WaitUntil(t, "the check's goroutines exit", func() bool { return runtime.NumGoroutine() <= goroutines+1 })
	if !supported || os.Getenv(envVar) == "off" {
		if On() {
			t.Fatal("On() with no reader")
		}
		return
	}
	if !On() {
		t.Fatalf("the check failed: %v", offReason)
	}
	if got := running.Read(); got != Running {
		t.Errorf("the test goroutine's Handle, taken before the check, reads %v, want Running", got)
	}
	testkit.WaitUntil(t, "the parked goroutine's Handle, taken before the check, reads Blocked", func() bool {
		return parked.Read() == Blocked
	})
	if h := Self(); h != running {
		t.Errorf("Self() after the check = %+v, before it %+v", h, running)
	}
}
