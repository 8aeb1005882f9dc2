package wsgroup_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/go-steal/steal/internal/testkit"
)

// TestMain fails the run if any goroutine (a pool worker in particular) is
// still alive once every test and example has finished.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(testkit.Settled(m))
}
