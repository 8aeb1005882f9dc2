package handoff

import (
	"runtime"
	"time"

	"github.com/go-steal/steal/internal/gstatus"
)

// The monitor is a goroutine that exists only while the pool is
// saturated: a post that finds the pool saturated starts it (watch), and
// it exits after watchLinger without saturation (monitor.exit). As the Go
// runtime's sysmon watches each P's progress, it samples each attached
// worker's seq every tick, fills the pool up to its capacity, and hands
// on the workers that stand still: at once those known blocked or proven
// off the CPU, the others after its bounds (bounds.go). With statuses
// read, a saturated pool whose workers have all started flowTasks tasks
// or more since the last tick naps longer each tick, up to watchDoze, and
// posts stop kicking it (see monitor.busy): the posters read statuses
// themselves, so nothing needs its ticks on time until a tick finds the
// work slower. Each tick also samples GOMAXPROCS (Pool.Procs).

// watch starts the monitor unless it runs, or kicks it awake if it naps
// while the work does not flow.
func (h *Handoff) watch() {
	if !h.watched() {
		h.watchNow()
	}
}

// watched reports whether watch has nothing to do: the monitor runs and
// samples on its own, or naps while the work flows. A few loads, inlined
// into the caller.
func (h *Handoff) watched() bool {
	return h.watching.Load() && (!h.napping.Load() || h.flowing.Load())
}

// watchNow is watch once the monitor naps or does not run.
//
// Starting and exiting pair up on watching alone: the poster that starts a
// monitor takes the flag with a CompareAndSwap from false, and the monitor
// that exits stores false and then looks at the queues once more
// (monitor.exit). A poster queues its task before it loads the flag; so
// either its load sees false and it starts a monitor (or another poster
// does), or the exiting monitor's look, after its store, finds the task
// and it carries on. The CompareAndSwap that takes the flag also orders a
// monitor after the one that exited before it (the store it read), which
// is what lets the monitor own its marks (monMarks) without a lock.
// (The flag used to be taken under the pool's lock; nothing else under
// that lock depends on it.)
func (h *Handoff) watchNow() {
	if h.watching.Load() {
		if h.napping.Load() && h.napping.CompareAndSwap(true, false) {
			// The monitor waits for its timer, which may be a doze
			// long, or late: make it look now. At most one kick per
			// wait.
			select {
			case h.kick <- struct{}{}:
			default:
			}
		}
		return
	}
	if MonitorOff.Load() || !h.watching.CompareAndSwap(false, true) {
		return
	}
	startMonitor(h)
}

// Watching reports whether a monitor runs.
func (h *Handoff) Watching() bool { return h.watching.Load() }

// watchLoop is the monitor goroutine's body: a tick at a time, the steps
// of monitor.
func (h *Handoff) watchLoop() {
	// The caller of Go that started the monitor may wear profiler labels.
	if gstatus.Labels() != nil {
		gstatus.SetLabels(nil)
	}
	StartStatus() // again, after a check that ran out of time: statuses are needed from now on
	for MonitorStalled.Load() {
		time.Sleep(stalledPoll)
	}
	m := newMonitor(h)
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
				m.tickStatus()
			}
		} else {
			m.tickFallback()
		}
	}
}

// monitor is the monitor goroutine's state: its timer and pace, and what
// the current tick sampled. Its loop (Handoff.watchLoop) runs one step per
// rule: wait for the tick, sample the workers, go quiet (and exit) or fill
// the pool up to capacity, choose how to wait for the next tick, hand
// stuck workers on.
type monitor struct {
	h     *Handoff
	timer *time.Timer

	// gen numbers the samples: a slot's monMarks count only if they are
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
	now     int64   // nanotime
	active  []*Slot // the attached workers
	stuck   int     // workers of active whose seq has not moved since the last tick
	fresh   int     // workers of active this sample saw first in their task (a new still mark)
	flowing bool    // every worker of active started flowTasks tasks or more since the last tick
	procs   int     // GOMAXPROCS
	queued  int     // tasks queued

	// handed are the workers the monitor handed on on the fallback with
	// no proof that they were off the CPU (boundOffProc, boundLong,
	// rampOnEvidence), each with the seq of the task it stood still in,
	// latest last, at most handedKept: the evidence of rampOnEvidence.
	handed []stuckSlot
}

// newMonitor takes the first sample at once, so that the first tick can
// already tell who is stuck.
func newMonitor(h *Handoff) *monitor {
	m := &monitor{
		h:         h,
		timer:     time.NewTimer(watchTick),
		gen:       1,
		period:    watchTick,
		yieldNext: true, // the first tick
	}
	sampleStuck(h.pool.Attached(), m.gen, nanotime()) // the first sample: its verdicts mean nothing yet
	return m
}

// wait waits for the next tick: it yields for watchTick, or waits for the
// timer or a kick (see yieldNext).
func (m *monitor) wait() {
	h := m.h
	if m.yieldNext {
		m.yieldNext = false
		// Where statuses are not read, the yields check the workers
		// every recheckEvery: each yield wakes an idle P to look for
		// work (the runtime does so for a goroutine put on its global
		// queue), and a P that looks counts as running, so a check made
		// just after a yield may miss a blocked worker by one; one made
		// while no P looks proves it (counts.go).
		//
		// Gosched, not the runtime's goyield, for the wake-up itself:
		// the monitor yields only when the CPUs are not saturated
		// (cpusFree), so the thread it wakes finds a free CPU, and the
		// idle P it sets looking is what lets a check made between two
		// yields prove a worker off the CPU; goyield wakes nothing.
		next := int64(0)
		for start := nanotime(); ; {
			runtime.Gosched()
			now := nanotime()
			if now-start >= int64(watchTick) {
				return
			}
			if !statusOn() && now >= next {
				next = now + int64(recheckEvery)
				h.handOnOffCPU(h.pool.Attached(), nil, now)
			}
		}
	}
	m.timer.Reset(m.period)
	h.napping.Store(true)
	select {
	case <-m.timer.C:
	case <-h.kick:
		m.quiet, m.period = 0, watchTick
	}
	h.napping.Store(false)
}

// sample takes the tick's sample. It samples every tick, quiet or not:
// when a kick wakes a dozing monitor, the sample of its last tick tells
// who has been in one task since, at once.
func (m *monitor) sample() {
	p := m.h.pool
	m.gen++
	m.now = nanotime()
	m.active = p.Attached()
	m.stuck, m.fresh, m.flowing = sampleStuck(m.active, m.gen, m.now)
	m.procs = p.Procs()
	m.queued = p.Queued()
}

// busy reports whether the pool is saturated with tasks waiting: some are
// queued and no worker is idle. Otherwise it counts a quiet tick and
// slows the monitor down.
func (m *monitor) busy() bool {
	h := m.h
	if inactive, _ := h.pool.Idle(); m.queued != 0 && inactive == 0 {
		m.quiet = 0
		if statusOn() && m.flowing {
			// Saturated, but every worker has started flowTasks tasks
			// or more since the last tick: the work flows. The posters
			// read the workers' statuses themselves and hand a blocked
			// one on, so the monitor naps longer each such tick, and
			// posts stop kicking it (watch) until a tick finds the work
			// slower. (Not on the fallback: there, a worker that blocks
			// while the CPUs are busy is handed on by the monitor's
			// bounds alone, which its ticks measure.)
			h.flowing.Store(true)
			m.period = min(2*m.period, watchDoze)
		} else {
			h.flowing.Store(false)
			m.period = watchTick
		}
		return true
	}
	h.flowing.Store(false)
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
	h := m.h
	if m.quiet < watchQuiet || time.Since(m.quietSince) < watchLinger || m.queued != 0 {
		return false
	}
	if h.stopWatching() {
		return true
	}
	m.quiet, m.period = 0, watchTick
	return false
}

// stopWatching gives the monitor's flag up, and reports true, unless
// tasks are queued when it looks after that: then it has taken the flag
// back (false), and the monitor carries on. A poster that saw watching
// true after the monitor's last check did not start another monitor, so
// the flag is cleared first, then the queues looked at (see watchNow).
// The tempting order, look then clear, strands a task: the monitor finds
// nothing queued, a poster queues and sees the flag still set, and the
// monitor clears it and exits with the task queued and nobody watching.
func (h *Handoff) stopWatching() bool {
	h.watching.Store(false)
	if h.pool.Queued() == 0 || !h.watching.CompareAndSwap(false, true) {
		return true
	}
	return false
}

// fill starts workers up to the pool's capacity, for the queued tasks:
// workers retired, or tasks arrived in deques without a post that could
// start one.
func (m *monitor) fill() {
	if room := m.h.pool.Room(); room > 0 {
		m.h.pool.StartUpTo(min(m.queued, room))
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
	running, runnable, ok := m.h.signals.running()
	return ok && (running < m.procs || runnable == 0)
}

// monMarks are the monitor's marks of one slot, as the runtime's
// sysmontick is sysmon's of one P: written and read by the monitor
// goroutine alone (a monitor that starts after one exited is ordered after
// it: see watchNow). They tell whether the worker moved since the
// monitor's last tick; since when it has stood still is its still mark.
type monMarks struct {
	seq uint32 // the slot's seq as the monitor last sampled it
	gen uint64 // in which sample
}

// sampleStuck updates the monitor's marks of the slots in active with their
// seq for sample gen, taken at now, marks the still marks of those in a
// task, and returns how many have not moved since the previous sample, and
// how many it found first in their task (fresh: no looker had marked the
// task yet). A slot whose marks are not from sample gen-1 (it was not
// attached then) starts over.
//
// flowing reports whether every slot of active has started flowTasks
// tasks or more since the previous sample: the work flows. A worker that
// has started only one may be blocked in it.
func sampleStuck(active []*Slot, gen uint64, now int64) (stuck, fresh int, flowing bool) {
	flowing = len(active) > 0
	for _, s := range active {
		seq := s.seq.Load()
		unseen := s.mon.gen != gen-1 // no marks from the sample before
		if unseen || seq-s.mon.seq < 2*flowTasks {
			flowing = false
		}
		if !unseen && seq == s.mon.seq {
			stuck++
		}
		s.mon.seq, s.mon.gen = seq, gen
		if seq&1 == 1 {
			if _, first := s.still.look(seq, now); first {
				fresh++
			}
		}
	}
	return stuck, fresh, flowing
}
