//go:build go1.26 && !go1.27 && linux && (amd64 || arm64)

// This file is the one place that states what this package assumes about
// the runtime of one Go release. Every file of the reader carries the same
// build constraint; off.go carries its negation. For a new Go release,
// re-derive everything below from that release's src/runtime/runtime2.go,
// copy this file under the new release's name, widen the constraint of the
// reader's files (read.go, check.go, probes.go, stack.go, getg_*.s, and
// their tests) and narrow off.go's; TestLayoutMatchesDWARF checks the
// offsets against the new toolchain's debug information, and the start-up
// check proves the rest on every run.

package gstatus

import "unsafe"

// Offsets of three fields of runtime.g (src/runtime/runtime2.go) in go1.26,
// the same on amd64 and arm64 (every field before them is pointer-sized
// or a struct of pointer-sized fields):
//
//	stack        stack    //   0: lo, hi uintptr
//	stackguard0  uintptr  //  16
//	stackguard1  uintptr  //  24
//	_panic       *_panic  //  32
//	_defer       *_defer  //  40
//	m            *m       //  48
//	sched        gobuf    //  56: sp, pc, g, ctxt, lr, bp: 6 words
//	syscallsp    uintptr  // 104
//	syscallpc    uintptr  // 112
//	syscallbp    uintptr  // 120
//	stktopsp     uintptr  // 128
//	param        unsafe.Pointer // 136
//	atomicstatus atomic.Uint32  // 144  <- statusOffset
//	stackLock    uint32         // 148
//	goid         uint64         // 152  <- goidOffset
//	schedlink    guintptr       // 160
//	waitsince    int64          // 168
//	waitreason   waitReason     // 176  <- reasonOffset (a uint8)
//
// The whole g is 456 bytes (gSize); gBound keeps every read of another
// goroutine's g well inside it. A goroutine also reads one field of its
// own g, further on:
//
//	labels       unsafe.Pointer // 352  <- labelsOffset (profiler labels)
const (
	statusOffset = 144
	goidOffset   = 152
	reasonOffset = 176
	labelsOffset = 352
	gSize        = 456
)

// gBound is a bound on the offsets a layout may name: every read stays
// below it, inside the g (TestLayoutMatchesDWARF checks the g is larger).
const gBound = 256

// goLayout is the layout of this Go release.
var goLayout = layout{status: statusOffset, goid: goidOffset, reason: reasonOffset}

// The runtime's goroutine states (the _G constants of runtime2.go) that
// this package tells apart. The start-up check observes gRunning (the
// checking goroutine), gWaiting (parked probes), gSyscall (the probe in
// read(2)) and gDead (probes after they exit); gRunnable is the state
// between gIdle and gRunning in the same list and cannot be produced on
// demand. gCopystack, gPreempted and gLeaked are states in which the
// runtime holds a goroutine (moving its stack, stopping it for the
// collector, or reporting it leaked); Read reports them as Waiting, which
// never counts as blocked.
const (
	gIdle      = 0
	gRunnable  = 1
	gRunning   = 2
	gSyscall   = 3
	gWaiting   = 4
	gDead      = 6
	gCopystack = 8
	gPreempted = 9
	gLeaked    = 10
	// gScan is a bit the collector sets on top of a state while it scans
	// the goroutine's stack; the state underneath is the goroutine's.
	gScan = 0x1000
)

// getg returns the calling goroutine's g (getg_amd64.s, getg_arm64.s).
// It is an unsafe.Pointer, not a uintptr, so that the race detector's
// pointer checks see a pointer into the g object, not an integer.
func getg() unsafe.Pointer
