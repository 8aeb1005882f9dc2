package wsgroup_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/go-steal/steal/internal/sched"
	"github.com/go-steal/steal/internal/testkit"
)

// TestMain fails the run if any goroutine (a pool worker in particular) is
// still alive once every test and example has finished. Each guarded test
// starts with no Go site learned as blocking (sched.ForgetSites).
func TestMain(m *testing.M) {
	testkit.AtGuard(sched.ForgetSites)
	goleak.VerifyTestMain(testkit.Settled(m))
}
