// Package ranges is the work-stealing range partitioner that runs a
// data-parallel loop (wsgroup.For): the index space [0, n) split into one
// contiguous range per participant, each participant taking indices from
// the low end of its own range, and a participant whose range is empty
// stealing the upper half of the largest remaining one, as .NET's
// work-stealing range partitioner does.
//
// # Roles
//
// A Partition has a fixed number of slots. Participant i is the owner of
// slot i: it alone takes from the low end of its range (Take) and fills the
// slot once it is empty (at the end of Steal). Every participant is also a
// thief of every other slot: it may cut off the upper part of another
// slot's range (in Steal). Who owns slot i is the caller's business (the
// loop gives each participant one slot); the partition only needs that at
// most one goroutine at a time calls Take or Steal for a slot.
//
// # The word
//
// Each slot is one atomic word holding its range [lo, hi) as two 32-bit
// halves, so that the owner's take and a thief's cut are each one
// compare-and-swap on the same word and can never both succeed on the same
// value: whichever lands first changes the word, and the other fails and
// looks again. A range whose lo has reached hi is empty. A 32-bit half
// bounds a partition to MaxLen indices; on 64-bit ports the loop runs
// longer index spaces in segments (where int is 32 bits, no int exceeds
// MaxLen).
//
// Every transition of a slot's word is a pure function of the value it
// replaces: take k maps [lo, hi) to [lo+k, hi), a cut maps it to
// [lo, hi-cut(hi-lo)), and a fill maps an empty word to a range. So a
// compare-and-swap that succeeds on a word equal to the one it read has
// the effect that it would have had at the moment of the read, whatever
// happened in between (ABA is harmless here: the same value is the same
// set of unclaimed indices in the same hands).
//
// # Termination
//
// left counts the indices no owner has taken yet: those in some slot's
// range, plus those a thief has cut off and not yet stored in its own slot
// (in transit), plus those an owner has taken from its word and not yet
// subtracted. Take subtracts what it took after the compare-and-swap that
// took them, so left never undercounts. A thief that finds every slot
// empty while left is not zero knows that indices are in transit and looks
// again; when left is zero, every index has been taken by an owner, who
// runs it, and the thief is done.
package ranges

import (
	"math"

	"github.com/go-steal/steal/internal/explore/atomic"
	"github.com/go-steal/steal/internal/explore/xsync"
)

// MaxLen is the largest number of indices a Partition holds: what a 32-bit
// half of a slot's word holds, and, where int is 32 bits, what an int
// holds (math.MaxInt32), so that MaxLen is an int on every port.
const MaxLen = min(1<<32-1, math.MaxInt)

// A Partition is an index space [0, n) split into ranges, one per slot.
// Make it with New.
type Partition struct {
	slots []slot
	// left: indices not yet taken by an owner; see the package comment.
	// Decremented by Take after the slot's compare-and-swap; read by
	// thieves that found nothing to steal.
	left atomic.Int64
}

// slot is one participant's range, padded to a cache line of its own: the
// owner updates it once per run of indices, and a neighbour's updates must
// not take the line away from it.
type slot struct {
	word atomic.Uint64 // lo in the low 32 bits, hi in the high 32 bits
	_    [56]byte
}

func pack(lo, hi uint32) uint64 { return uint64(hi)<<32 | uint64(lo) }

func unpack(w uint64) (lo, hi uint32) { return uint32(w), uint32(w >> 32) }

// New returns a partition of [0, n) into parts contiguous ranges of equal
// length (give or take one), the i-th in slot i. n must be at most MaxLen
// and parts at least 1.
func New(n int, parts int) *Partition {
	if n < 0 || n > MaxLen || parts < 1 {
		panic("ranges: New called with a bad length or part count")
	}
	p := &Partition{slots: make([]slot, parts)}
	for i := range parts {
		lo := uint32(uint64(n) * uint64(i) / uint64(parts))
		hi := uint32(uint64(n) * uint64(i+1) / uint64(parts))
		p.slots[i].word.Store(pack(lo, hi))
	}
	p.left.Store(int64(n))
	return p
}

// Parts returns the number of slots.
func (p *Partition) Parts() int { return len(p.slots) }

// Left returns the number of indices that no owner has taken yet.
func (p *Partition) Left() int64 { return p.left.Load() }

// Take takes up to k (at least 1) indices from the low end of slot own's
// range, for the owner of the slot to run, and returns them as [lo, hi);
// lo == hi when the range is empty. Owner only.
func (p *Partition) Take(own int, k uint32) (lo, hi uint32) {
	s := &p.slots[own].word
	for {
		w := s.Load()
		lo, hi := unpack(w)
		if lo >= hi {
			return lo, lo
		}
		end := hi
		if hi-lo > k {
			end = lo + k
		}
		// A thief may cut the range between the load and here: then the
		// word has changed, the CAS fails, and we take from the shorter
		// range. Taking with an unconditional Add of k to the low half
		// instead is the tempting cheaper version and a trap: it would
		// take indices a thief has just cut off, which the thief runs too.
		if s.CompareAndSwap(w, pack(end, hi)) {
			// After the CAS: until here the indices were in the slot, and
			// left counted them there; subtracting before the CAS could
			// let a thief see left at zero while they are still
			// stealable, and leave.
			p.left.Add(-int64(end - lo))
			return lo, end
		}
	}
}

// Untake gives back [lo, hi), the unrun end of the owner's last Take, to
// the low end of slot own's range, for whoever owns the slot next. Only
// the owner moves a slot's lo, so the range still starts at hi (thieves
// may have shortened it from the top, to nothing). Owner only.
func (p *Partition) Untake(own int, lo, hi uint32) {
	// Before the CAS: once the indices are back in the slot, a thief may
	// steal them and subtract them again (as their new owner's Take).
	p.left.Add(int64(hi - lo))
	s := &p.slots[own].word
	for {
		w := s.Load()
		slo, shi := unpack(w)
		if slo != hi {
			panic("ranges: Untake of indices that do not end where the slot's range begins")
		}
		if s.CompareAndSwap(w, pack(lo, shi)) {
			return
		}
	}
}

// cut is how many indices a thief takes from a range of length n >= 1: the
// upper half, rounded down, but the last index too, so that a range whose
// owner is stuck in a long body does not keep its last index waiting.
func cut(n uint32) uint32 { return max(1, n/2) }

// Steal moves the upper part (see cut) of the longest other range into
// slot own, which must be empty, and reports whether it did. It reports
// false only when no index is left to steal: every index has been taken by
// an owner. While some are in transit (cut off by another thief that has
// not stored them yet), it yields and looks again. Owner of slot own only.
func (p *Partition) Steal(own int) bool {
	for {
		victim, lo, hi := p.cutLongest(own)
		if victim < 0 {
			if p.left.Load() == 0 {
				return false
			}
			// Some indices are in transit, or taken and not yet
			// subtracted; both end within a few instructions of the
			// goroutine concerned, unless it was descheduled there.
			// Gosched, not the runtime's goyield: a goroutine the
			// scheduler preempted waits on its global run queue, which
			// only a Gosched queues us behind. Its cost, the wake-up of
			// an idle P's thread, is paid only here, at a loop's end
			// while its last indices are in transit.
			xsync.Gosched()
			continue
		}
		if lo == hi {
			continue // lost a race for the victim's word: look again
		}
		// [lo, hi) is ours and in transit: in no slot, but counted in
		// left, so a thief that finds nothing meanwhile waits for it.
		// Our slot is empty, and no thief writes an empty slot (it cuts
		// only a range with hi > lo), so a plain store fills it; a thief
		// holding an old value of our word fails its CAS, or, if that old
		// value equals the new one, cuts exactly what it would cut now.
		p.slots[own].word.Store(pack(lo, hi))
		return true
	}
}

// cutLongest is one attempt of Steal's: it cuts the upper part (see cut)
// off the longest range other than slot own's and returns the victim's
// slot and the indices cut off, [lo, hi) with lo < hi. It returns victim
// -1 when every other range looked empty, and lo == hi when the victim's
// word changed between the load and the compare-and-swap.
func (p *Partition) cutLongest(own int) (victim int, lo, hi uint32) {
	victim, w, n := -1, uint64(0), uint32(0)
	for i := range p.slots {
		if i == own {
			continue
		}
		vw := p.slots[i].word.Load()
		if lo, hi := unpack(vw); hi > lo && hi-lo > n {
			victim, w, n = i, vw, hi-lo
		}
	}
	if victim < 0 {
		return -1, 0, 0
	}
	lo, hi = unpack(w)
	mid := hi - cut(n)
	// The CAS fails if the owner took from, or another thief cut, the
	// range since our load: then Steal looks at every slot again, since
	// the longest may be elsewhere now.
	if !p.slots[victim].word.CompareAndSwap(w, pack(lo, mid)) {
		return victim, mid, mid
	}
	return victim, mid, hi
}
