package main

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/go-steal/steal/internal/testkit"
)

// TestMain checks that the tests leak no goroutine, once the scheduler's
// workers have retired (testkit.Settled waits for that).
func TestMain(m *testing.M) { goleak.VerifyTestMain(testkit.Settled(m)) }

// TestSamplesCarryTheirLabels runs the comparison at two thirds or (-short) half of
// the program's size, on at least 80 samples a profile (compare doubles the
// work while a profile has fewer). What it asserts is exact: no sample of
// an endpoint's task carries another endpoint's label (or none), on either
// group. The shares themselves are sampled, so they are logged, not
// judged: the program judges them. testkit.Guard turns a hang into a
// failure with every goroutine's stack.
func TestSamplesCarryTheirLabels(t *testing.T) {
	tasks := defaultTasks * 2 / 3
	if testing.Short() {
		tasks = defaultTasks / 2
	}
	testkit.Guard(t, func() {
		c, err := compare(tasks, 80)
		if err != nil {
			t.Fatal(err)
		}
		for i, g := range groups {
			if c.wrong[i] != 0 {
				t.Errorf("%s: %d samples of an endpoint's task carry another label:\n%s", g.name, c.wrong[i], c)
			}
		}
		t.Logf("shares (within %.0f points on every label: %v):\n%s", tolerance, c.agree(), c)
	})
}
