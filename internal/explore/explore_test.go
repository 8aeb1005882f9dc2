//go:build explore

package explore_test

import (
	"fmt"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/go-steal/steal/internal/explore"
	"github.com/go-steal/steal/internal/explore/atomic"
	"github.com/go-steal/steal/internal/explore/xsync"
	"github.com/go-steal/steal/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(testkit.Settled(m)) }

// failure runs an exploration in a subtest that is expected to fail and
// returns its output; the explorer must find the bug.
func failure(t *testing.T, opts explore.Options, prog func(s *explore.Schedule)) string {
	t.Helper()
	ft := &fakeT{}
	func() {
		defer func() { _ = recover() }()
		explore.Explore(ft, opts, prog)
	}()
	if ft.msg == "" {
		t.Fatal("the exploration found nothing; it should have failed")
	}
	return ft.msg
}

// fakeT stands in for testing.T so that a failing exploration can be
// observed: Fatalf records the message and panics out of Explore.
type fakeT struct {
	testing.TB
	msg string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatal(args ...any) {
	f.msg = fmt.Sprint(args...)
	panic(f)
}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(f)
}

// twoThreads is a program in which two threads each run inc on a shared
// counter; it fails the schedule unless the counter ends at want.
func twoThreads(inc func(n *atomic.Int64), want int64) func(s *explore.Schedule) {
	return func(s *explore.Schedule) {
		var n atomic.Int64
		a := s.Go("a", func() { inc(&n) })
		b := s.Go("b", func() { inc(&n) })
		a.Join()
		b.Join()
		if got := n.Load(); got != want {
			s.Errorf("n = %d after both threads, want %d", got, want)
		}
	}
}

// lostUpdate is a program with a bug: two threads increment a counter by
// a load and a store, and lose an update when they interleave.
var lostUpdate = twoThreads(func(n *atomic.Int64) { n.Store(n.Load() + 1) }, 2)

// An exhaustive search with one preemption finds the lost update.
func TestExhaustiveFindsLostUpdate(t *testing.T) {
	msg := failure(t, explore.Options{Strategy: explore.Exhaustive(1)}, lostUpdate)
	if !strings.Contains(msg, "n = 1 after both threads") {
		t.Fatalf("unexpected failure: %s", msg)
	}
}

// With Add, no schedule loses an update, and the search ends.
func TestExhaustivePassesAtomicAdd(t *testing.T) {
	res := explore.Explore(t, explore.Options{Strategy: explore.Exhaustive(3)},
		twoThreads(func(n *atomic.Int64) { n.Add(1); n.Add(1) }, 4))
	if !res.Exhausted || res.Schedules < 10 {
		t.Fatalf("%v: expected an exhausted search of many schedules", res)
	}
	t.Log(res)
}

// Zero preemptions still switch at blocking points; a bound of 0 explores
// only the schedules without preemption.
func TestExhaustiveCountsSchedules(t *testing.T) {
	count := func(bound int) int {
		res := explore.Explore(t, explore.Options{Strategy: explore.Exhaustive(bound)},
			twoThreads(func(n *atomic.Int64) { n.Add(1); n.Add(1) }, 4))
		return res.Schedules
	}
	c0, c1, c2 := count(0), count(1), count(2)
	if !(c0 < c1 && c1 < c2) {
		t.Fatalf("schedules by bound: %d, %d, %d; want strictly growing", c0, c1, c2)
	}
}

// Two mutexes taken in opposite orders deadlock in some schedule.
func TestFindsDeadlock(t *testing.T) {
	msg := failure(t, explore.Options{Strategy: explore.Exhaustive(2)}, func(s *explore.Schedule) {
		var m1, m2 xsync.Mutex
		var n int // guarded by both
		a := s.Go("a", func() { m1.Lock(); m2.Lock(); n++; m2.Unlock(); m1.Unlock() })
		b := s.Go("b", func() { m2.Lock(); m1.Lock(); n++; m1.Unlock(); m2.Unlock() })
		a.Join()
		b.Join()
	})
	if !strings.Contains(msg, "deadlock") {
		t.Fatalf("unexpected failure: %s", msg)
	}
}

// A mutex makes the load-and-store increment safe.
func TestMutexProtects(t *testing.T) {
	explore.Explore(t, explore.Options{Strategy: explore.Exhaustive(2)}, func(s *explore.Schedule) {
		var mu xsync.Mutex
		twoThreads(func(n *atomic.Int64) { mu.Lock(); n.Store(n.Load() + 1); mu.Unlock() }, 2)(s)
	})
}

// A parked thread that nobody wakes is caught at quiescence even though its
// time limit would end the wait.
func TestQuiescenceCheckBeforeTimeout(t *testing.T) {
	msg := failure(t, explore.Options{Strategy: explore.Exhaustive(1)}, func(s *explore.Schedule) {
		p := xsync.NewParker()
		var job, asleep atomic.Bool
		s.AtQuiescence(func() error {
			if asleep.Load() && job.Load() {
				return fmt.Errorf("sleeping with a job queued")
			}
			return nil
		})
		w := s.Go("worker", func() {
			if job.Load() {
				return
			}
			asleep.Store(true)
			p.ParkFor(1) // bug: the poster never wakes it
			asleep.Store(false)
		})
		job.Store(true)
		w.Join()
	})
	if !strings.Contains(msg, "sleeping with a job queued") {
		t.Fatalf("unexpected failure: %s", msg)
	}
}

// A spin loop that yields ends: the explorer runs the other thread.
func TestYieldLetsOthersRun(t *testing.T) {
	for _, st := range []explore.Strategy{explore.Exhaustive(2), explore.PCT(1, 3), explore.Random(1)} {
		explore.Explore(t, explore.Options{Strategy: st, MaxSchedules: 200}, func(s *explore.Schedule) {
			var flag atomic.Bool
			a := s.Go("spinner", func() {
				for !flag.Load() {
					xsync.Gosched()
				}
			})
			s.Go("setter", func() { flag.Store(true) })
			a.Join()
		})
	}
}

// PCT and Random find the lost update too.
func TestRandomStrategiesFindLostUpdate(t *testing.T) {
	for _, st := range []explore.Strategy{explore.PCT(7, 2), explore.Random(7)} {
		failure(t, explore.Options{Strategy: st, MaxSchedules: 500}, lostUpdate)
	}
}
