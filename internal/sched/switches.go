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
//   - patienceLong: a Wait's patience (worker.waitPatiently) lasts an
//     hour instead of joinPatience. Otherwise a patient Wait whose wake-up
//     was lost goes on after a millisecond, and nobody notices.
//   - testHookRelease: run by Pool.release after the slot is given up and
//     before the retiring worker stops counting as inactive, with the
//     worker and the pool's live count at that moment.
//
// Tests set them while the pool is idle and clear them before it must
// retire (see the tests in rescue_test.go).
var (
	lingerOff       atomic.Bool
	submitPollOff   atomic.Bool
	patienceLong    atomic.Bool
	testHookRelease atomic.Pointer[func(w *worker, live int32)]
)

// patience is how long a Wait waits in its worker's place
// (worker.waitPatiently): joinPatience, or an hour when a test switched
// patienceLong on.
func patience() time.Duration {
	if patienceLong.Load() {
		return time.Hour
	}
	return joinPatience
}

// idleLinger is how long an idle worker sleeps before it retires: linger,
// or until woken when a test switched lingerOff on.
func idleLinger() time.Duration {
	if lingerOff.Load() {
		return 0
	}
	return linger
}
