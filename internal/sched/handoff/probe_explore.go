//go:build explore

package handoff

import (
	"errors"

	"github.com/go-steal/steal/internal/explore"
	"github.com/go-steal/steal/internal/gstatus"
)

// startMonitor starts h's monitor, except for a goroutine the explorer
// controls: the monitor samples the real clock and the runtime's metrics,
// which no schedule can replay, so an explored program runs without it. It
// then shows that the program needs no hand-off: one that did would stall,
// and the exploration reports a stall.
func startMonitor(h *Handoff) {
	if explore.Controlled() {
		return
	}
	go h.watchLoop()
}

// statusOn, StatusOn, countsOn, StartStatus, SelfHandle: see probe.go. A
// status is the real runtime's, which no schedule can replay; the
// fallback's checks read the real clock and the runtime's metrics.
func statusOn() bool { return false }

func StatusOn() bool { return false }

func StatusUnavailable() error { return errExploreNoStatus }

// errExploreNoStatus is why this build never reads statuses.
var errExploreNoStatus = errors.New("the explorer's build (tag explore) reads no goroutine statuses")

func countsOn() bool { return !explore.Controlled() }

func StartStatus() {}

func SelfHandle() *gstatus.Handle { return nil }
