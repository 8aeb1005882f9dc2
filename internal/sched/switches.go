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
//   - testHookPair: run before each step of the pairing of a retiring
//     worker (Pool.release) with a Go from outside (Pool.inject and its
//     maybeSpawn), and as release returns, with the step, the retiring
//     worker (nil for the poster's steps) and the pool's live count once
//     the worker has given its slot up (-1 before, and for the poster's
//     steps). A test that holds each party at its steps can run them in
//     any order.
//
// Tests set them while the pool is idle and clear them before it must
// retire (see the tests in rescue_test.go).
var (
	lingerOff     atomic.Bool
	submitPollOff atomic.Bool
	patienceLong  atomic.Bool
	testHookPair  atomic.Pointer[pairHook]
)

// pairStep names the steps of the pairing of a retiring worker with a
// poster at which testHookPair runs: each before the operation it names,
// but retireDone.
type pairStep uint8

const (
	retireVacate pairStep = iota // Pool.release gives the slot up
	retireStop                   // the worker stops counting as inactive
	retireLook                   // its last look at the queues
	retireDone                   // after all that: release returns
	postPush                     // Pool.inject pushes the task
	postCount                    // it moves the jobs event counter (and reads the idle workers)
	postSpawn                    // maybeSpawn decides from those counts and the pool's room
)

// pairHook is testHookPair's function. The two parties load it once (a
// post is on the hot path) and call at before each step.
type pairHook func(at pairStep, w *worker, live int32)

// at runs the hook, if a test set it (h is not nil).
func (h *pairHook) at(step pairStep, w *worker, live int32) {
	if h != nil {
		(*h)(step, w, live)
	}
}

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
