package deque

// Helpers of the package's tests: a look into a deque's ring and indices,
// and items to push.

import (
	"strconv"
	"testing"
)

// Cap returns the number of slots in d's current ring, or 0 if a zero Deque
// has not allocated its ring yet.
func (d *Deque[T]) Cap() int {
	r := d.ring.Load()
	if r == nil {
		return 0
	}
	return len(r.slots)
}

// Floor returns the capacity below which d never shrinks.
func (d *Deque[T]) Floor() int { return d.minCap() }

// SlotAt returns the raw content of the slot of index i in d's current ring
// (nil if there is no ring).
func (d *Deque[T]) SlotAt(i int64) *T {
	r := d.ring.Load()
	if r == nil {
		return nil
	}
	return r.slot(i).Load()
}

// Indices returns d's top and bottom.
func (d *Deque[T]) Indices() (top, bottom int64) {
	return d.top.Load(), d.bottom.Load()
}

// ints returns n distinct pointers to 0, 1, ..., n-1.
func ints(n int) []*int {
	p := make([]*int, n)
	for i := range p {
		v := i
		p[i] = &v
	}
	return p
}

// fullRingOfTwo returns a deque whose ring of two slots is full, holding a
// (the oldest) and b, and c, a third item that the next Push grows the ring
// for.
func fullRingOfTwo() (d *Deque[int], a, b, c *int) {
	xs := ints(3)
	a, b, c = xs[0], xs[1], xs[2]
	d = New[int](2)
	d.Push(a)
	d.Push(b)
	return d, a, b, c
}

// show prints an item, or nil.
func show(x *int) string {
	if x == nil {
		return "nil"
	}
	return "&" + strconv.Itoa(*x)
}

// wantSteal fails t at once unless d.Steal() takes want.
func wantSteal(t *testing.T, d *Deque[int], want *int) {
	t.Helper()
	if got, _ := d.Steal(); got != want {
		t.Fatalf("Steal() = %s, want %s", show(got), show(want))
	}
}

// wantPop fails t at once unless d.Pop() takes want.
func wantPop(t *testing.T, d *Deque[int], want *int) {
	t.Helper()
	if got := d.Pop(); got != want {
		t.Fatalf("Pop() = %s, want %s", show(got), show(want))
	}
}

// wantCap fails t at once unless d's ring has want slots.
func wantCap(t *testing.T, d *Deque[int], want int) {
	t.Helper()
	if got := d.Cap(); got != want {
		t.Fatalf("Cap() = %d, want %d", got, want)
	}
}
