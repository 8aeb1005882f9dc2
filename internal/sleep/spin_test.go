package sleep

// Tests of how long an idle worker searches before it gets sleepy: one
// spinner at a time, its rounds bounded in time, and a woken worker that
// finds nothing sleeps again without rounds. Each counts NoWorkFound's
// steps (idle.rounds, the announcement) rather than timing anything.

import (
	"testing"
	"time"

	"github.com/go-steal/steal/internal/testkit"
)

// announced reports whether idle's worker has announced sleepiness: its
// next NoWorkFound sleeps (or searches once more if a job was posted).
func announced(idle *Idle) bool { return idle.rounds > Rounds }

// TestOneSpinner: while one worker makes its search rounds, a second idle
// worker announces sleepiness at its first fruitless search; once the
// first stops looking, the next idle worker gets the rounds.
func TestOneSpinner(t *testing.T) {
	s := New(2)
	s.spinFor = 0 // rounds counted, not timed
	never := func() bool { return false }

	a := s.StartLooking(0)
	if out := s.NoWorkFound(&a, never, never, 0); out != Search || !a.spinner || a.rounds != 1 {
		t.Fatalf("first idle worker: outcome %v, spinner %v, round %d; want Search, spinner, round 1", out, a.spinner, a.rounds)
	}
	b := s.StartLooking(1)
	if out := s.NoWorkFound(&b, never, never, 0); out != Search || b.spinner || !announced(&b) {
		t.Fatalf("second idle worker while the first spins: outcome %v, spinner %v, round %d; want Search, announced (round %d)",
			out, b.spinner, b.rounds, Rounds+1)
	}
	s.StopLooking(&b)
	s.StopLooking(&a)
	if s.spinner.Load() != 0 {
		t.Fatal("StopLooking left the spinner's place taken")
	}
	b = s.StartLooking(1)
	if s.NoWorkFound(&b, never, never, 0); !b.spinner || b.rounds != 1 {
		t.Fatalf("idle worker after the spinner left: spinner %v, round %d; want spinner, round 1", b.spinner, b.rounds)
	}
	// WorkFound gives the place up too.
	s.WorkFound(&b, never)
	if s.spinner.Load() != 0 {
		t.Fatal("WorkFound left the spinner's place taken")
	}
	// And so does the announcement: a spinner that has used its rounds
	// leaves them to the next idle worker while it gets sleepy.
	a = s.StartLooking(0)
	for !announced(&a) {
		s.NoWorkFound(&a, never, never, 0)
	}
	if a.spinner || s.spinner.Load() != 0 {
		t.Fatalf("announced worker still holds the spinner's place (%v, %d)", a.spinner, s.spinner.Load())
	}
	s.StopLooking(&a)
}

// TestSpinnerTimeBound: a spinner whose rounds have lasted spinFor
// announces sleepiness at its next fruitless search, whatever its round.
func TestSpinnerTimeBound(t *testing.T) {
	s := New(1)
	// The first round starts the budget and checks it at once: a budget
	// the test cannot use up, so that the round is a spinner's however
	// slowly the machine runs (a budget of 1 µs can pass between the two
	// clock readings on a slow or emulated machine).
	s.spinFor = time.Hour
	never := func() bool { return false }
	idle := s.StartLooking(0)
	s.NoWorkFound(&idle, never, never, 0)
	if !idle.spinner || announced(&idle) {
		t.Fatalf("first round: spinner %v, round %d", idle.spinner, idle.rounds)
	}
	// Then a budget of 1 µs from the same start. Wait, without asserting
	// anything about time, until it is used up by the package's own clock.
	s.spinFor = time.Microsecond
	testkit.WaitUntil(t, "the spinner's budget to pass", func() bool {
		return nanotime()-idle.since > int64(s.spinFor)
	})
	s.NoWorkFound(&idle, never, never, 0)
	if !announced(&idle) || idle.spinner {
		t.Fatalf("after the budget: round %d (spinner %v); want announced", idle.rounds, idle.spinner)
	}
	s.StopLooking(&idle)
}

// TestWokenWorkerSleepsAtOnce: a worker woken with nothing to find (the
// job went to the poster, which ran it while it waited) announces
// sleepiness at its first fruitless search and sleeps at the next: two
// NoWorkFound calls from wake-up to sleep, where a worker that starts
// looking makes Rounds more.
func TestWokenWorkerSleepsAtOnce(t *testing.T) {
	s := New(1)
	s.spinFor = 0
	never := func() bool { return false }
	blocks := make(chan int, 4) // NoWorkFound calls made when the worker blocked
	calls := 0
	setHooks(t, func(w window) {
		if w == atBlock {
			blocks <- calls
		}
	})
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		idle := s.StartLooking(0)
		defer s.StopLooking(&idle)
		for {
			select {
			case <-stop:
				return
			default:
			}
			calls++
			s.NoWorkFound(&idle, never, never, 0)
		}
	}()
	testkit.Guard(t, func() {
		first := <-blocks
		if first != Rounds+2 {
			t.Errorf("first sleep after %d calls; want Rounds+2 = %d", first, Rounds+2)
		}
		for range 2 {
			testkit.WaitUntil(t, "the worker to block", func() bool { b, ok := s.blockedNow(0); return ok && b })
			prev := calls // the worker is blocked: its count stands still
			if !s.WakeWorker(0) {
				t.Fatal("WakeWorker found no sleeper")
			}
			if n := <-blocks - prev; n != 2 {
				t.Errorf("woken with nothing to find, the worker slept again after %d calls; want 2", n)
			}
		}
		testkit.WaitUntil(t, "the worker to block", func() bool { b, ok := s.blockedNow(0); return ok && b })
		close(stop)
		s.WakeWorker(0)
		<-done
	})
}
