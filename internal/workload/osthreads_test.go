package workload

import (
	"runtime"
	"testing"

	"github.com/go-steal/steal/internal/testkit"
)

// TestThreadStats reads the threads' run-queue wait and wake-ups where
// /proc has them: both only grow, and the wake-ups do grow once the test
// goroutine sleeps (its thread finds nothing to run and sleeps too).
// Elsewhere threadStats must report that it has nothing.
func TestThreadStats(t *testing.T) {
	wait0, wake0, ok := threadStats()
	if runtime.GOOS != "linux" {
		if ok {
			t.Fatalf("threadStats reports %v and %d wake-ups on %s, where /proc has neither", wait0, wake0, runtime.GOOS)
		}
		return
	}
	if !ok || wait0 < 0 || wake0 <= 0 {
		t.Fatalf("threadStats = %v, %d wake-ups, ok %v: want both read, wake-ups > 0 (the process has slept to get here)", wait0, wake0, ok)
	}
	testkit.WaitUntil(t, "the threads' wake-ups grow while the test sleeps", func() bool {
		wait, wake, ok := threadStats()
		if !ok || wait < wait0 || wake < wake0 {
			t.Fatalf("threadStats went from %v, %d to %v, %d (ok %v): each must only grow", wait0, wake0, wait, wake, ok)
		}
		return wake > wake0
	})
}
