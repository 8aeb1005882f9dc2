package main

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/go-steal/steal/internal/testkit"
)

// TestMain checks that the tests leak no goroutine, once the scheduler's
// workers have retired (testkit.Settled waits for that).
func TestMain(m *testing.M) { goleak.VerifyTestMain(testkit.Settled(m)) }

// TestWork runs the server's batch of work on a few sizes: below the
// recursion's cutoff, at it, and above it with an odd length.
func TestWork(t *testing.T) {
	testkit.Guard(t, func() {
		for _, n := range []int{0, 1, 1024, 1<<16 + 3} {
			data := make([]int64, n)
			for i := range data {
				data[i] = int64(i)
			}
			if err := work(context.Background(), data); err != nil {
				t.Errorf("work on %d elements: %v", n, err)
			}
		}
	})
}
