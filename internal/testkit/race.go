//go:build race

package testkit

// Race reports whether the race detector is on. Stress tests size
// themselves down when it is (see ScaleDown), and allocation tests, which
// it would disturb, do not run.
const Race = true
