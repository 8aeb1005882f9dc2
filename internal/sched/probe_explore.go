//go:build explore

package sched

import (
	stdatomic "sync/atomic"

	"github.com/go-steal/steal/internal/explore"
	"github.com/go-steal/steal/internal/explore/xsync"
	"github.com/go-steal/steal/internal/gstatus"
)

// submitPolls: see params.go and probe.go.
var submitPolls = defaultSubmitPolls

// postsInFlight counts the operations between postBegin and postEnd (see
// probe.go). A plain atomic, not an exploration point: it only informs the
// explorer's checks.
var postsInFlight stdatomic.Int32

func postBegin() { postsInFlight.Add(1) }
func postEnd()   { postsInFlight.Add(-1) }

// joinHelps counts joinHelped (see probe.go).
var joinHelps stdatomic.Int64

func joinHelped() { joinHelps.Add(1) }

// startWatchdog starts p's watchdog, except for a goroutine the explorer
// controls: the watchdog samples the real clock and the runtime's metrics,
// which no schedule can replay, so an explored program runs without it. It
// then shows that the program needs no compensation: one that did would
// stall, and the exploration reports a stall.
func startWatchdog(p *Pool) {
	if explore.Controlled() {
		return
	}
	go p.watchdog()
}

// statusOn, countsOn, startStatus, selfHandle: see probe.go.
func statusOn() bool { return false }

func countsOn() bool { return !explore.Controlled() }

func startStatus() {}

func selfHandle() *gstatus.Handle { return nil }

// poolMutex: see poolmutex.go. Under the explorer, its own mutex, whose
// every acquisition is a choice point.
type poolMutex = xsync.Mutex
