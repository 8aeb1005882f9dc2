package handoff

import (
	"sync/atomic"
	"time"
)

// MonitorOff is a switch for tests only; production code never sets it.
// While it is on, watch starts no monitor, so no stuck worker is handed on
// by one and no pool is filled by one: a task that only the monitor would
// have found stays queued, and a test of the posters' checks, or of a
// protocol behind the monitor, sees a bug as a hang. Tests set it while
// the pool is idle and clear it before it must retire.
var MonitorOff atomic.Bool

// MonitorStalled is a switch for tests only; production code never sets
// it. While it is on, a monitor that starts takes its flag (watching) and
// then waits, ticking nothing, until the switch goes off: the monitor of a
// pool whose processors are all taken by goroutines that do not block,
// which gets none for its ticks. The posters see a monitor running and
// skip the work of their posts but for their checks (Quiet), which are
// then all that hands a blocked worker on. Tests set it while the pool is
// idle and clear it before it must retire.
var MonitorStalled atomic.Bool

// stalledPoll is how often a stalled monitor looks at MonitorStalled.
const stalledPoll = time.Millisecond
