package gstatus

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// requireOn skips t when the reader is off on purpose (STEAL_GSTATUS=off)
// or by design (a build without a layout), and fails it when the start-up
// check failed on a build that has one.
func requireOn(t testing.TB) {
	t.Helper()
	switch {
	case On():
	case errors.Is(offReason, errEnvOff), errors.Is(offReason, errUnsupported):
		t.Skipf("reader off: %v", offReason)
	default:
		t.Fatalf("reader off: the start-up check failed: %v", offReason)
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

// TestEnvOff checks that STEAL_GSTATUS=off turns the reader off for the
// whole process, and that SetOff cannot turn it on. Unless it is already
// set, the test runs itself in a child process with it set.
func TestEnvOff(t *testing.T) {
	if os.Getenv(envVar) != "off" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestEnvOff$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), envVar+"=off")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestEnvOff") {
			t.Fatalf("child with %s=off: %v\n%s", envVar, err, out)
		}
		return
	}
	if On() || !errors.Is(offReason, errEnvOff) || checkTime != 0 {
		t.Fatalf("with %s=off: On() = %v, offReason = %v, check took %v; want false, %v, no check", envVar, On(), offReason, checkTime, errEnvOff)
	}
	restore := SetOff(false)
	defer restore()
	if On() || Self() != (Handle{}) {
		t.Fatalf("SetOff(false) turned on a reader that %s=off turned off", envVar)
	}
}
