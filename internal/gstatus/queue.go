package gstatus

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"
	_ "unsafe" // for go:linkname
)

// The run queue of the caller's P.
//
// Contended tells a goroutine whether another goroutine waits for the
// processor (the runtime's P) it runs on: a goroutine in the P's local run
// queue or in its runnext slot, or a timer on the P that is due (whose
// goroutine or function runs only once the P gets to it). The scheduler
// asks at the end of each task, where a goroutine of errgroup's would have
// ended and let the P run what waits (see package sched).
//
// It reads the runtime's m, p and timers records through a layout stated
// per release (queue_read.go), not searched: it needs a pointer chain
// (g → m → p), and following a wrong offset would dereference garbage.
// So the reader turns on only on a release it has a layout for, and only
// after a check at first use (StartQueue, ProveQueue) has seen the layout
// behave: the chain leads back to the running goroutine (m.curg) and to
// its M (p.m), a go statement's new goroutine appears in runnext and the
// one it displaced at the tail of the run queue, and a timer just set
// appears as the P's earliest. TestQueueLayoutMatchesDWARF compares the
// layouts with the debug information of the toolchain that runs it, for
// every architecture with a reader. Elsewhere, and until the check has
// passed, Contended reports that nothing waits; STEAL_GSTATUS=off and
// SetOff turn it off with the status reader.
//
// Under the race detector the runtime puts half of the goroutines it
// readies at the tail of the run queue instead of in runnext (to vary the
// schedules it explores); Snapshot.Tail shows those.

// queueOn is what QueueOn returns: the check passed and SetOff has not
// turned the readers off. The check writes qfound before it stores true.
var queueOn atomic.Bool

var (
	// queueState is one of the reader's states (stateUndecided,
	// stateChecking, stateOn, stateOff, as for the status reader); it
	// goes back from stateChecking to stateUndecided after a check that
	// the machine was too busy to conclude.
	queueState atomic.Uint32
	// queueRetryAt is when StartQueue may check again after such a check
	// (nanoseconds of the runtime's clock; 0: at once).
	queueRetryAt atomic.Int64
	// queueMu serializes the checks and guards queueErr and queueBusy.
	queueMu sync.Mutex
	// queueErr says why the queue reader is off or undecided (nil: on).
	queueErr error
	// queueBusy counts the checks that could not conclude.
	queueBusy int
	// queueProven: the check passed (SetOff turns queueOn back on only
	// then).
	queueProven atomic.Bool
)

// A check that could not conclude (errQueueBusy: the P was too busy to
// show the layout either way) is followed by another at the next
// StartQueue no sooner than queueRetry << n later (n such checks so far,
// at most queueRetryMax).
const (
	queueRetry    = 10 * time.Millisecond
	queueRetryMax = 10 * time.Second
)

// QueueOn reports, with one atomic load, whether Contended reads the
// runtime: its check passed and SetOff has not turned it off.
func QueueOn() bool { return queueOn.Load() }

// StartQueue makes sure the queue reader is decided or being decided: the
// first call (and a later one after a check that could not conclude)
// starts its check on a goroutine of its own, which exits when the check
// is done (well under a millisecond on an idle machine), and returns at
// once; every other call costs an atomic load or two.
func StartQueue() {
	if queueState.Load() != stateUndecided {
		return
	}
	if at := queueRetryAt.Load(); at != 0 && nanotime() < at {
		return
	}
	if !queueState.CompareAndSwap(stateUndecided, stateChecking) {
		return
	}
	go func() {
		queueMu.Lock()
		defer queueMu.Unlock()
		if queueState.Load() == stateChecking { // not decided by a ProveQueue meanwhile
			decideQueue()
		}
	}()
}

// ProveQueue decides the queue reader now, unless it is decided, and
// returns why it is off (nil: on). It checks until a check concludes (at
// most a few times). Tests call it.
func ProveQueue() error {
	queueMu.Lock()
	defer queueMu.Unlock()
	for range 20 {
		if s := queueState.Load(); s == stateOn || s == stateOff {
			break
		}
		queueState.Store(stateChecking)
		decideQueue()
	}
	return queueErr
}

// UseQueue decides the queue reader now, as ProveQueue does, and returns
// why it is off (nil: on) and a release that puts the reader back as it
// was if nothing had asked for it before the call: off, and undecided
// again, so that the next StartQueue checks afresh. Whoever turns the
// queue reader on turns on whatever reads it for the whole process (the
// scheduler gives way at task ends while it is on), so a test that needs
// the reader takes it with UseQueue and releases it when it ends: the
// tests after it run as they would without it.
func UseQueue() (release func(), err error) {
	queueMu.Lock()
	before := queueState.Load()
	queueMu.Unlock()
	err = ProveQueue()
	if before != stateUndecided {
		// Decided, or being decided for someone else (the pool's
		// StartQueue): not this call's to undo.
		return func() {}, err
	}
	return undecideQueue, err
}

// undecideQueue puts the queue reader back as it is when the process
// starts: off and undecided.
func undecideQueue() {
	queueMu.Lock()
	defer queueMu.Unlock()
	mu.Lock() // against SetOff, which sets queueOn from queueProven
	queueProven.Store(false)
	queueOn.Store(false)
	mu.Unlock()
	queueErr, queueBusy = nil, 0
	queueRetryAt.Store(0)
	queueState.Store(stateUndecided)
}

// decideQueue runs the check and records its outcome. The caller holds
// queueMu and has set stateChecking.
func decideQueue() {
	switch {
	case !supported:
		queueErr = errUnsupported
	case os.Getenv(envVar) == "off":
		queueErr = errEnvOff
	default:
		queueErr = proveQueue()
	}
	switch {
	case queueErr == nil:
		mu.Lock() // against SetOff
		queueProven.Store(true)
		queueOn.Store(!testOff.Load())
		mu.Unlock()
		queueState.Store(stateOn)
	case errors.Is(queueErr, errQueueBusy):
		queueBusy = min(queueBusy+1, 10)
		queueRetryAt.Store(nanotime() + int64(min(queueRetry<<queueBusy, queueRetryMax)))
		queueState.Store(stateUndecided)
	default:
		queueState.Store(stateOff)
	}
}

// errQueueBusy marks a check that could not conclude: the goroutines it
// started were taken by other Ps, the checking goroutine kept moving, or
// the P always had an earlier timer than the one it set.
var errQueueBusy = errors.New("gstatus: the run-queue check could not conclude (a busy machine)")

// Waiters says what waits for the caller's P (Contended).
type Waiters uint8

const (
	// RunNext: a goroutine is in the P's runnext slot, where the runtime
	// puts a goroutine that this P has just readied (a channel send, an
	// unlock, a wake-up from a timer or from Go's netpoller when no other
	// P was idle) or started with a go statement: the one the P runs
	// next.
	RunNext Waiters = 1 << iota
	// RunQueue: goroutines are in the P's local run queue: ones pushed
	// out of runnext by a later one, handed over in a batch from the
	// global queue (where the runtime puts goroutines it preempted, such
	// as CPU-bound ones at the end of their time slice), or stolen.
	RunQueue
	// TimerDue: a timer on the P is due; its goroutine (a time.Sleep, a
	// time.After) or function becomes ready only when the P runs it.
	TimerDue
)

// A Snapshot is what Contended read of the caller's P.
type Snapshot struct {
	Waiters Waiters
	// Next is the goroutine in the P's runnext slot, as Current would
	// return it on that goroutine (0: none).
	Next uintptr
	// Tail counts the goroutines ever put in the P's local run queue (the
	// runtime's runqtail, which wraps): a change between two snapshots of
	// the same P means goroutines were queued.
	Tail uint32
	// P is the P's id (-1: none was read).
	P int32
}

// Contended reports what waits for the P the caller runs on: goroutines
// in its runnext slot or local run queue and, if timers is true, a timer
// that is due. It never blocks or allocates and costs a few nanoseconds
// (tens when timers is true and the P has a timer: a clock read). It is a
// snapshot: the caller may move to another P as it returns. While the
// queue reader is off it reports no waiters and P -1.
func Contended(timers bool) Snapshot {
	if !queueOn.Load() {
		return Snapshot{P: -1}
	}
	return contended(timers)
}

// Current returns an identity of the calling goroutine that Contended's
// next can be compared with: the address of its g (which the runtime
// reuses for a later goroutine once it exits). 0 while the queue reader is
// off.
func Current() uintptr {
	if !queueOn.Load() {
		return 0
	}
	return uintptr(getg())
}

// Nanotime is the runtime's monotonic clock, the one its timers use.
func Nanotime() int64 { return nanotime() }

// nanotime is the runtime's clock: the runtime exports it for such use.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64
