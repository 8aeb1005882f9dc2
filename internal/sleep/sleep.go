package sleep

import (
	"runtime"
	"time"

	"github.com/go-steal/steal/internal/explore/atomic"
	"github.com/go-steal/steal/internal/explore/xsync"
)

// Test hooks. Each is nil in production and set only by this package's
// tests, which use them to stop a worker at a named point of the idle
// protocol and post a job (or make done true) exactly there, so that the
// interleavings the protocol must survive happen on every run instead of by
// chance. Each costs one load of a nil global, on a path where the worker is
// about to yield or sleep anyway.
var (
	// testHookAnnounced runs in NoWorkFound right after the worker announced
	// sleepiness (made the JEC even and remembered it), before it yields
	// and returns for its last search.
	testHookAnnounced func()
	// testHookSleep runs on entry to the sleep step, after the last search
	// and before the worker takes its sleep lock.
	testHookSleep func()
	// testHookRegister runs under the worker's sleep lock, after done()
	// returned false, just before the worker compares the JEC and registers
	// as a sleeper.
	testHookRegister func()
	// testHookRegistered runs under the worker's sleep lock right after it
	// registered as a sleeper, before its final look at the injector.
	testHookRegistered func()
	// testHookBlock runs after the worker set blocked and released its
	// sleep lock, just before it blocks on its wake channel (and timer).
	testHookBlock func()
	// testHookWakeLock runs in a waker that saw a sleeper's asleep flag
	// set, just before it takes that sleeper's lock: a worker held in
	// testHookRegister or testHookRegistered learns from it that a waker
	// has read what it needed and now waits for the lock.
	testHookWakeLock func()
)

// Sleep coordinates the idle workers of one pool. Worker i owns sleeper
// slot i: only worker i calls StartLooking, NoWorkFound, WorkFound and
// StopLooking with index i. Any goroutine may post jobs and wake workers.
//
// The set of slots grows (Grow) but never shrinks, so a pool can add
// workers while it runs. Sleep must be created by New.
type Sleep struct {
	c counters

	// sleepers is replaced by Grow, never modified below its length: a
	// reader that loaded the old slice sees every slot that existed then,
	// each slot is a pointer that stays valid, and a slot added later
	// belongs to a worker that did not exist when the reader loaded the
	// slice.
	sleepers atomic.Pointer[[]*sleeper]
	growMu   xsync.Mutex

	// spin: GOMAXPROCS was above 1 when last sampled (see SpinRounds):
	// by New, then by whoever calls SetSpin. runtime.GOMAXPROCS takes the
	// scheduler's lock, so it is not asked on every idle round.
	spin atomic.Bool

	// spinner is 1 while a worker makes search rounds (Idle.spinner): at
	// most one does at a time, and the others get sleepy at once. The Go
	// runtime's own idle threads already look for runnable goroutines, a
	// woken worker among them; a second worker searching our queues
	// doubles the cost of idling and seldom finds what the first would
	// not. Taken with a compare-and-swap, released with a store by its
	// holder: it only rations the rounds, and the protocol's proof (the
	// JEC) does not depend on it.
	spinner atomic.Uint32
	// spinFor bounds one spinner's rounds in time as well as in number
	// (SpinFor; 0: by number only). Set by New; tests that count the
	// rounds turn the bound off.
	spinFor time.Duration
}

// sleeper is the parking place of one worker. blocked is guarded by mu; it
// is true exactly while the worker is registered as sleeping (counted in
// Counters.Sleeping) and nobody has woken it yet.
type sleeper struct {
	// asleep lets a waker skip workers that are not about to sleep without
	// taking their locks. It is set, under mu, before the sleeper reads
	// its done condition and before it registers as a sleeper, and cleared
	// whenever blocked is cleared or the sleep is abandoned. So a waker
	// that loads asleep false after making done true (or after reading a
	// sleeper count that includes this worker) knows that the worker's own
	// later load of done (or its failed registration) will stop it.
	asleep atomic.Bool

	mu      xsync.Mutex
	blocked bool
	// wake carries one token from the waker to the sleeper. The waker
	// unparks only while it holds mu and finds blocked true, and sets
	// blocked to false in the same critical section, so at most one token
	// is ever in flight.
	wake *xsync.Parker

	// slept counts the times the worker blocked (set blocked), and woken
	// the times a waker unblocked it (cleared blocked). Written with Add
	// under mu, where blocked changes: slept by the worker before it
	// parks, woken by the waker before it unparks the worker. Read by
	// Tally, with Load, without mu: it sees a sleep from just before the
	// worker parks, and a wake-up from just before the worker resumes.
	slept, woken atomic.Uint64
}

// New returns a Sleep with n worker slots.
func New(n int) *Sleep {
	s := &Sleep{spinFor: SpinFor}
	s.spin.Store(runtime.GOMAXPROCS(0) > 1)
	s.sleepers.Store(new([]*sleeper))
	s.Grow(n)
	return s
}

// Grow makes sure there are at least n worker slots.
func (s *Sleep) Grow(n int) {
	if n > MaxWorkers {
		panic("sleep: too many workers")
	}
	s.growMu.Lock()
	defer s.growMu.Unlock()
	old := *s.sleepers.Load()
	if n <= len(old) {
		return
	}
	// Append in place when the array has room: readers of the old slice
	// read only its first len(old) elements, which stay as they are, so
	// writing past them races with nobody, and growing one slot at a
	// time stays amortized O(1) instead of copying every slot each time.
	grown := old
	for len(grown) < n {
		grown = append(grown, &sleeper{wake: xsync.NewParker()})
	}
	s.sleepers.Store(&grown)
}

// SetSpin says whether idle workers spin before they yield (see
// SpinRounds): they should when GOMAXPROCS > 1. The owner of the Sleep
// calls it when it learns that GOMAXPROCS changed.
func (s *Sleep) SetSpin(on bool) { s.spin.Store(on) }

// Workers reports the number of worker slots.
func (s *Sleep) Workers() int { return len(*s.sleepers.Load()) }

// Load returns the current counters.
func (s *Sleep) Load() Counters { return s.c.load() }

// Tally is what the workers of a Sleep have done since it was made.
type Tally struct {
	// Sleeps: times a worker blocked in NoWorkFound (registered as a
	// sleeper and parked). A sleep is counted when it starts, so it
	// includes the sleeps going on now.
	Sleeps uint64
	// Wakes: times a waker ended a sleep (Wake, WorkFound, WakeWorker,
	// WakeAll). A sleep that ends because its linger passed (NoWorkFound
	// returns Lingered) is not a wake.
	Wakes uint64
}

// Tally returns the counts of sleeps and wake-ups. Each only grows. A
// worker's sleep is counted before it parks, and its wake-up after that
// (by the waker, before it unparks the worker); Tally loads each worker's
// wake-ups before its sleeps, so in every Tally Sleeps ≥ Wakes, and
// Sleeps − Wakes is the sleeps going on plus those that lingered out.
func (s *Sleep) Tally() Tally {
	var t Tally
	for _, sl := range *s.sleepers.Load() {
		t.Wakes += sl.woken.Load()
		t.Sleeps += sl.slept.Load()
	}
	return t
}

// Idle is the state of one worker between StartLooking and WorkFound (or
// StopLooking). It belongs to that worker.
type Idle struct {
	worker int
	rounds int
	jec    uint32 // the JEC when this worker announced sleepiness
	// spinner: this worker holds the pool's one place for search rounds
	// (Sleep.spinner), from its first fruitless search until it finds
	// work, announces sleepiness or stops looking.
	spinner bool
	// woken: the worker's last sleep ended with a wake-up. If its next
	// search finds nothing, the job it was woken for went elsewhere (most
	// often to the poster itself, which ran it while it waited): it gets
	// sleepy at once, without search rounds.
	woken bool
	since int64 // nanotime of the spell's first fruitless search (the spinner's budget)
	// moved: the spell has made its one runtime.Gosched (Idle.yield).
	moved bool
}

// yield is a search round's yield. The spell's first goes through the
// runtime's global run queue (runtime.Gosched); the others stay on the
// P's local queue (yield, the runtime's goyield).
//
// A worker runs out of work just after its last task made someone
// runnable on its P more often than not: a Go parked at its group's limit,
// handed the slot the task freed; a Wait whose count reached zero. Those
// wait in the P's runnext, behind this worker. The first Gosched lets them
// run here while another P, woken by the runtime, takes this worker on:
// under a limit, the Go pushes its next task while this worker is already
// searching elsewhere.
//
// The tempting version, a Gosched at every round, pays a thread wake-up
// per round: each Gosched puts the worker on the global queue, the runtime
// wakes an idle P's thread for it, the worker moves there, and its next
// Gosched wakes the thread it left, just as the pool runs dry and those
// threads were going to sleep. The operating system places a woken thread
// beside its waker, so the process's threads stacked up on one CPU while
// another idled, until the kernel's next tick (4 ms) moved one: a service
// whose requests fan out short CPU tasks saw that in its tail latency.
// The other tempting version, goyield at every round, wakes nothing but
// leaves the worker behind what it made runnable: services whose groups
// have a limit took 15-25% longer per request.
func (idle *Idle) yield() {
	if !idle.moved {
		idle.moved = true
		xsync.Gosched()
		return
	}
	yield()
}

// Outcome is what NoWorkFound did.
type Outcome int

const (
	// Search: the worker yielded or was woken; it should search again.
	Search Outcome = iota
	// Done: the caller's done condition held; the worker did not sleep.
	Done
	// Lingered: the worker slept for the whole linger time and nobody woke
	// it. It is still inactive; it may search again or StopLooking and retire.
	Lingered
)

// StartLooking marks worker as idle and returns its idle state.
func (s *Sleep) StartLooking(worker int) Idle {
	s.c.addInactive()
	return Idle{worker: worker}
}

// WorkFound marks the worker as busy again and returns the counters as it
// left them. If others sleep and more reports that jobs are still queued,
// it wakes one.
//
// A poster that read the counters while this worker was still inactive may
// have woken nobody, counting on this worker to find its job; but this
// worker has found another, which it runs now. The poster pushed its job
// before that read, and the read came before our subtraction (or it would
// not have counted us), so more, which loads the queues after the
// subtraction, sees the job unless someone has taken it: then we pass the
// wake-up on. When nothing is queued (the job this worker was woken for
// was the only one), nobody is woken for nothing: a parked worker is woken
// once per job it must run.
func (s *Sleep) WorkFound(idle *Idle, more func() bool) Counters {
	s.stopSpinning(idle)
	old := s.c.subInactive()
	if old.Sleeping() > 0 && more() {
		s.wakeAny(1)
	}
	return old - oneInactive
}

// StopLooking takes the worker off the inactive count without waking
// anyone, and returns the counters as it left them. The worker retires, or
// stops idling for a reason of its own. It must not use this Idle again.
//
// A poster that saw this worker inactive counted on it to find its job. A
// worker that stops looking without a last search must therefore pass that
// on: if tasks are queued, wake a sleeper or start a worker (the caller's
// job, since only it knows where tasks are queued).
func (s *Sleep) StopLooking(idle *Idle) Counters {
	s.stopSpinning(idle)
	return s.c.subInactive() - oneInactive
}

// startSpinning takes the spinner's place for idle's worker, if it is
// free, and reports whether it did.
func (s *Sleep) startSpinning(idle *Idle) bool {
	if s.spinner.Load() != 0 || !s.spinner.CompareAndSwap(0, 1) {
		return false
	}
	idle.spinner = true
	if s.spinFor > 0 {
		idle.since = nanotime()
	}
	return true
}

// stopSpinning gives the spinner's place up, if idle's worker holds it.
func (s *Sleep) stopSpinning(idle *Idle) {
	if idle.spinner {
		idle.spinner = false
		s.spinner.Store(0)
	}
}

// spun reports whether the spinner's rounds have used up their time
// (spinFor).
func (s *Sleep) spun(idle *Idle) bool {
	return s.spinFor > 0 && nanotime()-idle.since >= int64(s.spinFor)
}

// NoWorkFound is called by an idle worker after each fruitless search; see
// the package documentation for the three steps.
//
// done is the worker's reason to stop idling (its pool is shutting down, or
// the group it waits for has finished). It is evaluated under the worker's
// sleep lock just before the worker would sleep; whoever makes done true
// must then call WakeWorker(worker), so that a worker that saw done false
// is either not yet asleep or is woken.
//
// injected reports whether the pool's injector holds jobs; it must read the
// injector with an atomic operation (see the package documentation on JEC
// wrap-around).
//
// linger > 0 bounds one sleep: after that long without a wake-up the worker
// returns Lingered. linger ≤ 0 sleeps until woken.
func (s *Sleep) NoWorkFound(idle *Idle, done, injected func() bool, linger time.Duration) Outcome {
	if idle.rounds == 0 && (idle.woken || !s.startSpinning(idle)) {
		// Woken for a job that went elsewhere, or another worker makes
		// the rounds: get sleepy now.
		idle.rounds = Rounds
	} else if idle.rounds < Rounds && s.spun(idle) {
		idle.rounds = Rounds
	}
	switch {
	case idle.rounds < SpinRounds && s.spin.Load():
		idle.rounds++
		return Search
	case idle.rounds < Rounds:
		idle.rounds++
		idle.yield()
		return Search
	case idle.rounds == Rounds:
		s.stopSpinning(idle)
		// Make the JEC even, and remember it. From here on, a poster that
		// reads the counters sees the JEC even and bumps it, which our
		// check in sleep notices; a job pushed before that read is found
		// by the search the caller makes after we return.
		idle.jec = s.c.bumpJECIf(false).JEC()
		idle.rounds++
		if testHookAnnounced != nil {
			testHookAnnounced()
		}
		idle.yield()
		return Search
	default:
		return s.sleep(idle, done, injected, linger)
	}
}

func (s *Sleep) sleep(idle *Idle, done, injected func() bool, linger time.Duration) Outcome {
	if testHookSleep != nil {
		testHookSleep()
	}
	sl := (*s.sleepers.Load())[idle.worker]
	sl.mu.Lock()
	// Announce before reading done: a waker stores done, then loads
	// asleep; we store asleep, then load done. One of us sees the other.
	sl.asleep.Store(true)
	// Under the lock: whoever sets done calls WakeWorker after, which takes
	// this lock. Either it ran before we locked (we see done) or it will
	// find blocked set below and wake us.
	if done() {
		sl.asleep.Store(false)
		sl.mu.Unlock()
		idle.rounds, idle.jec = 0, 0
		return Done
	}
	if testHookRegister != nil {
		testHookRegister()
	}
	for {
		c := s.c.load()
		if c.JEC() != idle.jec {
			// A job was posted since we announced sleepiness, and the last
			// search missed it (or it was taken meanwhile). Search again,
			// and get sleepy again right away if nothing turns up.
			sl.asleep.Store(false)
			sl.mu.Unlock()
			idle.rounds = Rounds
			return Search
		}
		// The compare-and-swap fails if anything in the word changed,
		// including the JEC; then we re-check from a fresh load.
		if s.c.tryAddSleeping(c) {
			break
		}
	}
	if testHookRegistered != nil {
		testHookRegistered()
	}
	// Registered as a sleeper. The JEC comparison cannot tell a counter
	// that wrapped around 2³² posts back to our value from one that never
	// moved. Look at the injector once more: an injected job could be the
	// one whose post we missed, and no running worker is bound to run it.
	// (This load comes after our registration in the total order, so a
	// poster that pushed later sees us as a sleeper and wakes someone.)
	if injected() {
		s.c.subSleeping()
		sl.asleep.Store(false)
		sl.mu.Unlock()
		idle.rounds, idle.jec = 0, 0
		return Search
	}
	sl.blocked = true
	sl.slept.Add(1)
	sl.mu.Unlock()
	if testHookBlock != nil {
		testHookBlock()
	}

	out := Search
	if linger <= 0 {
		sl.wake.Park()
	} else if !sl.wake.ParkFor(linger) {
		sl.mu.Lock()
		if sl.blocked {
			// Nobody woke us: unregister ourselves.
			sl.blocked = false
			sl.asleep.Store(false)
			s.c.subSleeping()
			out = Lingered
		} else {
			// A waker beat the timer: its token is already there (left
			// under the lock we now hold). Take it so the next sleep
			// starts without one.
			sl.wake.Park()
		}
		sl.mu.Unlock()
	}
	idle.rounds, idle.jec = 0, 0
	idle.woken = out == Search
	return out
}

// NewInjectedJobs announces n jobs pushed onto the pool's injector;
// NewInternalJobs announces n jobs pushed onto a worker's deque. Each must be
// called after the push. queueWasEmpty tells whether the queue held nothing
// before the push: if it held jobs, the idle workers awake now were not
// enough, so sleepers are woken even when some workers are awake.
//
// Both return the counters as the post left them, so the caller can tell
// whether any worker is idle (for example, to decide to start a new one).
func (s *Sleep) NewInjectedJobs(n int, queueWasEmpty bool) Counters {
	return s.newJobs(n, queueWasEmpty)
}

// NewInternalJobs announces n jobs pushed onto a worker's deque; see
// NewInjectedJobs.
func (s *Sleep) NewInternalJobs(n int, queueWasEmpty bool) Counters {
	return s.newJobs(n, queueWasEmpty)
}

// newJobs is Post and Wake in one frame: Post is too large for the
// compiler to inline, and a post onto a deque comes with every Go inside a
// task, so its body is repeated here rather than called.
func (s *Sleep) newJobs(n int, queueWasEmpty bool) Counters {
	c := s.c.load()
	if c.sleepy() {
		c = s.postSleepy()
	}
	s.Wake(c, n, queueWasEmpty)
	return c
}

// The two entry points are the same in Go: the push is an atomic operation
// and so is our first load of the counters, and sequential consistency
// orders them. (Rayon needs a fence for injected jobs because its injector
// publishes with release/acquire only.)

// Post is the first half of NewInternalJobs and NewInjectedJobs, for a
// caller that wants to learn whether anyone sleeps before it works out
// queueWasEmpty: it makes the JEC odd if it is even (one load when it is
// already odd) and returns the counters. If c.Sleeping() > 0 the caller
// must then call Wake(c, ...).
func (s *Sleep) Post() Counters {
	// Make the JEC odd, which keeps sleepy workers from falling asleep with
	// our job unseen. It mostly is already (nobody got sleepy since the
	// last post): then this is the one load. (newJobs repeats this.)
	if c := s.c.load(); !c.sleepy() {
		return c
	}
	return s.postSleepy()
}

// postSleepy is Post once a worker got sleepy since the last post, kept
// out of line: it is the rare case.
//
//go:noinline
func (s *Sleep) postSleepy() Counters { return s.c.bumpJECIf(true) }

// Wake is the second half: it wakes the sleepers that n new jobs need,
// given the counters c that Post returned.
func (s *Sleep) Wake(c Counters, n int, queueWasEmpty bool) {
	if c.Sleeping() != 0 {
		s.wakeSome(c, n, queueWasEmpty)
	}
}

// wakeSome is Wake once some worker sleeps; Wake itself is small enough to
// be inlined into every post.
func (s *Sleep) wakeSome(c Counters, n int, queueWasEmpty bool) {
	sleeping := c.Sleeping()
	wake := n
	if queueWasEmpty {
		// The awake idle workers will find the first jobs.
		wake = n - c.AwakeIdle()
	}
	if wake > sleeping {
		wake = sleeping
	}
	if wake > 0 {
		s.wakeAny(wake)
	}
}

// wakeAny wakes up to n sleeping workers.
func (s *Sleep) wakeAny(n int) {
	for _, sl := range *s.sleepers.Load() {
		if s.wake(sl) {
			if n--; n == 0 {
				return
			}
		}
	}
}

// WakeAll wakes every sleeping worker (for example, to shut a pool down).
func (s *Sleep) WakeAll() {
	for _, sl := range *s.sleepers.Load() {
		s.wake(sl)
	}
}

// WakeWorker wakes worker i if it sleeps, and reports whether it did.
func (s *Sleep) WakeWorker(i int) bool { return s.wake((*s.sleepers.Load())[i]) }

func (s *Sleep) wake(sl *sleeper) bool {
	if !sl.asleep.Load() {
		return false // see sleeper.asleep
	}
	if testHookWakeLock != nil {
		testHookWakeLock()
	}
	sl.mu.Lock()
	if !sl.blocked {
		sl.mu.Unlock()
		return false
	}
	sl.blocked = false
	sl.woken.Add(1)
	sl.asleep.Store(false)
	// The waker, not the sleeper, takes it off the sleeping count, at once:
	// otherwise posters would keep counting a worker that is already on its
	// way back as a sleeper that needs waking.
	s.c.subSleeping()
	sl.wake.Unpark()
	sl.mu.Unlock()
	return true
}
