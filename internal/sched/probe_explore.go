//go:build explore

package sched

import (
	stdatomic "sync/atomic"

	"github.com/go-steal/steal/internal/explore/xsync"
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

// poolMutex: see poolmutex.go. Under the explorer, its own mutex, whose
// every acquisition is a choice point.
type poolMutex = xsync.Mutex
