//go:build explore

package atomic

import (
	"sync/atomic"

	"github.com/go-steal/steal/internal/explore"
)

// Each method calls explore.Point before the operation: the explorer may
// run other goroutines there, so the operation happens at the place in the
// global order that the explorer chose. The operation itself is the real
// sequentially consistent one, of the sync/atomic type that the wrapper
// holds.

// The types of sync/atomic that the scheduler uses, each with an
// exploration point before each operation.
type (
	Bool           = value[bool, atomic.Bool, *atomic.Bool]
	Int32          = integer[int32, atomic.Int32, *atomic.Int32]
	Int64          = integer[int64, atomic.Int64, *atomic.Int64]
	Uint32         = integer[uint32, atomic.Uint32, *atomic.Uint32]
	Uint64         = integer[uint64, atomic.Uint64, *atomic.Uint64]
	Pointer[T any] = value[*T, atomic.Pointer[T], *atomic.Pointer[T]]
)

// valueOps is what every sync/atomic type A does, through its pointer.
type valueOps[T, A any] interface {
	*A
	Load() T
	Store(T)
	Swap(T) T
	CompareAndSwap(old, new T) bool
}

// value wraps the sync/atomic type A, whose values are T.
type value[T, A any, P valueOps[T, A]] struct{ v A }

func (x *value[T, A, P]) Load() T   { explore.Point(labelsOf[T]().load, x); return P(&x.v).Load() }
func (x *value[T, A, P]) Store(v T) { explore.Point(labelsOf[T]().store, x); P(&x.v).Store(v) }
func (x *value[T, A, P]) Swap(v T) T {
	explore.Point(labelsOf[T]().swap, x)
	return P(&x.v).Swap(v)
}
func (x *value[T, A, P]) CompareAndSwap(old, new T) bool {
	explore.Point(labelsOf[T]().cas, x)
	return P(&x.v).CompareAndSwap(old, new)
}

// number is the integers of sync/atomic's integer types.
type number interface {
	int32 | int64 | uint32 | uint64
}

// integerOps is what sync/atomic's integer types do, through a pointer.
type integerOps[T number, A any] interface {
	valueOps[T, A]
	Add(T) T
	And(T) T
	Or(T) T
}

// integer wraps the sync/atomic integer type A, whose values are T. Its
// points name &x.value, as the embedded methods do, so that the explorer
// sees every operation on one variable at the same address of one type.
type integer[T number, A any, P integerOps[T, A]] struct{ value[T, A, P] }

func (x *integer[T, A, P]) Add(d T) T {
	explore.Point(labelsOf[T]().add, &x.value)
	return P(&x.v).Add(d)
}
func (x *integer[T, A, P]) And(m T) T {
	explore.Point(labelsOf[T]().and, &x.value)
	return P(&x.v).And(m)
}
func (x *integer[T, A, P]) Or(m T) T { explore.Point(labelsOf[T]().or, &x.value); return P(&x.v).Or(m) }

// labels are what the explorer's traces call the operations of one type.
type labels struct{ load, store, swap, cas, add, and, or string }

func labelsFor(typ string) *labels {
	return &labels{typ + ".Load", typ + ".Store", typ + ".Swap", typ + ".CAS",
		typ + ".Add", typ + ".And", typ + ".Or"}
}

var (
	boolLabels    = labelsFor("Bool")
	int32Labels   = labelsFor("Int32")
	int64Labels   = labelsFor("Int64")
	uint32Labels  = labelsFor("Uint32")
	uint64Labels  = labelsFor("Uint64")
	pointerLabels = labelsFor("Pointer")
)

// labelsOf returns the labels of the wrapper whose values are T (every
// pointer type is a Pointer's).
func labelsOf[T any]() *labels {
	var zero T
	switch any(zero).(type) {
	case bool:
		return boolLabels
	case int32:
		return int32Labels
	case int64:
		return int64Labels
	case uint32:
		return uint32Labels
	case uint64:
		return uint64Labels
	default:
		return pointerLabels
	}
}

// StoreOwned32 is the owner's store of owned_plain.go: under the
// explorer, the sequentially consistent Store and its choice point.
func StoreOwned32(x *Uint32, v uint32) { x.Store(v) }

// StoreOwnedPointer is the owner's store of owned_plain.go: under the
// explorer, the sequentially consistent Store and its choice point.
func StoreOwnedPointer[T any](x *Pointer[T], v *T) { x.Store(v) }

// StoreOwned64 is the owner's store of owned_plain.go: under the
// explorer, the sequentially consistent Store and its choice point.
func StoreOwned64(x *Int64, v int64) { x.Store(v) }
