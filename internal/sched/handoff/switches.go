package handoff

import "sync/atomic"

// MonitorOff is a switch for tests only; production code never sets it.
// While it is on, watch starts no monitor, so no stuck worker is handed on
// by one and no pool is filled by one: a task that only the monitor would
// have found stays queued, and a test of the posters' checks, or of a
// protocol behind the monitor, sees a bug as a hang. Tests set it while
// the pool is idle and clear it before it must retire.
var MonitorOff atomic.Bool
