package wsgroup_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/go-steal/steal/internal/gstatus"
	"github.com/go-steal/steal/internal/testkit"
)

// TestMain fails the run if any goroutine (a pool worker in particular) is
// still alive once every test and example has finished.
//
// It decides the goroutine-status reader first, as the pool's first
// worker does in a program (package sched tests what comes before in a
// process of its own): the tests and benchmarks then run as a process
// whose check has passed runs, and the check's probe goroutines are not
// counted in a test's or benchmark's goroutines.
func TestMain(m *testing.M) {
	_ = gstatus.Prove()
	goleak.VerifyTestMain(testkit.Settled(m))
}
