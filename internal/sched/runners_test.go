package sched

import (
	"sync"
	"testing"

	"github.com/go-steal/steal/internal/testkit"
)

// runnerSet: the set of goroutines outside the pool that run tasks.

// idsWithHome returns n goroutine ids (positive, as real ids are) whose
// home slot in a runnerSet is home.
func idsWithHome(home, n int) []int64 {
	var ids []int64
	for id := int64(1); len(ids) < n; id++ {
		if runnerHome(id) == home {
			ids = append(ids, id)
		}
	}
	return ids
}

// TestRunnerSet: add, has and remove; an id is found wherever in its
// window it landed, and not after its removal; a full window reports false
// and leaves the set as it was.
func TestRunnerSet(t *testing.T) {
	var s runnerSet
	if s.has(42) {
		t.Fatal("an empty set has 42")
	}
	j, ok := s.add(42)
	if !ok || !s.has(42) || s.slots[j].Load() != 42 {
		t.Fatalf("add(42) = %d, %v; has(42) = %v", j, ok, s.has(42))
	}
	if s.has(43) {
		t.Fatal("the set has 43, which was never added")
	}
	s.remove(j)
	if s.has(42) {
		t.Fatal("has(42) after remove")
	}

	// Fill one window with ids of the same home; then the next id of that
	// home finds no slot.
	const home = 1020 // near the end: the window wraps around
	ids := idsWithHome(home, runnerWindow+1)
	slots := make([]int, runnerWindow)
	for i, id := range ids[:runnerWindow] {
		j, ok := s.add(id)
		if !ok {
			t.Fatalf("add of id %d, number %d of its home, failed", id, i+1)
		}
		if want := (home + i) % runnerSlots; j != want {
			t.Fatalf("id %d went to slot %d, want %d (the first free one of its window)", id, j, want)
		}
		slots[i] = j
	}
	if j, ok := s.add(ids[runnerWindow]); ok {
		t.Fatalf("add into a full window succeeded, at slot %d", j)
	}
	if s.has(ids[runnerWindow]) {
		t.Fatal("an id that could not be added is in the set")
	}
	for _, id := range ids[:runnerWindow] {
		if !s.has(id) {
			t.Fatalf("id %d lost after a failed add", id)
		}
	}
	// Freeing a slot in the middle makes room again, and only there.
	s.remove(slots[3])
	if s.has(ids[3]) {
		t.Fatal("has after remove")
	}
	j, ok = s.add(ids[runnerWindow])
	if !ok || j != slots[3] {
		t.Fatalf("after a remove, add = %d, %v; want slot %d", j, ok, slots[3])
	}
	for i, id := range ids {
		if want := i != 3; s.has(id) != want {
			t.Fatalf("has(%d) = %v, want %v", id, s.has(id), want)
		}
	}
}

// TestRunnerSetConcurrent: goroutines add distinct ids at once, many of
// them of the same few homes: no two get the same slot, each finds its own
// id, and an add fails only when its window is really full.
func TestRunnerSetConcurrent(t *testing.T) {
	rounds := testkit.ScaleDown(200, 40)
	testkit.Guard(t, func() {
		var s runnerSet
		for round := range rounds {
			// 3 homes close together, 6 ids each: 18 ids for windows that
			// overlap, so some adds must fail and the rest must not collide.
			var ids []int64
			for _, home := range []int{100, 102, 105} {
				ids = append(ids, idsWithHome(home, 6)...)
			}
			got := make([]int, len(ids))
			okd := make([]bool, len(ids))
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i, id := range ids {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					got[i], okd[i] = s.add(id)
				}()
			}
			close(start)
			wg.Wait()
			owner := map[int]int64{}
			added := 0
			for i, id := range ids {
				if !okd[i] {
					continue
				}
				added++
				if prev, dup := owner[got[i]]; dup {
					t.Fatalf("round %d: ids %d and %d both got slot %d", round, prev, id, got[i])
				}
				owner[got[i]] = id
				if !s.has(id) || s.slots[got[i]].Load() != id {
					t.Fatalf("round %d: id %d added at slot %d but not found there", round, id, got[i])
				}
			}
			// An add fails only when every slot of its window is taken
			// (slots are not freed during the adds, so "taken when it
			// looked" means "taken at the end").
			for i, id := range ids {
				if okd[i] {
					continue
				}
				h := runnerHome(id)
				for k := range runnerWindow {
					if v := s.slots[(h+k)%runnerSlots].Load(); v == 0 {
						t.Fatalf("round %d: add of id %d failed with slot %d of its window free", round, id, (h+k)%runnerSlots)
					}
				}
			}
			if added == 0 {
				t.Fatalf("round %d: no add succeeded", round)
			}
			for i := range ids {
				if okd[i] {
					s.remove(got[i])
				}
			}
			for _, id := range ids {
				if s.has(id) {
					t.Fatalf("round %d: id %d still in the set after its removal", round, id)
				}
			}
		}
	})
}
