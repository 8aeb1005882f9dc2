package sched

import (
	"context"
	"runtime/trace"
	"time"

	"github.com/go-steal/steal/internal/explore/atomic"
	"github.com/go-steal/steal/internal/explore/xsync"
	"github.com/go-steal/steal/internal/gid"
)

// Group is the scheduler's side of a wsgroup.Group: the count of its
// unfinished tasks, its limit, its first error, and its failure modes. It
// owns no workers: every group runs on the process's pool. The zero value
// is a group with no limit.
type Group struct {
	// state packs, from the low bits up: two flag bits that say whether
	// goroutines are parked waiting for the group to finish (bitDone) or
	// for a free slot (bitSlot); the number of active tasks (queued, set
	// aside for a slot, or running: not yet finished); a hint for outside
	// Go calls at a full limit (bitQuick, see acquireOutside); and, for a
	// limited group, the number of its tasks executing (see
	// startRunning). Go adds one task; a worker subtracts finished tasks,
	// possibly several at once (worker.settle). Keeping the flags in the
	// same word lets a finisher learn, from the result of its own
	// subtraction, whether anybody must be woken: one atomic operation on
	// the fast path.
	state atomic.Uint64

	// limit > 0 bounds the active tasks; 0 means no limit; blockAll is
	// SetLimit(0). Written by SetLimit only while no task is active.
	limit int64

	// slow holds what only errors, contexts, the failure modes and parked
	// tasks need. Fork-join code makes a Group per call, and a service one
	// per request, so the common Group stays small (32 bytes) and the rest
	// is allocated on first need.
	slow atomic.Pointer[groupSlow]

	// awaitedIn is the group of the task whose Wait for this group is in
	// progress, if a task's Wait is (of two, either: enterJoin), or was,
	// until the group starts again (starting); it links the chains that
	// helping Waits follow (join.go).
	awaitedIn atomic.Pointer[Group]
}

// blockAll is the limit value for SetLimit(0): no task may be added.
const blockAll = -1

// The fields of Group.state.
const (
	bitDone    = 1 << 0 // goroutines wait for the count to reach zero
	bitSlot    = 1 << 1 // goroutines wait for the count to drop below limit
	flagBits   = bitDone | bitSlot
	oneTask    = 1 << 2 // the active count starts here...
	countBits  = 40     // ...and has this many bits
	countMask  = (1<<countBits - 1) * oneTask
	bitQuick   = oneTask << countBits // an outside Go's last park for a slot was short
	oneRunning = bitQuick << 1        // the executing count fills the rest
)

// countOf returns the active count held in a state word.
func countOf(s uint64) int64 { return int64((s & countMask) / oneTask) }

// runningOf returns the executing count held in a state word.
func runningOf(s uint64) int64 { return int64(s / oneRunning) }

// groupSlow is the part of a Group that errors, panics, cancellation and
// parked tasks use.
type groupSlow struct {
	errSet atomic.Bool
	err    error           // written once, by the task whose CAS on errSet won
	ctx    context.Context // set by WithContext before first use
	cancel func(error)     // set by WithContext before first use
	modes                  // SetSkipQueued, SetRecoverPanics; see failure.go
	pan    panicRecord     // the first recovered panic; see panic.go
	// skipped: a skip-queued group dropped a task or refused a Go. Set
	// before the drop is counted (or before Go returns), so a Wait that
	// sees the group done sees it too; read by groupSlow.result.
	skipped atomic.Bool

	// parked holds, oldest first, the tasks of a limited group that wait
	// for a slot: given by a Go inside a task at the limit (setAside), or,
	// should the accounting ever break, refused by startRunning. done
	// moves them out as slots free (unpark). nParked is its length,
	// readable without mu.
	nParked atomic.Int64
	mu      xsync.Mutex
	parked  []fn
}

// sl returns the slow part, allocating it on first use.
func (g *Group) sl() *groupSlow {
	if s := g.slow.Load(); s != nil {
		return s
	}
	g.slow.CompareAndSwap(nil, new(groupSlow))
	return g.slow.Load()
}

// SetContext sets the group's context and the function that cancels it,
// called with the first error and by Wait. WithContext calls it before the
// group's first use.
func (g *Group) SetContext(ctx context.Context, cancel context.CancelCauseFunc) {
	sl := g.sl()
	sl.ctx, sl.cancel = ctx, cancel
}

// count returns the number of active tasks.
func (g *Group) count() int64 { return countOf(g.state.Load()) }

// SetLimit sets the group's limit (n < 0: none, 0: no task may be added).
// A limit n >= 0 is set only while no task is active: otherwise SetLimit
// changes nothing and returns the number of active tasks it saw (one read
// of the state, so the caller's message can state what was seen). Removing
// the limit (n < 0) is allowed at any time, racing with the tasks, as
// errgroup allows it; it returns 0.
func (g *Group) SetLimit(n int) (active int64) {
	if n < 0 {
		// Tasks set aside for a slot need none now.
		g.limit = 0
		if sl := g.slow.Load(); sl != nil && sl.nParked.Load() > 0 {
			for w := current(); g.unpark(w); {
			}
		}
		return 0
	}
	if active = g.count(); active != 0 {
		return active
	}
	g.limit = int64(n)
	if n == 0 {
		g.limit = blockAll
	}
	return 0
}

// Go implements wsgroup.Group.Go: it adds f as a task of g. On a full
// limited group it blocks outside a task until a slot frees
// (acquireOutside) and sets f aside inside one (setAside); on a group
// with limit 0 it blocks for ever.
func (g *Group) Go(f func() error) {
	if sl := g.slow.Load(); sl != nil && sl.refusesGo() {
		return
	}
	w := current()
	switch {
	case g.limit == blockAll:
		// errgroup's Go blocks forever on a zero-capacity semaphore; so
		// do we, visibly to the runtime's deadlock detector.
		var never chan struct{}
		<-never
	case g.limit > 0:
		if g.tryAcquire() {
			break
		}
		if w == nil && !runners.has(gid.Current()) {
			g.acquireOutside()
			break
		}
		g.setAside(g.submitted(f, w), w) // inside a task
		return
	default:
		g.starting(g.state.Load())
		g.state.Add(oneTask)
	}
	if w != nil {
		// enqueue's worker branch and submitted's common case (the
		// labels read where w has their word, no tracer running), written
		// out: two calls less on the path of every Go inside a task.
		t := fn{f: f}
		if w.labels != nil && !trace.IsEnabled() {
			t.labels = *w.labels
		} else {
			t = g.submitted(f, w)
		}
		w.pushLocal(t, g, g.plain())
		return
	}
	g.enqueue(g.submitted(f, nil), nil)
}

// TryGo implements wsgroup.Group.TryGo: it adds f as a task of g if that
// keeps the active tasks within the limit, and reports whether it did.
func (g *Group) TryGo(f func() error) bool {
	if sl := g.slow.Load(); sl != nil && sl.refusesGo() {
		return false
	}
	switch {
	case g.limit == blockAll:
		return false
	case g.limit > 0:
		if !g.tryAcquire() {
			return false // full
		}
	default:
		g.starting(g.state.Load())
		g.state.Add(oneTask)
	}
	w := current()
	g.enqueue(g.submitted(f, w), w)
	return true
}

// refusesGo reports whether a Go or TryGo must drop its task: the group
// is in skip-queued mode and canceled (SetSkipQueued). It records the drop
// (skipped).
func (sl *groupSlow) refusesGo() bool {
	if sl.skipQueued && sl.canceled() {
		sl.skipped.Store(true)
		return true
	}
	return false
}

// enqueue puts f, a task of g already counted as active, on w's deque, or
// into the injector when the caller is not a worker (w nil).
func (g *Group) enqueue(f fn, w *worker) {
	plain := g.plain()
	if w != nil {
		w.pushLocal(f, g, plain)
	} else {
		global.inject(job{fn: f, g: g, plain: plain})
	}
}

// plain reports whether a task of g queued now is plain (task.plain): g
// has no limit and is not in skip-queued mode. The caller has counted the
// task active, so neither can change until it finishes.
func (g *Group) plain() bool {
	if g.limit > 0 {
		return false
	}
	sl := g.slow.Load()
	return sl == nil || !sl.skipQueued
}

// tryAcquire adds one active task if that keeps the count within limit.
func (g *Group) tryAcquire() bool {
	for {
		s := g.state.Load()
		if countOf(s) >= g.limit {
			return false
		}
		g.starting(s)
		if g.state.CompareAndSwap(s, s+oneTask) {
			return true
		}
	}
}

// setAside queues f, a task of the full limited group g given by a Go
// inside a task (on worker w, or, w nil, on a goroutine outside the pool
// that runs a task while it waits: see wait.go), behind the group's
// other tasks: it starts when a task of g ends and frees a slot, the tasks
// set aside in the order they were set aside, as errgroup's Go would start
// it after blocking.
//
// Inside a task, Go does not wait for the slot: the caller may hold one
// itself (a task of g calling g.Go), or a task of g may be suspended below
// it on this goroutine's stack, and waiting would deadlock where errgroup
// does. But the task must not start before the tasks that hold the slots
// either. The tempting version, push it onto the deque above the limit and
// let the execution bound (startRunning) sort it out, starts it first (the
// deque is LIFO), and when it waits for an earlier task of g, as
//
//	g.SetLimit(1)
//	g.Go(func() error { return err })                    // holds the slot
//	g.Go(func() error { <-ctx.Done(); return nil })      // set aside here
//
// may, it holds the only slot while the earlier task waits for one: a
// deadlock where errgroup returns err.
//
// It runs none of g's queued tasks meanwhile. The tempting version, run
// them while the group is full (backpressure), has the flaw of running
// them in a Go, which waits for nothing (see acquireOutside): a queued task
// may wait for what the caller does after Go returns; and a Goexit in it
// would end the caller in the middle of its Go, before its task is queued.
func (g *Group) setAside(f fn, w *worker) {
	g.starting(g.state.Load())
	g.state.Add(oneTask)
	g.parkTask(f, w)
}

// parkTask appends f, a task of g counted as active, to the parked list,
// and then starts the oldest parked task if a slot is free after all.
//
// The tasks that held the slots may all have ended between the caller's
// look at the count and our store of nParked, and seen nothing to start:
// hence the second look. done subtracts before it loads nParked, and we
// store nParked before unpark loads the count: one of the two sees the
// other.
func (g *Group) parkTask(f fn, w *worker) {
	sl := g.sl()
	sl.mu.Lock()
	sl.parked = append(sl.parked, f)
	sl.nParked.Store(int64(len(sl.parked)))
	sl.mu.Unlock()
	g.unpark(w)
}

// acquireOutside waits, on a goroutine that is not a worker, until
// tryAcquire succeeds or a finishing task hands it a slot (handSlot). It
// polls the count for a moment, then yields a few times, before it parks:
// with tiny tasks a slot frees sooner than a parked goroutine is woken.
//
// How many times it yields depends on how its group's last park for a
// slot went (bitQuick). A park costs the runtime a wake-up of the parked
// goroutine and, with a processor idle, of a thread for it; when the
// group's tasks are tiny, the slot frees within microseconds and those
// wake-ups are all the wait is, and they pile threads onto one CPU: 100k
// tiny tasks under SetLimit(2) on 2 CPUs ran 2–3 times slower in the
// batches whose Go parked thousands of times (BENCHMARKS.md, "Tiny tasks
// under a limit: the parks"). Yielding many more times before parking
// removes the parks and that slow mode, but a group whose tasks hold
// their slots for long (I/O under a limit) would only churn the
// scheduler with it. So the park itself is the measure: one that ends
// within quickPark sets bitQuick, and the group's next waits yield
// submitSpinsQuick times; one that lasts longer clears it, and they
// yield submitSpins times.
//
// It runs none of the group's queued tasks while it waits. The tempting
// version, which Wait gets away with, deadlocks here: Go waits for one
// slot, not for the whole group, so a queued task of the group may wait
// for something its caller does after this Go returns,
//
//	g.Go(func() error { <-ch; return nil }) // queued
//	g.Go(h)                                 // full: must not run the task above
//	close(ch)
//
// A goroutine that runs a task outside the pool (it is in runners) does
// not come here: a Go inside a task sets its task aside (setAside).
func (g *Group) acquireOutside() {
	spin := global.size.Load() > 1 && !submitPollOff.Load() // tests only: see switches.go
	yields := submitSpins
	if g.state.Load()&bitQuick != 0 {
		yields = submitSpinsQuick
	}
	for i := 0; ; i++ {
		if g.tryAcquire() {
			return
		}
		if i < submitPolls && spin {
			// Poll the count without giving up the processor: on another
			// CPU a worker is finishing a task right now, and a yield
			// costs a trip through the runtime's global run queue.
			for range 32 {
				if countOf(g.state.Load()) < g.limit {
					break
				}
			}
			continue
		}
		if i < submitPolls+yields && spin {
			// A worker may be about to take the queued tasks: let it have
			// this CPU for a moment rather than park, and only while the
			// count is at the limit. Yield (the P's own run queue), not
			// Gosched: Gosched puts this Go on the global queue and, with
			// a P idle, wakes a thread for it, which the system often
			// places on the CPU of its waker, where it waits for the
			// kernel's tick while the other CPU idles. Measured on 2 CPUs
			// (BENCHMARKS.md, "The outside Go's yield at a full limit"):
			// with Gosched, 100k tiny tasks under SetLimit(2) fell into a
			// mode 2–3 times slower in a run out of three, and the I/O
			// service shape under a limit took 1.29 times errgroup's time
			// per request.
			xsync.Yield()
			continue
		}
		start := time.Now()
		granted := g.park(bitSlot, func(s uint64) bool { return countOf(s) >= g.limit })
		g.learnPark(time.Since(start))
		if granted {
			return
		}
	}
}

// learnPark records how long an outside Go's park for a slot lasted, for
// the group's next ones (bitQuick; see acquireOutside). It changes the
// state word only when the hint changes.
func (g *Group) learnPark(d time.Duration) {
	quick := g.state.Load()&bitQuick != 0
	switch {
	case d < quickPark && !quick:
		g.state.Or(bitQuick)
	case d >= quickPark && quick:
		g.state.And(^uint64(bitQuick))
	}
}

// done subtracts k finished tasks, wakes whoever waits for the count to
// reach zero or to drop below the limit, and returns the new count. The
// subtraction publishes everything the finished tasks did: a Wait that
// observes the new count (or is woken because of it) sees their effects.
func (g *Group) done(k int64) int64 {
	// Read the limit before the subtraction: once it lets Wait return,
	// the owner may call SetLimit.
	limit := g.limit
	if limit > 0 && g.state.Load()&bitSlot != 0 && g.handSlot() {
		// One slot went straight to a parked Go.
		if k--; k == 0 {
			return countOf(g.state.Load())
		}
	}
	s := g.state.Add(^uint64(k*oneTask - 1))
	if limit > 0 {
		// k slots are free: start as many tasks set aside (see setAside).
		if sl := g.slow.Load(); sl != nil && sl.nParked.Load() > 0 {
			w := current()
			for i := int64(0); i < k && g.unpark(w); i++ {
			}
		}
	}
	if s&flagBits != 0 {
		if s&bitDone != 0 && countOf(s) == 0 {
			g.wake(bitDone)
		}
		if s&bitSlot != 0 && countOf(s) < limit {
			g.wake(bitSlot)
		}
	}
	return countOf(s)
}

// startRunning admits a task of a limited group to execute, on worker w or
// (w nil) on a goroutine waiting outside the pool, or parks it and reports
// false. Since a Go inside a task sets a task aside at the limit
// (setAside), at most limit of the group's tasks are out of the parked list
// and so at most limit can be executing: this check is the execution
// bound's own guard, and parks a task only if that accounting is broken.
func (g *Group) startRunning(w *worker, f fn) bool {
	if runningOf(g.state.Add(oneRunning)) <= g.limit {
		return true
	}
	g.state.Add(^uint64(oneRunning - 1))
	g.parkTask(f, w)
	return false
}

// stopRunning ends a task's admission. The done(1) for the task, which
// follows, starts a parked task if one waits: the slot is not free before
// then.
func (g *Group) stopRunning() {
	g.state.Add(^uint64(oneRunning - 1))
}

// unpark moves the oldest parked task onto w's deque, or into the
// injector when w is nil, if the group has a free slot (fewer than limit
// of its unfinished tasks are out of the parked list) or no limit any more.
// It reports whether it moved one.
func (g *Group) unpark(w *worker) bool {
	sl := g.sl()
	sl.mu.Lock()
	if n := len(sl.parked); n == 0 || g.limit > 0 && g.count()-int64(n) >= g.limit {
		sl.mu.Unlock()
		return false
	}
	f := sl.parked[0]
	sl.parked[0] = fn{}
	sl.parked = sl.parked[1:]
	sl.nParked.Store(int64(len(sl.parked)))
	sl.mu.Unlock()
	g.enqueue(f, w)
	return true
}
