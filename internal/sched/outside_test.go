package sched

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-steal/steal/internal/gid"
	"go.uber.org/goleak"
)

// ---------------------------------------------------------------------------
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
	rounds := 200
	if testing.Short() || raceEnabled {
		rounds = 40
	}
	guard(t, func() {
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

// ---------------------------------------------------------------------------
// Goroutines outside the pool run their own group's tasks while they wait.

// TestOutsideWaitRunsOwnTasks: a Wait outside the pool takes back its
// group's newest tasks from its own shard of the injector and runs them,
// newest first, while it is in runners; it stops at a task of another
// group, which it does not run. With GOMAXPROCS 1 and an idle pool, the
// worker that the first Go starts does not get the processor before the
// Wait has taken the tasks.
func TestOutsideWaitRunsOwnTasks(t *testing.T) {
	needGID(t)
	setProcs(t, 1)
	guard(t, func() {
		checkRetired(t)
		me := gid.Current()
		var g, h Group
		var mu sync.Mutex
		var order []int
		var notRunner, hHere atomic.Int64
		h.Go(func() error {
			if gid.Current() == me {
				hHere.Add(1)
			}
			return nil
		})
		const k = 5
		for i := range k {
			g.Go(func() error {
				if gid.Current() == me {
					if !runners.has(me) {
						notRunner.Add(1)
					}
					mu.Lock()
					order = append(order, i)
					mu.Unlock()
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			t.Errorf("Wait() = %v", err)
		}
		if hHere.Load() != 0 {
			t.Errorf("g's Wait ran a task of another group")
		}
		if runners.has(me) {
			t.Errorf("the waiting goroutine is still in runners after Wait")
		}
		if n := notRunner.Load(); n != 0 {
			t.Errorf("%d tasks ran on the waiting goroutine while it was not in runners", n)
		}
		mu.Lock()
		got := order
		mu.Unlock()
		if len(got) == 0 {
			t.Errorf("the Wait ran none of its group's tasks")
		}
		for i := 1; i < len(got); i++ {
			if got[i] >= got[i-1] {
				t.Errorf("the Wait ran its tasks in the order %v, want newest first", got)
				break
			}
		}
		t.Logf("the Wait ran tasks %v of %d", got, k)
		if err := h.Wait(); err != nil {
			t.Errorf("h.Wait() = %v", err)
		}
		checkRetired(t)
	})
	goleak.VerifyNone(t)
}

// TestOutsideWaitSkipsOtherGroups: when a task of another group was queued
// after the group's own tasks, in the same shard, a Wait takes back none of
// them (it takes only the newest, and only its group's): it runs no task of
// another group, and the workers run the rest.
func TestOutsideWaitSkipsOtherGroups(t *testing.T) {
	needGID(t)
	setProcs(t, 1)
	guard(t, func() {
		checkRetired(t)
		me := gid.Current()
		var g, h Group
		var gHere, hHere atomic.Int64
		hDone := make(chan struct{})
		for range 3 {
			g.Go(func() error {
				if gid.Current() == me {
					gHere.Add(1)
				}
				return nil
			})
		}
		h.Go(func() error {
			if gid.Current() == me {
				hHere.Add(1)
			}
			close(hDone)
			return nil
		})
		if err := g.Wait(); err != nil {
			t.Errorf("Wait() = %v", err)
		}
		<-hDone // not h.Wait, which may run h's task here
		if n := hHere.Load(); n != 0 {
			t.Errorf("g's Wait ran a task of another group")
		}
		t.Logf("%d of g's 3 tasks ran on the waiting goroutine (taken from a worker's deque)", gHere.Load())
		if err := h.Wait(); err != nil {
			t.Errorf("h.Wait() = %v", err)
		}
		checkRetired(t)
	})
	goleak.VerifyNone(t)
}

// TestOutsideWaitStealsOwnTasks: a Wait outside the pool also takes the
// oldest task of a worker's deque when it is its group's. A task of
// another group pushes the group's tasks on its worker's deque and then
// blocks; the Wait must run them (with GOMAXPROCS 1 the test goroutine gets
// the processor first, before the watchdog could add a worker for them).
func TestOutsideWaitStealsOwnTasks(t *testing.T) {
	needGID(t)
	setProcs(t, 1)
	guard(t, func() {
		checkRetired(t)
		me := gid.Current()
		var g, h Group
		const k = 8
		var here, ran atomic.Int64
		pushed, release := make(chan struct{}), make(chan struct{})
		h.Go(func() error {
			for range k {
				g.Go(func() error {
					if gid.Current() == me {
						here.Add(1)
					}
					ran.Add(1)
					return nil
				})
			}
			close(pushed)
			<-release
			return nil
		})
		<-pushed
		if err := g.Wait(); err != nil {
			t.Errorf("Wait() = %v", err)
		}
		close(release)
		if err := h.Wait(); err != nil {
			t.Errorf("h.Wait() = %v", err)
		}
		if got := ran.Load(); got != k {
			t.Errorf("%d of %d tasks ran", got, k)
		}
		if here.Load() == 0 {
			t.Errorf("the Wait took none of its group's tasks from the deque of the blocked worker")
		}
		t.Logf("%d of %d tasks ran on the waiting goroutine", here.Load(), k)
		checkRetired(t)
	})
	goleak.VerifyNone(t)
}

// TestOutsideNestedGoDoesNotBlock: a task that a goroutine outside the pool
// runs while it waits (in runners) and that calls Go on a full limited
// group follows the rule for Go inside a task: it does not wait for a slot
// (here the slot is held by the very task that calls Go, as in recursion
// under SetLimit, which would deadlock errgroup), it sets the task aside
// until a slot frees, and at most limit tasks of the group execute at once.
func TestOutsideNestedGoDoesNotBlock(t *testing.T) {
	needGID(t)
	for _, where := range []string{"Wait"} {
		t.Run(where, func(t *testing.T) {
			setProcs(t, 1)
			guard(t, func() {
				checkRetired(t)
				me := gid.Current()
				const attempts = 10
				built := 0
				for range attempts {
					var g Group
					g.SetLimit(1)
					var running maxGauge
					var ranHere atomic.Bool
					var children atomic.Int64
					child := func() error {
						running.enter()
						defer running.exit()
						children.Add(1)
						return nil
					}
					parent := func() error {
						running.enter()
						defer running.exit()
						if gid.Current() == me {
							ranHere.Store(true)
						}
						for range 3 {
							g.Go(child) // full: the slot is this task's
						}
						return nil
					}
					g.Go(parent)
					if where == "limited-Go" {
						g.Go(child) // full: runs parent here while it waits
					}
					if err := g.Wait(); err != nil {
						t.Errorf("Wait() = %v", err)
					}
					want := int64(3)
					if where == "limited-Go" {
						want = 4
					}
					if got := children.Load(); got != want {
						t.Errorf("%d child tasks ran, want %d", got, want)
					}
					if hi := running.hi.Load(); hi > 1 {
						t.Errorf("%d tasks of a group limited to 1 executed at once", hi)
					}
					if ranHere.Load() {
						built++
					}
				}
				if built == 0 {
					t.Errorf("in %d attempts the parent task never ran on the test goroutine: the test no longer builds its case", attempts)
				}
				checkRetired(t)
			})
			goleak.VerifyNone(t)
		})
	}
}

// TestTasksRunOnWorkersOrRunners: every task runs either on a worker or on
// a goroutine outside the pool that is in runners (one that waits for the
// task's group, or submits to it), across a mix of group shapes and many
// submitting goroutines.
func TestTasksRunOnWorkersOrRunners(t *testing.T) {
	needGID(t)
	guard(t, func() {
		var bad atomic.Int64
		var wg sync.WaitGroup
		check := func() {
			if current() == nil && !runners.has(gid.Current()) {
				bad.Add(1)
			}
		}
		for s := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 50 {
					var g Group
					if s%2 == 1 {
						g.SetLimit(s)
					}
					for range 10 {
						g.Go(func() error {
							check()
							var n Group
							n.Go(func() error { check(); return nil })
							n.Go(func() error { check(); return nil })
							return n.Wait()
						})
					}
					if err := g.Wait(); err != nil {
						t.Errorf("Wait() = %v", err)
					}
				}
			}()
		}
		wg.Wait()
		if n := bad.Load(); n != 0 {
			t.Errorf("%d tasks ran outside the pool on a goroutine not in runners", n)
		}
		checkRetired(t)
	})
	goleak.VerifyNone(t)
}

// TestOutsideGoOnFullGroupWaitsForSlotOnly: a Go from outside on a full
// limited group waits for a slot, as errgroup's does; it must not make the
// caller wait for anything more. Here one slot is held by a task A that
// ends by itself a moment later, and the other by a task B, still queued,
// that waits for something the caller does only after its Go returns.
// errgroup completes this program (the Go gets A's slot); a Go that runs B
// on the caller's goroutine while it waits for a slot never returns. The
// caller is released after the hang bound, so a failure does not hang the
// test binary.
func TestOutsideGoOnFullGroupWaitsForSlotOnly(t *testing.T) {
	for _, procs := range []int{1, 2} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			setProcs(t, procs)
			guard(t, func() {
				checkRetired(t)
				var g Group
				g.SetLimit(2)
				aStarted, releaseA := make(chan struct{}), make(chan struct{})
				g.Go(func() error { close(aStarted); <-releaseA; return nil })
				<-aStarted
				afterA := time.AfterFunc(10*time.Millisecond, func() { close(releaseA) })
				defer afterA.Stop()
				ch := make(chan struct{})
				var closeCh sync.Once
				returned := make(chan struct{})
				go func() {
					defer close(returned)
					g.Go(func() error { <-ch; return nil }) // B
					g.Go(func() error { return nil })       // full: must wait for A's slot
					closeCh.Do(func() { close(ch) })
				}()
				const bound = 5 * time.Second // a hang bound: errgroup takes about 10 ms
				select {
				case <-returned:
				case <-time.After(bound):
					t.Errorf("a Go on a full limited group did not return within %v although a slot freed after 10 ms; all goroutines:\n%s", bound, allStacks())
					closeCh.Do(func() { close(ch) }) // release the caller
					<-returned
				}
				if err := g.Wait(); err != nil {
					t.Errorf("Wait() = %v", err)
				}
				checkRetired(t)
			})
			goleak.VerifyNone(t)
		})
	}
}
