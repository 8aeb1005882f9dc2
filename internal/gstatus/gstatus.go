// Package gstatus lets one goroutine read another goroutine's scheduling
// status, the way the runtime's own monitor (sysmon) reads it: is the
// goroutine running, waiting for a CPU, in a system call, blocked in user
// code (a channel, a select, a sleep, a sync primitive, network or file
// I/O), or held by the runtime (for example by the garbage collector)?
//
// The scheduler (package sched) uses it to tell a worker that is blocked,
// and so is not using its CPU, from one that is busy or only delayed. It
// also reads and sets a goroutine's profiler labels, and gives a goroutine
// the address of its own, proven at start-up like the status (labels.go),
// so that a worker can read them with a load.
//
// # How it works
//
// Each goroutine has a record in the runtime, its g. A worker calls Self
// once, on itself, to note where its g is; after that any goroutine can
// call Read on the returned Handle, at any time, to load the status word
// and the wait reason from that g with atomic loads. Nothing is locked and
// nothing is allocated; a read costs a few nanoseconds.
//
// The runtime does not export its g, so this package relies on where the
// fields are in one Go release (layout_go126.go) and on the numbers the
// runtime gives its states. None of that is taken on trust: when the
// package is initialized, a check (check.go) parks goroutines in known
// ways (a channel receive, a mutex, a sleep, a pipe read, a system call,
// ...), reads them through the assumed layout, and compares what it reads
// with what runtime.Stack prints for the same goroutines. That check also
// learns which wait-reason values mean "blocked in user code"; no wait
// reason is numbered anywhere in this package. If anything disagrees, or
// the build is not one the layout was written for (another Go release,
// another operating system or architecture), the reader is off.
//
// # When the reader is off
//
// On reports whether the reader is on. When it is off, Self returns the
// zero Handle and every Read returns Unknown, so callers fall back to their
// other heuristics. Besides a failed check, two things turn it off:
//
//   - the environment variable STEAL_GSTATUS=off, read once when the
//     package is initialized, turns it off for the whole process (so that
//     a test suite can be run on the fallback); the check is then skipped;
//   - SetOff, for tests of other packages, turns it off and on again.
package gstatus

import (
	"errors"
	"os"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"
)

// Handle identifies one goroutine for reads by other goroutines. A
// goroutine gets its own Handle from Self; the Handle may then be copied
// and handed to any goroutine.
//
// The zero Handle stands for no goroutine: its Read returns Unknown.
type Handle struct {
	// g is the goroutine's g record. The runtime never frees a g (it keeps
	// every g it ever made, and reuses the g of an exited goroutine for a
	// new one) and the collector does not move objects, so the pointer
	// stays valid for the life of the process, whatever the goroutine does.
	g unsafe.Pointer
	// id is the goroutine's id, which tells this goroutine from a later
	// one that reuses the same g: ids are never reused.
	id uint64
}

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
	// Blocked: the goroutine is parked for one of the reasons the start-up
	// check saw user-level blocking parked for: a channel send or receive,
	// a select, a sleep, sync.Mutex, sync.RWMutex, sync.WaitGroup,
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
// off for the whole process. It is read once, when the package is
// initialized; any other value, or none, leaves the decision to the
// start-up check.
const envVar = "STEAL_GSTATUS"

var (
	// proven is set once, during package initialization, when the start-up
	// check passed (and STEAL_GSTATUS did not turn the reader off). It is
	// never written again, so it is read without synchronization.
	proven bool
	// on is what On returns: proven, unless SetOff turned the reader off.
	// Storing true publishes the learned wait reasons (init writes them
	// before it stores true).
	on atomic.Bool
	// offReason says why the reader was off after initialization (nil when
	// it was on), for tests and for whoever debugs a fallback.
	offReason error
	// checkTime is how long the start-up check took (zero if it did not
	// run).
	checkTime time.Duration
)

var (
	// errEnvOff is why the reader is off when STEAL_GSTATUS=off.
	errEnvOff = errors.New("gstatus: " + envVar + "=off")
	// errUnsupported is why the reader is off in a build that off.go
	// serves.
	errUnsupported = errors.New("gstatus: no layout of runtime.g for this Go release, operating system and architecture")
)

// init decides, once, whether the reader is on: unless STEAL_GSTATUS=off,
// it runs the start-up check (prove) on the initializing goroutine, and
// turns the reader on if the check passed.
func init() {
	if os.Getenv(envVar) == "off" {
		offReason = errEnvOff
		return
	}
	start := time.Now()
	err := prove()
	checkTime = time.Since(start)
	if err != nil {
		offReason = err
		return
	}
	proven = true
	labelsProven = proveLabels(labelsOffset)
	on.Store(true)
}

// On reports, with one atomic load, whether the reader is on: the start-up
// check passed and neither STEAL_GSTATUS=off nor SetOff turned it off.
// Callers that can fall back to other heuristics test it once, or simply
// treat Unknown from Read as "no information".
func On() bool { return on.Load() }

// SetOff turns the reader off (off true) or back on (off false; only
// possible if the start-up check passed), for tests of other packages that
// must exercise the fallback. While it is off, On reports false, Self
// returns the zero Handle and Read returns Unknown, also for Handles taken
// before. The returned restore puts back the state from before the call.
//
// SetOff affects the whole process. Tests that call it must not run in
// parallel with each other or with tests that need the reader on.
func SetOff(off bool) (restore func()) {
	prev := on.Load()
	on.Store(!off && proven)
	return func() { on.Store(prev) }
}

// Self returns the calling goroutine's Handle, or the zero Handle when the
// reader is off. A worker calls it once, on itself (typically when it
// starts), and publishes the result where the goroutines that will read it
// find it; taking it costs about as much as one Read.
func Self() Handle {
	if !on.Load() {
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
	if h.g == nil || !on.Load() {
		return Unknown
	}
	return read(h)
}
