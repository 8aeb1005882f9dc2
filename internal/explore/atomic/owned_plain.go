//go:build !explore && !race

package atomic

import (
	"sync/atomic"
	"unsafe"
)

// Owned stores: a value that one goroutine alone writes and others load
// (with Load), where a loader may see the store late. Several goroutines
// may write one such value where every value any of them writes is right
// for a loader, whichever it sees and whichever store comes last: each
// store is then the owner's store of its own writer.
//
// sync/atomic's Store is sequentially consistent: on amd64 it is an XCHG,
// a locked instruction that waits for the store buffer to drain, and the
// scheduler's task path would pay it several times per task. Where
// nothing pairs with the store in a Dekker order (the writer does not go
// on to load a variable that a loader stores, counting on one of the two
// to see the other), a plain store does the same job:
//
//   - an aligned word is never torn: Go's memory model promises that a
//     racing load of a machine word observes one of the values written;
//   - the compiler keeps the store in its place relative to calls and
//     atomic operations;
//   - a loader that sees anything the writer published after the store
//     with an atomic operation (a release, on every port) sees the store
//     too; otherwise it sees it once the store buffer drains.
//
// The runtime's sysmon reads the processors' scheduling ticks the same
// way.
//
// Built with the race detector, these are the atomic stores (the detector
// would report the plain store against the loads, rightly by its rules);
// built for the explorer, they are its Store, a choice point. owned_race.go
// and atomic_explore.go hold those versions.

// The plain stores write the value field of sync/atomic's types through
// their address: each type is its value alone, behind fields of size zero.
// These fail to compile if that changes.
var (
	_ = [1]struct{}{}[unsafe.Sizeof(atomic.Uint32{})-unsafe.Sizeof(uint32(0))]
	_ = [1]struct{}{}[unsafe.Sizeof(atomic.Pointer[int]{})-unsafe.Sizeof(unsafe.Pointer(nil))]
	_ = [1]struct{}{}[unsafe.Sizeof(atomic.Int64{})-unsafe.Sizeof(int64(0))]
)

// StoreOwned32 stores v into x, which only the calling goroutine writes,
// for loaders that may see it late: a plain store (see above).
func StoreOwned32(x *Uint32, v uint32) { *(*uint32)(unsafe.Pointer(x)) = v }

// StoreOwnedPointer stores v into x, which only the calling goroutine
// writes, for loaders that may see it late: a plain store (see above),
// with the collector's write barrier.
func StoreOwnedPointer[T any](x *Pointer[T], v *T) {
	*(*unsafe.Pointer)(unsafe.Pointer(x)) = unsafe.Pointer(v)
}

// StoreOwned64 stores v into x, which only the calling goroutine writes,
// for loaders that may see it late: a plain store (see above) where a
// machine word holds 64 bits. On 32-bit ports a plain store of 64 bits is
// two stores, and a racing load could see half of each value: there it is
// the atomic store. (The condition is a constant; the compiler keeps one
// branch.)
func StoreOwned64(x *Int64, v int64) {
	if unsafe.Sizeof(uintptr(0)) < 8 {
		x.Store(v)
		return
	}
	*(*int64)(unsafe.Pointer(x)) = v
}
