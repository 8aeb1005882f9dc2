package deque

import (
	"math/bits"

	"github.com/go-steal/steal/internal/explore/atomic"
)

const (
	// defaultCapacity is the initial capacity, and the floor, of a zero
	// Deque: 2 KiB of slots. A worker that queues and drains a batch of up
	// to this many tasks again and again keeps one ring; with a smaller
	// floor, such as 64, every batch of 100 would grow the ring on the way
	// up and shrink it on the way down, two allocations per batch on a path
	// that must allocate nothing (wsgroup's TestGoFromWorkerAllocatesNothing).
	defaultCapacity = 256

	// minCapacity is the smallest ring that New and Init make.
	minCapacity = 2

	// maxCapacity is the largest ring. Doubling it would overflow int.
	maxCapacity = 1 << (bits.UintSize - 2)

	// cacheLine is the padding that keeps top and bottom apart. 64 bytes is
	// the line size of amd64 and most arm64 parts; the padding is a
	// performance measure only.
	cacheLine = 64
)

// Deque is a Chase-Lev work-stealing deque of *T. One goroutine, the owner,
// calls Push and Pop; any goroutine may call Steal and Len.
// The zero value is an empty deque with the default initial capacity (ring
// allocated lazily by the first Push).
//
// The owner is a single goroutine at a time: Push, Pop and Init must never
// run concurrently with each other (ownership may be handed to another
// goroutine through any happens-before edge, such as a channel send). The
// thieves are all the other goroutines, in any number; Steal and Len may run
// concurrently with everything, including each other.
//
// Items live at indices [top, bottom). The owner works at the bottom end:
// Push fills index bottom and then advances bottom; Pop first retreats
// bottom to b and then owns index b outright if top is still below b, or
// races the thieves for it with a compare-and-swap on top if b == top (the
// last item). Thieves work at the top end: a thief owns the item at index t
// once its compare-and-swap moves top from t to t+1. Only the owner writes
// bottom and the ring pointer; only compare-and-swaps write top, so top
// never decreases.
//
// A Deque must not be copied after first use.
type Deque[T any] struct {
	// top is the index of the oldest item, the next one Steal takes.
	// Written only by CompareAndSwap(t, t+1): by thieves, and by the owner
	// when it pops the last item. It never decreases. Thieves hammer this
	// word, so it has a cache line to itself.
	top atomic.Int64

	_ [cacheLine - 8]byte // keep the thieves' CAS target off bottom's line

	// bottom is the index one past the newest item: the slot Push fills
	// next. Written only by the owner (Push stores b+1 to publish the item
	// at b; Pop stores b-1 to reserve the item at b-1, and may store the old
	// value back). Read by thieves, who own nothing at or above it.
	bottom atomic.Int64

	// ring holds the items; index i lives in ring.slots[i&ring.mask].
	// Written only by the owner: lazily by the first Push of a zero Deque,
	// and by resize, which publishes a new ring after copying the live
	// range into it. Read by thieves, who may go on using a ring they
	// loaded after the owner has replaced it; that is safe because the
	// owner never writes to a ring it has replaced.
	ring atomic.Pointer[ring[T]]

	// floor is the capacity given to New or Init (rounded), or 0 for a zero
	// Deque, meaning defaultCapacity. The ring never shrinks below it.
	// Owner only.
	floor int

	// grown: the ring is larger than the floor, so a Pop may have to shrink
	// it. Pop tests it before calling shrink, which the compiler does not
	// inline and which, with the ring at its floor (nearly always), only
	// returns. Owner only; written by resize.
	grown bool

	// retain: taken items stay in their slots (see Retain). Set before the
	// first Push; a thief reads it only after it has loaded a bottom that a
	// later Push stored, so it sees it set.
	retain bool
}

// ring is a circular array of slots whose length is a power of two.
//
// A slot is nil unless it holds an item, apart from short windows: a slot
// the owner popped or a thief stole keeps its pointer until the taker clears
// it, and a slot copied by resize may hold an item a thief stole during the
// copy until the owner or the thief clears it. (A deque that Retains its
// items clears no slot: there a slot holds its last item until reused.)
// The slots are atomic because
// a thief reads a slot while the owner may be overwriting it (a thief with a
// stale top reads a slot the owner has since reused; its CAS on top then
// fails and it discards what it read, but with a plain slot the read itself
// would be a data race).
type ring[T any] struct {
	mask  int64 // len(slots) - 1
	slots []atomic.Pointer[T]
}

func newRing[T any](n int) *ring[T] {
	return &ring[T]{mask: int64(n - 1), slots: make([]atomic.Pointer[T], n)}
}

// slot returns the slot of index i.
func (r *ring[T]) slot(i int64) *atomic.Pointer[T] {
	return &r.slots[i&r.mask]
}

// New returns an empty deque whose ring starts with capacity slots, rounded
// up to a power of two, at least 2. The ring grows as needed and never
// shrinks below that capacity.
func New[T any](capacity int) *Deque[T] {
	d := new(Deque[T])
	d.Init(capacity)
	return d
}

// Init makes d an empty deque with the given initial capacity, as New does,
// for a Deque embedded in another value. It must be called before d is
// used, by the goroutine that will own d; it does not synchronize with
// thieves, so publish d to them only after Init returns.
func (d *Deque[T]) Init(capacity int) {
	n := roundCapacity(capacity)
	d.floor = n
	d.grown = false
	d.top.Store(0)
	d.bottom.Store(0)
	d.ring.Store(newRing[T](n))
}

// Retain makes d leave a taken item in its slot instead of clearing the
// slot, which saves Pop an atomic store and Steal a compare-and-swap. The
// clearing only lets the garbage collector free items that nobody else
// refers to; a caller whose items are records it keeps alive anyway (a free
// list that recycles them) gains nothing from it. With Retain, the ring may
// keep a taken item reachable until its slot is reused. The owner calls
// Retain before its first Push.
//
// Correctness does not rest on the clearing: a thief or the owner decides
// whether an index is its own by the CAS on top (or, for the owner, by the
// order of its Store of bottom and Load of top), never by what a slot
// holds; a slot read is a guess until then. Only the internal-error checks
// for a pointer pushed twice (see Push) see less.
func (d *Deque[T]) Retain() { d.retain = true }

// roundCapacity rounds c up to a power of two in [minCapacity, maxCapacity].
func roundCapacity(c int) int {
	if c <= minCapacity {
		return minCapacity
	}
	if c > maxCapacity {
		panic("deque: capacity too large")
	}
	return 1 << bits.Len(uint(c-1))
}

// minCap returns the capacity below which d never shrinks.
func (d *Deque[T]) minCap() int {
	if d.floor == 0 {
		return defaultCapacity
	}
	return d.floor
}

// Push adds x at the bottom of d and reports whether d looked empty just
// before, by the same reading of top and bottom as Len's (a poster that
// announces the item wants to know). Only the owner may call Push.
//
// x must not be nil: Push(nil) panics with "deque: Push(nil)", because nil
// marks an empty slot and Pop and Steal return nil for "nothing".
//
// x must not already be in d: a pointer may be pushed again only after the
// Pop or Steal that took it has returned. (A thief clears the slot it stole
// from with CompareAndSwap(x, nil) after it has won x. If x could be in d
// twice, the owner might reuse that slot for the second x before the thief
// clears it, and the thief would erase the second x.)
func (d *Deque[T]) Push(x *T) (wasEmpty bool) {
	if x == nil {
		panic("deque: Push(nil)")
	}
	// Only the owner writes bottom, so this load just reads our own value.
	b := d.bottom.Load()
	// A stale (smaller) top only makes d look fuller than it is, which at
	// worst grows the ring early; top never decreases, so we can never
	// think there is room when there is none. Seeing t here also means
	// that every thief that moved top up to t finished reading its slot
	// before our Store below can reuse that slot: a thief reads the slot
	// before its CAS on top.
	t := d.top.Load()
	r := d.ring.Load() // our own pointer; only the owner writes it
	if r == nil {
		// Zero Deque: allocate the ring now. Publishing it before the
		// Store of bottom below is what lets a thief that sees bottom
		// > top trust that the ring pointer is non-nil.
		r = newRing[T](d.minCap())
		d.ring.Store(r)
	}
	if b-t >= int64(len(r.slots)) {
		// Full: index b would land on the slot of the live index
		// b-len. Grow.
		if len(r.slots) >= maxCapacity {
			panic("deque: too many items")
		}
		r = d.resize(r, b, 2*len(r.slots))
	}
	// The slot holds nil or an item already taken (index b-len, below
	// top), so we may overwrite it without a CAS. A thief that took that
	// old item may still be about to clear the slot with
	// CompareAndSwap(old, nil); that CAS now fails because the slot holds
	// x, which is not old (x is not in d twice, see above).
	//
	// In Retain mode no thief writes a slot, so we are its only writer,
	// and the store need not be sequentially consistent: the owner's store
	// (a plain one, atomic.StoreOwnedPointer), which the Store of bottom
	// below publishes. A thief loads the slot only after a load of bottom
	// that saw index b published, so it sees x (or a later value, and then
	// its CAS on top fails), as it would after an atomic Store. Nothing is
	// loaded after this store that depends on a thief seeing it first. In
	// the other mode a thief's CAS may race with this store for the slot,
	// so it stays atomic there.
	//
	// In Retain mode the slot may hold x already: an owner that recycles
	// its items newest first (the scheduler's free list) pushes the item
	// it just popped back into the slot it popped it from. Then we store
	// nothing, as the value would not change: a pointer store costs the
	// collector's write barrier while it marks, which hands the old value
	// and the new one to the collector to look up. The load reads our own
	// last store, as only we write the slot.
	if d.retain {
		if s := r.slot(b); s.Load() != x {
			atomic.StoreOwnedPointer(s, x)
		}
	} else {
		r.slot(b).Store(x)
	}
	// Publish x: this Store of bottom comes after the Store of the slot,
	// so a thief that loads bottom > b (and then the ring and the slot)
	// sees x, or a later value if the slot has since been reused, in which
	// case top has moved past b and the thief's CAS fails. (The paper's
	// release fence before this store.)
	d.bottom.Store(b + 1)
	return b <= t
}

// Pop removes and returns the item at the bottom of d, the one pushed most
// recently, or nil if d is empty. Only the owner may call Pop.
//
// Pop returns nil also when it loses the race for the last item to a
// thief; d is empty afterwards either way.
func (d *Deque[T]) Pop() *T {
	b := d.bottom.Load() - 1
	// Reserve index b: a thief that loads bottom from now on leaves index
	// b alone. A thief that loaded the old bottom may still go for it, but
	// only if index b is also the top, and then we race it with a CAS on
	// top (see below).
	//
	// This Store of bottom must come before the Load of top. Sequential
	// consistency orders them (the paper needs a seq_cst fence between
	// the two). If we loaded top first, the way a plain reading of the
	// algorithm suggests:
	//
	//	t := d.top.Load()
	//	d.bottom.Store(b)
	//	if t < b { /* take index b without a CAS */ }
	//
	// then with two items, at b-1 and b, we could load t = b-1; two thieves
	// that load the old bottom b+1 could then steal index b-1 and index b,
	// and after our Store we would take index b as well, without a CAS,
	// because our stale t said another item stood between us and the
	// thieves. With the Store first, a thief that wins index b must have
	// loaded top == b after we loaded top < b, and so its load of bottom,
	// which follows its load of top, sees our b (or a later bottom of a
	// later Push, which has put a new item at b); it cannot take ours.
	d.bottom.Store(b)
	t := d.top.Load()
	if t > b {
		// Empty (t == b+1): undo the reservation, with the owner's store
		// (see restoreBottom).
		d.restoreBottom(b + 1)
		if d.grown {
			d.shrink(b+1, t)
		}
		return nil
	}
	r := d.ring.Load() // our own pointer; only the owner writes it
	s := r.slot(b)
	if t < b {
		// At least one item (at t) lies between the thieves and index b,
		// and by the argument above no thief can take index b, so it is
		// ours without a CAS.
		x := s.Load()
		if x == nil {
			panic(errEmptySlot)
		}
		// Clear the slot so the ring does not keep x alive. A plain Store
		// is fine: thieves write slots only to clear an item they won,
		// and the only item a thief can have won in this slot is the one
		// of index b-len, which is not x.
		if !d.retain {
			s.Store(nil)
		}
		if d.grown {
			d.shrink(b, t)
		}
		return x
	}
	// t == b: this is the last item, and thieves may be trying to take it
	// too. Whoever moves top from t to t+1 wins it; this CAS is ordered
	// with the thieves' CASes on top. Read the slot before the CAS, for
	// once the CAS is lost the winner may clear it. The read may already
	// see nil if a thief won between our Load of top and now; then our CAS
	// fails too.
	x := s.Load()
	won := d.top.CompareAndSwap(t, t+1)
	// Either way index b is taken and top == b+1 now, so restoring bottom
	// to b+1 leaves d empty. (Until this store, thieves see bottom == b ==
	// top-1, which also reads as empty.)
	d.restoreBottom(b + 1)
	if !won {
		// A thief took the item and clears the slot itself.
		return nil
	}
	if x == nil {
		panic(errEmptySlot)
	}
	// Ours; clear the slot. No thief writes it: the losers of the race
	// never write slots, and no other thief can be clearing it (see
	// above).
	if !d.retain {
		s.Store(nil)
	}
	if d.grown {
		d.shrink(b+1, b+1)
	}
	return x
}

// restoreBottom stores b, one more than the reserved index, back into
// bottom once Pop has found d empty or has taken its last item: top == b
// then, and d is empty. The owner's store (atomic.StoreOwned64, plain where
// a word holds 64 bits), not a sequentially consistent one, because no
// one needs to see it soon: until it arrives a thief loads the reserved
// bottom, b-1 == top-1, which reads as empty too, and d is empty. The
// Store of bottom that ends the next Push is sequentially consistent and
// publishes this one with it, so a thief never sees bottom go back.
//
// The reservation itself (the Store of b-1 in Pop) is the trap: it must
// stay sequentially consistent, ordered before Pop's Load of top (see
// Pop), or an owner and a thief could both take the last item.
func (d *Deque[T]) restoreBottom(b int64) { atomic.StoreOwned64(&d.bottom, b) }

// errEmptySlot is the message of the panic raised when Pop or Steal wins an
// index whose slot is nil. That cannot happen unless the contract of Push is
// broken: the only way is a thief clearing a second copy of a pointer that
// was in the deque twice.
const errEmptySlot = "deque: internal error: took an empty slot (was a pointer pushed twice?)"

// Steal removes and returns the item at the top of d, the oldest one. Any
// goroutine may call Steal.
//
// If x is non-nil, the caller now owns it. If x is nil and retry is true,
// Steal lost a race (with another thief, or with the owner popping the last
// item, or it read a slot that had just been reused) and d may still hold
// items: the caller may try again. If x is nil and retry is false, d looked
// empty.
func (d *Deque[T]) Steal() (x *T, retry bool) {
	t, r, x, ok := d.stealRead()
	if !ok {
		return nil, false
	}
	return d.stealClaim(t, r, x)
}

// StealIf is Steal for a thief that wants only some items: it takes the
// oldest item only if keep reports true for it, and otherwise leaves it
// (and everything behind it) where it is, reporting nil and retry false.
// keep may see an item that another thief or the owner is taking at the
// same moment; only the claim decides, exactly as in Steal.
func (d *Deque[T]) StealIf(keep func(*T) bool) (x *T, retry bool) {
	t, r, x, ok := d.stealRead()
	if !ok {
		return nil, false
	}
	if x == nil {
		// The slot was cleared or reused under us: index t was taken.
		return nil, true
	}
	if !keep(x) {
		// x is the oldest item only if index t is still the top: once top
		// has moved past t, the slot may hold a newer item (index t+len
		// of a reused slot, or in Retain mode an old one), and the oldest
		// item, which keep has not seen, may be wanted. Report a lost
		// race then, not "not wanted". (Top never goes back, so top == t
		// now means it was t when we read the slot.)
		if d.top.Load() != t {
			return nil, true
		}
		return nil, false
	}
	return d.stealClaim(t, r, x)
}

// PopIf is Pop for an owner that wants only some items: it pops the newest
// item only if keep reports true for it, and otherwise leaves d unchanged
// and returns nil. Owner only. (An owner with a filter of its own calls
// Newest and Pop itself, as PopIf does, and saves the call of keep.)
func (d *Deque[T]) PopIf(keep func(*T) bool) *T {
	if x := d.Newest(); x == nil || !keep(x) {
		return nil
	}
	return d.Pop()
}

// Newest returns the newest item of d without taking it, or nil if d is
// empty. Owner only: the Pop that follows, with no Push between, returns
// that item, or nil if a thief won it in between.
//
// Only the owner writes bottom and pushes, so the slot of index bottom-1
// holds the newest item x until someone takes it, and thieves can take
// index bottom-1 only when it is also the top, that is, when x is the last
// item. (It returns nil also when a thief has just taken the last item and
// cleared its slot.) Small enough to be inlined into the owner's code.
func (d *Deque[T]) Newest() *T {
	b := d.bottom.Load()
	if d.top.Load() >= b {
		return nil
	}
	return d.ring.Load().slot(b - 1).Load()
}

// stealRead is the first half of Steal: it reads the top index t, and, if
// d does not look empty, the ring r and the item x that slot t of r holds.
// x is only a guess until stealClaim has won index t. (The halves are
// separate so that a test can run the owner between them.)
func (d *Deque[T]) stealRead() (t int64, r *ring[T], x *T, ok bool) {
	t = d.top.Load()
	// The Load of top must come before the Load of bottom. Sequential
	// consistency orders them (the paper needs a seq_cst fence between
	// them). It pairs with Pop's Store-bottom-then-Load-top: either Pop
	// sees our top, or we see Pop's reservation of bottom, so we never
	// both decide that index b is free of competition.
	b := d.bottom.Load()
	if t >= b {
		return 0, nil, nil, false
	}
	// Load the ring after bottom. Push publishes a ring (in resize, or
	// for a zero Deque) before it publishes, via bottom, the items in it,
	// so a ring loaded after seeing bottom > t holds the item at index t.
	// A ring loaded before bottom could be an old one that was replaced
	// before index t was pushed, and its slot would hold garbage.
	r = d.ring.Load()
	// Read the item before claiming it (in stealClaim). Reading after the
	// CAS would be wrong: once top has moved past t the owner may reuse
	// the slot for index t+len, and we would return the owner's new item,
	// which another thief could steal too.
	return t, r, r.slot(t).Load(), true
}

// stealClaim is the second half of Steal: it tries to take index t, whose
// slot in ring r held x when stealRead read it.
func (d *Deque[T]) stealClaim(t int64, r *ring[T], x *T) (*T, bool) {
	// Claim index t. If top is still t, no one else has taken index t and
	// x is its item: the slot of t could be rewritten only for index
	// t+len, which needs top > t first. If the CAS fails, someone took
	// index t (another thief, or the owner popping the last item) and x
	// may be anything, including nil or another index's item.
	if !d.top.CompareAndSwap(t, t+1) {
		return nil, true
	}
	if x == nil {
		panic(errEmptySlot)
	}
	if d.retain {
		return x, false
	}
	// x is ours. Clear the slot so the ring does not keep x alive.
	//
	// Note: a plain
	//
	//	r.slot(t).Store(nil)
	//
	// would be wrong. Our CAS has moved top past t, so the owner may
	// already have wrapped around the ring and pushed a new item y into
	// this very slot (index t+len); a blind Store would erase y and lose
	// it. CompareAndSwap(x, nil) clears the slot only if it still holds x.
	// It cannot erase a new item: the owner's new item is not x, because
	// x is still in our hands, not yet returned to anyone, and Push
	// requires that a pointer not be pushed again before the Steal or Pop
	// that took it has returned.
	r.slot(t).CompareAndSwap(x, nil)
	// If the owner replaced the ring after we loaded it, its copy of the
	// live range may include index t, made before our CAS, and that copy
	// would keep x alive. Clear it the same way, for the same reason. (The
	// owner also clears, after publishing a ring, the copies of items
	// stolen while it was copying; this covers a steal that wins after
	// that clean-up.) Rings replaced in between need no clearing: once
	// the thieves that loaded them have finished, nothing refers to them.
	if cur := d.ring.Load(); cur != r {
		cur.slot(t).CompareAndSwap(x, nil)
	}
	return x, false
}

// Len returns the number of items in d. Any goroutine may call Len; with
// concurrent operations the result is approximate, but it is never
// negative.
func (d *Deque[T]) Len() int {
	// Load bottom first: top can only grow after that, so b-t never
	// exceeds the number of items there were when we loaded bottom. It may
	// be negative while Pop has bottom reserved on an empty deque.
	b := d.bottom.Load()
	t := d.top.Load()
	if n := b - t; n > 0 {
		return int(n)
	}
	return 0
}

// Ends returns d's top and bottom indices: d holds bottom-top items (when
// that is positive), a take at the top (a steal, or a Pop that won the last
// item) moves top up, and the owner's pushes and pops move bottom. Any
// goroutine may call it, to tell whether anybody has used d since an
// earlier call.
func (d *Deque[T]) Ends() (top, bottom int64) {
	bottom = d.bottom.Load()
	return d.top.Load(), bottom
}

// shrink halves the ring if, with b the current bottom and t a top loaded
// by the caller, fewer than a quarter of its slots are in use and it is
// above the floor (Pop calls it only then: grown). A stale t overestimates
// the live count, which only makes shrink more reluctant. Owner only.
func (d *Deque[T]) shrink(b, t int64) {
	r := d.ring.Load() // our own pointer
	if r == nil {
		return
	}
	n := len(r.slots)
	if n <= d.minCap() || b-t >= int64(n/4) {
		return
	}
	d.resize(r, b, n/2)
}

// resize copies the live range of old, which ends below b (the current
// bottom), into a new ring of n slots, publishes the new ring and returns
// it. Owner only; n must be at least the number of items in d.
func (d *Deque[T]) resize(old *ring[T], b int64, n int) *ring[T] {
	// Items below this top are taken and need not be copied. Thieves may
	// move top further while we copy; we clean up after them below.
	t := d.top.Load()
	r := newRing[T](n)
	for i := t; i < b; i++ {
		// A thief writes a slot only to clear an item it has won, so
		// each value read here is the item of index i, or nil if a
		// thief has won index i since we loaded t.
		r.slot(i).Store(old.slot(i).Load())
	}
	if testHookResize != nil {
		testHookResize()
	}
	// Publish the new ring. This Store must come before the Store of
	// bottom that publishes the next item (in Push), so that a thief that
	// sees that item's index below bottom also sees a ring holding it.
	// From here on the owner never writes to old again: thieves that
	// loaded old keep reading the values it had, which are the right ones
	// for every index they can still win.
	d.ring.Store(r)
	d.grown = n > d.minCap()
	// Thieves that won indices in [t, t2) during the copy took items that
	// the copy may have put into r; clear those copies so r does not keep
	// them alive. The Load of top must come after the Store of the ring:
	// a thief that wins an index at or above t2 wins it after this Load,
	// so it sees r when it loads the ring after its CAS, and clears the
	// copy itself. A plain Store is fine here, unlike in Steal: only the
	// owner puts items into slots, and we have put none into r but these
	// copies, which are all at distinct slots because n >= b-t.
	t2 := d.top.Load()
	for i := t; i < t2 && i < b; i++ {
		r.slot(i).Store(nil)
	}
	return r
}

// testHookResize, if not nil, is called by resize after it has copied the
// live range and before it publishes the new ring. Tests set it to steal in
// that window.
var testHookResize func()
