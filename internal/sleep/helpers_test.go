package sleep

// Helpers of the package's tests: building and reading the counters word,
// looking into a worker's slot, and the test hooks at the wait points of
// the idle protocol.

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-steal/steal/internal/testkit"
)

// pack builds a Counters value from its three fields.
func pack(jec uint32, inactive, sleeping int) Counters {
	return Counters(jec)<<jecShift | Counters(inactive)<<inactiveShift | Counters(sleeping)<<sleepingShift
}

func (c Counters) String() string {
	return fmt.Sprintf("{jec %#x inactive %d sleeping %d}", c.JEC(), c.Inactive(), c.Sleeping())
}

// setCounters overwrites the counters word. Only for a Sleep no worker uses
// at the moment, or to simulate traffic the test cannot afford to make.
func (s *Sleep) setCounters(c Counters) { s.c.word.Store(uint64(c)) }

// advanceJEC adds k to the JEC as k posts and announcements would, leaving
// the thread counts alone: it stands in for traffic too long to make for
// real (2³² events to wrap the counter around).
func (s *Sleep) advanceJEC(k uint32) { s.c.word.Add(uint64(k) << jecShift) }

func (s *Sleep) slot(i int) *sleeper { return (*s.sleepers.Load())[i] }

// blockedNow reports whether worker i is registered as asleep and nobody has
// woken it yet (its blocked flag). ok is false when its sleep lock is held
// at the moment (the worker or a waker is in its critical section): the
// caller learns nothing and asks again later.
func (s *Sleep) blockedNow(i int) (blocked, ok bool) {
	sl := s.slot(i)
	if !sl.mu.TryLock() {
		return false, false
	}
	defer sl.mu.Unlock()
	return sl.blocked, true
}

// tokens reports how many wake-up tokens wait in worker i's parker.
func (s *Sleep) tokens(i int) int { return s.slot(i).wake.Tokens() }

// forceRelease puts a token into every slot's parker that has room,
// bypassing the protocol. Only for unsticking a worker after a test has
// already failed (a lost wake-up), so that the test can end without leaking
// goroutines.
func (s *Sleep) forceRelease() {
	for _, sl := range *s.sleepers.Load() {
		sl.wake.TryUnpark()
	}
}

// The hooks, by wait point, so that tests can set them in a table.
var hooks = [...]*func(){
	atAnnounced:  &testHookAnnounced,
	atSleep:      &testHookSleep,
	atRegister:   &testHookRegister,
	atRegistered: &testHookRegistered,
	atBlock:      &testHookBlock,
	atWakeLock:   &testHookWakeLock,
}

// window names a wait point of the idle protocol where a test hook runs.
type window int

const (
	atAnnounced  window = iota // after announcing sleepiness, before the last search
	atSleep                    // after the last search, before the sleep lock
	atRegister                 // under the sleep lock, before the JEC check and registration
	atRegistered               // under the sleep lock, right after registering as a sleeper
	atBlock                    // after setting blocked and unlocking, before blocking on the channel
	atWakeLock                 // in a waker, before it takes a sleeper's lock

	nWindows = atWakeLock // the wait points of a worker
	nHooks   = atWakeLock + 1
)

func (w window) String() string {
	return [...]string{"announced", "sleep", "register", "registered", "block", "wakelock"}[w]
}

// underLock reports whether the worker holds its sleep lock at w: an action
// that may wake the worker must then run on another goroutine (the waker
// takes that lock).
func (w window) underLock() bool { return w == atRegister || w == atRegistered }

// setHooks installs f(w) at every hook w until the end of the test.
// Tests must end all their workers before they return (the cleanup clears
// the hooks, and a worker still running would race with it).
func setHooks(t *testing.T, f func(w window)) {
	t.Helper()
	for w := range nHooks {
		if *hooks[w] != nil {
			t.Fatalf("hook %v already set", w)
		}
		*hooks[w] = func() { f(w) }
	}
	t.Cleanup(func() {
		for w := range nHooks {
			*hooks[w] = nil
		}
	})
}

// hangBound is when a test that waits in a loop of its own (rig.run,
// runStress) declares a hang: before testkit's bound, so that it can free
// its workers and report the counters.
func hangBound(t *testing.T) time.Time { return time.Now().Add(testkit.Timeout(t) * 9 / 10) }
