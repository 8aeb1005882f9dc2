//go:build linux && (amd64 || arm64 || 386 || arm)

package gstatus

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-steal/steal/internal/testkit"
)

// TestReusedGReadsUnknown takes the Handles of 2,000 goroutines, lets them
// exit, and starts 2,000 new goroutines, which the runtime gives the freed
// g records, and which park. Every old Handle must read Unknown throughout,
// while the new goroutines start and once they are parked: never a new
// goroutine's status. The new Handles read Blocked.
func TestReusedGReadsUnknown(t *testing.T) {
	requireOn(t)
	const n = 2000
	testkit.Guard(t, func() {
		// The old goroutines: each takes its Handle and exits.
		old := make([]Handle, n)
		var wg sync.WaitGroup
		for i := range old {
			wg.Go(func() { old[i] = Self() })
		}
		wg.Wait()
		testkit.WaitUntil(t, "every exited goroutine reads Unknown", func() bool {
			for _, h := range old {
				if h.Read() != Unknown {
					return false
				}
			}
			return true
		})

		// A reader reads the old Handles over and over while the new
		// goroutines start.
		var stop atomic.Bool
		var wrong, reads atomic.Int64
		var rwg sync.WaitGroup
		rwg.Go(func() {
			for !stop.Load() {
				for _, h := range old {
					if s := h.Read(); s != Unknown {
						wrong.Add(1)
					}
					reads.Add(1)
				}
			}
		})

		release := make(chan struct{})
		handles := make(chan Handle, n)
		var nwg sync.WaitGroup
		for range n {
			nwg.Go(func() {
				handles <- Self()
				<-release
			})
		}
		fresh := make([]Handle, 0, n)
		for range n {
			fresh = append(fresh, <-handles)
		}
		testkit.WaitUntil(t, "every new goroutine reads Blocked", func() bool {
			for _, h := range fresh {
				if h.Read() != Blocked {
					return false
				}
			}
			return true
		})
		// Once more with every new goroutine parked.
		for _, h := range old {
			if s := h.Read(); s != Unknown {
				t.Errorf("an old Handle reads %v with its g reused", s)
			}
		}
		stop.Store(true)
		rwg.Wait()
		close(release)
		nwg.Wait()

		if w := wrong.Load(); w != 0 {
			t.Errorf("%d of %d reads of old Handles were not Unknown", w, reads.Load())
		}
		oldG := make(map[uintptr]bool, n)
		for _, h := range old {
			oldG[uintptr(h.g)] = true
		}
		reused := 0
		for _, h := range fresh {
			if oldG[uintptr(h.g)] {
				reused++
			}
		}
		// Without reuse, this test would show nothing.
		if reused == 0 {
			t.Fatal("no new goroutine got the g of an old one")
		}
		t.Logf("%d of %d g records reused; %d reads of old Handles", reused, n, reads.Load())
	})
}
