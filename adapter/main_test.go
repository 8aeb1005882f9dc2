package adapter_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/go-steal/steal/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(testkit.Settled(m)) }
