package sched

import (
	"runtime/metrics"
	"sync"
	"time"
)

// Blocking detection where statuses are not read (gstatus.On is false):
// the runtime's public counts. Without a goroutine's own status, the
// scheduler still knows, from the task sequence numbers, which workers
// have stood still in one task, and the runtime's metrics say how many
// goroutines are running on a P (/sched/goroutines/running, every P that
// is running Go code) and how many wait for one
// (/sched/goroutines/runnable, every run queue). A worker that stood
// still and is neither running nor runnable is blocked (or in a system
// call, which counts the same: its P is not running Go code). So when
//
//	k = stuck - (running - 1) - runnable > 0
//
// at least k of the stuck workers are off the CPU: the other running
// goroutines and the runnable ones may all be stuck workers, but no more
// than that. (The 1 is the goroutine that reads the counts: it runs.)
// checkStuck hands on the k that have stood still longest, at once, and,
// when every other attached worker is proven off the CPU, ramps up as the
// status reads do (a fan-out of blocking calls). A worker stands still
// when two looks at least stillGap apart found it in the same task (the
// marks in worker.still, shared by every looker).
//
// The bound holds whatever else the process runs: a worker that waits for
// a CPU is runnable, one whose thread the operating system does not run
// still holds a running P, and the counts of other goroutines only make k
// smaller. Two things can make a worker look off the CPU without being
// blocked, and both are the garbage collector's:
//
//   - a goroutine that allocates while the collector marks may have to
//     wait for it (an assist), parked;
//   - while the world is stopped, no P runs (but then neither does the
//     goroutine that reads the counts).
//
// So checkStuck does not count while the collector marks. The runtime
// reports completed cycles (/gc/cycles/total) and every stop of the world
// for the collector (/sched/pauses/total/gc, two per cycle: one before
// marking, one after): after an odd number of stops beyond twice the
// cycles, a cycle marks. Between the mark's end and the counting of its
// stop the count is one short, which reads as not marking, which it is
// not; a mark that the runtime restarts stops the world once more, which
// reads as a count two beyond, which checkStuck treats as marking too. A
// worker parked in an assist is released when the mark ends, so a check
// made between two cycles sees it running or runnable; a storm of
// collections leaves such moments between every two cycles, and the
// monitor's bound (watchdog.go: busyWait) covers a task that stands still
// through all of them.
//
// Checks are made by the posters that find the pool saturated, as with
// statuses read (Pool.saturated, worker.foundWork), and by the monitor
// on each tick; at most one per stillGap for the whole pool
// (Pool.checkedAt), and a check reads the metrics only when some worker
// stood still: about 300 ns under the runtime's scheduler lock.

// stillGap: the least time between two looks that find a worker in the
// same task for it to count as stuck on the fallback. As blockedGap: a
// task that waits often and briefly is not handed on for it.
const stillGap = 50 * time.Microsecond

// rtCounts is what one read of the runtime's metrics says (signals.read).
type rtCounts struct {
	running, runnable int
	// marking: a collection may be marking (see above).
	marking bool
}

// signals reads the runtime's metrics for the fallback; one reader at a
// time (the samples are reused), the others skip a check meanwhile.
type signals struct {
	mu      sync.Mutex
	samples []metrics.Sample
}

func newSignals() *signals {
	return &signals{samples: []metrics.Sample{
		{Name: "/sched/goroutines/running:goroutines"},
		{Name: "/sched/goroutines/runnable:goroutines"},
		{Name: "/gc/cycles/total:gc-cycles"},
		{Name: "/sched/pauses/total/gc:seconds"},
	}}
}

// read reads the counts, or reports false if another goroutine is reading
// them.
func (s *signals) read() (rtCounts, bool) {
	if !s.mu.TryLock() {
		return rtCounts{}, false
	}
	defer s.mu.Unlock()
	metrics.Read(s.samples)
	c := rtCounts{
		running:  int(s.samples[0].Value.Uint64()),
		runnable: int(s.samples[1].Value.Uint64()),
	}
	stops := uint64(0)
	for _, n := range s.samples[3].Value.Float64Histogram().Counts {
		stops += n
	}
	c.marking = int64(stops)-2*int64(s.samples[2].Value.Uint64()) > 0
	return c, true
}

// stuckWorker is a worker checkStuck found in one task for stillGap or
// longer: its seq, and since when.
type stuckWorker struct {
	w     *worker
	seq   uint32
	since uint32 // nanotime >> 10, as in worker.still
}

// checkStuck is the fallback's check (see above): it marks the attached
// workers of active (all but self, the calling worker or nil), and hands
// on those the counts prove off the CPU. It returns how many it detached,
// and how many workers it found in a task for the first time (fresh
// marks: the next check may find them stuck).
func (p *Pool) checkStuck(active []*worker, self *worker, now int64) (detached, fresh int) {
	var buf [16]stuckWorker
	stuck := buf[:0]
	others := 0
	t := uint32(now >> 10)
	for _, w := range active {
		if w == self {
			continue
		}
		others++
		s := w.seq.Load()
		if s&1 == 0 {
			continue // between tasks
		}
		m := w.still.Load()
		if uint32(m>>32) != s {
			// The first look at this task. As in worker.seen: seq in the
			// high half, the time in units of 1,024 ns in the low half
			// (s is odd, so a mark is never 0).
			w.still.Store(uint64(s)<<32 | uint64(t))
			fresh++
			continue
		}
		since := uint32(m)
		if time.Duration(int32(t-since))<<10 >= stillGap {
			stuck = append(stuck, stuckWorker{w, s, since})
		}
	}
	if len(stuck) == 0 {
		return 0, fresh
	}
	idle := p.sleep.Load().AwakeIdle()
	c, ok := p.signals.read()
	if !ok || c.marking {
		return 0, fresh
	}
	idle = min(idle, p.sleep.Load().AwakeIdle())
	k := len(stuck) - (c.running - 1) - c.runnable + idle
	if k <= 0 {
		return 0, fresh
	}
	// The k that have stood still longest (a few workers: insertion sort).
	for i := 1; i < len(stuck); i++ {
		for j := i; j > 0 && int32(stuck[j].since-stuck[j-1].since) < 0; j-- {
			stuck[j], stuck[j-1] = stuck[j-1], stuck[j]
		}
	}
	for _, s := range stuck[:min(k, len(stuck))] {
		if p.detach(s.w, detachMonitor, s.seq) {
			detached++
		}
	}
	if detached == 0 {
		return 0, fresh
	}
	p.counts.handedOff[handOffOffCPU].Add(uint64(detached))
	p.spawnUpTo(detached)
	if k >= others {
		// Every other attached worker is off the CPU: the ramp (see
		// status.go, handOffBlocked).
		p.counts.ramps.Add(1)
		p.spawnExtra(p.queued() - p.sleep.Load().Inactive())
	}
	return detached, fresh
}
