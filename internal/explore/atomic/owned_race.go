//go:build !explore && race

package atomic

// StoreOwned32 stores v into x with the atomic store: see owned_plain.go.
func StoreOwned32(x *Uint32, v uint32) { x.Store(v) }

// StoreOwnedPointer stores v into x with the atomic store: see owned_plain.go.
func StoreOwnedPointer[T any](x *Pointer[T], v *T) { x.Store(v) }

// StoreOwned64 stores v into x with the atomic store: see owned_plain.go.
func StoreOwned64(x *Int64, v int64) { x.Store(v) }
