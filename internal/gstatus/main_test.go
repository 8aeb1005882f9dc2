package gstatus

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine is left at the end:
// the start-up check's probes, and every goroutine a test started.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
