package sched

import (
	"runtime"
	"runtime/metrics"
	"time"

	"github.com/go-steal/steal/internal/gstatus"
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
// (handOffKnown); one that runs or waits for a CPU only after runWait
// with no attached worker moving; one that waits for the garbage
// collector, never. Detached
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
// Where statuses cannot be read, the fallback knows only that a worker is
// stuck, and three refinements use more than the per-worker samples:
//
//   - Throttle: a task that runs long on a CPU is stuck too, and so is one
//     whose goroutine waits for a CPU (or whose thread waits for one, when
//     other processes keep the machine busy), but detaching its worker only
//     adds a goroutine to compete for the CPUs. When the runtime's metrics
//     say that every CPU is busy or a goroutine waits for one, the monitor
//     detaches nobody while another worker makes progress (it takes the
//     queued tasks in turn), and otherwise waits busyWait (longer than the
//     Go scheduler's time slice) before it detaches.
//   - Collections: a worker that allocates while the collector marks may
//     wait for it (an assist), neither running nor runnable, exactly like
//     a blocked one; while cycles end often the monitor waits for a
//     cycle's end, or busyWait, before it counts a worker as blocked (the
//     comment at gcMarking in the loop says why).
//   - Ramp: when every attached worker is stuck and no CPU is busy (a
//     fan-out of blocking calls, as errgroup code does), replacing them one
//     for one would start GOMAXPROCS tasks per period; the monitor also
//     starts one worker per queued task that no idle worker is there to
//     take, as errgroup would have started a goroutine for each. Those that
//     block are detached at the next sample; the others find the pool
//     above capacity and leave. Not while collections may be marking.
//     (With statuses read, the ramp follows a tick that found every
//     attached worker blocked.)
//
// The monitor is a goroutine that exists only while the pool is saturated:
// a post that finds the pool saturated starts it (Pool.watch), and it exits
// after watchLinger without saturation (see the loop). Each tick also samples
// GOMAXPROCS (Pool.refreshSize), so a saturated pool grows within a tick
// when GOMAXPROCS goes up. Its period and patience, watchTick and
// watchQuiet, are in params.go.

// watch starts the watchdog unless it runs. Called by posters that found
// the pool saturated (all workers busy, no room to start another).
func (p *Pool) watch() {
	// The monitor runs and samples on its own: two loads, inlined into
	// the caller.
	if p.watching.Load() && !p.napping.Load() {
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

func (p *Pool) watchdog() {
	samples := []metrics.Sample{
		{Name: "/sched/goroutines/running:goroutines"},
		{Name: "/sched/goroutines/runnable:goroutines"},
		{Name: "/gc/cycles/total:gc-cycles"},
	}

	// gen numbers the samples: a worker's marks count only if they are
	// from the sample before (see sampleStuck). The first sample is taken
	// now, so that the first tick can already tell who is stuck.
	gen := uint64(1)
	sampleStuck(p.scanned(), gen, nanotime())
	timer := time.NewTimer(watchTick)
	defer timer.Stop()
	// quiet counts the ticks without saturation; after watchQuiet of them
	// the monitor dozes: its period doubles each tick up to watchDoze,
	// and a post that finds the pool saturated kicks it awake (watch).
	// It exits after watchLinger of quiet, so that a service whose
	// requests saturate the pool now and then does not start a monitor
	// each time, and no goroutine outlives the work by more than that.
	quiet, period, quietSince := 0, watchTick, time.Time{}
	// The monitor waits for its next tick on the timer or a kick, whichever
	// comes first, except after a tick that found the pool saturated while
	// the CPUs are not: then it yields until watchTick has passed. When every
	// P is idle, the Go timer fires about a millisecond late, and those
	// are the ticks that matter for a fan-out of blocking calls; the
	// yielding costs CPUs that nothing else wants. (A nanosleep system
	// call would be precise, but the P of a goroutine in a system call is
	// handed on only when sysmon retakes it: with GOMAXPROCS 1 that stalls
	// the workers for as long.)
	yieldNext := true // the first tick
	for {
		if yieldNext {
			yieldNext = false
			for start := nanotime(); nanotime()-start < int64(watchTick); {
				runtime.Gosched()
			}
		} else {
			timer.Reset(period)
			p.napping.Store(true)
			select {
			case <-timer.C:
			case <-p.kick:
				quiet, period = 0, watchTick
			}
			p.napping.Store(false)
		}
		// Sample every tick, quiet or not: when a kick wakes a dozing
		// monitor, the sample of its last tick tells who has been in one
		// task since, at once.
		gen++
		now := nanotime()
		active := p.scanned()
		stuck := sampleStuck(active, gen, now)
		procs := int(p.refreshSize())
		queued := p.queued()
		if queued == 0 || p.sleep.Load().Inactive() > 0 {
			if quiet == 0 {
				quietSince = time.Now()
			}
			if quiet++; quiet >= watchQuiet && period < watchDoze {
				period = min(2*period, watchDoze)
			}
			// It exits only when nothing is queued: idle workers may
			// be about to block on what they find, and nothing else
			// would start a monitor again for tasks posted long ago.
			if quiet < watchQuiet || time.Since(quietSince) < watchLinger || queued != 0 {
				continue
			}
			// Exit. A poster that saw watching true after our last check
			// did not start another monitor, so clear the flag first,
			// then look once more: if the pool is saturated again, take
			// the flag back and carry on.
			p.mu.Lock()
			p.watching.Store(false)
			p.mu.Unlock()
			if p.queued() == 0 || !p.watching.CompareAndSwap(false, true) {
				break
			}
			quiet, period = 0, watchTick
			continue
		}
		quiet, period = 0, watchTick
		if live := p.live.Load(); !p.full() {
			// Below capacity (workers retired, or tasks arrived in
			// deques without a post that could start one): fill up.
			p.spawnUpTo(min(queued, int(p.capacity()-live)))
		}
		metrics.Read(samples)
		// Counting ourselves: we hold a P, and every other P runs a
		// goroutine, or a goroutine waits for one.
		running, runnable := int(samples[0].Value.Uint64()), samples[1].Value.Uint64()
		cpuBusy := running >= procs || runnable > 0
		// A goroutine that allocates while the collector marks may have
		// to wait (an assist) until the cycle ends, and then it is
		// neither running nor runnable: CPU-bound workers look blocked.
		// The runtime reports the cycles that ended, not one in progress
		// (the heap's growth toward its goal does not tell either:
		// runtime.GC starts a cycle at any time). So while cycles end
		// often (one ended within gcOften), a worker counts as blocked
		// only once a cycle has ended since it last moved (the end wakes
		// every assist), or after busyWait, as when the CPUs are busy;
		// and there is no ramp.
		if c := samples[2].Value.Uint64(); c != p.gcCycles {
			// The first count read is no news: the cycles it counts
			// may have ended long ago.
			if p.gcRead {
				p.gcMovedAt = now
			}
			p.gcCycles, p.gcRead = c, true
		}
		gcMarking := p.gcMovedAt != 0 && now-p.gcMovedAt < int64(gcOften)
		// Yield for the next tick unless the CPUs are saturated (then the
		// timer is on time, and yielding would take CPU from others).
		yieldNext = running < procs || runnable == 0
		if stuck == 0 {
			continue
		}
		if statusOn() {
			p.handOffKnown(active, gen, now, stuck)
			continue
		}
		// The fallback: no statuses, only the sequence numbers, and the
		// throttles below.
		if cpuBusy && stuck < len(active) {
			// The CPUs are busy and some worker is making progress: it
			// takes the queued tasks in turn. (The one that seems stuck
			// may only be waiting for a CPU, or for the operating system
			// to run its thread.)
			continue
		}
		detached := 0
		for _, w := range active {
			if w.mon.gen != gen || w.mon.since == now {
				continue
			}
			patient := cpuBusy || gcMarking && p.gcMovedAt <= w.mon.since
			if patient && now-w.mon.since < int64(busyWait) {
				continue
			}
			if p.detach(w, detachMonitor, w.mon.seq) {
				detached++
				p.counts.handedOff[handOffStuck].Add(1)
			}
		}
		if detached == 0 {
			continue
		}
		p.spawnUpTo(detached)
		if stuck == len(active) && !cpuBusy && !gcMarking {
			// The ramp (see above).
			p.spawnExtra(p.queued() - p.sleep.Load().Inactive())
		}
	}
}

// handOffKnown is a tick's hand-off when the workers' statuses are read
// (status.go): it hands on every worker of active that counts as blocked,
// at once (handOffBlocked, which also ramps up when all of them are), and
// one that has stood still for runWait in a task in which it runs (or
// waits for a CPU) only while no attached worker moves (stuck ==
// len(active)): a long CPU-bound task is the Go scheduler's to
// time-slice, but one that spins until a queued task has run must not
// hold its slot for ever. One that waits for the collector, never.
func (p *Pool) handOffKnown(active []*worker, gen uint64, now int64, stuck int) {
	p.handOffBlocked(active, now, nil)
	if stuck < len(active) {
		return
	}
	detached := 0
	for _, w := range active {
		if w.mon.gen != gen || w.mon.since == now || now-w.mon.since < int64(runWait) {
			continue
		}
		if s, st, _ := w.blockedFor(now); (st == gstatus.Running || st == gstatus.Runnable) && p.detach(w, detachMonitor, s) {
			detached++
		}
	}
	if detached > 0 {
		p.counts.handedOff[handOffStuck].Add(uint64(detached))
		p.spawnUpTo(detached)
	}
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
func sampleStuck(active []*worker, gen uint64, now int64) (stuck int) {
	for _, w := range active {
		s := w.seq.Load()
		if w.mon.gen != gen-1 || s != w.mon.seq {
			w.mon.seq, w.mon.since = s, now
		}
		w.mon.gen = gen
		if w.mon.since != now {
			stuck++
		}
	}
	return stuck
}
