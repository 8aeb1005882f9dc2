package sched

import (
	"github.com/go-steal/steal/internal/explore/atomic"
	"github.com/go-steal/steal/internal/explore/xsync"
	"github.com/go-steal/steal/internal/gid"
)

// A goroutine that is not a worker (a request handler, main) runs tasks of
// its own group while it waits for the group in Wait, until nothing of the
// group is within reach. (Not while a Go waits for a slot: see
// Group.acquireOutside.) The tasks it can reach are the group's
// newest tasks in its own shard of the injector, which are most likely the
// ones it has just submitted, and the oldest task of a worker's deque when
// that task is the group's. Running them itself saves their hand-off to a
// worker and its own park and wake-up, and its CPU is not idle while it
// waits (ForkJoinPool's external joins help the same way).
//
// Only the group's own tasks: the waiter waits for each of them anyway, so
// running one cannot make it wait for anything it would not have waited
// for (the deadlock argument of worker.help). A task run here sees the
// goroutine of the caller of Wait: its runtime.Goexit ends that
// goroutine, and its panic ends the program (see callOutside).
//
// While it runs such a task, the goroutine is marked in runners, so that a
// Go made inside the task on a full limited group follows the rule for Go
// inside a task (setAside) instead of blocking: the slots it would
// wait for may be held by the very tasks suspended below it.

// runners is the set of goroutines that are not workers and are running a
// task of ours now. A goroutine that cannot be added (its probe window is
// full) does not run tasks outside the pool; it only parks.
var runners runnerSet

// runnerSet is a set of goroutine ids in a fixed open-addressed table:
// lock-free, and allocation-free. Goroutine ids are never reused, so a slot
// is claimed with a compare-and-swap from 0 and released by storing 0, and
// only the goroutine whose id a slot holds releases it. A lookup probes
// the same window as the insertion did; an id is found while it is there,
// since no other goroutine writes a slot that holds it.
type runnerSet struct {
	slots [runnerSlots]atomic.Int64
}

const (
	runnerSlots  = 1024
	runnerWindow = 8
)

func runnerHome(id int64) int {
	return int(uint64(id) * 0x9E3779B97F4A7C15 >> (64 - 10))
}

// has reports whether id is in the set.
func (s *runnerSet) has(id int64) bool {
	h := runnerHome(id)
	for i := range runnerWindow {
		if s.slots[(h+i)%runnerSlots].Load() == id {
			return true
		}
	}
	return false
}

// add puts id, which must not be in the set, into the set and returns its
// slot, or reports false when its window is full.
func (s *runnerSet) add(id int64) (int, bool) {
	h := runnerHome(id)
	for i := range runnerWindow {
		j := (h + i) % runnerSlots
		if s.slots[j].Load() == 0 && s.slots[j].CompareAndSwap(0, id) {
			return j, true
		}
	}
	return 0, false
}

// remove takes the id in slot j out of the set; only its goroutine may.
func (s *runnerSet) remove(j int) { s.slots[j].Store(0) }

// waitFromOutside is Wait on a goroutine that is not a worker.
//
// If a task run here calls runtime.Goexit, the goroutine unwinds through
// this Wait; as in helpUntilDone, the deferred function then waits for the
// group's other tasks and ends the Wait (result), so that a panic the
// group recovered is raised on the goroutine all the same.
func (g *Group) waitFromOutside() {
	returned := false
	defer func() {
		if returned {
			return
		}
		g.waitOutside()
		if sl := g.slow.Load(); sl != nil {
			sl.result()
		}
	}()
	g.helpOutside()
	g.awaitOutside()
	returned = true
}

// awaitOutside is waitOutside after a short poll of the count: the tasks
// left are running on workers, and with short tasks they end sooner than a
// parked goroutine is woken. The poll is as in acquireOutside.
func (g *Group) awaitOutside() {
	if global.size.Load() > 1 {
		for range submitPolls {
			for range 32 {
				if g.count() == 0 {
					return
				}
			}
		}
	}
	g.waitOutside()
}

// helpOutside runs the group's tasks that the calling goroutine can reach
// (see above) until there are none.
func (g *Group) helpOutside() {
	id := gid.Current()
	if !runners.has(id) {
		j, ok := runners.add(id)
		if !ok {
			return
		}
		defer runners.remove(j) // deferred: a task's Goexit unwinds through here
	}
	var c outsideCounts
	defer global.publishOutside(id, &c) // deferred for Goexit too
	isG := func(t *task) bool { return t.g.Load() == g }
	for g.count() != 0 {
		if f := global.inj.unpushIf(g); f != nil {
			g.runOutside(f, &c)
			continue
		}
		t := global.stealFor(isG)
		if t == nil {
			return
		}
		c.steals++
		// The record is not recycled: free lists belong to workers.
		f := t.f
		g.runOutside(f, &c)
	}
}

// stealFor takes the oldest task of a worker's deque for which keep
// reports true, trying each worker once from a random start, or returns
// nil. Like worker.stealIf it retries a deque whose steal lost a race.
func (p *Pool) stealFor(keep func(*task) bool) *task {
	slots := p.scanned()
	n := len(slots)
	if n == 0 {
		return nil
	}
	start := int(xsync.Rand() % uint64(n))
	for i := range n {
		v := start + i
		if v >= n {
			v -= n
		}
		for {
			t, retry := slots[v].dq.StealIf(keep)
			if t != nil {
				return t
			}
			if !retry {
				break
			}
		}
	}
	return nil
}

// runOutside runs f, a task of g that the calling goroutine (not a worker)
// has taken, and accounts for it; c counts it if it ran.
func (g *Group) runOutside(f func() error, c *outsideCounts) {
	if g.skips() {
		g.drop(nil, false)
		return
	}
	admitted := false
	if g.limit > 0 {
		if !g.startRunning(nil, f) {
			return // parked; a worker will resubmit it
		}
		admitted = true
	}
	g.callOutside(f, admitted, c)
}
