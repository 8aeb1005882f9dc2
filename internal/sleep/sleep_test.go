package sleep

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-steal/steal/internal/testkit"
)

// ---------------------------------------------------------------------------
// Counters

func TestCountersPacking(t *testing.T) {
	for _, tc := range []struct {
		jec                uint32
		inactive, sleeping int
	}{
		{0, 0, 0},
		{1, 1, 0},
		{2, 3, 2},
		{math.MaxUint32, MaxWorkers, MaxWorkers},
		{math.MaxUint32 - 1, 0, 0},
		{0x80000000, 1, 1},
		{0, MaxWorkers, 0},
		{0, 0, MaxWorkers},
		{12345, 7, 5},
	} {
		c := pack(tc.jec, tc.inactive, tc.sleeping)
		if c.JEC() != tc.jec || c.Inactive() != tc.inactive || c.Sleeping() != tc.sleeping {
			t.Errorf("pack(%#x, %d, %d) = %#x reads back as %v", tc.jec, tc.inactive, tc.sleeping, uint64(c), c)
		}
		if got, want := c.AwakeIdle(), tc.inactive-tc.sleeping; got != want {
			t.Errorf("%v.AwakeIdle() = %d, want %d", c, got, want)
		}
		if got, want := c.sleepy(), tc.jec%2 == 0; got != want {
			t.Errorf("%v.sleepy() = %v, want %v", c, got, want)
		}
	}
	if MaxWorkers != 1<<16-1 {
		t.Errorf("MaxWorkers = %d, want %d (16-bit thread counts)", MaxWorkers, 1<<16-1)
	}
}

func TestCounterOps(t *testing.T) {
	var a counters
	a.word.Store(uint64(pack(7, 2, 1)))
	a.addInactive()
	if got, want := a.load(), pack(7, 3, 1); got != want {
		t.Fatalf("addInactive: %v, want %v", got, want)
	}
	if old := a.subInactive(); old != pack(7, 3, 1) {
		t.Fatalf("subInactive returned %v, want the value before, %v", old, pack(7, 3, 1))
	}
	if got, want := a.load(), pack(7, 2, 1); got != want {
		t.Fatalf("after subInactive: %v, want %v", got, want)
	}
	if a.tryAddSleeping(pack(7, 2, 0)) {
		t.Fatalf("tryAddSleeping succeeded from a stale value")
	}
	if !a.tryAddSleeping(pack(7, 2, 1)) {
		t.Fatalf("tryAddSleeping failed from the current value")
	}
	if got, want := a.load(), pack(7, 2, 2); got != want {
		t.Fatalf("after tryAddSleeping: %v, want %v", got, want)
	}
	a.subSleeping()
	if got, want := a.load(), pack(7, 2, 1); got != want {
		t.Fatalf("after subSleeping: %v, want %v", got, want)
	}
	// The thread counts borrow from nothing: with the JEC at its maximum
	// and both counts at zero, adding and removing an inactive worker
	// leaves the JEC alone.
	a.word.Store(uint64(pack(math.MaxUint32, 0, 0)))
	a.addInactive()
	a.subInactive()
	if got, want := a.load(), pack(math.MaxUint32, 0, 0); got != want {
		t.Fatalf("inactive round trip at JEC max: %v, want %v", got, want)
	}
}

// TestBumpJECIfParity checks the two parity rules: posting (wantSleepy =
// true) makes the JEC odd only if it is even; announcing (wantSleepy =
// false) makes it even only if it is odd. The thread counts never change,
// and the JEC wraps around without carrying into them.
func TestBumpJECIfParity(t *testing.T) {
	for _, jec := range []uint32{0, 1, 2, 3, 0x7ffffffe, 0x7fffffff, 0x80000000, math.MaxUint32 - 1, math.MaxUint32} {
		for _, threads := range [][2]int{{0, 0}, {1, 0}, {3, 2}, {MaxWorkers, MaxWorkers}} {
			for _, wantSleepy := range []bool{true, false} {
				var a counters
				before := pack(jec, threads[0], threads[1])
				a.word.Store(uint64(before))
				got := a.bumpJECIf(wantSleepy)
				want := before
				if (jec%2 == 0) == wantSleepy {
					want = pack(jec+1, threads[0], threads[1]) // jec+1 wraps in uint32
				}
				if got != want || a.load() != want {
					t.Errorf("bumpJECIf(%v) on %v: returned %v, word %v; want %v", wantSleepy, before, got, a.load(), want)
				}
				if want != before && got.sleepy() == wantSleepy {
					t.Errorf("bumpJECIf(%v) on %v left the JEC with the wrong parity: %v", wantSleepy, before, got)
				}
			}
		}
	}
}

// TestJECWrapAround bumps the JEC across 2³² through the public entry
// points, with workers counted, and checks that the counts survive.
func TestJECWrapAround(t *testing.T) {
	s := New(1)
	s.setCounters(pack(math.MaxUint32-2, 5, 3))
	want := []Counters{
		pack(math.MaxUint32-1, 5, 3), // announce: odd → even
		pack(math.MaxUint32, 5, 3),   // post: even → odd
		pack(0, 5, 3),                // announce: wraps to 0, no carry
		pack(1, 5, 3),                // post
	}
	for i, w := range want {
		var got Counters
		if i%2 == 0 {
			got = s.c.bumpJECIf(false)
		} else {
			got = s.c.bumpJECIf(true)
		}
		if got != w || s.Load() != w {
			t.Fatalf("step %d: got %v (word %v), want %v", i, got, s.Load(), w)
		}
	}
	// A full turn of the JEC (2³² bumps) comes back to the same word.
	before := s.Load()
	s.advanceJEC(math.MaxUint32)
	s.advanceJEC(1)
	if s.Load() != before {
		t.Fatalf("a full turn of the JEC changed the word: %v → %v", before, s.Load())
	}
}

// TestPostWhenOddIsOneLoad: posting while the JEC is already odd and nobody
// sleeps must not write the word (it is one atomic load); posting while it
// is even makes it odd and changes nothing else.
func TestPostWhenOddIsOneLoad(t *testing.T) {
	for _, jec := range []uint32{1, 3, 0x7fffffff, math.MaxUint32} {
		for _, inactive := range []int{0, 1, 4} {
			s := New(4)
			c := pack(jec, inactive, 0)
			s.setCounters(c)
			for n := 1; n <= 3; n++ {
				for _, empty := range []bool{true, false} {
					if got := s.NewInjectedJobs(n, empty); got != c {
						t.Errorf("NewInjectedJobs(%d, %v) on %v returned %v", n, empty, c, got)
					}
					if got := s.NewInternalJobs(n, empty); got != c {
						t.Errorf("NewInternalJobs(%d, %v) on %v returned %v", n, empty, c, got)
					}
					if got := s.Post(); got != c {
						t.Errorf("Post() on %v returned %v", c, got)
					}
					s.Wake(c, n, empty) // nobody sleeps: nothing to do
					if s.Load() != c {
						t.Fatalf("posting on %v changed the word to %v", c, s.Load())
					}
				}
			}
		}
	}
	for _, jec := range []uint32{0, 2, math.MaxUint32 - 1} {
		s := New(4)
		s.setCounters(pack(jec, 2, 0))
		want := pack(jec+1, 2, 0)
		if got := s.NewInjectedJobs(1, true); got != want || s.Load() != want {
			t.Errorf("post on even JEC %#x: returned %v, word %v, want %v", jec, got, s.Load(), want)
		}
		// Now odd: the next post is a load.
		if got := s.NewInternalJobs(1, false); got != want || s.Load() != want {
			t.Errorf("second post: returned %v, word %v, want %v", got, s.Load(), want)
		}
		s.setCounters(pack(jec, 2, 0))
		if got := s.Post(); got != want || s.Load() != want {
			t.Errorf("Post on even JEC %#x: returned %v, word %v, want %v", jec, got, s.Load(), want)
		}
	}
}

// TestCalm: Calm holds exactly for the counters on which a post has
// nothing to do (the JEC odd, nobody asleep), whatever the inactive count
// and the JEC's other bits; and a post on calm counters leaves the word as
// it was.
func TestCalm(t *testing.T) {
	for _, jec := range []uint32{0, 1, 2, 3, 0x7fffffff, math.MaxUint32 - 1, math.MaxUint32} {
		for _, inactive := range []int{0, 1, 4} {
			for _, sleeping := range []int{0, 1} {
				if sleeping > inactive {
					continue
				}
				c := pack(jec, inactive, sleeping)
				want := jec&1 == 1 && sleeping == 0
				if c.Calm() != want {
					t.Errorf("%v.Calm() = %v, want %v", c, c.Calm(), want)
				}
				if !want {
					continue
				}
				s := New(4)
				s.setCounters(c)
				s.NewInternalJobs(1, true)
				if s.Load() != c {
					t.Errorf("a post on calm counters %v changed the word to %v", c, s.Load())
				}
			}
		}
	}
}

// TestAnnounceMakesJECEven drives NoWorkFound through its rounds and checks
// the announcement: the JEC becomes even (or stays even) and is remembered.
func TestAnnounceMakesJECEven(t *testing.T) {
	for _, start := range []uint32{0, 1, 6, 7, math.MaxUint32} {
		s := New(1)
		s.spinFor = 0 // the rounds counted here, not timed
		s.setCounters(pack(start, 0, 0))
		idle := s.StartLooking(0)
		never := func() bool { return false }
		for i := range Rounds {
			if out := s.NoWorkFound(&idle, never, never, 0); out != Search {
				t.Fatalf("round %d: %v", i, out)
			}
			if s.Load() != pack(start, 1, 0) {
				t.Fatalf("round %d changed the counters: %v", i, s.Load())
			}
		}
		if out := s.NoWorkFound(&idle, never, never, 0); out != Search {
			t.Fatalf("announcement returned %v", out)
		}
		want := start
		if start%2 == 1 {
			want++
		}
		if c := s.Load(); c != pack(want, 1, 0) || idle.jec != want {
			t.Errorf("announce from JEC %#x: counters %v, remembered %#x; want JEC %#x", start, c, idle.jec, want)
		}
		s.StopLooking(&idle)
		if c := s.Load(); c != pack(want, 0, 0) {
			t.Errorf("after StopLooking: %v", c)
		}
	}
}

// ---------------------------------------------------------------------------
// A single idle worker whose race windows the tests force with the hooks.

// rig is one idle worker (slot 0), whose idle spells the test runs one at a
// time on a fresh goroutine, an injector, and the deque of a busy worker
// (slot 1) that posts internal jobs there; worker 0 steals from it. The
// queues are counts of pending jobs, taken with a compare-and-swap.
type rig struct {
	s    *Sleep
	inj  atomic.Int64 // injected jobs pending
	deq1 atomic.Int64 // internal jobs pending in busy worker 1's deque
	ran  atomic.Int64
	done atomic.Bool

	// Set by the hooks during a spell.
	registered atomic.Bool // the worker registered as a sleeper
	blocked    atomic.Bool // the worker went on to block
	wakeLock   atomic.Bool // a waker saw the worker asleep and is about to take its lock

	// The action forced at window at, once per spell (while armed).
	at      window
	act     func()
	armed   atomic.Bool
	acted   atomic.Bool // the action returned
	helpers sync.WaitGroup

	// doneFn, when set, is the worker's done condition instead of
	// done.Load.
	doneFn func() bool
}

func newRig(workers int) *rig {
	return &rig{s: New(workers), at: nWindows}
}

func (r *rig) injected() bool { return r.inj.Load() > 0 }

func take(q *atomic.Int64) bool {
	for {
		n := q.Load()
		if n <= 0 {
			return false
		}
		if q.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

func (r *rig) pending() int64 { return r.inj.Load() + r.deq1.Load() }

// jobKind says where a job goes and how its post is announced.
type jobKind int

const (
	injected jobKind = iota // onto the injector, NewInjectedJobs
	split                   // onto the injector, Post then Wake (as Pool.inject does)
	internal                // onto busy worker 1's deque, NewInternalJobs
	nKinds
)

func (k jobKind) String() string { return [...]string{"injected", "split", "internal"}[k] }

// post pushes one job and announces it, as a pool does.
func (r *rig) post(k jobKind) Counters {
	switch k {
	case internal:
		return r.s.NewInternalJobs(1, r.deq1.Add(1) == 1)
	case split:
		r.inj.Add(1)
		c := r.s.Post()
		if c.Sleeping() > 0 {
			r.s.Wake(c, 1, r.inj.Load() <= 1)
		}
		return c
	}
	return r.s.NewInjectedJobs(1, r.inj.Add(1) == 1)
}

// hook is installed at every window. At r.at, once per spell, it runs the
// action: in line when the worker holds no lock; on a helper goroutine when
// it holds its sleep lock (the action may need that lock to wake it), and
// then the worker waits until the action has returned or waits for its
// lock in wake (so it has read the counters, or the worker's asleep flag,
// and decided to wake it: exactly what the window is about).
func (r *rig) hook(w window) {
	switch w {
	case atRegistered:
		r.registered.Store(true)
	case atBlock:
		r.blocked.Store(true)
	case atWakeLock:
		r.wakeLock.Store(true)
		return
	}
	if w != r.at || !r.armed.CompareAndSwap(true, false) {
		return
	}
	if !w.underLock() {
		r.act()
		r.acted.Store(true)
		return
	}
	r.helpers.Add(1)
	go func() {
		defer r.helpers.Done()
		r.act()
		r.acted.Store(true)
	}()
	// No limit: if the helper never gets here, run reports the hang.
	for !r.acted.Load() && !r.wakeLock.Load() {
		runtime.Gosched()
	}
}

// arm resets the per-spell state and arms the action.
func (r *rig) arm() {
	r.registered.Store(false)
	r.blocked.Store(false)
	r.wakeLock.Store(false)
	r.acted.Store(false)
	r.armed.Store(true)
}

type spell struct {
	out Outcome  // Search: the worker found a job and ran it
	c   Counters // for Done and Lingered: the counters before StopLooking
}

// spell is the worker's real idle loop, run until it finds a job, or
// NoWorkFound reports Done or Lingered.
func (r *rig) spell(linger time.Duration) spell {
	done := r.done.Load
	if r.doneFn != nil {
		done = r.doneFn
	}
	idle := r.s.StartLooking(0)
	for {
		if take(&r.inj) || take(&r.deq1) {
			r.s.WorkFound(&idle, func() bool { return r.pending() > 0 })
			r.ran.Add(1)
			return spell{out: Search}
		}
		if out := r.s.NoWorkFound(&idle, done, r.injected, linger); out != Search {
			c := r.s.Load()
			r.s.StopLooking(&idle)
			return spell{out: out, c: c}
		}
	}
}

// run runs one spell on a new goroutine and waits for it. lost, polled
// meanwhile, describes a lost wake-up if it sees one (a state in which the
// worker sleeps and nobody is left to wake it); run then reports it, frees
// the worker by force and returns false. A hang is fatal.
func (r *rig) run(t *testing.T, tick *time.Ticker, linger time.Duration, lost func() string) (spell, bool) {
	t.Helper()
	hung := hangBound(t)
	res := make(chan spell, 1)
	go func() { res <- r.spell(linger) }()
	ok := true
	for {
		select {
		case sp := <-res:
			r.helpers.Wait()
			return sp, ok
		case <-tick.C:
			if time.Now().After(hung) {
				dump := testkit.Stacks()
				r.done.Store(true)
				r.s.WakeAll()
				r.s.forceRelease()
				select {
				case <-res:
				case <-time.After(time.Second):
				}
				t.Fatalf("hang: worker 0 did not return from its idle spell within %v (counters %v, pending %d, at %v)\n%s",
					testkit.Timeout(t)*9/10, r.s.Load(), r.pending(), r.at, dump)
			}
			if !ok {
				r.s.forceRelease()
				continue
			}
			if msg := lost(); msg != "" {
				t.Errorf("lost wake-up: %s (counters %v, pending %d, at %v)", msg, r.s.Load(), r.pending(), r.at)
				ok = false
				r.done.Store(true)
				r.s.forceRelease()
			}
		}
	}
}

// lostDone returns the check for a lost wake-up of the tests that make
// done true and then call WakeWorker (reporting what it returned in woke):
// once they have, the worker must not sleep.
func (r *rig) lostDone(woke *atomic.Bool) func() string {
	return func() string {
		if !r.acted.Load() {
			return ""
		}
		if b, ok := r.s.blockedNow(0); ok && b {
			return fmt.Sprintf("the worker sleeps although done is true and WakeWorker returned %v", woke.Load())
		}
		return ""
	}
}

// lostJob: a job is pending, whoever posted it is done, and the worker is
// blocked: nobody will wake it.
func (r *rig) lostJob() string {
	if !r.acted.Load() || r.pending() == 0 {
		return ""
	}
	if b, ok := r.s.blockedNow(0); ok && b {
		return "the worker sleeps with a job pending, and its poster has returned"
	}
	return ""
}

func noLoss() string { return "" }

func iterations(full int) int { return testkit.Scale(full, full/10) }

// TestPostInRaceWindow posts a job at each wait point of the idle protocol,
// thousands of times each, and checks that the worker never sleeps through
// it: a job posted after the announcement and before the registration must
// keep the worker from registering (its last search finds the job, or its
// JEC check fails); a job posted after the registration must be seen by the
// final look at the injector (injected jobs) or wake the worker (the
// poster sees it as a sleeper). Either way the worker then runs the job.
func TestPostInRaceWindow(t *testing.T) {
	n := iterations(5000)
	for w := range nWindows {
		for k := range nKinds {
			t.Run(fmt.Sprintf("%v/%v", w, k), func(t *testing.T) {
				testPostAt(t, w, k, n)
			})
		}
	}
}

func testPostAt(t *testing.T, w window, kind jobKind, n int) {
	r := newRig(2)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	var postResult atomic.Uint64
	r.at = w
	r.act = func() { postResult.Store(uint64(r.post(kind))) }
	setHooks(t, r.hook)
	for i := range n {
		r.arm()
		sp, ok := r.run(t, tick, 0, r.lostJob)
		if !ok {
			return
		}
		if r.armed.Load() {
			t.Fatalf("iteration %d: the worker never reached %v", i, w)
		}
		if sp.out != Search || r.ran.Load() != int64(i+1) || r.pending() != 0 {
			t.Fatalf("iteration %d: spell ended with %v, ran %d jobs, %d pending", i, sp.out, r.ran.Load(), r.pending())
		}
		posted := Counters(postResult.Load())
		switch {
		case w <= atRegister && r.registered.Load():
			t.Fatalf("iteration %d: a job posted at %v (poster saw %v) let the worker register as a sleeper; "+
				"its last search or its JEC check should have stopped it", i, w, posted)
		case w == atRegistered && kind != internal && r.blocked.Load():
			t.Fatalf("iteration %d: an injected job posted after the registration let the worker block; "+
				"its final look at the injector should have stopped it", i)
		case w >= atRegistered && !r.registered.Load():
			t.Fatalf("iteration %d: the worker passed %v without registering", i, w)
		case w == atBlock && posted.Sleeping() != 1:
			t.Fatalf("iteration %d: the poster saw %v, not the sleeper", i, posted)
		}
		if c := r.s.Load(); c.Inactive() != 0 || c.Sleeping() != 0 {
			t.Fatalf("iteration %d: counters %v after WorkFound", i, c)
		}
		if r.s.tokens(0) != 0 {
			t.Fatalf("iteration %d: a wake-up token was left in the channel", i)
		}
	}
}

// TestJECWrapInjected posts an injected job just before the sleep step and
// then lets the JEC make a full turn (2³² events, simulated), so that the
// worker's JEC check passes although a job it did not see was posted. The
// final look at the injector must catch it.
func TestJECWrapInjected(t *testing.T) {
	for _, start := range []uint32{math.MaxUint32, 0x7ffffffe, 41} {
		t.Run(fmt.Sprintf("jec=%#x", start), func(t *testing.T) {
			r := newRig(2)
			r.s.setCounters(pack(start, 0, 0))
			tick := time.NewTicker(time.Millisecond)
			defer tick.Stop()
			r.at = atSleep
			r.act = func() {
				r.post(injected)
				r.s.advanceJEC(math.MaxUint32) // with the post: 2³² events
			}
			setHooks(t, r.hook)
			for i := range 50 {
				r.arm()
				sp, ok := r.run(t, tick, 0, r.lostJob)
				if !ok {
					return
				}
				if !r.registered.Load() {
					t.Fatalf("iteration %d: the wrapped JEC did not fool the JEC check; the test does not test what it should", i)
				}
				if r.blocked.Load() || sp.out != Search || r.pending() != 0 {
					t.Fatalf("iteration %d: blocked %v, outcome %v, pending %d", i, r.blocked.Load(), sp.out, r.pending())
				}
				if c := r.s.Load(); c.Inactive() != 0 || c.Sleeping() != 0 {
					t.Fatalf("iteration %d: counters %v", i, c)
				}
			}
		})
	}
}

// TestDoneInRaceWindow makes the worker's done condition true at each wait
// point and then calls WakeWorker, as the contract of NoWorkFound asks. The
// worker must end its spell with Done, whether WakeWorker found it awake
// (it then sees done under its lock) or asleep (it is woken, then sees done
// on its next attempt to sleep).
func TestDoneInRaceWindow(t *testing.T) {
	n := iterations(5000)
	for w := range nWindows {
		t.Run(w.String(), func(t *testing.T) { testDoneAt(t, w, n) })
	}
}

func testDoneAt(t *testing.T, w window, n int) {
	r := newRig(1)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	var woke atomic.Bool
	r.at = w
	r.act = func() {
		r.done.Store(true)
		woke.Store(r.s.WakeWorker(0))
	}
	setHooks(t, r.hook)
	for i := range n {
		r.done.Store(false)
		woke.Store(false)
		r.arm()
		sp, ok := r.run(t, tick, 0, r.lostDone(&woke))
		if !ok {
			return
		}
		if r.armed.Load() {
			t.Fatalf("iteration %d: the worker never reached %v", i, w)
		}
		if sp.out != Done {
			t.Fatalf("iteration %d: spell ended with %v, want Done", i, sp.out)
		}
		if sp.c.Inactive() != 1 || sp.c.Sleeping() != 0 {
			t.Fatalf("iteration %d: counters %v when NoWorkFound returned Done", i, sp.c)
		}
		asleep := w >= atRegister // the worker holds its lock or has registered
		if woke.Load() != asleep || r.blocked.Load() != asleep {
			t.Fatalf("iteration %d: WakeWorker reported %v, worker blocked %v; want %v for done at %v",
				i, woke.Load(), r.blocked.Load(), asleep, w)
		}
		if c := r.s.Load(); c.Inactive() != 0 || c.Sleeping() != 0 || r.s.tokens(0) != 0 {
			t.Fatalf("iteration %d: counters %v, %d tokens", i, c, r.s.tokens(0))
		}
	}
}

// TestDoneWhileWorkerReadsDone makes the done condition true while the
// worker reads it under its sleep lock, once it has read false: between
// that read and the registration no hook window falls, so testDoneAt does
// not reach this point. The stopper stores done and calls WakeWorker on a
// goroutine of its own, and the worker's done returns false only after the
// stopper has returned or waits for the sleep lock in wake. The worker
// published its asleep flag before it read done, so the stopper's load of
// the flag sees it about to sleep, waits for the lock and wakes it once it
// has blocked. A worker that published the flag only after its read is
// skipped by the stopper (WakeWorker returns false at once) and, with no
// linger, sleeps for ever with done true: the lost wake-up that lost
// reports.
func TestDoneWhileWorkerReadsDone(t *testing.T) {
	n := iterations(2000)
	r := newRig(1)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	var woke, stop atomic.Bool
	r.doneFn = func() bool {
		d := r.done.Load()
		if d || !stop.CompareAndSwap(true, false) {
			return d
		}
		r.helpers.Add(1)
		go func() {
			defer r.helpers.Done()
			r.done.Store(true)
			woke.Store(r.s.WakeWorker(0))
			r.acted.Store(true)
		}()
		// Under the sleep lock, which a stopper that saw the worker
		// asleep waits for: stop waiting once it does.
		for !r.acted.Load() && !r.wakeLock.Load() {
			runtime.Gosched()
		}
		return d
	}
	setHooks(t, r.hook) // records the registration, the block and the waker at the lock; no action
	for i := range n {
		r.done.Store(false)
		woke.Store(false)
		r.arm()
		stop.Store(true)
		sp, ok := r.run(t, tick, 0, r.lostDone(&woke))
		if !ok {
			return
		}
		if stop.Load() {
			t.Fatalf("iteration %d: the worker never read done", i)
		}
		if sp.out != Done {
			t.Fatalf("iteration %d: spell ended with %v, want Done", i, sp.out)
		}
		// It read done false, so it went on to sleep, and the stopper woke
		// it: then its next read of done stopped it.
		if !woke.Load() || !r.registered.Load() || !r.blocked.Load() {
			t.Fatalf("iteration %d: WakeWorker reported %v, worker registered %v, blocked %v; want all true",
				i, woke.Load(), r.registered.Load(), r.blocked.Load())
		}
		if c := r.s.Load(); c.Inactive() != 0 || c.Sleeping() != 0 || r.s.tokens(0) != 0 {
			t.Fatalf("iteration %d: counters %v, %d tokens", i, c, r.s.tokens(0))
		}
	}
}

// TestWakeWorkerAwake: WakeWorker on a worker that does not sleep reports
// false and changes nothing.
func TestWakeWorkerAwake(t *testing.T) {
	s := New(2)
	before := s.Load()
	if s.WakeWorker(0) || s.WakeWorker(1) {
		t.Fatal("WakeWorker woke an idle-less worker")
	}
	idle := s.StartLooking(1)
	if s.WakeWorker(1) {
		t.Fatal("WakeWorker woke a worker that is looking, not sleeping")
	}
	s.StopLooking(&idle)
	if s.Load() != before || s.tokens(0)+s.tokens(1) != 0 {
		t.Fatalf("counters %v, tokens %d %d", s.Load(), s.tokens(0), s.tokens(1))
	}
}

// ---------------------------------------------------------------------------
// Linger

// TestLinger: a worker that sleeps with a linger and is not woken returns
// Lingered, unregistered as a sleeper but still inactive until StopLooking.
func TestLinger(t *testing.T) {
	r := newRig(1)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	setHooks(t, r.hook) // records registered/blocked; no action
	for i := range 5 {  // the second and later sleeps reuse the timer
		r.arm()
		sp, ok := r.run(t, tick, time.Millisecond, noLoss)
		if !ok {
			return
		}
		if sp.out != Lingered || !r.blocked.Load() {
			t.Fatalf("sleep %d: outcome %v (blocked %v), want Lingered", i, sp.out, r.blocked.Load())
		}
		if sp.c.Sleeping() != 0 || sp.c.Inactive() != 1 {
			t.Fatalf("sleep %d: counters %v on Lingered, want 0 sleeping, 1 inactive", i, sp.c)
		}
		if c := r.s.Load(); c.Sleeping() != 0 || c.Inactive() != 0 {
			t.Fatalf("sleep %d: counters %v after StopLooking", i, c)
		}
		if b, _ := r.s.blockedNow(0); b || r.s.tokens(0) != 0 || r.s.slot(0).asleep.Load() {
			t.Fatalf("sleep %d: slot left blocked %v, asleep %v, %d tokens", i, b, r.s.slot(0).asleep.Load(), r.s.tokens(0))
		}
	}
}

// TestLingerRacesWaker wakes a lingering worker just before it blocks, with
// a linger so short that its timer has fired too: whichever case its select
// takes, it is woken (not Lingered), the token does not stay in the channel
// and the counters stay right. Its next sleep then lingers undisturbed.
func TestLingerRacesWaker(t *testing.T) {
	n := iterations(2000)
	r := newRig(1)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	var woke atomic.Bool
	r.at = atBlock
	r.act = func() { woke.Store(r.s.WakeWorker(0)) }
	setHooks(t, r.hook)
	for i := range n {
		woke.Store(false)
		r.arm()
		sp, ok := r.run(t, tick, time.Nanosecond, noLoss)
		if !ok {
			return
		}
		if !woke.Load() {
			t.Fatalf("iteration %d: WakeWorker did not wake a worker about to block", i)
		}
		if sp.out != Lingered || sp.c.Sleeping() != 0 || sp.c.Inactive() != 1 {
			t.Fatalf("iteration %d: outcome %v, counters %v; want Lingered, 0 sleeping, 1 inactive", i, sp.out, sp.c)
		}
		if c := r.s.Load(); c.Sleeping() != 0 || c.Inactive() != 0 || r.s.tokens(0) != 0 {
			t.Fatalf("iteration %d: counters %v, %d tokens", i, c, r.s.tokens(0))
		}
	}
}

// ---------------------------------------------------------------------------
// Several sleepers: waking, Grow

// crew is a set of workers that search nothing and sleep until woken; each
// ends when it is woken (mode untilWoken) or when it runs a job. A worker
// woken in mode untilWoken stays inactive (counted, awake) until the test
// lets it go (letGo, which wait and shutdown call), so that the counters a
// test reads do not depend on how soon the woken goroutines get a CPU.
type crew struct {
	s       *Sleep
	jobs    atomic.Int64 // injector
	ran     atomic.Int64
	woken   atomic.Int64
	stop    atomic.Bool
	blocks  atomic.Int64 // sleeps, counted at testHookBlock
	wg      sync.WaitGroup
	started []int
	hold    chan struct{} // closed by letGo
	letGo   func()
}

func newCrew(t *testing.T, n int) *crew {
	c := &crew{s: New(n), hold: make(chan struct{})}
	c.letGo = sync.OnceFunc(func() { close(c.hold) })
	setHooks(t, func(w window) {
		if w == atBlock {
			c.blocks.Add(1)
		}
	})
	// Runs before the hooks' cleanup; on a failure (a hang that WaitUntil
	// reports), it shows the counters first.
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("counters %v", c.s.Load())
		}
		c.shutdown()
	})
	return c
}

func (c *crew) injected() bool { return c.jobs.Load() > 0 }

func (c *crew) start(i int, untilWoken bool) {
	c.started = append(c.started, i)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		idle := c.s.StartLooking(i)
		for {
			if take(&c.jobs) {
				c.s.WorkFound(&idle, c.injected)
				c.ran.Add(1)
				return
			}
			switch c.s.NoWorkFound(&idle, c.stop.Load, c.injected, 0) {
			case Done:
				c.s.StopLooking(&idle)
				return
			case Search:
				// Rounds back at 0 without a job in the injector: the
				// worker slept and was woken.
				if idle.rounds == 0 && untilWoken {
					c.woken.Add(1)
					<-c.hold
					c.s.StopLooking(&idle)
					return
				}
			}
		}
	}()
}

// waitAsleep waits until each of workers is blocked.
func (c *crew) waitAsleep(t *testing.T, workers ...int) {
	t.Helper()
	testkit.WaitUntil(t, fmt.Sprintf("workers %v are all asleep", workers), func() bool {
		for _, i := range workers {
			if b, ok := c.s.blockedNow(i); !b || !ok {
				return false
			}
		}
		return true
	})
}

// wait waits for all the crew's workers to end.
func (c *crew) wait(t *testing.T) {
	t.Helper()
	c.letGo()
	ended := make(chan struct{})
	go func() { c.wg.Wait(); close(ended) }()
	testkit.WaitUntil(t, "the workers have ended", func() bool {
		select {
		case <-ended:
			return true
		default:
			return false
		}
	})
}

// shutdown ends every worker the polite way (done, then WakeWorker), and by
// force if that fails. If even that fails (a test already failed), it gives
// up after a few seconds and leaves the leak to goleak.
func (c *crew) shutdown() {
	c.letGo()
	c.stop.Store(true)
	for _, i := range c.started {
		c.s.WakeWorker(i)
	}
	ended := make(chan struct{})
	go func() { c.wg.Wait(); close(ended) }()
	for range 50 {
		select {
		case <-ended:
			return
		case <-time.After(100 * time.Millisecond):
			c.s.WakeAll()
			c.s.forceRelease()
		}
	}
}

// TestPostWakes checks how many sleepers a post wakes: min(n, sleeping),
// less the idle workers that are awake when the queue was empty; and that
// WorkFound wakes one.
func TestPostWakes(t *testing.T) {
	c := newCrew(t, 5)
	for i := range 4 {
		c.start(i, true)
	}
	c.waitAsleep(t, 0, 1, 2, 3)
	if got := c.s.Load(); got.Sleeping() != 4 || got.Inactive() != 4 || got.sleepy() == false {
		t.Fatalf("four sleepers: counters %v", got)
	}
	awake := c.s.StartLooking(4) // one idle worker, awake
	// Queue was empty, 2 jobs, 1 awake idle worker: wake 1.
	if got := c.s.NewInjectedJobs(2, true); got.Sleeping() != 4 || got.AwakeIdle() != 1 || got.sleepy() {
		t.Fatalf("post returned %v", got)
	}
	if got := c.s.Load().Sleeping(); got != 3 {
		t.Fatalf("after posting 2 jobs on an empty queue with 1 awake idle worker: %d sleeping, want 3", got)
	}
	// Queue was not empty: wake 2 (the JEC is odd: no bump).
	if got := c.s.NewInternalJobs(2, false); got.Sleeping() != 3 {
		t.Fatalf("post returned %v", got)
	}
	if got := c.s.Load().Sleeping(); got != 1 {
		t.Fatalf("after posting 2 jobs on a non-empty queue: %d sleeping, want 1", got)
	}
	// Post then Wake, with 1 job on an empty queue and the one awake idle
	// worker: nobody to wake.
	if got := c.s.Post(); got.Sleeping() != 1 || got.AwakeIdle() < 1 {
		t.Fatalf("Post returned %v", got)
	} else if c.s.Wake(got, 1, true); c.s.Load().Sleeping() != 1 {
		t.Fatalf("Wake(1 job, empty queue, awake idle workers) woke a sleeper")
	}
	// WorkFound of the awake worker wakes the last sleeper while jobs are
	// still queued, and nobody when none is.
	if c.s.WorkFound(&awake, func() bool { return false }); c.s.Load().Sleeping() != 1 {
		t.Fatalf("WorkFound with nothing queued woke a sleeper")
	}
	awake = c.s.StartLooking(4)
	if got := c.s.WorkFound(&awake, func() bool { return true }); got.Inactive() != 4 {
		t.Fatalf("WorkFound returned %v", got)
	}
	if got := c.s.Load().Sleeping(); got != 0 {
		t.Fatalf("after WorkFound: %d sleeping, want 0", got)
	}
	c.wait(t)
	if c.woken.Load() != 4 {
		t.Fatalf("%d workers woken, want 4", c.woken.Load())
	}
	if got := c.s.Load(); got.Sleeping() != 0 || got.Inactive() != 0 {
		t.Fatalf("final counters %v", got)
	}
}

// TestGrowWhileSleeping grows the slots while workers sleep: the sleepers
// stay asleep in their (unchanged) slots, new workers sleep in the new
// slots, and WakeAll or a post wakes them all.
func TestGrowWhileSleeping(t *testing.T) {
	testkit.ForBool(t, "WakeAll", "post", func(t *testing.T, byPost bool) {
		c := newCrew(t, 1)
		c.start(0, !byPost)
		c.waitAsleep(t, 0)
		slot0 := c.s.slot(0)
		c.s.Grow(2)
		c.s.Grow(4)
		c.s.Grow(3) // no-op
		if c.s.Workers() != 4 || c.s.slot(0) != slot0 {
			t.Fatalf("Grow: %d workers, slot 0 replaced %v", c.s.Workers(), c.s.slot(0) != slot0)
		}
		if b, _ := c.s.blockedNow(0); !b || c.s.Load().Sleeping() != 1 {
			t.Fatalf("Grow disturbed the sleeper: blocked %v, counters %v", b, c.s.Load())
		}
		for i := 1; i < 4; i++ {
			c.start(i, !byPost)
		}
		c.waitAsleep(t, 0, 1, 2, 3)
		if got := c.s.Load(); got.Sleeping() != 4 || got.Inactive() != 4 {
			t.Fatalf("four sleepers: counters %v", got)
		}
		if byPost {
			c.jobs.Add(4)
			c.s.NewInjectedJobs(4, false)
		} else {
			c.s.WakeAll()
		}
		// The wakers take the sleepers off the count at once.
		if got := c.s.Load().Sleeping(); got != 0 {
			t.Fatalf("%d still sleeping after the wake-up", got)
		}
		for i := range 4 {
			if b, _ := c.s.blockedNow(i); b {
				t.Fatalf("worker %d still blocked after the wake-up", i)
			}
		}
		c.wait(t)
		if byPost && c.ran.Load() != 4 || !byPost && c.woken.Load() != 4 {
			t.Fatalf("ran %d, woken %d", c.ran.Load(), c.woken.Load())
		}
		if got := c.s.Load(); got.Sleeping() != 0 || got.Inactive() != 0 {
			t.Fatalf("final counters %v", got)
		}
	})
}

func TestGrowLimit(t *testing.T) {
	s := New(0)
	if s.Workers() != 0 {
		t.Fatalf("New(0) has %d workers", s.Workers())
	}
	s.Grow(MaxWorkers) // the limit itself is allowed
	if s.Workers() != MaxWorkers {
		t.Fatalf("%d workers", s.Workers())
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Grow(MaxWorkers+1) did not panic")
		}
	}()
	s.Grow(MaxWorkers + 1)
}
