package handoff

import (
	"sync"
	"time"

	"github.com/go-steal/steal/internal/rtcount"
)

// Proven off the CPU: the second detector, where statuses are not read.
// Without a goroutine's own status, the hand-off still knows, from the
// still marks, which workers have stood still in one task, and the
// runtime's metrics (package rtcount) say how many processors run Go code
// ("running": a goroutine, or the scheduler looking for one) and how many
// goroutines wait for one ("runnable"). A worker that stood still and is
// neither running nor runnable is blocked (or in a system call, which
// counts the same: its P is not running Go code). So when
//
//	k = stuck - (running - 1) - runnable + idle > 0
//
// at least k of the stuck workers are off the CPU: the other running
// processors and the runnable goroutines may all be stuck workers, but no
// more than that. The 1 is the goroutine that reads the counts: it runs;
// idle are the pool's workers awake and looking for work, which are
// running or runnable and not stuck (read before and after the counts, the
// smaller of the two). When the proof counts (signals.offCPU says when),
// handOnOffCPU hands on the k that have stood still longest and, when
// every other attached worker is proven off the CPU, ramps up.
//
// The bound holds whatever else the process runs: a worker that waits for
// a CPU is runnable, one whose thread the operating system does not run
// still holds a running P, and the counts of other goroutines only make k
// smaller. But off the CPU is not always blocked: the garbage collector
// parks goroutines that allocate, for as long as it needs,
//
//   - while it marks, in an assist, until other goroutines have done
//     enough of the marking or the mark ends;
//   - while it starts a cycle, on its semaphores, until the world has
//     stopped and started again; and while it ends one, after the world
//     has started again, until every processor has flushed its caches.
//
// So nothing counts while the collector marks (rtcount.Counts says how
// that is read), and right after a collection a proof counts only when
// made twice with no stop of the world between (signals.offCPU). A worker
// parked in an assist is released when the mark ends, so a check made
// between two cycles sees it running or runnable; a storm of collections
// leaves such moments between every two cycles, and the monitor's bound
// (monitor.boundLong) covers a task that stands still through all of
// them. A cycle that takes longer than stillGap to start (its goroutine
// waits for a CPU: more processors than CPUs, a busy machine) can still
// get a waiting worker handed on: statuses tell that wait from a block,
// the counts cannot. It costs the pool a goroutine until the task ends, as
// a blocking task would.
//
// A check reads the counts only when some worker stood still: about
// 100 ns under the runtime's scheduler lock, and 500 ns more when they
// prove a worker off the CPU.

// signals reads the runtime's counts for the hand-off (package rtcount).
// One reader at a time: a Reader reuses its samples, and the runtime
// serializes its reads of metrics on a semaphore, which parks a goroutine
// that finds it taken; a worker parked there in the middle of a task (a
// Go in a task checks the workers) would look off the CPU to the reader
// that holds it. So the posters skip a check while another goroutine
// reads (offCPU), and the monitor waits for its turn (read, running).
type signals struct {
	mu sync.Mutex
	r  rtcount.Reader
	// src, when not nil, stands in for r: the tests' counts.
	src countSource
	// The collector's stops at the last full read, and when a read last
	// found them changed.
	stops   uint64
	stopsAt int64
	// When the proof offCPU waits to see made again was made (see
	// there), 0 for none.
	proofAt int64
}

// countSource is what signals reads: an rtcount.Reader, or the tests' stand-in.
type countSource interface {
	Read() (rtcount.Counts, bool)
	Running() (running, runnable int, ok bool)
}

// counts returns the source of the counts. s.mu is held.
func (s *signals) counts() countSource {
	if s.src != nil {
		return s.src
	}
	return &s.r
}

// read reads every count, waiting for another reader to finish.
func (s *signals) read() (rtcount.Counts, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts().Read()
}

// running reads the running and runnable counts, waiting for another
// reader to finish.
func (s *signals) running() (running, runnable int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts().Running()
}

// offCPU returns how many of stuck workers the runtime's counts prove off
// the CPU (see above), or 0 when they cannot be read (another goroutine
// reads them, or rtcount cannot) or the collector marks. idle reports the
// number of the pool's workers known to be running or runnable without
// being stuck: awake and looking for work. now is the time of the check.
//
// The cheap read of the running and runnable goroutines comes first; only
// when it proves some worker off the CPU are all the counts read again,
// the collector's with them, so that the proof and the collector's state
// are of one moment. And in the stopSettle after a read found that the
// collector had stopped the world, a proof counts only when a check at
// least stillGap later makes it again, with no stop in between: besides
// its assists, the collector blocks goroutines that allocate while it
// starts a cycle (they wait on its semaphores until the world has stopped
// and started again) and while it ends one (the world has started, but
// the cycle holds its semaphore until every processor has flushed its
// caches), both outside marking; such a wait ends with a stop, or soon
// after one, and waits for the start of a cycle come close after the end
// of the last one only when cycles follow each other closely (a storm of
// collections). Outside the settle a proof counts at once: a task that
// blocks is handed on a check sooner.
func (s *signals) offCPU(stuck int, idle func() int, now int64) int {
	if !s.mu.TryLock() {
		return 0
	}
	defer s.mu.Unlock()
	src := s.counts()
	// proven is k (see above) for counts read after a: the awake idle
	// workers, read before and after the counts; one awake at both reads
	// was running or runnable at the counts' moment.
	a := idle()
	proven := func(running, runnable int) int { return stuck - (running - 1) - runnable + min(a, idle()) }
	running, runnable, ok := src.Running()
	if !ok || proven(running, runnable) <= 0 {
		s.proofAt = 0
		return 0
	}
	c, _ := src.Read()
	if c.Stops != s.stops {
		s.stops, s.stopsAt = c.Stops, now
	}
	k := proven(c.Running, c.Runnable)
	if c.Marking || k <= 0 {
		s.proofAt = 0
		return 0
	}
	if time.Duration(now-s.stopsAt) < stopSettle {
		if s.proofAt == 0 || s.proofAt < s.stopsAt {
			// The first proof, or the first since a stop.
			s.proofAt = now
			return 0
		}
		if time.Duration(now-s.proofAt) < stillGap {
			return 0
		}
	}
	return k
}

// awakeIdle returns the number of the pool's workers awake and looking
// for work.
func (h *Handoff) awakeIdle() int {
	_, awake := h.pool.Idle()
	return awake
}

// handOnOffCPU is the fallback's check (see above): it marks the attached
// workers of active (all but self), and hands on those the counts prove
// off the CPU. It returns how many it handed on, and how many workers it
// found in a task for the first time (fresh marks: the next check may
// find them stuck).
func (h *Handoff) handOnOffCPU(active []*Slot, self *Slot, now int64) (n, fresh int) {
	var buf [16]stuckSlot
	stuck := buf[:0]
	others := 0
	for _, s := range active {
		if s == self {
			continue
		}
		others++
		seq := s.seq.Load()
		if seq&1 == 0 {
			continue // between tasks
		}
		since, first := s.still.look(seq, now)
		if first {
			fresh++
		} else if since.age(now) >= stillGap {
			stuck = append(stuck, stuckSlot{s, seq, since})
		}
	}
	if len(stuck) == 0 {
		return 0, fresh
	}
	k := h.signals.offCPU(len(stuck), h.awakeIdle, now)
	if k == 0 {
		return 0, fresh
	}
	if n = h.handOn(stuck, k, KindOffCPU); n > 0 && k >= others {
		// Every other attached worker is off the CPU.
		h.ramp()
	}
	return n, fresh
}
