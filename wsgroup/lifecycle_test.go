package wsgroup_test

// The lifecycle of the goroutines that run tasks, seen from outside: none
// is left behind once the requests are over, and a service that runs
// request after request does not start goroutines for each of them.
// (TestNoLeakAfterWait covers single groups of each shape.)

import (
	"runtime"
	"testing"

	"go.uber.org/goleak"
)

// TestNoLeakAfterConcurrentRequests: 100 clients at once each run a few
// requests of every kind (including tasks blocked on other tasks, which
// make the scheduler add workers, and Goexit, which replaces a worker's
// goroutine) and return; then no goroutine but the test's may remain
// (goleak waits a while for goroutines that are on their way out).
//
// It catches workers, replacement workers or helper goroutines (a
// watchdog, a timer-driven retirer) that are never told to exit once
// every group is done, or that wait for a wake-up that no longer comes
// when the last of many concurrent groups finishes.
func TestNoLeakAfterConcurrentRequests(t *testing.T) {
	const clients = 100
	perClient := scale(6, 3)
	withGOMAXPROCS(t, func(t *testing.T) {
		if abandoned.Load() {
			t.Skip("an earlier test hung and its goroutines are still alive: a leak check would only report them again")
		}
		seed := uint64(100 + runtime.GOMAXPROCS(0))
		runWithTimeout(t, func() {
			runClients(t, clients, seed, func(done int) bool { return done < perClient })
		})
		goleak.VerifyNone(t)
	})
}
