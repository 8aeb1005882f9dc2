//go:build explore

package atomic

import (
	"sync/atomic"

	"github.com/go-steal/steal/internal/explore"
)

// Each method calls explore.Point before the operation: the explorer may
// run other goroutines there, so the operation happens at the place in the
// global order that the explorer chose. The operation itself is the real
// sequentially consistent one.

// Bool is sync/atomic's Bool with an exploration point before each operation.
type Bool struct{ v atomic.Bool }

func (x *Bool) Load() bool       { explore.Point("Bool.Load", x); return x.v.Load() }
func (x *Bool) Store(v bool)     { explore.Point("Bool.Store", x); x.v.Store(v) }
func (x *Bool) Swap(v bool) bool { explore.Point("Bool.Swap", x); return x.v.Swap(v) }
func (x *Bool) CompareAndSwap(old, new bool) bool {
	explore.Point("Bool.CAS", x)
	return x.v.CompareAndSwap(old, new)
}

// Int32 is sync/atomic's Int32 with an exploration point before each operation.
type Int32 struct{ v atomic.Int32 }

func (x *Int32) Load() int32        { explore.Point("Int32.Load", x); return x.v.Load() }
func (x *Int32) Store(v int32)      { explore.Point("Int32.Store", x); x.v.Store(v) }
func (x *Int32) Swap(v int32) int32 { explore.Point("Int32.Swap", x); return x.v.Swap(v) }
func (x *Int32) Add(d int32) int32  { explore.Point("Int32.Add", x); return x.v.Add(d) }
func (x *Int32) And(m int32) int32  { explore.Point("Int32.And", x); return x.v.And(m) }
func (x *Int32) Or(m int32) int32   { explore.Point("Int32.Or", x); return x.v.Or(m) }
func (x *Int32) CompareAndSwap(old, new int32) bool {
	explore.Point("Int32.CAS", x)
	return x.v.CompareAndSwap(old, new)
}

// Int64 is sync/atomic's Int64 with an exploration point before each operation.
type Int64 struct{ v atomic.Int64 }

func (x *Int64) Load() int64        { explore.Point("Int64.Load", x); return x.v.Load() }
func (x *Int64) Store(v int64)      { explore.Point("Int64.Store", x); x.v.Store(v) }
func (x *Int64) Swap(v int64) int64 { explore.Point("Int64.Swap", x); return x.v.Swap(v) }
func (x *Int64) Add(d int64) int64  { explore.Point("Int64.Add", x); return x.v.Add(d) }
func (x *Int64) And(m int64) int64  { explore.Point("Int64.And", x); return x.v.And(m) }
func (x *Int64) Or(m int64) int64   { explore.Point("Int64.Or", x); return x.v.Or(m) }
func (x *Int64) CompareAndSwap(old, new int64) bool {
	explore.Point("Int64.CAS", x)
	return x.v.CompareAndSwap(old, new)
}

// Uint32 is sync/atomic's Uint32 with an exploration point before each operation.
type Uint32 struct{ v atomic.Uint32 }

func (x *Uint32) Load() uint32         { explore.Point("Uint32.Load", x); return x.v.Load() }
func (x *Uint32) Store(v uint32)       { explore.Point("Uint32.Store", x); x.v.Store(v) }
func (x *Uint32) Swap(v uint32) uint32 { explore.Point("Uint32.Swap", x); return x.v.Swap(v) }
func (x *Uint32) Add(d uint32) uint32  { explore.Point("Uint32.Add", x); return x.v.Add(d) }
func (x *Uint32) And(m uint32) uint32  { explore.Point("Uint32.And", x); return x.v.And(m) }
func (x *Uint32) Or(m uint32) uint32   { explore.Point("Uint32.Or", x); return x.v.Or(m) }
func (x *Uint32) CompareAndSwap(old, new uint32) bool {
	explore.Point("Uint32.CAS", x)
	return x.v.CompareAndSwap(old, new)
}

// Uint64 is sync/atomic's Uint64 with an exploration point before each operation.
type Uint64 struct{ v atomic.Uint64 }

func (x *Uint64) Load() uint64         { explore.Point("Uint64.Load", x); return x.v.Load() }
func (x *Uint64) Store(v uint64)       { explore.Point("Uint64.Store", x); x.v.Store(v) }
func (x *Uint64) Swap(v uint64) uint64 { explore.Point("Uint64.Swap", x); return x.v.Swap(v) }
func (x *Uint64) Add(d uint64) uint64  { explore.Point("Uint64.Add", x); return x.v.Add(d) }
func (x *Uint64) And(m uint64) uint64  { explore.Point("Uint64.And", x); return x.v.And(m) }
func (x *Uint64) Or(m uint64) uint64   { explore.Point("Uint64.Or", x); return x.v.Or(m) }
func (x *Uint64) CompareAndSwap(old, new uint64) bool {
	explore.Point("Uint64.CAS", x)
	return x.v.CompareAndSwap(old, new)
}

// Pointer is sync/atomic's Pointer with an exploration point before each operation.
type Pointer[T any] struct{ v atomic.Pointer[T] }

func (x *Pointer[T]) Load() *T     { explore.Point("Pointer.Load", x); return x.v.Load() }
func (x *Pointer[T]) Store(v *T)   { explore.Point("Pointer.Store", x); x.v.Store(v) }
func (x *Pointer[T]) Swap(v *T) *T { explore.Point("Pointer.Swap", x); return x.v.Swap(v) }
func (x *Pointer[T]) CompareAndSwap(old, new *T) bool {
	explore.Point("Pointer.CAS", x)
	return x.v.CompareAndSwap(old, new)
}
