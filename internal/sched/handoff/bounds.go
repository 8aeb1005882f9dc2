package handoff

import "time"

// The monitor's hand-offs, one tick at a time: the detectors' at once, then
// the bounds on a worker that stands still without being known blocked.

// tickStatus is a tick's hand-off when the workers' statuses are read: it
// hands on every attached worker that counts as blocked, at once
// (handOnBlocked, which also ramps up when all of them are), and the
// others after the bound (boundLong).
func (m *monitor) tickStatus() {
	m.h.handOnBlocked(m.active, nil)
	m.boundLong()
}

// tickFallback is a tick's hand-off where statuses are not read: the
// workers the runtime's counts prove off the CPU (handOnOffCPU), at once,
// and the others on the evidence of those handed on before
// (rampOnEvidence) or after the bounds (boundOffProc, boundLong). The
// monitor yields for its next tick only after a tick that found a worker
// in a new task (its sample, or the check, made the task's first still
// mark): the next tick may prove it off the CPU (a blocking wave
// starting); otherwise it waits for its timer, and the posters' checks
// come in between. (The sample marks before the check looks, so counting
// only the check's fresh marks, the tempting version, never yields.)
func (m *monitor) tickFallback() {
	n, fresh := m.h.handOnOffCPU(m.active, nil, m.now)
	m.yieldNext = m.fresh+fresh > 0 && m.cpusFree()
	if n == 0 && m.rampOnEvidence() == 0 && m.boundOffProc() == 0 {
		m.boundLong()
	}
}

// rampOnEvidence is the fallback's ramp on the evidence of the workers
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
// since the last tick, it hands them on at once and ramps up, as
// handOnBlocked does when every attached worker reads blocked; those it
// hands on join the evidence. Workers that were handed on while they only
// waited for a CPU prove nothing: each is runnable, which the counts
// subtract, until its task moves on, which takes it out of the evidence;
// so CPU-bound tasks beside busy CPUs do not ramp the pool up. It returns
// how many it handed on.
func (m *monitor) rampOnEvidence() int {
	if m.stuck == 0 || m.stuck < len(m.active) {
		return 0
	}
	// Only those still in the task they were handed on in are evidence.
	kept := m.handed[:0]
	for _, h := range m.handed {
		if h.s.seq.Load() == h.seq {
			kept = append(kept, h)
		}
	}
	clear(m.handed[len(kept):])
	m.handed = kept
	if len(kept) == 0 || m.h.signals.offCPU(len(kept), m.h.awakeIdle, m.now) == 0 {
		return 0
	}
	var buf [16]stuckSlot
	stuck := m.stoodStill(stillGap, buf[:0])
	n := m.h.handOn(stuck, len(stuck), KindBound)
	if n == 0 {
		return 0
	}
	m.remember(stuck[:n])
	m.h.ramp()
	return n
}

// remember adds to the evidence (m.handed) the workers handed on
// without a proof, dropping the oldest beyond handedKept.
func (m *monitor) remember(ss []stuckSlot) {
	m.handed = append(m.handed, ss...)
	if extra := len(m.handed) - handedKept; extra > 0 {
		copy(m.handed, m.handed[extra:])
		clear(m.handed[handedKept:])
		m.handed = m.handed[:handedKept]
	}
}

// boundOffProc is the fallback's hand-off of workers that the counts
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
func (m *monitor) boundOffProc() int {
	if m.stuck < len(m.active) {
		return 0
	}
	var buf [16]stuckSlot
	long := m.stoodStill(unprovenWait, buf[:0])
	if len(long) == 0 {
		return 0
	}
	c, ok := m.h.signals.read()
	if !ok || c.Marking {
		return 0
	}
	k := len(long) - (c.Running - 1)
	if k <= 0 {
		return 0
	}
	n := m.h.handOn(long, k, KindBound)
	m.remember(long[:n])
	return n
}

// boundLong is the bound on a worker that stands still without being
// known blocked: it hands on every attached worker that has stood still
// for runWait in one task, only while no attached worker moves (stuck ==
// len(active)) and the collector does not mark. A long CPU-bound task is
// the Go scheduler's to time-slice, a worker waiting for a CPU gains
// nothing from another goroutine beside it, and one parked in an assist
// is released when the mark ends, however long it takes; but a task that
// spins until a queued task has run, or waits where nothing counts it as
// blocked (a runtime semaphore such as a file's read lock, a nil channel;
// on the fallback, any wait while every CPU is busy), must not hold its
// slot for ever.
func (m *monitor) boundLong() {
	if m.stuck < len(m.active) {
		return
	}
	// Those known blocked were handed on before (Pool.HandOn refuses
	// them now).
	var buf [16]stuckSlot
	long := m.stoodStill(runWait, buf[:0])
	if len(long) == 0 {
		return
	}
	if c, ok := m.h.signals.read(); ok && c.Marking {
		return
	}
	n := m.h.handOn(long, len(long), KindBound)
	if !statusOn() {
		m.remember(long[:n])
	}
}

// stoodStill appends to buf the attached workers (m.active) that are in
// a task (odd seq) whose still mark is d or more old, and returns it.
func (m *monitor) stoodStill(d time.Duration, buf []stuckSlot) []stuckSlot {
	for _, s := range m.active {
		seq := s.mon.seq // as sampled this tick
		if seq&1 == 0 {
			continue
		}
		if since, ok := s.still.of(seq); ok && since.age(m.now) >= d {
			buf = append(buf, stuckSlot{s, seq, since})
		}
	}
	return buf
}
