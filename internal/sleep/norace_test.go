//go:build !race

package sleep

// raceEnabled reports whether the race detector is on; the stress test
// sizes itself down when it is.
const raceEnabled = false
