// Package gstatus lets one goroutine read another goroutine's scheduling
// status, the way the runtime's own monitor (sysmon) reads it: is the
// goroutine running, waiting for a CPU, in a system call, blocked in user
// code (a channel, a select, a sleep, a sync primitive, network or file
// I/O), or held by the runtime (for example by the garbage collector)?
//
// The scheduler (package sched) uses it to tell a worker that is blocked,
// and so is not using its CPU, from one that is busy or only delayed. It
// also reads and sets a goroutine's profiler labels, and gives a goroutine
// the address of its own once that address is proven (labels.go), so that
// a worker can read them with a load.
//
// # How it works
//
// Each goroutine has a record in the runtime, its g. A worker calls Self
// once, on itself, to note where its g is; after that any goroutine can
// call Read on the returned Handle, at any time, to load the status word
// and the wait reason from that g with atomic loads. Nothing is locked and
// nothing is allocated; a read costs a few nanoseconds.
//
// The runtime does not export its g, and this package states no offset in
// it: a check (check.go) finds where the fields are in the running
// program and proves it. It parks probe goroutines in known ways (a
// channel receive, a mutex, a sleep, a pipe read, a system call, ...),
// and searches the first words of their g records, and of running
// goroutines', for the one place that holds each goroutine's id (as
// runtime.Stack prints it), the one that reads "running" on every running
// goroutine, "waiting" on every parked probe, "in a system call" on the
// probe in read(2) and "dead" once the probes have exited, the one byte
// that is the same for probes parked the same way and different for
// probes parked differently (the wait reason), and the one word that
// follows the goroutine's profiler labels through three changes. Each
// must be found exactly once; the wait-reason values the probes read are
// what Read calls Blocked, so no wait reason is numbered anywhere here.
// The search runs on every Go release, so a new one needs no new table;
// TestLayoutMatchesDWARF compares what it finds with the debug information
// of the toolchain that runs the tests.
//
// # When the check runs
//
// Not when the package is initialized: importing it costs a program
// nothing. The first caller of Start (the scheduler calls it when its pool
// starts its first worker) runs the check on a goroutine of its own,
// which exits when the check is done, a few milliseconds later; Prove runs
// it and waits. Until the check has passed, On reports false and every
// Read returns Unknown, so callers use their fallback meanwhile. A check
// that runs out of time (a machine too busy to run the probes) is tried
// again by a later Start, later each time; one that finds no layout,
// or an ambiguous one, leaves the reader off for the life of the process.
//
// # When the reader is off
//
// Read returns Unknown and LabelsWord nil while the reader is off: before
// the check has passed, and for good on a port that has no reader (any
// operating system but Linux, or an architecture other than amd64, arm64,
// 386 and arm: off.go), after a check that found no layout, or when the
// environment variable STEAL_GSTATUS=off (read by the first Start, Prove
// or Self) turns it off, so that a test suite can be run on the fallback;
// no check runs then. SetOff, for tests of other packages, turns it off
// and on again.
package gstatus

import (
	"errors"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Status is what one Read saw a goroutine doing.
type Status uint8

const (
	// Unknown: the reader is off, the Handle is the zero Handle, or the
	// goroutine is gone (it exited, and its g may already serve another
	// goroutine). Unknown never stands for a live goroutine's state.
	Unknown Status = iota
	// Running: the goroutine is executing on a CPU (or is about to, or
	// has just stopped: the runtime's transitions take a moment).
	Running
	// Runnable: the goroutine is ready to run and waiting for a CPU.
	Runnable
	// Syscall: the goroutine is in a system call (which may block, such as
	// a read from a pipe, or not).
	Syscall
	// Blocked: the goroutine is parked for one of the reasons the check
	// saw user-level blocking parked for: a channel send or receive, a
	// select, a sleep, sync.Mutex, sync.RWMutex, sync.WaitGroup,
	// sync.Cond, or network and file I/O through the runtime's poller.
	Blocked
	// Waiting: the goroutine is parked for any other reason: the garbage
	// collector's own waits (an assist, a stop for a stack scan, a wait
	// for a collection to finish), the runtime's semaphores, or a reason
	// the check did not learn. It never counts as blocked.
	Waiting
)

// statusNames are the names String returns.
var statusNames = [...]string{
	Unknown:  "Unknown",
	Running:  "Running",
	Runnable: "Runnable",
	Syscall:  "Syscall",
	Blocked:  "Blocked",
	Waiting:  "Waiting",
}

// String returns the constant's name, such as "Blocked".
func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "Status(" + strconv.Itoa(int(s)) + ")"
}

// envVar is the environment variable that, set to "off", turns the reader
// off for the whole process. Any other value, or none, leaves the decision
// to the check.
const envVar = "STEAL_GSTATUS"

// A check that runs out of time (its probes did not get a CPU within the
// check's bound: see check.go) proves nothing, and a machine that busy is
// likely to be less busy later: the n-th such check is followed by
// another, at the next Start, no sooner than retryAfter << n later (at
// most retryMax).
const (
	retryAfter = time.Second
	retryMax   = time.Minute
)

// The reader's states (state).
const (
	// stateUndecided: no check has passed or failed for good; Start runs
	// one (unless retryAt is still ahead).
	stateUndecided uint32 = iota
	// stateChecking: a check runs.
	stateChecking
	// stateOn: a check passed; found holds what it found.
	stateOn
	// stateOff: the reader is off for the life of the process (offReason
	// says why).
	stateOff
)

var (
	// state is one of the states above. It moves forward only, but for a
	// check that ran out of time, which puts it back to stateUndecided.
	state atomic.Uint32
	// on is what On returns: state is stateOn and SetOff has not turned
	// the reader off. The check writes found before it stores true, so a
	// load that sees true sees found.
	on atomic.Bool
	// testOff is set by SetOff(true): Self returns the zero Handle.
	testOff atomic.Bool

	// mu serializes the checks and guards the fields below it.
	mu sync.Mutex
	// tries counts the checks that ran out of time.
	tries int
	// retryAt is when the next Start may try again after a check that ran
	// out of time (nanoseconds since the Unix epoch).
	retryAt atomic.Int64
	// offReason says why the last check failed, or why the reader is off
	// for good (nil while it is on or undecided).
	offReason error
	// checkTime is how long the last check took (zero: none ran).
	checkTime time.Duration
)

var (
	// errEnvOff is why the reader is off when STEAL_GSTATUS=off.
	errEnvOff = errors.New("gstatus: " + envVar + "=off")
	// errUnsupported is why the reader is off in a build that off.go
	// serves.
	errUnsupported = errors.New("gstatus: no reader for this operating system and architecture")
)

// errTimeout marks a check that failed because it ran out of time, not
// because the layout disagreed: Start may try again.
var errTimeout = errors.New("gstatus: the check ran out of time")

// On reports, with one atomic load, whether the reader is on: a check
// passed and SetOff has not turned it off. Callers that can fall back to
// other heuristics test it, or simply treat Unknown from Read as "no
// information".
func On() bool { return on.Load() }

// Started reports whether the reader has been asked for: a Start or a
// Prove has run (a check may still be running).
func Started() bool { return state.Load() != stateUndecided || retryAt.Load() != 0 }

// Unavailable reports why no check can ever turn the reader on in this
// process (errUnsupported on a port without a reader, errEnvOff under
// STEAL_GSTATUS=off), or nil when one may. It runs no check, and is
// known before any: for tests that must skip where statuses are never read.
func Unavailable() error {
	switch {
	case !supported:
		return errUnsupported
	case os.Getenv(envVar) == "off":
		return errEnvOff
	}
	return nil
}

// Decided reports whether a check has decided the reader: it is on, or
// off for good. Until then (before the first Start, while a check runs,
// and between a check that ran out of time and the next) it is not.
func Decided() bool {
	s := state.Load()
	return s == stateOn || s == stateOff
}

// Start makes sure the reader is decided or being decided: the first call
// (and a later one after a check that ran out of time) starts the check on
// a goroutine of its own and returns at once; every other call costs one
// atomic load. The reader turns on when the check passes, a few
// milliseconds later.
func Start() {
	if state.Load() != stateUndecided {
		return
	}
	if at := retryAt.Load(); at != 0 && time.Now().UnixNano() < at {
		return
	}
	if !state.CompareAndSwap(stateUndecided, stateChecking) {
		return
	}
	go func() {
		mu.Lock()
		defer mu.Unlock()
		if state.Load() == stateChecking { // not decided by a Prove meanwhile
			decide()
		}
	}()
}

// Prove decides the reader now, unless a check has already decided it,
// and returns why it is off (nil: it is on). It waits for a check that
// runs, and runs one itself if the reader is undecided, without waiting
// for retryAt. Tests call it, so that they run with the reader decided.
func Prove() error {
	mu.Lock()
	defer mu.Unlock()
	if s := state.Load(); s == stateUndecided || s == stateChecking {
		// stateChecking: a Start's goroutine has set it but does not
		// hold mu yet; run the check for it (it will find the reader
		// decided, or undecided again, and do nothing).
		state.Store(stateChecking)
		decide()
	}
	return offReason
}

// decide runs the check and records its outcome. The caller holds mu and
// has set stateChecking.
func decide() {
	if offReason = Unavailable(); offReason == nil {
		start := time.Now()
		f, err := prove()
		checkTime = time.Since(start)
		offReason = err
		if err == nil {
			keep(f)
			state.Store(stateOn)
			on.Store(!testOff.Load())
			return
		}
		if errors.Is(err, errTimeout) {
			tries = min(tries+1, 6)
			retryAt.Store(time.Now().Add(min(retryAfter<<tries, retryMax)).UnixNano())
			state.Store(stateUndecided)
			return
		}
	}
	state.Store(stateOff)
}

// SetOff turns the reader off (off true) or back on (off false; only
// possible once a check passed), for tests of other packages that must
// exercise the fallback. While it is off, On reports false, Self returns
// the zero Handle and Read returns Unknown, also for Handles taken before.
// The returned restore puts back the state from before the call.
//
// SetOff affects the whole process. Tests that call it must not run in
// parallel with each other or with tests that need the reader on.
func SetOff(off bool) (restore func()) {
	mu.Lock()
	defer mu.Unlock()
	prev := testOff.Load()
	set := func(off bool) {
		testOff.Store(off)
		on.Store(!off && state.Load() == stateOn)
	}
	set(off)
	return func() {
		mu.Lock()
		defer mu.Unlock()
		set(prev)
	}
}

// Self returns the calling goroutine's Handle, or the zero Handle when the
// reader is off for good or turned off by SetOff. A worker calls it once,
// on itself (typically when it starts), and publishes the result where the
// goroutines that will read it find it. A Handle taken before the check
// has passed reads Unknown until it passes, and the goroutine's status
// after that. Once the check has passed, taking a Handle costs about as
// much as one Read; before, about a microsecond (the goroutine's id comes
// from runtime.Stack then).
func Self() Handle {
	if !supported || testOff.Load() || state.Load() == stateOff {
		return Handle{}
	}
	return self()
}

// Read reports what the goroutine of h was doing at one moment during the
// call. Any goroutine may call it, at any time, concurrently with anything
// the goroutine of h does, including exiting; it never blocks, never
// allocates and costs a few nanoseconds.
//
// The result is a snapshot and may be stale by the time Read returns. What
// Read guarantees is that it never reports another goroutine's status: if
// the goroutine of h has exited, Read returns Unknown, even when its g has
// since been given to a new goroutine. Read also returns Unknown when the
// reader is off or h is the zero Handle.
func (h Handle) Read() Status {
	if !on.Load() {
		return Unknown
	}
	return read(h)
}
