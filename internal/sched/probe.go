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

// startWatchdog starts p's watchdog goroutine. Under the interleaving
// explorer a controlled goroutine starts none (probe_explore.go).
func startWatchdog(p *Pool) { go p.watchdog() }

// statusOn reports whether the scheduler reads its workers' goroutine
// statuses (status.go). Under the interleaving explorer it never does
// (probe_explore.go): a status is the real runtime's, which no schedule
// can replay.
func statusOn() bool { return gstatus.On() }
