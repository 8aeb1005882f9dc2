package sched

import (
	"bytes"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-steal/steal/internal/testkit"
)

// The hand-over of a limited group's slots, with the outside Go's poll
// switched off (submitPollOff): a Go from outside on a full group parks at
// once, so every slot it gets is handed to it (handSlot) or announced by a
// wake-up (Group.done). A slot that the finisher fails to pass on, to a
// parked Go or to a task set aside by a Go inside a task, is then a hang,
// which the hang guard reports with a goroutine dump, and not a Go that
// its own poll rescues.

// withPollOff runs body at GOMAXPROCS procs under guardPool, with the
// outside Go's poll switched off.
func withPollOff(t *testing.T, procs int, body func()) {
	t.Helper()
	testkit.SetProcs(t, procs)
	t.Cleanup(func() { submitPollOff.Store(false) }) // also after a failure inside body
	guardPool(t, func() {
		submitPollOff.Store(true)
		body()
		submitPollOff.Store(false)
	})
}

// parkedOn counts the goroutines parked on g for bit: registered in g's
// bucket of the wait table.
func parkedOn(g *Group, bit uint64) int {
	b := bucketOf(g)
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, wt := range b.list {
		if wt.g == g && wt.bit == bit {
			n++
		}
	}
	return n
}

// awaitFrame waits until some goroutine's stack holds frame (what says
// who, for the failure).
func awaitFrame(t *testing.T, what, frame string) {
	t.Helper()
	testkit.WaitUntil(t, what, func() bool { return bytes.Contains(testkit.Stacks(), []byte(frame)) })
}

// TestLimitHandOverBatchedDone: Group.done(k) settles k finished tasks at
// once, so it frees k slots: it hands the first to the Go that has waited
// longest (handSlot) and must wake the other parked Gos for the rest,
// whether or not a Wait is parked too. Here limit outside Gos park on a
// full group (the poll is off, so they park at once) and one done settles
// the limit slot holders (stand-ins taken with tryAcquire, whose batch the
// test settles itself: the workers settle a limited group's tasks one at a
// time, where the wake-up matters only in the window that
// TestLimitHandOverParkWhileSlotFrees aims at). The tasks the Gos give
// hold their slots until every Go has returned, so no later finisher hands
// a slot to a Go that done failed to wake: such a Go stays parked, and the
// test hangs.
func TestLimitHandOverBatchedDone(t *testing.T) {
	rounds := testkit.Scale(20, 5)
	for _, procs := range []int{1, 2, 4} {
		for _, limit := range []int{2, 3} {
			t.Run(fmt.Sprintf("procs=%d/limit=%d", procs, limit), func(t *testing.T) {
				withPollOff(t, procs, func() {
					for range rounds {
						batchedDoneWakesParkedGos(t, limit)
					}
				})
			})
		}
	}
}

func batchedDoneWakesParkedGos(t *testing.T, limit int) {
	var g Group
	g.SetLimit(limit)
	for range limit {
		if !g.tryAcquire() {
			t.Fatalf("an empty group of limit %d refused a slot", limit)
		}
	}
	release := make(chan struct{})
	var ran atomic.Int64
	var gos sync.WaitGroup
	for range limit {
		gos.Go(func() {
			g.Go(func() error { <-release; ran.Add(1); return nil })
		})
	}
	testkit.WaitUntil(t, "every outside Go parked for a slot", func() bool { return parkedOn(&g, bitSlot) == limit })
	g.done(int64(limit))
	gos.Wait() // a Go that done neither handed a slot nor woke is parked for ever
	close(release)
	wantNil(t, "Wait()", g.Wait())
	if got := ran.Load(); got != int64(limit) {
		t.Errorf("%d tasks ran, want %d", got, limit)
	}
}

// TestLimitHandOverParkWhileSlotFrees: an outside Go parks while the only
// slot holder of a group of limit 1 ends, on the real paths (a task on a
// worker, Group.Go from the test goroutine), round after round. The
// finisher first looks at the state for the slot bit (to hand its slot to
// a parked Go, handSlot) and then subtracts; a Go that sets the bit and
// registers between the two is not handed the slot, and only the wake-up
// after the subtraction, which done makes because the bit is set, gets it
// out. With no later task to finish, a Go whose wake-up is lost is parked
// for ever, and the test hangs.
//
// The window is a few instructions wide, so the test aims at it: each
// round either the task spins a little before it ends or the test
// goroutine before its Go (by offset), and the next round learns from
// what the task saw as it ended. If the Go had set the bit already, the
// task ends sooner, otherwise later, so that the Go's park and the task's
// end stay close together and now and then land in the window (once in a
// few hundred rounds, on two idle cores). It needs two processors running
// at once: at GOMAXPROCS 1 the task and the Go take turns.
func TestLimitHandOverParkWhileSlotFrees(t *testing.T) {
	rounds := testkit.ScaleDown(4000, 1000)
	// A bound on the spin: a long one is often preempted, which makes
	// the task look late however long the test goroutine spun.
	const maxOffset = 1 << 14
	for _, procs := range []int{2, 4} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			withPollOff(t, procs, func() {
				offset, late := 0, 0
				for range rounds {
					step := 1 + max(offset, -offset)/64
					if parkWhileSlotFrees(t, offset) {
						offset, late = max(offset-step, -maxOffset), late+1
					} else {
						offset = min(offset+step, maxOffset)
					}
				}
				// Not checked: on a loaded machine the task's thread may
				// be off its processor in every round, whatever the offset.
				t.Logf("the Go parked before the task ended in %d of %d rounds", late, rounds)
			})
		})
	}
}

// parkWhileSlotFrees runs one round of TestLimitHandOverParkWhileSlotFrees:
// the slot holder spins for offset before it ends, or (offset < 0) the
// test goroutine for -offset before its Go. It reports whether the holder
// saw the slot bit set as it ended.
func parkWhileSlotFrees(t *testing.T, offset int) (late bool) {
	var g Group
	g.SetLimit(1)
	var started, start, sawBit atomic.Bool
	g.Go(func() error { // holds the slot
		started.Store(true)
		for !start.Load() {
		}
		busyLoop(offset)
		sawBit.Store(g.state.Load()&bitSlot != 0)
		return nil
	})
	for !started.Load() {
		runtime.Gosched()
	}
	start.Store(true)
	busyLoop(-offset)
	g.Go(func() error { return nil }) // full until the holder ends: parks at once
	wantNil(t, "Wait()", g.Wait())
	return sawBit.Load()
}

// busyLoop spins for n rounds of a few instructions (none if n <= 0).
func busyLoop(n int) {
	x := 0
	for i := range n {
		x += i ^ x
	}
	if x == -1 {
		sink.Add(1) // keeps the loop
	}
}

// TestLimitHandOverSetAside: the last slot holder of a limited group
// ends while a Go inside a task of another group sets its task aside for
// that slot (setAside). The pair that keeps the task from being stranded:
// done subtracts before it loads nParked, and parkTask stores nParked
// before unpark loads the count, so one of the two sees the other and
// starts the task. Here the finisher is held between its first look at the
// state and its subtraction: the group's slot bit is set (as a parker
// leaves it when it finds a slot free and goes without registering; see
// handSlot), so the finisher goes to hand the slot over, and the test
// holds the group's bucket of the wait table meanwhile. The task is set
// aside while the finisher waits there (the slot is still taken, so the
// Go cannot start it), and then the finisher goes on: finding no parked
// Go, it subtracts, and it must then see the task set aside and start it.
// A finisher that looked at nParked before it freed the slot sees none,
// and the task, with the group's Wait, waits for ever.
func TestLimitHandOverSetAside(t *testing.T) {
	needGID(t)
	rounds := testkit.Scale(10, 3)
	// At least two workers: the finisher's worker waits for the bucket,
	// and another must run the task that sets a task aside.
	for _, procs := range []int{2, 4} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			withPollOff(t, procs, func() {
				for range rounds {
					setAsideWhileSlotFrees(t)
				}
			})
		})
	}
}

func setAsideWhileSlotFrees(t *testing.T) {
	var g, other Group
	g.SetLimit(1)
	endA := make(chan struct{})
	g.Go(func() error { <-endA; return nil }) // A: holds the slot
	g.state.Or(bitSlot)
	b := bucketOf(&g)
	b.mu.Lock()
	held := true
	unlock := func() {
		if held {
			held = false
			b.mu.Unlock()
		}
	}
	defer unlock() // also after a failure
	close(endA)
	awaitFrame(t, "A's finisher waits for the wait table's bucket in handSlot", "sched.(*Group).handSlot(")
	aside := make(chan struct{})
	var ranB atomic.Bool
	other.Go(func() error {
		g.Go(func() error { ranB.Store(true); return nil }) // B: full, so set aside
		close(aside)
		return nil
	})
	<-aside
	if n := g.sl().nParked.Load(); n != 1 {
		t.Fatalf("%d tasks set aside while A's finisher was held, want 1: the test no longer builds its case", n)
	}
	unlock()
	wantNil(t, "other.Wait()", other.Wait())
	wantNil(t, "Wait()", g.Wait()) // a task left set aside keeps the count above zero for ever
	if !ranB.Load() {
		t.Errorf("the task set aside did not run")
	}
}
