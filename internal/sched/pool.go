package sched

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/go-steal/steal/internal/gid"
	"github.com/go-steal/steal/internal/sleep"
)

// Pool is a set of worker goroutines that run the tasks of one top-level
// Group and of every Group nested in its tasks.
//
// A pool has a fixed number of worker slots (its maximum size). A slot owns
// a deque and a sleeper; a goroutine occupies a slot while it runs, and
// slots are filled on demand: when a task is posted and no worker is idle.
// Workers leave (retire) when they have been idle for linger, or at once
// when the owner group's Wait shuts the pool down.
type Pool struct {
	owner *Group       // the group whose first Go created the pool
	sleep *sleep.Sleep // idle protocol; one sleeper per slot
	inj   injector     // tasks from outside
	slots []worker     // fixed; slot i is worker i
	max   int32        // len(slots)
	live  atomic.Int32 // slots occupied by a goroutine; written under mu
	stop  atomic.Bool  // set by shutdown: idle workers retire at once
	extra atomic.Int64 // nested-group tasks submitted from outside (see pendingNested)

	mu      sync.Mutex    // guards slot occupancy, live changes, drained
	drained chan struct{} // closed when live reaches 0 during a shutdown
}

// workers maps worker goroutines to their slots.
var workers gid.Table[worker]

// current returns the worker running on the calling goroutine, or nil.
func current() *worker { return workers.Lookup() }

func newPool(owner *Group, size int) *Pool {
	if size < 1 {
		size = 1
	}
	size = min(size, sleep.MaxWorkers)
	p := &Pool{owner: owner, sleep: sleep.New(size), slots: make([]worker, size), max: int32(size)}
	for i := range p.slots {
		w := &p.slots[i]
		w.pool, w.index = p, i
		w.rng = uint64(i)*0x9E3779B97F4A7C15 + 1
		w.doneFn = w.waitDone
		w.injectedFn = p.inj.nonEmpty
	}
	return p
}

// poolSize is the number of workers for a new pool: the group's limit when
// it has one below GOMAXPROCS, otherwise GOMAXPROCS.
func poolSize(limit int) int {
	n := runtime.GOMAXPROCS(0)
	if limit > 0 && limit < n {
		n = limit
	}
	return n
}

// inject queues t from a goroutine that is not one of p's workers.
func (p *Pool) inject(t task) {
	wasEmpty := p.inj.push(t)
	// After the push: the sleep protocol needs this order (package sleep).
	c := p.sleep.NewInjectedJobs(1, wasEmpty)
	p.maybeSpawn(c)
}

// maybeSpawn starts a worker when a job was just posted and, by the
// counters c that the post returned, no worker is idle (awake or asleep) to
// take it. A worker that is busy will come back for it, but starting
// another one gets it done in parallel, up to the pool's size.
//
// This check pairs with retire: a retiring worker first gives up its slot,
// then stops counting as inactive, then looks at the injector. If our read
// of the counters saw it inactive, its look at the injector comes after our
// push and finds the task; otherwise our read of live (below) comes after
// it gave up its slot, so we see room and start a worker.
func (p *Pool) maybeSpawn(c sleep.Counters) {
	if c.Inactive() == 0 && p.live.Load() < p.max {
		p.spawn()
	}
}

// spawn starts a worker in a free slot, if there is one.
func (p *Pool) spawn() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live.Load() >= p.max {
		return
	}
	for i := range p.slots {
		w := &p.slots[i]
		if !w.occupied {
			w.occupied = true
			p.live.Add(1)
			// The new worker counts as inactive (looking for work) from
			// now on, so posters that follow do not start more workers
			// for the same job.
			idle := p.sleep.StartLooking(i)
			go w.run(idle)
			return
		}
	}
}

// release frees w's slot. It reports false, and keeps the slot, when the
// worker must stay after all: tasks arrived in the injector and the worker
// reclaimed its slot. On true the goroutine must exit without touching the
// slot again.
func (p *Pool) release(w *worker, idle *sleep.Idle) bool {
	p.mu.Lock()
	w.occupied = false
	if p.live.Add(-1) == 0 && p.drained != nil {
		close(p.drained)
		p.drained = nil
	}
	p.mu.Unlock()
	// Order: slot given up (above), no longer inactive (here), then a last
	// look at the injector (below). See maybeSpawn.
	p.sleep.StopLooking(idle)
	if p.stop.Load() || !p.inj.nonEmpty() {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if w.occupied || p.live.Load() >= p.max {
		return true // someone else started a worker for the task
	}
	w.occupied = true
	p.live.Add(1)
	*idle = p.sleep.StartLooking(w.index)
	return false
}

// shutdown makes every worker retire as soon as it is idle and waits until
// all have exited. The owner's Wait calls it once the owner group has no
// tasks left, unless tasks of nested groups are still in flight (they may
// outlive the owner's Wait, as goroutines of an errgroup nested in an
// errgroup task may).
func (p *Pool) shutdown() {
	if p.pendingNested() > 0 {
		return
	}
	p.mu.Lock()
	if p.live.Load() == 0 {
		p.mu.Unlock()
		return
	}
	done := make(chan struct{})
	p.drained = done
	p.stop.Store(true)
	p.mu.Unlock()
	// Workers check stop under their sleep lock before sleeping (the done
	// condition of NoWorkFound); WakeAll takes each of those locks after
	// our store, so each sleeper either saw stop or is woken now.
	p.sleep.WakeAll()
	<-done
	p.stop.Store(false)
}

// pendingNested reports an upper bound on the tasks of nested groups that
// are queued or running: it is positive whenever such a task was in flight
// at the moment the last finished-counter was read.
//
// Each worker counts the nested tasks it submitted and the nested tasks it
// finished, in counters only it writes. The finished counters are all read
// first, then the submitted ones: counters only grow, so every finished
// count read is at most its value at the end of the first pass, and every
// submitted count is at least its value then. The difference is therefore
// at least the number in flight at that moment. (Reading them interleaved
// could miss a task submitted on one worker and finished on another between
// the two reads.)
func (p *Pool) pendingNested() int64 {
	var finished, submitted int64
	for i := range p.slots {
		finished += p.slots[i].nestedFinished.Load()
	}
	for i := range p.slots {
		submitted += p.slots[i].nestedSubmitted.Load()
	}
	return submitted + p.extra.Load() - finished
}
