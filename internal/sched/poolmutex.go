//go:build !explore

package sched

import (
	"runtime"
	"sync/atomic"
)

// poolMutex is Pool.mu: held for a few dozen instructions at a time (a
// slot's transition, a copy of the scan set of at most GOMAXPROCS and a
// few entries). A goroutine that finds it held spins, then yields its
// processor (runtime.Gosched) between tries; it never parks. That matters
// for the status reads (package handoff): a task's Go or Wait may take this lock
// on a worker, and a worker parked on a sync.Mutex reads exactly like one
// blocked on a lock of the user's, which the monitor would hand on; a
// worker that spins or yields reads running or runnable, which never
// counts as blocked. (Under the interleaving explorer it is the explorer's
// mutex: probe_explore.go.)
//
// The CompareAndSwap that takes the lock synchronizes with the Store that
// last released it, so the holder sees the previous holder's writes.
type poolMutex struct{ held atomic.Bool }

// poolMutexSpins is how many tries Lock makes before it yields between
// tries. (Here, not in params.go: the explorer's build has no such lock.)
const poolMutexSpins = 16

func (m *poolMutex) Lock() {
	for i := 0; !m.held.CompareAndSwap(false, true); i++ {
		if i >= poolMutexSpins {
			// Gosched, not goyield: as for the injector's tail lock
			// (queue.lockTail), a holder preempted inside waits on the
			// runtime's global run queue. Its cost, the wake-up of an
			// idle P's thread, comes only after poolMutexSpins failed
			// tries.
			runtime.Gosched()
		}
	}
}

func (m *poolMutex) Unlock() { m.held.Store(false) }
