package sched

import (
	"runtime"
	"runtime/metrics"
	"time"
)

// The watchdog keeps the pool from starving.
//
// errgroup runs every task at once, so its users write tasks that wait for
// each other: a task blocks on a channel that a later task closes, eight
// tasks wait on ctx.Done() for a ninth to fail. On a pool of GOMAXPROCS
// workers those programs stall: every worker is blocked and the task that
// would release them sits in a queue. The pool must add workers, but only
// then: CPU-bound tasks must not grow it past GOMAXPROCS.
//
// Two signals together tell the cases apart:
//
//   - saturation, from the pool itself: tasks are queued and no worker is
//     idle (searching or asleep) to take them;
//   - idle CPUs, from the runtime (runtime/metrics): fewer goroutines are
//     running than GOMAXPROCS allows, and none is waiting for a CPU.
//
// Saturated with busy CPUs is CPU-bound work: adding workers would only
// add contention. Saturated with idle CPUs means some of our busy workers
// are not on a CPU, so they are blocked, and a new worker can make
// progress. A rule based on progress alone ("no task started for T") is
// either slow for a fan-out of blocking calls, which needs many workers at
// once, or wrong for long CPU-bound tasks, which start nothing for a long
// time while doing useful work.
//
// The watchdog is a goroutine that exists only while the pool is saturated:
// a post that finds the pool saturated starts it (Pool.watch), and it exits
// after watchLinger without saturation (see the loop). Each tick also samples
// GOMAXPROCS (Pool.refreshSize), so a saturated pool grows within a tick
// when GOMAXPROCS goes up.
// A third rule keeps queued tasks from starving behind tasks that do not
// end (long ones, or blocked ones while other goroutines of the program keep
// the CPUs busy, so that the second rule never fires): when the injector
// holds tasks that no worker has taken for starveTicks ticks, or a worker's
// deque holds tasks that neither its owner nor a thief has touched for as
// long, it adds a worker (at most fairPerProc×GOMAXPROCS or fairFloor of
// them above capacity, whichever is more), which takes from the injector
// before anything else and steals otherwise; the Go scheduler then shares
// the CPUs between it and the busy workers.
//
// On each tick that finds the pool saturated with idle CPUs it adds
// workers above the pool's capacity (see Pool.spawnExtra): as many as there
// are idle CPUs, or, when no goroutine at all is running (every worker is
// blocked), one per queued task, so that a fan-out of 64 blocking calls
// has 64 workers after one tick. Workers above capacity retire as soon as
// they find nothing to do. Its period and patience, watchTick and
// watchQuiet, are in params.go.

// watch starts the watchdog unless it runs. Called by posters that found
// the pool saturated (all workers busy, no room to start another).
func (p *Pool) watch() {
	if p.watching.Load() {
		if p.dozing.Load() {
			// The watchdog ticks slowly while quiet: make it look now.
			select {
			case p.kick <- struct{}{}:
			default:
			}
		}
		return // one atomic load on the common path
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.watching.Load() {
		return
	}
	p.watching.Store(true)
	startWatchdog(p)
}

func (p *Pool) watchdog() {
	samples := []metrics.Sample{
		{Name: "/sched/goroutines/running:goroutines"},
		{Name: "/sched/goroutines/runnable:goroutines"},
	}
	// The first tick comes by yielding until watchTick has passed, not by
	// a timer: when every P is idle, the Go timer fires about a
	// millisecond late, and the first tick is the one that matters for a
	// fan-out of blocking calls. Yielding costs nothing when the workers
	// want the CPU: runtime.Gosched hands it to them.
	for start := time.Now(); time.Since(start) < watchTick; {
		runtime.Gosched()
	}
	timer := time.NewTimer(watchTick)
	defer timer.Stop()
	// quiet counts the ticks without saturation; after watchQuiet of them
	// the watchdog dozes: its period doubles each tick up to watchDoze,
	// and a post that finds the pool saturated kicks it awake (watch).
	// It exits after watchLinger of quiet, so that a service whose
	// requests saturate the pool now and then does not start a watchdog
	// each time, and no goroutine outlives the work by more than that.
	quiet, period, quietSince := 0, watchTick, time.Time{}
	stalled, lastTaken := 0, p.inj.takenTotal()
	var marks []dequeMark // by slot: see stuckDeque
	for first := true; ; first = false {
		if !first {
			select {
			case <-timer.C:
			case <-p.kick:
				if !timer.Stop() {
					<-timer.C
				}
				quiet, period = 0, watchTick
				p.dozing.Store(false)
			}
			timer.Reset(period)
		}
		procs := int(p.refreshSize())
		queued := p.queued()
		if queued == 0 || p.sleep.Load().Inactive() > 0 {
			if quiet == 0 {
				quietSince = time.Now()
			}
			if quiet++; quiet >= watchQuiet && period < watchDoze {
				period = min(2*period, watchDoze)
				p.dozing.Store(true)
			}
			// It exits only when nothing is queued: idle workers may
			// be about to block on what they find, and nothing else
			// would start a watchdog again for tasks posted long ago.
			if quiet < watchQuiet || time.Since(quietSince) < watchLinger || queued != 0 {
				continue
			}
			// Exit. A poster that saw watching true after our last check
			// did not start another watchdog, so clear the flag first,
			// then look once more: if the pool is saturated again, take
			// the flag back and carry on.
			p.mu.Lock()
			p.watching.Store(false)
			p.mu.Unlock()
			if p.queued() == 0 || !p.watching.CompareAndSwap(false, true) {
				break
			}
			quiet, period = 0, watchTick
			p.dozing.Store(false)
			continue
		}
		quiet, period = 0, watchTick
		p.dozing.Store(false)
		// Fairness: tasks wait in the injector and no worker has taken
		// one for starveTicks ticks. Every worker is busy with tasks of
		// other groups, in its own deque or in a helping Wait (where it
		// runs only the waited group's tasks), and may stay so for long:
		// add a worker for the injector, up to fairCap() of them
		// above capacity. CPU-bound work keeps taking from the injector as long
		// as it is fed from outside, so this does not grow a pool that
		// makes progress.
		starving := false
		if taken := p.inj.takenTotal(); taken != lastTaken || !p.inj.nonEmpty() {
			stalled, lastTaken = 0, taken
		} else if stalled++; stalled >= starveTicks {
			stalled, starving = 0, true
		}
		// The same for tasks in a worker's deque that neither its owner
		// nor any thief has touched for starveTicks ticks: the owner is
		// stuck in one task (blocked, as in a chain of tasks that wait for
		// the next, or running long), every other worker is busy, and
		// with the CPUs busy too (other goroutines of the program) the
		// rule for idle CPUs below never fires.
		var stuck bool
		marks, stuck = p.stuckDeque(marks)
		starving = starving || stuck
		if starving && p.live.Load() < p.capacity()+p.fairCap() {
			p.spawnExtra(1)
			continue
		}
		if p.live.Load() < p.capacity() {
			// Below capacity (workers retired, or tasks arrived in
			// deques without a post that could start one): fill up.
			p.spawnUpTo(min(queued, int(p.capacity()-p.live.Load())))
			continue
		}
		metrics.Read(samples)
		running := int(samples[0].Value.Uint64()) - 1 // not counting ourselves
		runnable := int(samples[1].Value.Uint64())
		if runnable > 0 || running >= procs {
			continue // CPU-bound: more workers would not help
		}
		// Some CPUs are idle although every worker is busy: the busy
		// workers are blocked. Add as many workers as there are idle
		// CPUs, or as many as there are already, whichever is more: when
		// the new ones block as well (a fan-out of blocking calls), the
		// pool doubles every tick, and when they keep the CPUs busy, the
		// next tick adds none.
		add := max(procs-max(running, 0), int(p.live.Load()))
		if running <= 0 {
			// Nothing runs at all: every worker is blocked, and errgroup
			// would have every queued task running by now. Start one
			// worker per queued task. (Doubling instead would take a
			// tick per step, and when every P is idle a tick of the Go
			// timer is about a millisecond, not watchTick.)
			add = queued
		}
		p.spawnExtra(min(add, queued))
	}
}

// fairCap is the most workers the watchdog adds above capacity for
// starving tasks (see params.go).
func (p *Pool) fairCap() int32 { return max(fairPerProc*p.size.Load(), fairFloor) }

// dequeMark is what the watchdog saw of one slot's deque: its ends, and for
// how many ticks in a row it has held tasks with neither end moving.
type dequeMark struct {
	top, bottom int64
	ticks       int
}

// stuckDeque updates marks (by slot) with the deques' ends and reports
// whether some deque has held tasks untouched for starveTicks ticks; it
// restarts that deque's count. It returns the marks, grown to the slots
// scanned.
func (p *Pool) stuckDeque(marks []dequeMark) (_ []dequeMark, stuck bool) {
	slots := p.scanned()
	for len(marks) < len(slots) {
		marks = append(marks, dequeMark{})
	}
	for i, w := range slots {
		t, b := w.dq.Ends()
		m := &marks[i]
		if b <= t || t != m.top || b != m.bottom {
			*m = dequeMark{top: t, bottom: b}
			continue
		}
		if m.ticks++; m.ticks >= starveTicks {
			m.ticks = 0
			stuck = true
		}
	}
	return marks, stuck
}
