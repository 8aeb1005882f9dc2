//go:build go1.26 && !go1.27 && linux && (amd64 || arm64)

package gstatus

import "unsafe"

// labelsWord is LabelsWord without the checks.
func labelsWord() *unsafe.Pointer { return (*unsafe.Pointer)(unsafe.Add(getg(), labelsOffset)) }

// proveLabels reports whether the word at off in the calling goroutine's g
// follows what the runtime's functions report as its labels, through three
// changes: to a probe pointer, to none, and back to the labels it wore.
// An offset that is misaligned or lies outside the g fails at once.
func proveLabels(off uintptr) bool {
	if off%8 != 0 || off+8 > gSize {
		return false
	}
	word := (*unsafe.Pointer)(unsafe.Add(getg(), off))
	own := getProfLabel()
	if *word != own {
		return false
	}
	probe := unsafe.Pointer(&probeLabels)
	setProfLabel(probe)
	ok := *word == probe
	setProfLabel(nil)
	ok = ok && *word == nil
	setProfLabel(own)
	return ok && *word == own
}
