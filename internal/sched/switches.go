package sched

import (
	"sync/atomic"
	"time"
)

// Switches for tests only; production code never sets them. Each one turns
// off a safety net, so that a test of the protocol behind the net sees a
// bug in it as a hang (which the hang guard reports with a goroutine
// dump), not as a delay that no test measures.
//
//   - monitorOff: watch starts no monitor, so no stuck worker is detached
//     and no slot is refilled by it. A task that only the monitor would
//     have found stays queued.
//   - lingerOff: an idle worker sleeps until it is woken instead of for
//     linger. Otherwise a sleeper that nobody woke wakes at the end of its
//     linger, and the last look at the queues it takes before it retires
//     finds the task whose wake-up was lost.
//   - submitPollOff: an outside Go on a full limited group parks at once
//     (acquireOutside) instead of polling the count and yielding first.
//     Otherwise such a Go mostly takes a slot during its poll and never
//     parks: the hand-over of a slot to a parked Go (handSlot) and the
//     wake-up of the parked Gos (done) then seldom run, and a test hardly
//     ever sees one of them lost.
//   - testHookRelease: run by Pool.release after the slot is given up and
//     before the retiring worker stops counting as inactive, with the
//     worker and the pool's live count at that moment.
//
// Tests set them while the pool is idle and clear them before it must
// retire (see the tests in rescue_test.go).
var (
	monitorOff      atomic.Bool
	lingerOff       atomic.Bool
	submitPollOff   atomic.Bool
	testHookRelease atomic.Pointer[func(w *worker, live int32)]
)

// idleLinger is how long an idle worker sleeps before it retires: linger,
// or until woken when a test switched lingerOff on.
func idleLinger() time.Duration {
	if lingerOff.Load() {
		return 0
	}
	return linger
}
