//go:build !explore

package handoff

import "github.com/go-steal/steal/internal/gstatus"

// The seams to the real runtime, which the interleaving explorer cannot
// replay: under the explore build tag, probe_explore.go has its versions.

// startMonitor starts h's monitor goroutine.
func startMonitor(h *Handoff) { go h.watchLoop() }

// statusOn reports whether the workers' goroutine statuses are read
// (status.go).
func statusOn() bool { return gstatus.On() }

// StatusOn reports whether the workers' goroutine statuses are read: the
// first detector, or the fallback's counts.
func StatusOn() bool { return statusOn() }

// StatusUnavailable reports why the workers' statuses are never read in
// this process (gstatus.Unavailable), or nil when a check may turn the
// reader on.
func StatusUnavailable() error { return gstatus.Unavailable() }

// countsOn reports whether the fallback's checks (counts.go) run.
func countsOn() bool { return true }

// StartStatus has package gstatus find and prove the layout it reads
// statuses with, unless it has, on a goroutine of its own: the scheduler
// calls it when it starts a worker, so that the check's probes find
// processors that the pool's work does not hold yet; the monitor calls it
// again when it starts, after a check that ran out of time.
func StartStatus() { gstatus.Start() }

// SelfHandle returns the calling goroutine's status handle, or nil where
// statuses are never read here. A worker goroutine takes it once, when it
// starts, and stores it in every slot it occupies (Slot.SetHandle); a
// handle taken before gstatus has proven its layout reads its goroutine's
// status once it has.
func SelfHandle() *gstatus.Handle {
	h := gstatus.Self()
	if h == (gstatus.Handle{}) {
		return nil
	}
	return &h
}
