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
// A pool has a size: the group's limit, or GOMAXPROCS. Worker slots are made
// on demand and never removed; a slot owns a deque and a sleeper, and a
// goroutine occupies a slot while it runs. A worker is started when a task
// is posted and no worker is idle, while fewer than capacity() workers run.
// Workers leave (retire) after being idle for linger, at once when the pool
// has more workers than its capacity, or when the owner's Wait shuts the
// pool down.
type Pool struct {
	owner *Group       // the group whose first Go created the pool
	sleep *sleep.Sleep // idle protocol; one sleeper per slot
	inj   injector     // tasks from outside

	// slots is replaced, never modified in place, when it grows (under mu):
	// thieves iterate over a snapshot, and every *worker stays valid.
	slots atomic.Pointer[[]*worker]

	multiP  bool         // GOMAXPROCS > 1 when the pool was made (spinning pays)
	size    int32        // workers wanted for running tasks: min(limit, GOMAXPROCS)
	hardMax int32        // the watchdog never takes the pool above this (plus blocked workers): the limit, if any
	live    atomic.Int32 // occupied slots; written under mu
	blocked atomic.Int32 // workers in a blocking wait (see worker.block)
	// blockedHi is the most workers ever blocked at once: a pool never
	// has more than size+blockedHi workers from spawns within capacity
	// (the watchdog's: hardMax+blockedHi). Kept for tests and Stats.
	blockedHi atomic.Int32
	stop      atomic.Bool  // set by shutdown: idle workers retire at once
	watching  atomic.Bool  // a watchdog runs; set under mu
	extra     atomic.Int64 // nested groups opened from outside (see pendingNested)

	mu        sync.Mutex    // guards slot occupancy and growth, live changes, drained, watchExit
	drained   chan struct{} // closed when live reaches 0 during a shutdown
	stopping  int           // shutdowns in progress
	watchExit chan struct{} // closed when the watchdog exits
}

// workers maps worker goroutines to their slots.
var workers gid.Table[worker]

// current returns the worker running on the calling goroutine, or nil.
func current() *worker { return workers.Lookup() }

func newPool(owner *Group, limit int) *Pool {
	size := sizeFor(limit)
	p := &Pool{owner: owner, sleep: sleep.New(int(size)), size: size, hardMax: hardMaxFor(limit), multiP: runtime.GOMAXPROCS(0) > 1}
	slots := make([]*worker, size)
	for i := range slots {
		slots[i] = p.newWorker(i)
	}
	p.slots.Store(&slots)
	return p
}

func (p *Pool) newWorker(i int) *worker {
	w := &worker{pool: p, index: i, rng: uint64(i)*0x9E3779B97F4A7C15 + 1}
	w.doneFn = p.stop.Load
	w.injectedFn = p.inj.nonEmpty
	return w
}

// capacity is how many workers the pool may have now: its size, plus one
// for each worker blocked in one of our waits (a Wait whose group's tasks
// run elsewhere, a Wait or Go on another pool's group). A blocked worker
// runs nothing, the way a thread in a system call does not count against
// GOMAXPROCS; not replacing it could deadlock a pool whose size is the
// owner's limit (a task of a SetLimit(1) group waiting on a nested group
// whose task sits in its deque). The owner's limit still bounds its own
// executing tasks (Group.startRunning).
func (p *Pool) capacity() int32 {
	return p.size + p.blocked.Load()
}

// hardMaxFor reports the hardMax of a pool made for a group with this limit.
func hardMaxFor(limit int) int32 {
	if limit > 0 {
		return int32(min(limit, sleep.MaxWorkers))
	}
	return sleep.MaxWorkers
}

// sizeFor reports the size a pool made for a group with this limit has.
func sizeFor(limit int) int32 {
	n := runtime.GOMAXPROCS(0)
	if limit > 0 && limit < n {
		n = limit
	}
	return int32(n)
}

// inject queues t from a goroutine that is not one of p's workers.
func (p *Pool) inject(t job) {
	p.inj.push(t)
	// After the push: the sleep protocol needs this order (package sleep).
	c := p.sleep.Post()
	if c.Sleeping() > 0 {
		// Only now is it worth reading the consumers' side of the queue.
		p.sleep.Wake(c, 1, p.inj.len() <= 1)
	}
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
	if c.Inactive() != 0 {
		return
	}
	if p.live.Load() < p.capacity() {
		p.spawn(false)
	} else {
		p.watch() // saturated: see watchdog.go
	}
}

// spawn starts a worker in a free slot, making one if need be, unless the
// pool already has capacity() workers (extra: the watchdog's cap, hardMax
// plus the blocked workers, applies instead).
func (p *Pool) spawn(extra bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stop.Load() {
		return false
	}
	if extra && p.live.Load() >= p.hardMax+p.blocked.Load() || !extra && p.live.Load() >= p.capacity() {
		return false
	}
	slots := *p.slots.Load()
	var w *worker
	for _, s := range slots {
		if !s.occupied {
			w = s
			break
		}
	}
	if w == nil {
		if len(slots) >= sleep.MaxWorkers {
			return false
		}
		w = p.newWorker(len(slots))
		p.sleep.Grow(len(slots) + 1)
		grown := append(slots[:len(slots):len(slots)], w)
		p.slots.Store(&grown)
	}
	w.occupied = true
	p.live.Add(1)
	// The new worker counts as inactive (looking for work) from now on,
	// so posters that follow do not start more workers for the same job.
	idle := p.sleep.StartLooking(w.index)
	go w.run(idle)
	return true
}

// spawnUpTo starts up to n workers within capacity, for the watchdog.
func (p *Pool) spawnUpTo(n int) {
	for range n {
		if !p.spawn(false) {
			return
		}
	}
}

// spawnExtra starts n workers above capacity, for the watchdog.
func (p *Pool) spawnExtra(n int) {
	for range n {
		if !p.spawn(true) {
			return
		}
	}
}

// release frees w's slot. It reports false, and keeps the slot, when the
// worker must stay after all: tasks are queued and no other worker is there
// to take them. On true the goroutine must exit without touching the slot
// again.
func (p *Pool) release(w *worker, idle *sleep.Idle) bool {
	p.mu.Lock()
	w.occupied = false
	if p.live.Add(-1) == 0 && p.drained != nil {
		close(p.drained)
		p.drained = nil
	}
	p.mu.Unlock()
	// Order: slot given up (above), no longer inactive (here), then a last
	// look at the queues (below). See maybeSpawn: a poster that read the
	// counters before our StopLooking saw us inactive and relied on us,
	// and its push comes before that read, so our look finds its task.
	c := p.sleep.StopLooking(idle)
	if p.stop.Load() || p.queued() == 0 {
		return true
	}
	if c.Sleeping() > 0 {
		p.sleep.Wake(c, 1, false) // pass it on to a sleeper
		return true
	}
	if c.AwakeIdle() > 0 {
		return true // a searching worker will find it (or pass it on too)
	}
	p.mu.Lock()
	if !p.stop.Load() && !w.occupied && p.live.Load() < p.capacity() {
		// Stay: take the slot back.
		w.occupied = true
		p.live.Add(1)
		*idle = p.sleep.StartLooking(w.index)
		p.mu.Unlock()
		return false
	}
	p.mu.Unlock()
	// At capacity, and every live worker busy: they may all be blocked.
	p.watch()
	return true
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
	// Several goroutines may Wait on the owner at once: they share one
	// drain, and the last to finish clears stop.
	p.mu.Lock()
	p.stopping++
	if p.live.Load() > 0 && p.drained == nil {
		p.drained = make(chan struct{})
	}
	drained := p.drained
	p.stop.Store(true)
	watchExit := p.watchExit
	p.mu.Unlock()
	if drained != nil {
		// Workers check stop under their sleep lock before sleeping (the
		// done condition of NoWorkFound); WakeAll takes each of those
		// locks after our store, so each sleeper either saw stop or is
		// woken now.
		p.sleep.WakeAll()
		<-drained
	}
	if watchExit != nil {
		<-watchExit // the watchdog sees stop within a tick
	}
	p.mu.Lock()
	if p.stopping--; p.stopping == 0 {
		p.stop.Store(false)
	}
	p.mu.Unlock()
	// A task that arrived while stop was set (an outsider's Go on a nested
	// group) found no worker willing to start: start one now.
	if p.queued() > 0 {
		p.spawn(false)
	}
}

// pendingNested reports a number that is positive whenever a nested group
// had tasks queued or running at the moment its first loop ended.
//
// Each worker counts the nested groups it opened (a Go that took a group's
// count from 0 to 1) and closed (a flush that took it to 0), in counters
// only it writes; outsiders that open a nested group count in p.extra.
// An opening is counted before its task is queued, so before the group can
// close. The closed counters are all read first, then the opened ones:
// counters only grow, so each closed count read is at most its value at the
// end of the first loop (call it T), and each opened count at least its
// value at T. The difference is therefore at least the number of groups
// open at T whose opening was counted by T. A group that was open at T but
// whose opener had not counted it yet had its opener running at T, a task
// of another group that was open at T and counted (its task was queued
// after that count); the chain ends at a counted group, or at the owner
// group, which is not running tasks when shutdown asks. (Reading the
// counters interleaved, worker by worker, could miss a group opened on one
// worker and closed on another between the two reads.)
func (p *Pool) pendingNested() int64 {
	var closed, opened int64
	for _, w := range *p.slots.Load() {
		closed += w.nestedClosed.Load()
	}
	// A slot added after the load above has closed nothing yet (its
	// counters start at zero), so the second pass may see more slots.
	for _, w := range *p.slots.Load() {
		opened += w.nestedOpened.Load()
	}
	return opened + p.extra.Load() - closed
}
