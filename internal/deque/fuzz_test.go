package deque

import (
	"testing"
)

// FuzzDeque runs a sequence of operations on one goroutine and checks the
// deque against a slice model after every step: Push appends, Pop takes the
// last element, Steal takes the first.
//
// The first byte chooses the deque: a zero Deque if its top bit is set,
// otherwise New(1<<(b&7)); one that Retains taken items if bit 6 is set. Each further byte is one operation, by its low
// two bits:
//
//	0: push one item
//	1: push (b>>2)%16+1 items
//	2: pop
//	3: steal
//
// Every other push reuses the item taken most recently, if there is one,
// as the scheduler recycles its task records: in Retain mode it may land in
// a slot that still holds it, or one that holds another taken item.
//
// Only the first maxOps bytes are used.
func FuzzDeque(f *testing.F) {
	f.Add([]byte{0x00, 0, 0, 0, 2, 3, 2, 2, 3})
	f.Add([]byte{0x01, 1 | 63<<2, 3, 3, 2, 2, 2, 2, 2, 2, 2})
	f.Add([]byte{0x80, 1 | 63<<2, 1 | 63<<2, 0, 2, 3, 2, 3, 2, 2, 3, 3, 3, 3})
	f.Add([]byte{0x03, 0, 3, 0, 3, 0, 3, 2, 2, 1 | 20<<2, 3, 2, 3, 2})
	// Grow to 256 from 2, then drain by steals and pops until shrunk.
	grow := []byte{0x01}
	for range 16 {
		grow = append(grow, 1|15<<2)
	}
	for i := range 300 {
		grow = append(grow, byte(2+i%2))
	}
	f.Add(grow)
	retained := append([]byte{grow[0] | 0x40}, grow[1:]...)
	f.Add(retained)
	f.Add([]byte{0x41, 1 | 15<<2, 2, 3, 0, 2, 3, 3, 1 | 7<<2, 2, 2, 3})

	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) == 0 {
			return
		}
		// checkModel costs O(capacity) per step; keep an execution fast.
		if len(ops) > maxOps {
			ops = ops[:maxOps]
		}
		var d *Deque[int]
		if ops[0]&0x80 != 0 {
			d = new(Deque[int])
		} else {
			d = New[int](1 << (ops[0] & 7))
		}
		retain := ops[0]&0x40 != 0
		if retain {
			d.Retain()
		}
		m := &model{}
		for step, op := range ops[1:] {
			capBefore := d.Cap()
			switch op & 3 {
			case 0:
				m.push(t, d, 1)
			case 1:
				m.push(t, d, int(op>>2)%16+1)
			case 2:
				got := d.Pop()
				var want *int
				if n := len(m.items); n > 0 {
					want = m.items[n-1]
					m.items = m.items[:n-1]
				}
				if got != want {
					t.Fatalf("step %d: Pop() = %s, want %s", step, show(got), show(want))
				}
				m.take(want)
				// Pop halves the ring, once, exactly when it leaves it
				// less than a quarter full and above the floor.
				if c := d.Cap(); c != capBefore {
					if c != capBefore/2 || len(m.items) >= capBefore/4 || capBefore <= d.Floor() {
						t.Fatalf("step %d: Pop with %d items left shrank the ring from %d to %d (floor %d)", step, len(m.items), capBefore, c, d.Floor())
					}
				} else if c > d.Floor() && len(m.items) < c/4 {
					t.Fatalf("step %d: Pop left %d items in a ring of %d (floor %d) without shrinking it", step, len(m.items), c, d.Floor())
				}
			case 3:
				got, retry := d.Steal()
				var want *int
				if len(m.items) > 0 {
					want = m.items[0]
					m.items = m.items[1:]
				}
				if retry {
					t.Fatalf("step %d: Steal() reported retry with no concurrency", step)
				}
				if got != want {
					t.Fatalf("step %d: Steal() = %s, want %s", step, show(got), show(want))
				}
				m.take(want)
				if c := d.Cap(); c != capBefore {
					t.Fatalf("step %d: Steal changed the capacity from %d to %d", step, capBefore, c)
				}
			}
			m.peak = max(m.peak, len(m.items))
			// The full check costs O(capacity); on big rings do it only
			// now and then, and look at the slots near the ends always.
			full := d.Cap() <= 256 || step%32 == 0 || step == len(ops)-2
			checkModel(t, d, m.items, m.peak, full, retain)
		}
	})
}

const maxOps = 512

// model is the slice model of FuzzDeque.
type model struct {
	items []*int
	taken []*int // items taken out of d, for push to reuse, newest last
	next  int
	peak  int // the largest len(items) so far
}

// take records x, just taken out of d, for reuse; nil (nothing taken) is
// ignored.
func (m *model) take(x *int) {
	if x != nil {
		m.taken = append(m.taken, x)
	}
}

func (m *model) push(t *testing.T, d *Deque[int], n int) {
	t.Helper()
	for range n {
		var x *int
		if k := len(m.taken); k > 0 && m.next%2 == 1 {
			x = m.taken[k-1]
			m.taken = m.taken[:k-1]
		} else {
			x = new(int)
			*x = m.next
		}
		m.next++
		c := d.Cap()
		d.Push(x)
		// Push doubles the ring exactly when it is full (a zero Deque
		// allocates its ring on the first Push).
		switch nc := d.Cap(); {
		case c == 0:
			if nc != d.Floor() {
				t.Fatalf("first Push allocated %d slots, want %d", nc, d.Floor())
			}
		case nc != c && (nc != 2*c || len(m.items) != c):
			t.Fatalf("Push with %d items changed the capacity from %d to %d", len(m.items), c, nc)
		case nc == c && len(m.items) == c:
			t.Fatalf("Push with %d items into a full ring of %d did not grow it", len(m.items), c)
		}
		m.items = append(m.items, x)
	}
}

// checkModel checks d, which no other goroutine may be using, against the
// items it should hold, oldest first: Len, the capacity bounds, and the raw
// ring, whose live slots must hold exactly the items and whose other slots
// must all be nil (taken items are cleared), unless retain is set (see
// Deque.Retain): then they are not looked at. peak is the largest number of
// items d has held. Unless full is set, only the slots next to either end
// of the live range are looked at.
func checkModel(t *testing.T, d *Deque[int], items []*int, peak int, full, retain bool) {
	t.Helper()
	if got := d.Len(); got != len(items) {
		t.Fatalf("Len() = %d, want %d", got, len(items))
	}
	top, bottom := d.Indices()
	if bottom-top != int64(len(items)) {
		t.Fatalf("bottom-top = %d-%d = %d, want %d", bottom, top, bottom-top, len(items))
	}
	c := d.Cap()
	if c == 0 {
		if len(items) != 0 {
			t.Fatalf("no ring but %d items", len(items))
		}
		return
	}
	if c&(c-1) != 0 || c < d.Floor() || c < len(items) {
		t.Fatalf("capacity %d: want a power of two >= floor %d and >= %d items", c, d.Floor(), len(items))
	}
	// The ring grows only when full, so it is never more than twice the
	// peak (or the floor).
	if c > max(d.Floor(), 2*peak) {
		t.Fatalf("capacity %d > max(floor %d, 2*peak %d)", c, d.Floor(), peak)
	}
	check := func(i int64) {
		var want *int
		if top <= i && i < bottom {
			want = items[i-top]
		} else if retain {
			return
		}
		if got := d.SlotAt(i); got != want {
			t.Fatalf("slot of index %d (live range [%d, %d)) = %s, want %s", i, top, bottom, show(got), show(want))
		}
	}
	if full {
		// Every slot: the live indices [top, bottom), then the rest, whose
		// indices are [bottom, top+c).
		for i := top; i < top+int64(c); i++ {
			check(i)
		}
		return
	}
	for _, i := range [...]int64{top - 2, top - 1, top, top + 1, bottom - 2, bottom - 1, bottom, bottom + 1} {
		if i+int64(c) > bottom && i < top+int64(c) {
			check(i)
		}
	}
}
