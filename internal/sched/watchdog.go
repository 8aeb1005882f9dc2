package sched

import (
	"runtime"
	"time"
)

// The watchdog is the pool's monitor: it keeps the pool from starving.
//
// errgroup runs every task at once, so its users write tasks that block: on
// I/O, on a channel that a later task closes, on ctx.Done() until a ninth
// task fails. On a pool of GOMAXPROCS workers a blocked task holds its
// worker, and the tasks queued behind it wait; with every worker blocked,
// programs that are correct under errgroup would stall.
//
// The monitor watches each worker's progress, as the Go runtime's sysmon
// watches each P's: a worker publishes where it is (worker.seq, one store
// when a task starts and one when it ends), and the monitor compares it
// between samples. A worker whose seq has not moved for one sample period
// while tasks wait for a worker (some are queued and no worker is idle) is
// stuck in one task, blocked or running long. Which of the two it is, the
// monitor learns from the worker goroutine's own status where the runtime
// lets it read that (status.go): a worker blocked in the task (a channel,
// a sleep, a lock, I/O, a long system call) is detached at once
// (handOffKnown: at once once it has been seen blocked twice, 50 µs
// apart); any other only after runWait with no attached worker moving
// (handOffLong). Detached
// (detach.go), a worker no longer counts against GOMAXPROCS, another
// worker (a parked spare, or a new goroutine) starts in its place at once,
// and its deque goes to the injector. When its task returns, the worker
// goes on taking queued tasks one at a time, detached, as an errgroup
// goroutine would run them, and leaves its slot (to park as a spare) when
// it finds none; a worker detached inside a nested task (a Wait on its
// stack) reattaches instead, and the pool, above its capacity, shrinks
// back. Posters that find the pool saturated read the statuses too
// (Pool.saturated), so a blocked worker is handed on even while the
// monitor waits for a CPU.
//
// This is what the progress guarantee rests on: a task queued behind a
// worker that is blocked waits about one sample period for another worker
// (longer on the fallback below, and behind a worker that runs). It
// depends on no global sample, only on the monitor's own ticks (which come
// late when every P runs a goroutine that does not block: the monitor
// needs a P like any goroutine) and on the posts. CPU-bound tasks start
// one after another, so their workers' numbers move and the pool does not
// grow past GOMAXPROCS.
//
// Where statuses cannot be read, the fallback counts (fallback.go): a
// worker that stood still and that the runtime's counts of running and
// runnable goroutines prove off the CPU is handed on at once, by the
// monitor or a poster, and when every attached worker is, the pool ramps
// up as with statuses read. A worker the counts cannot prove off the CPU
// (every CPU is busy, or the collector marks) is handed on after
// unprovenWait when the counts show it off a processor
// (handOffOffProc), and otherwise after the same bound as a worker that
// no status read counts as blocked (handOffLong). Once the counts prove
// some of the workers handed on that way blocked, the stuck attached ones
// are handed on at once and the pool ramps up (handOffEvident).
//
// The monitor is a goroutine that exists only while the pool is saturated:
// a post that finds the pool saturated starts it (Pool.watch), and it exits
// after watchLinger without saturation (see the loop). With statuses read,
// a saturated pool whose workers have all started two tasks or more since
// the last tick naps longer each tick, up to watchDoze, and posts stop
// kicking it (flowing, see monitor.busy): the posters read statuses
// themselves, so nothing needs its ticks on time until a tick finds the
// work slower. Each tick also samples GOMAXPROCS (Pool.refreshSize), so a
// saturated pool grows within a tick when GOMAXPROCS goes up. Its period
// and patience, watchTick and watchQuiet, are in params.go.

// watch starts the watchdog unless it runs. Called by posters that found
// the pool saturated (all workers busy, no room to start another).
func (p *Pool) watch() {
	// The monitor runs and samples on its own, or naps while the work
	// flows: a few loads, inlined into the caller.
	if p.watching.Load() && (!p.napping.Load() || p.flowing.Load()) {
		return
	}
	p.watchNow()
}

// watchNow is watch once the monitor naps or does not run.
func (p *Pool) watchNow() {
	if p.watching.Load() {
		if p.napping.Load() && p.napping.CompareAndSwap(true, false) {
			// The monitor waits for its timer, which may be a doze
			// long, or late: make it look now. At most one kick per
			// wait.
			select {
			case p.kick <- struct{}{}:
			default:
			}
		}
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.watching.Load() || monitorOff.Load() {
		return
	}
	p.watching.Store(true)
	startWatchdog(p)
}

// watchdog is the monitor goroutine's body: a tick at a time, the steps
// of monitor (see the top of this file for the rules).
func (p *Pool) watchdog() {
	clearLabels() // the caller of Go that started the monitor may wear some
	startStatus() // again, after a check that ran out of time: statuses are needed from now on
	m := newMonitor(p)
	defer m.timer.Stop()
	for {
		m.wait()
		m.sample()
		if !m.busy() {
			if m.exit() {
				return
			}
			continue
		}
		m.fill()
		if statusOn() {
			m.pace()
			if m.stuck > 0 {
				m.handOffKnown()
			}
		} else {
			m.handOffStuck()
		}
	}
}

// monitor is the watchdog goroutine's state: its timer and pace, and what
// the current tick sampled. Its loop (Pool.watchdog) runs one step per
// rule: wait for the tick, sample the workers, go quiet (and exit) or
// fill the pool up to capacity, choose how to wait for the next tick,
// hand stuck workers on.
type monitor struct {
	p     *Pool
	timer *time.Timer

	// gen numbers the samples: a worker's marks count only if they are
	// from the sample before (see sampleStuck).
	gen uint64
	// quiet counts the ticks without saturation; after watchQuiet of them
	// the monitor dozes: its period doubles each tick up to watchDoze,
	// and a post that finds the pool saturated kicks it awake (watch).
	// It exits after watchLinger of quiet, so that a service whose
	// requests saturate the pool now and then does not start a monitor
	// each time, and no goroutine outlives the work by more than that.
	quiet      int
	period     time.Duration
	quietSince time.Time
	// yieldNext: the monitor waits for its next tick on the timer or a
	// kick, whichever comes first, except after a tick that found the
	// pool saturated while the CPUs are not: then it yields until
	// watchTick has passed. When every P is idle, the Go timer fires about
	// a millisecond late, and those are the ticks that matter for a
	// fan-out of blocking calls; the yielding costs CPUs that nothing else
	// wants. (A nanosleep system call would be precise, but the P of a
	// goroutine in a system call is handed on only when sysmon retakes it:
	// with GOMAXPROCS 1 that stalls the workers for as long.)
	yieldNext bool

	// The current tick's sample.
	now     int64     // nanotime
	active  []*worker // the scan set
	stuck   int       // workers of active whose seq has not moved since the last tick
	flowing bool      // every worker of active started two tasks or more since the last tick (sampleStuck)
	procs   int       // GOMAXPROCS
	queued  int       // tasks queued (Pool.queued)

	// handed are the workers the monitor handed on on the fallback with
	// no proof that they were off the CPU (handOffOffProc, handOffLong,
	// handOffEvident), each with the seq of the task it stood still in,
	// latest last, at most handedKept: the evidence of handOffEvident.
	handed []stuckWorker
}

// newMonitor takes the first sample at once, so that the first tick can
// already tell who is stuck.
func newMonitor(p *Pool) *monitor {
	m := &monitor{
		p:         p,
		timer:     time.NewTimer(watchTick),
		gen:       1,
		period:    watchTick,
		yieldNext: true, // the first tick
	}
	sampleStuck(p.scanned(), m.gen, nanotime()) // the first sample: its verdicts mean nothing yet
	return m
}

// wait waits for the next tick: it yields for watchTick, or waits for the
// timer or a kick (see yieldNext).
func (m *monitor) wait() {
	if m.yieldNext {
		m.yieldNext = false
		// Where statuses are not read, the yields check the workers
		// every recheckEvery: each yield wakes an idle P to look for
		// work (the runtime does so for a goroutine put on its global
		// queue), and a P that looks counts as running, so a check made
		// just after a yield may miss a blocked worker by one; one made
		// while no P looks proves it (fallback.go).
		next := int64(0)
		for start := nanotime(); ; {
			runtime.Gosched()
			now := nanotime()
			if now-start >= int64(watchTick) {
				return
			}
			if !statusOn() && now >= next {
				next = now + int64(recheckEvery)
				m.p.checkStuck(m.p.scanned(), nil, now)
			}
		}
	}
	m.timer.Reset(m.period)
	m.p.napping.Store(true)
	select {
	case <-m.timer.C:
	case <-m.p.kick:
		m.quiet, m.period = 0, watchTick
	}
	m.p.napping.Store(false)
}

// sample takes the tick's sample. It samples every tick, quiet or not:
// when a kick wakes a dozing monitor, the sample of its last tick tells
// who has been in one task since, at once.
func (m *monitor) sample() {
	p := m.p
	m.gen++
	m.now = nanotime()
	m.active = p.scanned()
	m.stuck, m.flowing = sampleStuck(m.active, m.gen, m.now)
	m.procs = int(p.refreshSize())
	m.queued = p.queued()
}

// busy reports whether the pool is saturated with tasks waiting: some are
// queued and no worker is idle. Otherwise it counts a quiet tick and
// slows the monitor down.
func (m *monitor) busy() bool {
	p := m.p
	if m.queued != 0 && p.sleep.Load().Inactive() == 0 {
		m.quiet = 0
		if statusOn() && m.flowing {
			// Saturated, but every worker has started two tasks or
			// more since the last tick (one that started only one may
			// be blocked in it): the work flows. The posters read the
			// workers' statuses themselves and hand a blocked one on,
			// so the monitor naps longer each such tick, and posts stop
			// kicking it (watch) until a tick finds the work slower.
			// (Not on the fallback: there, a worker that blocks while
			// the CPUs are busy is handed on by the monitor's bounds
			// alone, which its ticks measure.)
			p.flowing.Store(true)
			m.period = min(2*m.period, watchDoze)
		} else {
			p.flowing.Store(false)
			m.period = watchTick
		}
		return true
	}
	p.flowing.Store(false)
	if m.quiet == 0 {
		m.quietSince = time.Now()
	}
	if m.quiet++; m.quiet >= watchQuiet && m.period < watchDoze {
		m.period = min(2*m.period, watchDoze)
	}
	return false
}

// exit, after a quiet tick, reports whether the monitor exits: only after
// watchLinger of quiet, and only when nothing is queued (idle workers may
// be about to block on what they find, and nothing else would start a
// monitor again for tasks posted long ago).
func (m *monitor) exit() bool {
	p := m.p
	if m.quiet < watchQuiet || time.Since(m.quietSince) < watchLinger || m.queued != 0 {
		return false
	}
	// A poster that saw watching true after our last check did not start
	// another monitor, so clear the flag first, then look once more: if
	// the pool is saturated again, take the flag back and carry on.
	p.mu.Lock()
	p.watching.Store(false)
	p.mu.Unlock()
	if p.queued() == 0 || !p.watching.CompareAndSwap(false, true) {
		return true
	}
	m.quiet, m.period = 0, watchTick
	return false
}

// fill starts workers up to the pool's capacity, for the queued tasks:
// workers retired, or tasks arrived in deques without a post that could
// start one.
func (m *monitor) fill() {
	p := m.p
	if live := p.live.Load(); !p.full() {
		p.spawnUpTo(min(m.queued, int(p.capacity()-live)))
	}
}

// pace chooses how the monitor waits for its next tick when statuses are
// read (yieldNext): it yields unless the CPUs are saturated (then the
// timer is on time, and yielding would take CPU from others) or the work
// flows (then nothing needs the tick on time: see busy).
func (m *monitor) pace() { m.yieldNext = m.cpusFree() }

// cpusFree reports whether the monitor would not take a CPU from anyone
// by yielding for its next tick: the work does not flow (see busy), and
// the CPUs are not saturated. Counting ourselves: we hold a P, and every
// other P runs a goroutine, or a goroutine waits for one. (Counts that
// cannot be read count as saturated CPUs: the timer then.)
func (m *monitor) cpusFree() bool {
	if m.flowing {
		return false
	}
	running, runnable, ok := m.p.signals.running()
	return ok && (running < m.procs || runnable == 0)
}

// handOffStuck is the fallback's hand-off, where statuses are not read:
// the workers the runtime's counts prove off the CPU (checkStuck), at
// once, and the others after the bound (handOffLong). The monitor yields
// for its next tick only after a check that found a worker in a new
// task: the next tick may prove it off the CPU (a blocking wave
// starting); otherwise it waits for its timer, and the posters' checks
// come in between.
func (m *monitor) handOffStuck() {
	n, fresh := m.p.checkStuck(m.active, nil, m.now)
	m.yieldNext = fresh > 0 && m.cpusFree()
	if n == 0 && m.handOffEvident() == 0 && m.handOffOffProc() == 0 {
		m.handOffLong()
	}
}

// handOffEvident is the fallback's ramp on the evidence of the workers
// the monitor has handed on without a proof (m.handed). The counts prove
// nothing about the attached workers while goroutines that run (clients
// fanning out CPU-bound tasks, say) keep every CPU busy: each of those
// may be the attached worker waiting for its turn. So a wave of blocking
// tasks beside them would be handed on one worker per unprovenWait, and
// 10,000 such tasks would take minutes where errgroup takes a moment.
// But the workers handed on that way, once more of them stand still in
// the task they were handed on in than goroutines wait for a CPU, are
// proven off it the same way (signals.offCPU: a worker waiting for a CPU
// is runnable, and counted so), whatever the attached ones do: the
// pool's tasks block. Then, when every attached worker has stood still
// since the last tick, it hands them on at once and ramps up
// (spawnExtra), as handOffBlocked does when every attached worker reads
// blocked; those it hands on join the evidence. Workers that were
// handed on while they only waited for a CPU prove nothing: each is
// runnable, which the counts subtract, until its task moves on, which
// takes it out of the evidence; so CPU-bound tasks beside busy CPUs do
// not ramp the pool up. It returns how many it handed on.
func (m *monitor) handOffEvident() int {
	if m.stuck == 0 || m.stuck < len(m.active) {
		return 0
	}
	// Only those still in the task they were handed on in are evidence.
	kept := m.handed[:0]
	for _, h := range m.handed {
		if h.w.seq.Load() == h.seq {
			kept = append(kept, h)
		}
	}
	clear(m.handed[len(kept):])
	m.handed = kept
	if len(kept) == 0 || m.p.signals.offCPU(len(kept), m.p.awakeIdle, m.now) == 0 {
		return 0
	}
	var buf [16]stuckWorker
	stuck := m.stoodStill(stillGap, buf[:0])
	n := m.p.handOnLongest(stuck, len(stuck), handOffStuck)
	if n == 0 {
		return 0
	}
	m.remember(stuck[:n])
	m.p.counts.ramps.Add(1)
	m.p.spawnExtra(m.p.queued() - m.p.sleep.Load().Inactive())
	return n
}

// remember adds to the evidence (m.handed) the workers handed on
// without a proof, dropping the oldest beyond handedKept.
func (m *monitor) remember(ws []stuckWorker) {
	m.handed = append(m.handed, ws...)
	if extra := len(m.handed) - handedKept; extra > 0 {
		copy(m.handed, m.handed[extra:])
		clear(m.handed[handedKept:])
		m.handed = m.handed[:handedKept]
	}
}

// handedKept bounds the evidence of handOffEvident: the monitor looks at
// each entry once a tick. A wave beside more goroutines that wait for a
// CPU than that is handed on one worker per unprovenWait.
const handedKept = 256

// handOffOffProc is the fallback's hand-off of workers that the counts
// cannot prove blocked but can prove off a processor: when every attached
// worker has stood still, and those that have for unprovenWait outnumber
// the processors running Go code (but the monitor's), the excess is
// blocked or waits for a CPU behind goroutines that keep every processor
// busy, and the longest-standing of them are handed on (not while the
// collector marks: a worker parked in an assist is released when the
// mark ends). Either way another goroutine takes the queue on, as
// errgroup's would have, after unprovenWait instead of runWait; a worker
// whose thread the system does not run holds a running processor and is
// not counted, so CPU-bound work on more processors than CPUs does not
// grow the pool. It returns how many it handed on.
func (m *monitor) handOffOffProc() int {
	if m.stuck < len(m.active) {
		return 0
	}
	var buf [16]stuckWorker
	long := m.stoodStill(unprovenWait, buf[:0])
	if len(long) == 0 {
		return 0
	}
	c, ok := m.p.signals.read()
	if !ok || c.Marking {
		return 0
	}
	k := len(long) - (c.Running - 1)
	if k <= 0 {
		return 0
	}
	n := m.p.handOnLongest(long, k, handOffStuck)
	m.remember(long[:n])
	return n
}

// handOffKnown is a tick's hand-off when the workers' statuses are read
// (status.go): it hands on every worker of active that counts as blocked,
// at once (handOffBlocked, which also ramps up when all of them are), and
// the others after the bound (handOffLong).
func (m *monitor) handOffKnown() {
	m.p.handOffBlocked(m.active, nil)
	m.handOffLong()
}

// handOffLong is the bound on a worker that stands still without being
// known blocked: it hands on every worker of active that has stood still
// for runWait in one task, only while no attached worker moves (stuck ==
// len(active)) and the collector does not mark. A long CPU-bound task is
// the Go scheduler's to time-slice, a worker waiting for a CPU gains
// nothing from another goroutine beside it, and one parked in an assist
// is released when the mark ends, however long it takes; but a task that
// spins until a queued task has run, or waits where nothing counts it as
// blocked (a runtime semaphore such as a file's read lock, a nil channel;
// on the fallback, any wait while every CPU is busy), must not hold its
// slot for ever.
func (m *monitor) handOffLong() {
	if m.stuck < len(m.active) {
		return
	}
	// Those known blocked were handed on before (detach refuses them now).
	var buf [16]stuckWorker
	long := m.stoodStill(runWait, buf[:0])
	if len(long) == 0 {
		return
	}
	if c, ok := m.p.signals.read(); ok && c.Marking {
		return
	}
	n := m.p.handOnLongest(long, len(long), handOffStuck)
	if !statusOn() {
		m.remember(long[:n])
	}
}

// stoodStill appends to buf the attached workers (m.active) that the
// monitor's marks show in one task (odd seq) that has not moved for d or
// longer, and returns it.
func (m *monitor) stoodStill(d time.Duration, buf []stuckWorker) []stuckWorker {
	for _, w := range m.active {
		if w.mon.gen == m.gen && w.mon.since != m.now && m.now-w.mon.since >= int64(d) && w.mon.seq&1 == 1 {
			buf = append(buf, stuckWorker{w: w, seq: w.mon.seq, since: uint32(w.mon.since >> 10)})
		}
	}
	return buf
}

// monMarks are the monitor's marks of one worker, as the runtime's
// sysmontick is sysmon's of one P: written and read by the monitor
// goroutine alone (the monitor that starts after one exited is ordered
// after it by Pool.mu, in watch).
type monMarks struct {
	seq   uint32 // the worker's seq as the monitor last sampled it
	gen   uint64 // in which sample
	since int64  // when (nanotime) the monitor first saw that seq
}

// sampleStuck updates the marks of the workers in active with their task
// sequence numbers for sample gen, taken at now, and returns how many have
// not moved since the previous sample. A worker whose marks are not from
// sample gen-1 (it was not in the scan set then) starts over.
//
// flowing reports whether every worker of active has started at least
// two tasks since the previous sample (seq moved by flowSeq or more): the
// work flows. A worker that has started only one may be blocked in it.
func sampleStuck(active []*worker, gen uint64, now int64) (stuck int, flowing bool) {
	flowing = len(active) > 0
	for _, w := range active {
		s := w.seq.Load()
		fresh := w.mon.gen != gen-1 // no marks from the sample before
		if fresh || s-w.mon.seq < flowSeq {
			flowing = false
		}
		if fresh || s != w.mon.seq {
			w.mon.seq, w.mon.since = s, now
		}
		w.mon.gen = gen
		if w.mon.since != now {
			stuck++
		}
	}
	return stuck, flowing
}

// flowSeq: a worker's seq moves by 2 per task started (see worker.seq).
const flowSeq = 4
