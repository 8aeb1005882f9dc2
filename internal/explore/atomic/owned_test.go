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
	last, last64 := uint32(0), int64(0)
	for last != rounds || last64 != int64(rounds) {
		v := n.Load()
		if v == 7 {
			v = 0 // the first store has not arrived yet
		} else if v>>16 != v&0xffff {
			t.Fatalf("loaded %#x: not a value the owner stored", v)
		}
		v &= 0xffff
		if v < last {
			t.Fatalf("loaded %d after %d: the owner's stores out of order", v, last)
		}
		last = v
		w := m.Load()
		if w == -7 {
			w = 0
		} else if w>>32 != w&0xffffffff {
			t.Fatalf("loaded %#x: not a 64-bit value the owner stored", w)
		}
		w &= 0xffffffff
		if w < last64 {
			t.Fatalf("loaded %d after %d: the owner's 64-bit stores out of order", w, last64)
		}
		last64 = w
		if q := p.Load(); q != a && q != b {
			t.Fatal("loaded a pointer the owner never stored")
		}
	}
	wg.Wait()
}
