package gid

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/go-steal/steal/internal/testkit"
)

// TestMain fails the package's tests if any goroutine a test started is
// still alive at the end.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(testkit.Settled(m))
}
