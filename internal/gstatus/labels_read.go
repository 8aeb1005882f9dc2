//go:build linux && (amd64 || arm64 || 386 || arm)

package gstatus

import (
	"sync/atomic"
	"unsafe"
)

// labelsWord is LabelsWord once the reader is known to be on.
func labelsWord() *unsafe.Pointer {
	if found.labels == 0 {
		return nil
	}
	return (*unsafe.Pointer)(unsafe.Add(getg(), found.labels))
}

// findLabels returns the one offset among cands (pointer-aligned, inside
// the g) whose word in the calling goroutine's g follows what the
// runtime's functions report as its labels through three changes: to a
// probe pointer, to none, and back to the labels it wore. It returns 0
// when no offset, or more than one, does.
//
// The words are loaded atomically: the runtime writes some words of a
// running goroutine's g from other threads (a preemption request, say).
func findLabels(cands []uintptr) uintptr {
	g := getg()
	word := func(off uintptr) unsafe.Pointer {
		return atomic.LoadPointer((*unsafe.Pointer)(unsafe.Add(g, off)))
	}
	keep := func(want unsafe.Pointer) {
		kept := cands[:0:0]
		for _, off := range cands {
			if word(off) == want {
				kept = append(kept, off)
			}
		}
		cands = kept
	}
	own := getProfLabel()
	keep(own)
	probe := unsafe.Pointer(&probeLabels)
	setProfLabel(probe)
	keep(probe)
	setProfLabel(nil)
	keep(nil)
	setProfLabel(own)
	keep(own)
	if len(cands) != 1 {
		return 0
	}
	return cands[0]
}

// probeLabels is what findLabels makes the checking goroutine wear for a
// moment. A CPU profile's sample taken in that moment records the pointer,
// and the profile's writer reads it as runtime/pprof's label set: zero
// words are the empty set (a nil slice of labels in this release; a nil
// map in the releases before), so such a sample carries no labels.
var probeLabels [3]uintptr
