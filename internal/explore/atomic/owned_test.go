package atomic_test

import (
	"sync"
	"testing"

	"github.com/go-steal/steal/internal/explore/atomic"
)

// TestStoreOwned: what the owner stores, a loader loads; while the owner
// stores, a loader sees only values it stored, in the order it stored
// them (one writer: its stores reach a loader in program order).
func TestStoreOwned(t *testing.T) {
	var n atomic.Uint32
	atomic.StoreOwned32(&n, 7)
	if got := n.Load(); got != 7 {
		t.Fatalf("Load after StoreOwned32(7) = %d", got)
	}
	var m atomic.Int64
	atomic.StoreOwned64(&m, -7)
	if got := m.Load(); got != -7 {
		t.Fatalf("Load after StoreOwned64(-7) = %d", got)
	}
	a, b := new(int), new(int)
	var p atomic.Pointer[int]
	atomic.StoreOwnedPointer(&p, a)
	if p.Load() != a {
		t.Fatal("Load after StoreOwnedPointer(a) is not a")
	}

	rounds := uint32(1<<16 - 1) // each half of a value holds a round
	if testing.Short() {
		rounds = 1 << 12
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := uint32(1); i <= rounds; i++ {
			// Both halves the same: a torn value would show.
			atomic.StoreOwned32(&n, i<<16|i)
			atomic.StoreOwned64(&m, int64(i)<<32|int64(i))
			if i&1 == 0 {
				atomic.StoreOwnedPointer(&p, a)
			} else {
				atomic.StoreOwnedPointer(&p, b)
			}
		}
	})
	last, last64 := uint64(0), uint64(0)
	for last != uint64(rounds) || last64 != uint64(rounds) {
		last = roundOf(t, "StoreOwned32", uint64(n.Load()), 7, 16, last)
		last64 = roundOf(t, "StoreOwned64", uint64(m.Load()), ^uint64(6), 32, last64) // first: -7
		if q := p.Load(); q != a && q != b {
			t.Fatal("loaded a pointer the owner never stored")
		}
	}
	wg.Wait()
}

// roundOf checks v, loaded while the owner stores first and then, for
// rounds i = 1, 2, ..., i in both halves of the value (each half bits
// wide): v must be first (round 0: the rounds' stores have not arrived
// yet) or a value of a round, and its round no earlier than last, the
// round loaded before. It returns v's round.
func roundOf(t *testing.T, what string, v, first uint64, half uint, last uint64) uint64 {
	t.Helper()
	r := uint64(0)
	if v != first {
		mask := uint64(1)<<half - 1
		if v>>half != v&mask {
			t.Fatalf("%s: loaded %#x: not a value the owner stored", what, v)
		}
		r = v & mask
	}
	if r < last {
		t.Fatalf("%s: loaded round %d after %d: the owner's stores out of order", what, r, last)
	}
	return r
}
