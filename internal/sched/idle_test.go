package sched

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-steal/steal/internal/testkit"
	"github.com/go-steal/steal/internal/workload"
)

// What an idle pool costs, counted rather than timed: with the monitor and
// the linger off (withRescueOff), a worker that never stops searching, or
// a wake-up for nothing, shows in the counters or as a hang.

// TestIdlePoolQuiet: after a fork-join and a burst of tasks from outside,
// every worker goes to sleep (a worker that searched for ever would keep
// this from happening, and the guard would report the hang), and then,
// over a stretch of time with nothing queued, nothing in the pool moves:
// no search, no sleep, no wake-up, no task.
func TestIdlePoolQuiet(t *testing.T) {
	for _, procs := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			withRescueOff(t, procs, false, func() {
				startWorkers(t, procs)
				if got, want := fibGroup(16), fibPlain(16); got != want {
					t.Fatalf("fib(16) = %d, want %d", got, want)
				}
				var g Group
				for range 1000 {
					g.Go(func() error { workload.Sink.Add(workload.Spin(1, 10)); return nil })
				}
				wantNil(t, "Wait()", g.Wait())
				testkit.WaitUntil(t, "every worker asleep", allAsleep)
				before := ReadStats()
				time.Sleep(20 * time.Millisecond) // a stretch of idleness, not a bound
				if after := ReadStats(); after != before {
					t.Fatalf("the idle pool moved:\nbefore %+v\nafter  %+v", before, after)
				}
				if !allAsleep() {
					t.Fatalf("a worker woke with nothing queued: counters %v", global.sleep.Load())
				}
			})
		})
	}
}

// TestIdleWokenOncePerTask: every worker sleeps; a task queued from outside,
// whose submitter waits for it on a channel (not in Wait, which could run
// it itself), wakes exactly one worker, which runs it and sleeps again:
// one wake-up and one sleep per task. A worker that, on finding the task,
// woke another for nothing would make it two.
func TestIdleWokenOncePerTask(t *testing.T) {
	rounds := testkit.ScaleDown(20, 5)
	for _, procs := range []int{2, 4} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			withRescueOff(t, procs, false, func() {
				startWorkers(t, procs)
				for i := range rounds {
					testkit.WaitUntil(t, "every worker asleep", allAsleep)
					before := global.sleep.Tally()
					var g Group
					done := make(chan struct{})
					g.Go(func() error { close(done); return nil })
					<-done
					wantNil(t, "Wait()", g.Wait())
					testkit.WaitUntil(t, "every worker asleep again", allAsleep)
					after := global.sleep.Tally()
					if w, s := after.Wakes-before.Wakes, after.Sleeps-before.Sleeps; w != 1 || s != 1 {
						t.Fatalf("round %d: one task woke %d workers and they slept %d times; want 1 and 1", i, w, s)
					}
				}
			})
		})
	}
}
