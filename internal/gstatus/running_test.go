//go:build linux && (amd64 || arm64 || 386 || arm)

package gstatus

import (
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-steal/steal/internal/testkit"
)

// spinners starts n goroutines that spin on the CPU until the returned
// stop is called (stop waits until they have returned), and returns their
// Handles. The collector is turned off meanwhile: stopping a goroutine to
// scan its stack parks it for a moment, which Read rightly reports as
// Waiting, and these tests want to see only the scheduler's doing.
func spinners(t *testing.T, n int) (hs []Handle, stop func()) {
	t.Helper()
	gc := debug.SetGCPercent(-1)
	var done atomic.Bool
	var wg sync.WaitGroup
	handles := make(chan Handle, n)
	for range n {
		wg.Go(func() {
			handles <- Self()
			for !done.Load() {
			}
		})
	}
	for range n {
		hs = append(hs, <-handles)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			done.Store(true)
			wg.Wait()
			debug.SetGCPercent(gc)
		})
	}
	t.Cleanup(stop)
	return hs, stop
}

// TestSpinningNeverReadsParked reads a goroutine spinning on the CPU many
// times: it must read Running or Runnable, never anything else.
func TestSpinningNeverReadsParked(t *testing.T) {
	requireOn(t)
	hs, stop := spinners(t, 1)
	h := hs[0]
	seen := map[Status]int{}
	for range testkit.ScaleDown(1_000_000, 100_000) {
		seen[h.Read()]++
	}
	stop()
	for s, n := range seen {
		if s != Running && s != Runnable {
			t.Errorf("a spinning goroutine read %v %d times", s, n)
		}
	}
	t.Logf("reads: %v", seen)
}

// TestSpinningReadsRunnable runs four spinning goroutines on two
// processors, so that at any time two of them wait for a CPU: over many
// reads, one of them must read Runnable, and none of them as parked.
func TestSpinningReadsRunnable(t *testing.T) {
	requireOn(t)
	testkit.SetProcs(t, 2)
	hs, stop := spinners(t, 4)
	seen := map[Status]int{}
	rounds := testkit.ScaleDown(20, 5)
	testkit.WaitUntil(t, "a spinning goroutine reads Runnable", func() bool {
		for range 1000 {
			for _, h := range hs {
				seen[h.Read()]++
			}
		}
		rounds--
		return rounds <= 0 && seen[Runnable] > 0
	})
	stop()
	for s, n := range seen {
		if s != Running && s != Runnable {
			t.Errorf("a spinning goroutine read %v %d times", s, n)
		}
	}
	t.Logf("reads: %v", seen)
}

// sink keeps the garbage of TestCollectorWaitIsNotBlocked reachable
// while the collector marks it.
var sink []*[64]byte

// TestCollectorWaitIsNotBlocked reads a goroutine that runs the collector
// again and again (runtime.GC parks it while the collection runs, for
// reasons of the collector's own): it must read Waiting at some point, and
// never Blocked.
func TestCollectorWaitIsNotBlocked(t *testing.T) {
	requireOn(t)
	var done atomic.Bool
	var wg sync.WaitGroup
	handle := make(chan Handle, 1)
	sink = make([]*[64]byte, 1<<16)
	for i := range sink {
		sink[i] = new([64]byte)
	}
	defer func() { sink = nil }()
	wg.Go(func() {
		handle <- Self()
		for !done.Load() {
			runtime.GC()
		}
	})
	defer wg.Wait()
	defer done.Store(true)
	h := <-handle
	seen := map[Status]int{}
	testkit.WaitUntil(t, "a goroutine in runtime.GC reads Waiting", func() bool {
		for range 1000 {
			s := h.Read()
			seen[s]++
			if s == Blocked {
				t.Fatalf("a goroutine in runtime.GC read Blocked; reads so far: %v", seen)
			}
			if s == Waiting && seen[Waiting] >= 100 {
				return true
			}
		}
		return false
	})
	t.Logf("reads: %v", seen)
}
