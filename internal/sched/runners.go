package sched

import "github.com/go-steal/steal/internal/explore/atomic"

// runners is the set of goroutines that are not workers and are running a
// task of ours now: helpOutside adds the waiting goroutine (see wait.go),
// and Group.Go looks it up to treat a Go made in such a task as a Go
// inside a task. A goroutine that cannot be added (its probe window is
// full) does not run tasks outside the pool; it only parks.
// (Why it is not the workers' table, pool.go: see workers.)
var runners runnerSet

// runnerSet is a set of goroutine ids in a fixed open-addressed table:
// lock-free, and allocation-free. Goroutine ids are never reused, so a slot
// is claimed with a compare-and-swap from 0 and released by storing 0, and
// only the goroutine whose id a slot holds releases it. A lookup probes
// the same window as the insertion did; an id is found while it is there,
// since no other goroutine writes a slot that holds it.
type runnerSet struct {
	slots [runnerSlots]atomic.Int64
}

const (
	runnerSlots  = 1024
	runnerWindow = 8
)

func runnerHome(id int64) int {
	return int(uint64(id) * 0x9E3779B97F4A7C15 >> (64 - 10))
}

// has reports whether id is in the set.
func (s *runnerSet) has(id int64) bool {
	h := runnerHome(id)
	for i := range runnerWindow {
		if s.slots[(h+i)%runnerSlots].Load() == id {
			return true
		}
	}
	return false
}

// add puts id, which must not be in the set, into the set and returns its
// slot, or reports false when its window is full.
func (s *runnerSet) add(id int64) (int, bool) {
	h := runnerHome(id)
	for i := range runnerWindow {
		j := (h + i) % runnerSlots
		if s.slots[j].Load() == 0 && s.slots[j].CompareAndSwap(0, id) {
			return j, true
		}
	}
	return 0, false
}

// remove takes the id in slot j out of the set; only its goroutine may.
func (s *runnerSet) remove(j int) { s.slots[j].Store(0) }
