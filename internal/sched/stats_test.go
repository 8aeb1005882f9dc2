package sched

import (
	"fmt"
	"testing"

	"github.com/go-steal/steal/internal/testkit"
	"github.com/go-steal/steal/internal/workload"
)

// quietStats waits until no worker occupies a slot and returns the stats
// read then.
func quietStats(t *testing.T) Stats {
	t.Helper()
	var s Stats
	testkit.WaitUntil(t, "no worker left", func() bool {
		s = ReadStats()
		return s.Workers == 0
	})
	return s
}

// fibOnWorker runs fibGroup(n) in a task, on a worker (a Wait outside the
// pool runs most of a fork-join on its own goroutine), and returns its
// value; the fork-join has one task more than fibGroup(n).
func fibOnWorker(n int) int {
	var g Group
	var v int
	done := make(chan struct{})
	g.Go(func() error { v = fibGroup(n); close(done); return nil })
	<-done // then Wait, which would otherwise run the task here
	g.Wait()
	return v
}

// allAsleep reports whether the pool has workers and every one of them is
// asleep, which it can only be after its busy spell ended. live is read
// before and after the sleep counters: after a Wait, workers only leave,
// so an unchanged live is the live of the moment the counters were read.
func allAsleep() bool {
	live := global.live.Load()
	c := global.sleep.Load()
	return live > 0 && c.Sleeping() == int(live) && global.live.Load() == live
}

// TestStatsIdleWorkersPublished: a worker publishes its counts when its
// busy spell ends, before it idles, not only when it retires: once every
// worker is asleep (and none has retired yet), Tasks has moved by exactly
// the tasks of the fork-join. A round in which the workers retire before
// all are seen asleep proves nothing and is repeated.
func TestStatsIdleWorkersPublished(t *testing.T) {
	for _, procs := range []int{1, 2} {
		t.Run(fmt.Sprintf("GOMAXPROCS=%d", procs), func(t *testing.T) {
			testkit.SetProcs(t, procs)
			const n = 14
			fib, want := workload.FibExpected(n) // every call of fibGroup but the root is a task
			want++                               // and fibOnWorker's task
			testkit.Guard(t, func() {
				for checked := 0; checked < 5; {
					before := quietStats(t)
					if got := fibOnWorker(n); got != fib {
						t.Fatalf("fib(%d) = %d", n, got)
					}
					var s Stats
					asleep := false
					testkit.WaitUntil(t, "every worker asleep, or none left", func() bool {
						if allAsleep() {
							s, asleep = ReadStats(), true
							return true
						}
						return global.live.Load() == 0
					})
					if !asleep {
						continue // the workers retired before we looked
					}
					if d := s.Tasks - before.Tasks; d != uint64(want) {
						t.Fatalf("with every worker asleep, Tasks moved by %d for %d tasks", d, want)
					}
					checked++
				}
			})
		})
	}
}

// TestStatsRetiredSlotsPublished: a worker publishes all its counts before
// it gives up its slot, including the failed searches of its last idle
// spell: once no worker is left, every slot's published counts are its
// counts. (And workers that idled next to each other have failed
// searches to publish.)
func TestStatsRetiredSlotsPublished(t *testing.T) {
	testkit.SetProcs(t, 4)
	testkit.Guard(t, func() {
		before := quietStats(t)
		fibOnWorker(16)
		if s := quietStats(t); s.FailedSteals == before.FailedSteals {
			t.Errorf("no failed steal counted for fib(16) on up to 4 workers")
		}
		global.mu.Lock() // the last occupant's counts were written before its release
		defer global.mu.Unlock()
		for i, w := range *global.slots.Load() {
			if w.occupied {
				continue // a worker started since: its counts are its own
			}
			pub := slotCounts{w.pub.tasks.Load(), w.pub.steals.Load(), w.pub.failedSteals.Load(), w.pub.localPops.Load()}
			if pub != w.st {
				t.Errorf("slot %d: published %+v, counted %+v", i, pub, w.st)
			}
		}
	})
}

// TestStatsCountRangeSteal: range steals count into Steals and
// FailedSteals, at once from a goroutine outside the pool, and from a
// worker with its other counts.
func TestStatsCountRangeSteal(t *testing.T) {
	needGID(t)
	testkit.Guard(t, func() {
		before := quietStats(t)
		countRangeSteal(true)
		countRangeSteal(false)
		countRangeSteal(false)
		s := ReadStats()
		if d, f := s.Steals-before.Steals, s.FailedSteals-before.FailedSteals; d != 1 || f != 2 {
			t.Fatalf("outside: Steals moved by %d, FailedSteals by %d; want 1 and 2", d, f)
		}
		// On a worker: the task is the only one, taken from the injector,
		// so the only steals are the range steals it counts. The test
		// waits for it to end before it calls Wait, which would otherwise
		// take it back and run it here.
		before = quietStats(t)
		var g Group
		ran := make(chan bool)
		g.Go(func() error {
			countRangeSteal(true)
			countRangeSteal(true)
			countRangeSteal(false)
			ran <- current() != nil
			return nil
		})
		if !<-ran {
			t.Fatal("the task ran outside the pool")
		}
		g.Wait()
		s = quietStats(t)
		if d, f := s.Steals-before.Steals, s.FailedSteals-before.FailedSteals; d != 2 || f < 1 {
			t.Fatalf("on a worker: Steals moved by %d, FailedSteals by %d; want 2 and at least 1", d, f)
		}
	})
}
