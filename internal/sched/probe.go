//go:build !explore

package sched

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
