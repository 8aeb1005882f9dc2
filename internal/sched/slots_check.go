//go:build !stealdebug

package sched

// checkSlotsLocked checks the slots' invariant (see slots.go) in a build
// with the stealdebug tag (slots_debug.go); here it does nothing.
func checkSlotsLocked(*Pool) {}

// slotsChecked reports whether checkSlotsLocked checks (slots_debug.go).
const slotsChecked = false
