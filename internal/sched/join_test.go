package sched

import (
	"sync"
	"testing"

	"github.com/go-steal/steal/internal/gid"
	"github.com/go-steal/steal/internal/testkit"
)

// Helping the thieves (join.go): which tasks a Wait runs besides its own
// group's, on a worker and outside the pool. The tests run with the
// monitor off (withRescueOff), so that no worker is handed on by it: the
// only goroutines that can take a task are those the test arranges, and a
// task that only the rule would let a Wait run is run by that Wait or
// nobody.

// runWaiter runs wait as a Wait's caller on a worker ("worker": in a task
// of a group of its own, started from outside and waited for once wait
// has returned) or on the test's goroutine ("outside").
func runWaiter(t *testing.T, where string, wait func()) {
	t.Helper()
	switch where {
	case "outside":
		wait()
	case "worker":
		// The test goroutine does not Wait for top until the task is done:
		// its Wait could take the task back and run it outside, or help
		// with the test's tasks itself.
		var top Group
		done := make(chan struct{})
		top.Go(func() error {
			if current() == nil {
				t.Errorf("the waiting task runs outside the pool")
			}
			wait()
			close(done)
			return nil
		})
		<-done
		wantNil(t, "top.Wait()", top.Wait())
	}
}

// TestWaitRunsNoTaskItDoesNotWaitFor: a task of g, taken by another worker
// (the thief), queues a task of another group, which it never waits for,
// and which waits for what the goroutine of g's Wait does after the Wait
// returns, as
//
//	g.Go(func() error { other.Go(func() error { <-ch; return nil }); ...; return nil })
//	g.Wait()
//	close(ch)
//
// does. errgroup returns from g.Wait; so must we: g's Wait finds nothing of
// g's to run (the thief runs it, until the other task has started) and the
// other task outside every chain of joins leading to g, so it waits, and
// another goroutine runs the other task. A Wait that ran it would never
// return: a deadlock, which the hang guard reports.
//
// On a worker, with the monitor off at GOMAXPROCS 2: the Wait's worker and
// the thief are all the pool may run until the Wait blocks and a worker
// starts in its place, which is the one to run the other task. Outside the
// pool, at GOMAXPROCS 1, the thief is the only worker, and blocks in its
// task: only the monitor's hand-off starts another (a Wait outside the
// pool gives no place up), long after the Wait has looked at the thief's
// deque.
func TestWaitRunsNoTaskItDoesNotWaitFor(t *testing.T) {
	needGID(t)
	body := func(t *testing.T, where string) {
		runWaiter(t, where, func() {
			var g, other Group
			ch := make(chan struct{})
			queued, started := make(chan struct{}), make(chan struct{})
			me := gid.Current()
			var ranOn int64
			g.Go(func() error {
				other.Go(func() error {
					ranOn = gid.Current()
					close(started)
					<-ch
					return nil
				})
				close(queued)
				<-started // the thief's task goes on until the other task runs
				return nil
			})
			<-queued
			wantNil(t, "g.Wait()", g.Wait())
			close(ch)
			wantNil(t, "other.Wait()", other.Wait())
			if ranOn == me {
				t.Errorf("g's Wait ran a task of a group that no task of g waits for")
			}
		})
	}
	t.Run("worker", func(t *testing.T) {
		withRescueOff(t, 2, false, func() { body(t, "worker") })
	})
	t.Run("outside", func(t *testing.T) {
		testkit.SetProcs(t, 1)
		guardPool(t, func() {
			checkRetired(t)
			body(t, "outside")
		})
	})
}

// TestWaitHelpsAlongTheChain: a task T1 of g, taken by worker X, waits for
// its group h1; h1's task T2, taken by worker Y, waits for its group h2,
// whose oldest task U1 is queued in Y's deque. X runs another task of h1
// and Y another of h2, both waiting until U1 has run, so neither looks for
// work, and no other worker may start (GOMAXPROCS 3, and no monitor).
// g's Wait, in a task on the third worker, must run U1 itself, two links
// down the chain (h2 joined inside a task of h1, h1 inside a task of g).
// A Wait that did not follow the chain would block, and the worker
// started in its place would run U1: a failure, U1 must run on the Wait's
// goroutine.
func TestWaitHelpsAlongTheChain(t *testing.T) {
	needGID(t)
	withRescueOff(t, 3, false, func() {
		runWaiter(t, "worker", func() {
			var g, h1, h2 Group
			xIn, ready, u1Ran := make(chan struct{}), make(chan struct{}), make(chan struct{})
			var u1On int64
			var once sync.Once
			g.Go(func() error { // T1, on X
				h1.Go(func() error { // T2, on Y
					h2.Go(func() error { // U1: the oldest in Y's deque
						u1On = gid.Current()
						close(u1Ran)
						return nil
					})
					h2.Go(func() error { // run by Y's Wait for h2: both joins are recorded
						<-xIn
						once.Do(func() { close(ready) })
						<-u1Ran
						return nil
					})
					return h2.Wait()
				})
				h1.Go(func() error { // run by X's Wait for h1
					close(xIn)
					<-u1Ran
					return nil
				})
				return h1.Wait()
			})
			<-ready
			me := gid.Current()
			wantNil(t, "g.Wait()", g.Wait())
			if u1On != me {
				t.Errorf("the task two joins down the chain ran on goroutine %d, not on the goroutine of g's Wait (%d)", u1On, me)
			}
		})
	})
}

// TestJoinRecords: what enterJoin records, how long it lasts (until the
// group starts again from no active task: starting), and what joinedFrom
// follows.
func TestJoinRecords(t *testing.T) {
	var a, b, c, d Group
	a.enterJoin(nil)
	a.enterJoin(&a)
	if a.awaitedIn.Load() != nil {
		t.Fatalf("a Wait outside any task, or inside a task of its own group, recorded a join")
	}
	b.enterJoin(&a)
	c.enterJoin(&b)
	if b.awaitedIn.Load() != &a || c.awaitedIn.Load() != &b {
		t.Fatalf("a Wait inside a task recorded no join")
	}
	if !joinedFrom(&c, &a) || !joinedFrom(&c, &b) || !joinedFrom(&b, &a) || !joinedFrom(&a, &a) {
		t.Errorf("the chain c → b → a is not followed")
	}
	if joinedFrom(&a, &b) || joinedFrom(&d, &a) || joinedFrom(&c, &d) {
		t.Errorf("a chain is followed the wrong way, or where there is none")
	}
	// Two Waits for e at once, inside tasks of b and of d: the record is
	// either's (enterJoin).
	var e Group
	e.enterJoin(&b)
	e.enterJoin(&d)
	if r := e.awaitedIn.Load(); r != &b && r != &d {
		t.Errorf("two Waits for e, inside tasks of b and d, left the record %p, neither's (b %p, d %p)", r, &b, &d)
	}
	// c's Wait has returned (c has no active task): its record stays
	// until c starts again, and goes before c's first new task is queued,
	// whichever way it is given.
	for _, give := range []struct {
		name string
		f    func(g *Group)
	}{
		{"Go", func(g *Group) { g.Go(func() error { return nil }) }},
		{"TryGo", func(g *Group) { g.TryGo(func() error { return nil }) }},
		{"Go under a limit", func(g *Group) { g.SetLimit(1); g.Go(func() error { return nil }) }},
	} {
		var h Group
		h.enterJoin(&a)
		give.f(&h)
		if joinedFrom(&h, &a) {
			t.Errorf("the record of h's last Wait outlived h's start by %s", give.name)
		}
		wantNil(t, "h.Wait()", h.Wait())
	}
	var h Group
	hold := make(chan struct{})
	h.Go(func() error { <-hold; return nil }) // active until the second Go is made
	h.enterJoin(&a)                           // a Wait in progress
	h.Go(func() error { return nil })
	if !joinedFrom(&h, &a) {
		t.Errorf("a Go while h had active tasks took the record of the Wait in progress")
	}
	close(hold)
	wantNil(t, "h.Wait()", h.Wait())
	// A cycle (two tasks each waiting for the other's group: a deadlock
	// under errgroup as well) ends the walk at its bound.
	var x, y Group
	x.enterJoin(&y)
	y.enterJoin(&x)
	if joinedFrom(&x, &d) {
		t.Errorf("a chain through a cycle reached a group outside it")
	}
	// A chain longer than the bound is not followed (joinHops).
	gs := make([]Group, joinHops+2)
	for i := 1; i < len(gs); i++ {
		gs[i].enterJoin(&gs[i-1])
	}
	if !joinedFrom(&gs[joinHops], &gs[0]) {
		t.Errorf("a chain of %d links is not followed", joinHops)
	}
	if joinedFrom(&gs[joinHops+1], &gs[0]) {
		t.Errorf("a chain of %d links is followed", joinHops+1)
	}
}
