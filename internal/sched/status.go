package sched

import (
	"time"

	"github.com/go-steal/steal/internal/gstatus"
)

// Known blocking: where the Go runtime allows it (package gstatus finds
// and proves the layout of the runtime's goroutine records when the pool
// starts its first worker, on a goroutine of its own, while the pool has
// room: its probes then need no processor that the work holds; the
// monitor's start tries again after a check that ran out of time), the
// monitor and the posters read each worker goroutine's own scheduling
// status, as the runtime's sysmon reads it, and
// hand on at once the slot of a worker whose goroutine is blocked in a
// task: waiting on a channel, a select, a sleep, a lock of package sync,
// network I/O, or in a system call. A worker that runs, waits for a CPU,
// or waits for the garbage collector (an assist, a cycle's start) is never
// taken for blocked; nor is one between tasks or in the scheduler's own
// code (an even seq: see worker.seq), where it may wait on a lock of ours
// for a moment.
//
// The rule (worker.blockedFor): a worker counts as blocked when two reads,
// at least blockedGap apart (syscallGap for a system call), both found it
// blocked in the same task, its seq unchanged. One read is not enough: a
// task that waits often and briefly (a lock taken in a loop, a stream of
// small writes) reads blocked part of the time, and a worker may wait on a
// lock of ours for a moment inside a Go or a Wait. The reads are made by
// the monitor on each tick (watchdog.go), and by posters that find the
// pool saturated (Pool.saturated), so that detection does not wait for
// the monitor to get a CPU beside busy goroutines. Both share the marks
// (worker.seen): whichever reads second with the gap behind it hands off.
//
// A worker that stays in one task without reading blocked (it runs, waits
// for a CPU, waits for the collector, or waits on one of the runtime's own
// semaphores, which the collector uses too) is handed on by the monitor
// only after runWait with no attached worker moving (see watchdog.go): a
// long CPU-bound task is the Go scheduler's to time-slice and a collection
// ends, but the wait of a task queued behind one that spins for ever on
// something only that task would do, or waits on a file's read lock, must
// have a bound.
//
// Where statuses cannot be read (gstatus.On is false: until the check has
// passed, on a port without a reader, after a check that could not find
// or prove the layout, or with STEAL_GSTATUS=off), the monitor falls back
// to the task sequence numbers and the runtime's public metrics
// (watchdog.go).

const (
	// blockedGap: the least time between two reads that find a worker
	// blocked in one task for it to count as blocked.
	blockedGap = 50 * time.Microsecond
	// syscallGap is blockedGap for a worker in a system call: a stream of
	// short calls reads "in a system call" most of the time, so only a
	// call that is still in progress over a longer span counts (the
	// runtime's sysmon retakes such a processor after 20 µs to 10 ms).
	syscallGap = time.Millisecond
	// runWait: how long a worker that is not known blocked (by a status
	// read, or by the fallback's counts) must have stood still in one
	// task, with no attached worker starting a task meanwhile, before the
	// monitor hands it on (handOffLong). Several of the Go scheduler's
	// time slices (10 ms): a worker that only waits for a CPU gets going
	// again within that, unless the machine is overloaded.
	runWait = 100 * time.Millisecond
	// checkEvery: a poster that finds the pool saturated reads the
	// workers' statuses on one saturated post in checkEvery (counted per
	// worker, or per injector shard, without a shared counter); the
	// check itself then reads the clock and makes at most one round of
	// reads per blockedGap for the whole pool. A power of two.
	checkEvery = 16
)

// blockedFor reads w's occupant's status and reports whether it counts as
// blocked (see above), with the seq it read: the hand-off must find the
// worker still in that task (Pool.detach). Any goroutine may call it.
//
// st is what the read found; Unknown when the worker is between tasks
// (seq even), moved on during the read, or has no handle.
func (w *worker) blockedFor() (seq uint32, st gstatus.Status, blocked bool) {
	h := w.handle.Load()
	if h == nil {
		return 0, gstatus.Unknown, false
	}
	// seq first: a status read while the worker is between tasks (even)
	// says nothing about a task. Then seq again, after the status: if it
	// moved, the status may belong to another task, or to our own code.
	s := w.seq.Load()
	if s&1 == 0 || w.patient.Load() {
		// Between tasks, or parked on purpose in a Wait's patience
		// (worker.waitPatiently), which ends by itself.
		return 0, gstatus.Unknown, false
	}
	st = h.Read()
	if w.seq.Load() != s {
		return 0, gstatus.Unknown, false
	}
	var gap time.Duration
	switch st {
	case gstatus.Blocked:
		gap = blockedGap
	case gstatus.Syscall:
		gap = syscallGap
	default:
		// Running, runnable, waiting for the collector, or gone: forget
		// an earlier sighting, which this read contradicts.
		if w.seen.Load() != 0 {
			w.seen.Store(0)
		}
		return s, st, false
	}
	// The mark: seq in the high half, the read's time in the low half in
	// units of 1,024 ns, which wraps after about 73 minutes; the signed
	// difference of two such times is exact within half of that. s is
	// odd, so a mark is never 0. The clock is read here, after the status,
	// not taken from the caller: another reader may have stored a later
	// mark meanwhile, and an earlier time of ours would make the span
	// look negative (too soon) rather than long.
	t := uint32(nanotime() >> 10)
	m := w.seen.Load()
	if uint32(m>>32) != s {
		w.seen.Store(uint64(s)<<32 | uint64(t))
		return s, st, false
	}
	return s, st, time.Duration(int32(t-uint32(m)))<<10 >= gap
}

// saturated is called by a poster that found the pool saturated: no
// worker idle and no room to start one. n is the poster's own count of
// such posts (the injector shard's, or the worker's): one in checkEvery
// checks the workers (checkWorkers). Then it makes sure the monitor runs
// (watch).
func (p *Pool) saturated(n uint32) {
	if n%checkEvery == 0 {
		p.checkWorkers(nil)
	}
	p.watch()
}

// checkWorkers checks every attached worker, at most once per blockedGap
// for the whole pool, and hands on the slots of those that count as
// blocked: by their statuses (handOffBlocked), or, where statuses are not
// read, by the runtime's counts (checkStuck, fallback.go). O(GOMAXPROCS):
// only the scan set is read. self is the calling worker when it is between
// tasks, about to run one it has just found (worker.foundWork), or nil.
func (p *Pool) checkWorkers(self *worker) {
	if !statusOn() && !countsOn() {
		return
	}
	now := nanotime()
	last := p.checkedAt.Load()
	if now-last < int64(blockedGap) || !p.checkedAt.CompareAndSwap(last, now) {
		return
	}
	if statusOn() {
		p.handOffBlocked(p.scanned(), self)
	} else {
		p.checkStuck(p.scanned(), self, now)
	}
}

// handOffBlocked detaches (detach.go) the workers of active that count as
// blocked, starts a worker in the place of each (a parked spare if
// there is one), and returns how many it detached. When it detached one
// and every other worker of active but self (a worker about to run a task
// it has just found, or nil) reads blocked too, if only for the first
// time (the worker started in the place of the last one handed on, say),
// it also ramps up (spawnExtra, as the monitor's
// fallback does): with no worker left on a CPU, the queued tasks are
// likely to block as well, and errgroup would have run each on a
// goroutine of its own at once. Handing them on one check at a time would
// take a check per task, each replacement blocking in its turn. (Not
// when self is a worker in a task, one that posts: it runs.)
func (p *Pool) handOffBlocked(active []*worker, self *worker) int {
	blocked, n, others := 0, 0, len(active)
	for _, w := range active {
		if w == self {
			others--
			continue
		}
		s, st, ok := w.blockedFor()
		if st == gstatus.Blocked || st == gstatus.Syscall {
			blocked++ // counts for the ramp even if only seen once yet
		}
		if ok && p.detach(w, detachMonitor, s) {
			n++
		}
	}
	if n == 0 {
		return 0
	}
	p.counts.handedOff[handOffBlocked].Add(uint64(n))
	p.spawnUpTo(n)
	if blocked == others {
		p.counts.ramps.Add(1)
		p.spawnExtra(p.queued() - p.sleep.Load().Inactive())
	}
	return n
}
