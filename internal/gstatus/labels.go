package gstatus

import "unsafe"

// Profiler labels. A goroutine's pprof labels are a pointer in its g,
// which runtime/pprof reads and sets through two functions of the runtime
// that the Go project keeps for packages outside the standard library
// (see the comment above them in the runtime's proflabel.go, and
// go.dev/issue/67401): Labels and SetLabels call them. Where the layout of
// the check found the labels word (findLabels, step 4 of the check),
// LabelsWord gives a goroutine the address of its own labels pointer,
// which it can then read with a plain load instead of a call.

//go:linkname getProfLabel runtime/pprof.runtime_getProfLabel
func getProfLabel() unsafe.Pointer

//go:linkname setProfLabel runtime/pprof.runtime_setProfLabel
func setProfLabel(labels unsafe.Pointer)

// Labels returns the profiler labels the calling goroutine wears: the
// pointer runtime/pprof keeps for it, nil for none.
func Labels() unsafe.Pointer { return getProfLabel() }

// SetLabels makes the calling goroutine wear labels, a pointer that Labels
// returned (on any goroutine), or nil for none.
func SetLabels(labels unsafe.Pointer) { setProfLabel(labels) }

// LabelsWord returns the address of the calling goroutine's labels pointer
// in its g: a load from it returns what Labels would, as long as the
// calling goroutine is the one that loads. It returns nil when the reader
// is off or the check did not find the word; callers then call Labels.
func LabelsWord() *unsafe.Pointer {
	if !on.Load() {
		return nil
	}
	return labelsWord()
}
