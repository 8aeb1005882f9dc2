//go:build linux && (amd64 || arm64 || 386 || arm)

package gstatus

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/go-steal/steal/internal/testkit"
)

// requireQueueOn proves the queue reader and fails the test if its check
// failed (STEAL_GSTATUS=off skips it).
func requireQueueOn(t testing.TB) {
	t.Helper()
	switch err := ProveQueue(); {
	case err == nil && QueueOn():
	case errors.Is(err, errEnvOff):
		t.Skipf("queue reader off: %v", err)
	default:
		t.Fatalf("queue reader off: the check failed: %v", err)
	}
}

// TestContendedSeesNewGoroutine: at GOMAXPROCS 1 a go statement puts its
// goroutine in the P's runnext, where Contended must see it, and once
// every goroutine that was ready has run, the P is no longer contended.
func TestContendedSeesNewGoroutine(t *testing.T) {
	requireQueueOn(t)
	testkit.SetProcs(t, 1)
	testkit.Guard(t, func() {
		// Let the goroutines that were ready before the test run first.
		testkit.WaitUntil(t, "an uncontended P", func() bool { runtime.Gosched(); return Contended(true).Waiters == 0 })
		var ran atomic.Bool
		var id atomic.Uintptr
		done := make(chan struct{})
		go func() { ran.Store(true); id.Store(Current()); close(done) }()
		snap := Contended(false)
		early := ran.Load()
		<-done
		if early {
			t.Skip("the new goroutine ran before the read (preempted)")
		}
		if testkit.Race && snap.Waiters&RunQueue != 0 {
			// The race detector's scheduler queues half of the new
			// goroutines at the tail instead of in runnext.
			return
		}
		if snap.Waiters&RunNext == 0 || snap.Next != id.Load() {
			t.Fatalf("Contended read %+v with the new goroutine (%#x) in the P's runnext", snap, id.Load())
		}
		if snap.P < 0 {
			t.Errorf("Contended read P %d", snap.P)
		}
	})
}

// TestContendedSeesDueTimer: a timer on the caller's P that is due makes
// the P contended before it runs (at GOMAXPROCS 1 only this P runs its
// timers, when it schedules, which a goroutine that spins does not).
func TestContendedSeesDueTimer(t *testing.T) {
	requireQueueOn(t)
	testkit.SetProcs(t, 1)
	testkit.Guard(t, func() {
		testkit.WaitUntil(t, "an uncontended P", func() bool { runtime.Gosched(); return Contended(true).Waiters == 0 })
		// The goroutine may be preempted (and the timer run) while it
		// spins: try until one spin has seen the timer due first.
		testkit.WaitUntil(t, "a due timer seen before it ran", func() bool {
			var fired atomic.Bool
			tm := time.AfterFunc(20*time.Microsecond, func() { fired.Store(true) })
			defer tm.Stop()
			for !fired.Load() {
				if Contended(true).Waiters&TimerDue != 0 {
					return !fired.Load()
				}
			}
			return false
		})
	})
}

// TestContendedOffWithSetOff: SetOff turns the queue reader off too.
func TestContendedOffWithSetOff(t *testing.T) {
	requireQueueOn(t)
	testkit.SetProcs(t, 1)
	restore := SetOff(true)
	defer restore()
	if QueueOn() {
		t.Fatal("QueueOn after SetOff(true)")
	}
	done := make(chan struct{})
	go func() { close(done) }()
	if w := Contended(true).Waiters; w != 0 {
		t.Errorf("Contended reports %b with the reader off", w)
	}
	<-done
	restore()
	if !QueueOn() {
		t.Error("QueueOn false after SetOff's restore")
	}
}

// TestUseQueueReleases: UseQueue turns the reader on, and its release puts
// it back off and undecided when it was so before, so that the next
// StartQueue or ProveQueue checks again; taken while the reader was on
// already, the release leaves it on.
func TestUseQueueReleases(t *testing.T) {
	requireQueueOn(t)
	t.Cleanup(func() { requireQueueOn(t) }) // as the tests after this one expect
	undecideQueue()
	if QueueOn() {
		t.Fatal("QueueOn after undecideQueue")
	}
	release, err := UseQueue()
	if err != nil || !QueueOn() {
		t.Fatalf("UseQueue: %v, QueueOn %v; want nil, true", err, QueueOn())
	}
	inner, err := UseQueue()
	if err != nil {
		t.Fatalf("UseQueue with the reader on: %v", err)
	}
	inner()
	if !QueueOn() {
		t.Fatal("the release of a UseQueue taken with the reader on turned it off")
	}
	release()
	if QueueOn() || queueState.Load() != stateUndecided {
		t.Fatalf("after the release: QueueOn %v, state %d; want false, undecided", QueueOn(), queueState.Load())
	}
	done := make(chan struct{})
	go func() { close(done) }()
	if w := Contended(true); w.Waiters != 0 || w.P != -1 {
		t.Errorf("Contended reports %+v after the release", w)
	}
	<-done
	if err := ProveQueue(); err != nil || !QueueOn() {
		t.Fatalf("ProveQueue after the release: %v, QueueOn %v; want nil, true", err, QueueOn())
	}
}

// TestQueueCheckRejectsWrongLayout: the check passes the proven layout
// and fails a layout off by a word in each place it checks.
func TestQueueCheckRejectsWrongLayout(t *testing.T) {
	requireQueueOn(t)
	if err := checkLayout(qfound); err != nil {
		t.Fatalf("the proven layout fails the check again: %v", err)
	}
	w := unsafe.Sizeof(uintptr(0))
	for name, bad := range map[string]func(*pLayout){
		"m.curg":      func(l *pLayout) { l.mCurg += w },
		"p.runnext":   func(l *pLayout) { l.runnext += w },
		"p.runqtail":  func(l *pLayout) { l.runqTail += 4 },
		"minWhenHeap": func(l *pLayout) { l.minWhenHeap += 8 },
	} {
		l := qfound
		bad(&l)
		if err := checkLayout(l); err == nil {
			t.Errorf("a layout with %s off by a word passed the check", name)
		}
	}
}

func BenchmarkContended(b *testing.B) {
	requireQueueOn(b)
	for _, timers := range []bool{false, true} {
		b.Run(fmt.Sprintf("timers=%v", timers), func(b *testing.B) {
			for b.Loop() {
				Contended(timers)
			}
		})
	}
}
