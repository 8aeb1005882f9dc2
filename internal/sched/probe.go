//go:build !explore

package sched

import "github.com/go-steal/steal/internal/gstatus"

// submitPolls: see params.go. Under the interleaving explorer it is a
// variable, so that a test can cut the polls to the steps that matter.
const submitPolls = defaultSubmitPolls

// postBegin and postEnd bracket each operation that owes the pool a
// wake-up: from a push that makes a task stealable to the end of the post
// that announces it (and of the spawn that may follow), and a worker's
// hand-over when it finds work or gives up its slot. The interleaving
// explorer's tests count the operations in flight to tell a wake-up that
// is still on its way from a lost one (probe_explore.go). In a normal build
// both are empty and inlined away.
func postBegin() {}
func postEnd()   {}

// joinHelped marks a helping Wait running a task of another group than its
// own (join.go); the explorer's tests count them, to show that their
// programs reach that path. Empty in a normal build.
func joinHelped() {}

// startWatchdog starts p's watchdog goroutine. Under the interleaving
// explorer a controlled goroutine starts none (probe_explore.go).
func startWatchdog(p *Pool) { go p.watchdog() }

// statusOn reports whether the scheduler reads its workers' goroutine
// statuses (status.go). Under the interleaving explorer it never does
// (probe_explore.go): a status is the real runtime's, which no schedule
// can replay.
func statusOn() bool { return gstatus.On() }

// countsOn reports whether the fallback's checks (fallback.go) run. Under
// the interleaving explorer they do not on the goroutines it controls
// (probe_explore.go): they read the real clock and the runtime's metrics,
// which no schedule can replay.
func countsOn() bool { return true }

// startStatus has package gstatus find and prove the layout it reads
// statuses with, unless it has (see status.go): called when the pool
// starts a worker, and when its monitor starts. Under the interleaving
// explorer it does nothing.
func startStatus() { gstatus.Start() }

// selfHandle returns the calling goroutine's status handle, or nil where
// statuses are never read here. A worker goroutine takes it once, when it
// starts, and stores it in every slot it occupies (worker.serve); a handle
// taken before gstatus has proven its layout reads its goroutine's status
// once it has. Under the interleaving explorer it is nil.
func selfHandle() *gstatus.Handle {
	h := gstatus.Self()
	if h == (gstatus.Handle{}) {
		return nil
	}
	return &h
}
