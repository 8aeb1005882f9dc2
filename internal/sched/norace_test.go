//go:build !race

package sched

// raceEnabled reports whether the race detector is on; the stress tests
// size themselves down when it is.
const raceEnabled = false
