package sched

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-steal/steal/internal/testkit"
)

// The wait table: goroutines parked on groups, hashed by the group's
// address into a few buckets that many groups share.

// collidingGroups returns groups of which at least perBucket hash to each of
// buckets buckets of the wait table.
func collidingGroups(buckets, perBucket int) [][]*Group {
	byBucket := map[*waitBucket][]*Group{}
	var out [][]*Group
	for len(out) < buckets {
		g := new(Group)
		b := bucketOf(g)
		byBucket[b] = append(byBucket[b], g)
		if len(byBucket[b]) == perBucket {
			out = append(out, byBucket[b])
		}
	}
	return out
}

// TestWaitTable: many goroutines park on many groups that share a few
// buckets, some waiting for the group to finish (bitDone), some for a
// free slot (bitSlot). Each parks once (no loop around park, so that a
// wake-up meant for another group would show). The groups' one task each
// finishes in random order, again and again: each finish hands the slot
// to one slot waiter of that group (handSlot: the count stays), oldest
// first, and once no slot waiter is left, the last finish wakes the
// group's done waiters. No finish wakes a waiter of another group.
func TestWaitTable(t *testing.T) {
	rounds := testkit.ScaleDown(20, 5)
	testkit.Guard(t, func() {
		for round := range rounds {
			r := rand.New(rand.NewPCG(uint64(round), 17))
			sets := collidingGroups(3, 6)
			var groups []*Group
			for _, s := range sets {
				groups = append(groups, s...)
			}
			const perGroup = 4 // waiters per group: half done, half slot
			type waiterRec struct {
				g    int
				slot bool
			}
			var recs []waiterRec
			woken := make([]atomic.Int32, len(groups)*perGroup)
			granted := make([]atomic.Bool, len(groups)*perGroup)
			finishes := make([]atomic.Int32, len(groups))
			var early atomic.Int64
			var wg sync.WaitGroup
			for gi, g := range groups {
				g.limit = 1
				g.state.Add(oneTask) // one active task: done and slot waiters both wait
				for k := range perGroup {
					slot := k%2 == 1
					id := len(recs)
					recs = append(recs, waiterRec{gi, slot})
					wg.Add(1)
					go func() {
						defer wg.Done()
						if slot {
							granted[id].Store(g.park(bitSlot, func(s uint64) bool { return countOf(s) >= g.limit }))
						} else if g.park(bitDone, func(s uint64) bool { return countOf(s) != 0 }) {
							t.Errorf("a done waiter was handed a slot")
						}
						if finishes[gi].Load() == 0 {
							early.Add(1)
						}
						woken[id].Add(1)
					}()
				}
			}
			// Let every waiter register (the counts stay at one until the
			// finishes below), then finish the groups' tasks in random
			// order, each until its waiters are all gone: perGroup/2
			// hand-offs, then the finish that empties the group.
			testkit.WaitUntil(t, "waiters parked", func() bool {
				parked := 0
				for i := range waitTable {
					b := &waitTable[i]
					b.mu.Lock()
					parked += len(b.list)
					b.mu.Unlock()
				}
				return parked == len(recs)
			})
			wokenOf := func(gi int, slot bool) (n int) {
				for id, rec := range recs {
					if rec.g == gi && rec.slot == slot && woken[id].Load() != 0 {
						n++
					}
				}
				return n
			}
			for _, gi := range r.Perm(len(groups)) {
				for f := 1; f <= perGroup/2+1; f++ {
					finishes[gi].Store(int32(f))
					groups[gi].done(1)
					slots, dones := min(f, perGroup/2), 0
					if f > perGroup/2 {
						dones = perGroup / 2
					}
					testkit.WaitUntil(t, fmt.Sprintf("round %d: finish %d of group %d wakes its waiters", round, f, gi), func() bool {
						return wokenOf(gi, true) >= slots && wokenOf(gi, false) >= dones
					})
					if got := wokenOf(gi, true); got != slots {
						t.Fatalf("round %d: after %d finishes of group %d, %d slot waiters woken, want %d", round, f, gi, got, slots)
					}
					if got := wokenOf(gi, false); got != dones {
						t.Fatalf("round %d: after %d finishes of group %d, %d done waiters woken, want %d", round, f, gi, got, dones)
					}
				}
				for id, rec := range recs {
					want := int32(0)
					if finishes[rec.g].Load() != 0 {
						want = 1
					}
					if got := woken[id].Load(); got != want {
						t.Fatalf("round %d: waiter %d of group %d (slot %v, group finished: %v) returned %d times, want %d",
							round, id, rec.g, rec.slot, want == 1, got, want)
					}
					if rec.g == gi && rec.slot && !granted[id].Load() {
						t.Fatalf("round %d: slot waiter %d of group %d woken without a slot", round, id, gi)
					}
				}
			}
			wg.Wait()
			if n := early.Load(); n != 0 {
				t.Fatalf("round %d: %d waiters returned before their group finished", round, n)
			}
			for i := range waitTable {
				b := &waitTable[i]
				b.mu.Lock()
				n := len(b.list)
				b.mu.Unlock()
				if n != 0 {
					t.Fatalf("round %d: bucket %d still lists %d waiters", round, i, n)
				}
			}
			for gi, g := range groups {
				if s := g.state.Load(); s&flagBits != 0 {
					t.Fatalf("round %d: group %d still has flag bits %#x after its waiters left", round, gi, s&flagBits)
				}
			}
		}
	})
	testkit.VerifyNone(t)
}

// TestWaitTableParkRefusesStale: park does not block when the condition no
// longer holds once the flag is set, and leaves no registration behind;
// wake with nobody parked only clears the flag.
func TestWaitTableParkRefusesStale(t *testing.T) {
	testkit.Guard(t, func() {
		var g Group
		g.park(bitDone, func(s uint64) bool { return countOf(s) != 0 }) // count 0: returns at once
		b := bucketOf(&g)
		b.mu.Lock()
		for _, w := range b.list {
			if w.g == &g {
				t.Errorf("a park that did not block left a registration")
			}
		}
		b.mu.Unlock()
		if g.state.Load()&bitDone == 0 {
			t.Errorf("park did not set its flag bit")
		}
		g.wake(bitDone)
		if g.state.Load()&flagBits != 0 {
			t.Errorf("wake left flag bits %#x", g.state.Load()&flagBits)
		}
	})
}
