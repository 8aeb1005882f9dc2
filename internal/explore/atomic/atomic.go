//go:build !explore

// Package atomic is sync/atomic as the scheduler's lock-free code sees it.
// In a normal build every type here is an alias of the sync/atomic type of
// the same name, so code that imports this package instead of sync/atomic
// compiles to exactly the same instructions and pays nothing.
//
// Built with -tags explore, every type is a wrapper with the same methods
// that first lets the interleaving explorer (package explore) pause the
// calling goroutine before the operation, so that a test can choose the
// order in which the atomic operations of several goroutines happen. See
// package explore.
package atomic

import "sync/atomic"

// The types of sync/atomic that the scheduler uses.
type (
	Bool           = atomic.Bool
	Int32          = atomic.Int32
	Int64          = atomic.Int64
	Uint32         = atomic.Uint32
	Uint64         = atomic.Uint64
	Pointer[T any] = atomic.Pointer[T]
)
