package sched

import (
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/go-steal/steal/internal/explore/xsync"
)

// Goroutines that park on a group (a Wait that has nothing left to help
// with, a Go from outside on a full limited group) wait in a table shared
// by all groups, hashed by the group's address, the way the runtime's
// semaphores wait in a table hashed by the semaphore's address. A group
// therefore carries no waiter list of its own, and making one that is
// waited for allocates nothing.
//
// The protocol has two sides, which meet at the group's state word:
//
//   - A parker locks its bucket, sets its flag bit in the state (bitDone
//     or bitSlot) with an atomic Or, and looks at the state that the Or
//     returned: if its condition no longer holds, it leaves; otherwise it
//     adds itself to the bucket, unlocks, and blocks on its channel.
//   - A finisher subtracts from the state; if the result has the flag bit
//     set and the condition is met, it locks the bucket, clears the bit,
//     and wakes every waiter of that group and kind.
//
// The Or and the subtraction are atomic operations on one word, so one
// comes first. If the subtraction does, the parker's Or returns the new
// count and it does not block. If the Or does, the subtraction returns the
// bit set, and the finisher takes the bucket lock, which it gets only after
// the parker has registered. A woken waiter looks at the state again and
// parks again if it must (another Go may have raced in).

// waitBucketBits is log2 of the table's size.
const waitBucketBits = 6

var waitTable [1 << waitBucketBits]waitBucket

type waitBucket struct {
	mu   xsync.Mutex
	list []waiter
	_    [64 - 32]byte // one bucket per cache line
}

// waiter is a goroutine parked on group g for the flag bit, on pk.
type waiter struct {
	g   *Group
	bit uint64
	pk  *parking
}

// parking is a parked goroutine's place: its parker, which gets one token
// per registration, and, for a Go waiting for a slot, whether a finisher
// handed it one (handSlot). granted is written by the finisher before it
// unparks, read by the owner after it is unparked.
type parking struct {
	p       *xsync.Parker
	granted bool
}

var parkings = sync.Pool{New: func() any { return &parking{p: xsync.NewParker()} }}

func bucketOf(g *Group) *waitBucket {
	// A Group that has tasks is on the heap (Go stores it in the task),
	// and the heap does not move, so the address is stable while anyone
	// waits on it.
	h := uint64(uintptr(unsafe.Pointer(g))) * 0x9E3779B97F4A7C15
	return &waitTable[h>>(64-waitBucketBits)]
}

// park blocks the calling goroutine once, until a finisher wakes the
// waiters of bit, unless must, called with the state after the flag is
// set, reports that the reason to wait is already gone. The caller loops
// on its condition. For bitSlot it reports whether it was woken with a
// slot handed to it (handSlot): then the caller holds the slot, already
// counted in the state, and must not acquire one.
func (g *Group) park(bit uint64, must func(s uint64) bool) (granted bool) {
	b := bucketOf(g)
	pk := parkings.Get().(*parking)
	b.mu.Lock()
	registered := must(g.state.Or(bit) | bit)
	if registered {
		b.list = append(b.list, waiter{g: g, bit: bit, pk: pk})
	}
	b.mu.Unlock()
	if registered {
		pk.p.Park()
	}
	granted, pk.granted = pk.granted, false
	parkings.Put(pk)
	return granted
}

// parkDoneFor is park for bitDone (a Wait's: until the count is zero)
// with a time limit d. It reports false when d passed first; it has then
// taken its registration off the bucket, unless a finisher took it off
// first, in which case it takes that finisher's token, which is on its
// way, before it returns: the parking goes back to the pool with none.
func (g *Group) parkDoneFor(d time.Duration) (woken bool) {
	b := bucketOf(g)
	pk := parkings.Get().(*parking)
	b.mu.Lock()
	registered := countOf(g.state.Or(bitDone)|bitDone) != 0
	if registered {
		b.list = append(b.list, waiter{g: g, bit: bitDone, pk: pk})
	}
	b.mu.Unlock()
	woken = true
	if registered && !pk.p.ParkFor(d) {
		b.mu.Lock()
		i := slices.IndexFunc(b.list, func(wt waiter) bool { return wt.pk == pk })
		if i >= 0 {
			b.list = slices.Delete(b.list, i, i+1)
		}
		b.mu.Unlock()
		if i >= 0 {
			woken = false
		} else {
			pk.p.Park()
		}
	}
	parkings.Put(pk)
	return woken
}

// wake wakes every goroutine parked on g for bit and clears the bit; each
// looks at the state again and parks again if it must.
func (g *Group) wake(bit uint64) {
	b := bucketOf(g)
	b.mu.Lock()
	g.state.And(^bit)
	kept := b.list[:0]
	for _, wt := range b.list {
		if wt.g == g && wt.bit == bit {
			wt.pk.p.Unpark() // its one token
		} else {
			kept = append(kept, wt)
		}
	}
	clear(b.list[len(kept):])
	b.list = kept
	b.mu.Unlock()
}

// handSlot gives the slot of a finished task of g straight to the Go that
// has waited longest for one, and reports whether there was such a Go: the
// task is then not subtracted from the count, and the Go returns holding
// its slot, without a race against other Gos for it (errgroup's semaphore
// hands over the same way). The finisher calls it before it subtracts,
// having seen bitSlot set.
//
// Against a parker: the parker sets bitSlot and registers under the bucket
// lock, which we hold, so the list is complete for every parker that saw
// the count at the limit. A parker that has set the bit but found a slot
// free left without registering; then we find nobody, and the finisher's
// subtraction, seeing the bit, wakes everyone as before (wake).
func (g *Group) handSlot() bool {
	b := bucketOf(g)
	b.mu.Lock()
	found, others := -1, false
	for i, wt := range b.list {
		if wt.g != g || wt.bit != bitSlot {
			continue
		}
		if found < 0 {
			found = i
		} else {
			others = true
			break
		}
	}
	if found < 0 {
		b.mu.Unlock()
		return false
	}
	pk := b.list[found].pk
	copy(b.list[found:], b.list[found+1:])
	b.list[len(b.list)-1] = waiter{}
	b.list = b.list[:len(b.list)-1]
	if !others {
		g.state.And(^uint64(bitSlot))
	}
	pk.granted = true
	pk.p.Unpark()
	b.mu.Unlock()
	return true
}
