package sleep

import "github.com/go-steal/steal/internal/explore/atomic"

// Counters is a snapshot of the packed word shared by all workers of a pool:
//
//	bits  0–15  sleeping workers (blocked in Sleep.NoWorkFound)
//	bits 16–31  inactive workers (looking for work or sleeping)
//	bits 32–63  the jobs event counter (JEC)
//
// A sleeping worker is also inactive, so inactive ≥ sleeping always.
// The JEC is even when the last worker to touch it was getting sleepy, and
// odd when the last to touch it was posting a job.
type Counters uint64

const (
	threadBits    = 16
	threadMask    = 1<<threadBits - 1
	sleepingShift = 0
	inactiveShift = threadBits
	jecShift      = 2 * threadBits

	oneSleeping = 1 << sleepingShift
	oneInactive = 1 << inactiveShift
	oneJEC      = 1 << jecShift

	// MaxWorkers is the most workers one Sleep can track.
	MaxWorkers = threadMask
)

// Sleeping reports how many workers are asleep.
func (c Counters) Sleeping() int { return int(c>>sleepingShift) & threadMask }

// Inactive reports how many workers are looking for work or asleep.
func (c Counters) Inactive() int { return int(c>>inactiveShift) & threadMask }

// AwakeIdle reports how many workers are looking for work and not asleep.
func (c Counters) AwakeIdle() int { return c.Inactive() - c.Sleeping() }

// JEC returns the jobs event counter.
func (c Counters) JEC() uint32 { return uint32(c >> jecShift) }

// sleepy reports whether the JEC is even: some worker announced sleepiness
// and no job was posted since.
func (c Counters) sleepy() bool { return c.JEC()&1 == 0 }

// Calm reports whether no worker got sleepy since the last post (the JEC
// is odd) and none sleeps. A post whose load of the counters after its
// push (Sleep.Load) returns calm counters has nothing to do for this
// protocol: NewInternalJobs would change nothing and wake nobody. Small
// enough to be inlined into a poster's fast path.
func (c Counters) Calm() bool { return c&(oneJEC|threadMask<<sleepingShift) == oneJEC }

// counters is the atomic word. Every method is one atomic operation or a
// compare-and-swap loop; each comment says what the operation publishes.
type counters struct {
	_    [64]byte // keep the hot word off the cache line of whatever precedes it
	word atomic.Uint64
	_    [56]byte
}

func (a *counters) load() Counters { return Counters(a.word.Load()) }

// addInactive marks one more worker as looking for work.
func (a *counters) addInactive() { a.word.Add(oneInactive) }

// subInactive marks a looking worker as busy again and returns the counters
// as they were just before, so the caller can see who sleeps.
func (a *counters) subInactive() Counters {
	return Counters(a.word.Add(^uint64(oneInactive-1))) + oneInactive
}

// subSleeping takes one worker off the sleeping count; it stays inactive.
// Called by the waker (who saw it blocked) or by a sleeper that cancels
// its own sleep.
func (a *counters) subSleeping() { a.word.Add(^uint64(oneSleeping - 1)) }

// tryAddSleeping registers one more sleeper, provided the word still holds
// old. Failure means the word changed: a job was posted, or another worker
// went idle, slept or woke; the caller reloads and re-checks the JEC.
func (a *counters) tryAddSleeping(old Counters) bool {
	return a.word.CompareAndSwap(uint64(old), uint64(old+oneSleeping))
}

// bumpJECIf increments the JEC when cond holds for the current value and
// returns the counters after the operation (incremented or not). Posting a
// job uses cond = sleepy (make it odd); announcing sleepiness uses
// cond = !sleepy (make it even). When cond does not hold this is one load.
func (a *counters) bumpJECIf(wantSleepy bool) Counters {
	for {
		old := Counters(a.word.Load())
		if old.sleepy() != wantSleepy {
			return old
		}
		// The JEC occupies the top bits, so the addition wraps around
		// without carrying into the thread counts.
		if a.word.CompareAndSwap(uint64(old), uint64(old+oneJEC)) {
			return old + oneJEC
		}
	}
}
