package sched

import (
	"runtime"

	"github.com/go-steal/steal/internal/explore/atomic"
	"github.com/go-steal/steal/internal/explore/xsync"
	"github.com/go-steal/steal/internal/gid"
	"github.com/go-steal/steal/internal/sched/handoff"
	"github.com/go-steal/steal/internal/sleep"
)

// Pool is the set of worker goroutines that runs the tasks of every Group in
// the process. There is one, global, made when the package is initialized;
// it starts no goroutine until the first task is queued.
//
// Worker slots are made on demand and never removed; a slot owns a deque
// and a sleeper, and a goroutine occupies a slot while it runs. A worker is
// started when a task is posted and no worker is idle, while fewer than
// capacity() workers run. Workers leave (retire) after being idle for
// linger, or at once when the pool has more workers than its capacity (the
// detached workers they stood in for are back, or GOMAXPROCS went down). A
// goroutine that leaves its slot waits as a spare (handoff.Spares) for a
// linger before it exits, so that the next start reuses it. So when the process
// has no task, no goroutine remains after the two lingers, and a service
// that issues requests back to back keeps the same warm workers.
//
// A worker is detached (detach.go) while it cannot run tasks: blocked in a
// Wait of ours, or seen stuck in one task by the hand-off (package
// handoff).
// A detached worker counts neither against GOMAXPROCS nor in the deque
// scans, so every scan is over at most GOMAXPROCS attached workers plus
// those that have just come back, however many tasks are blocked.
type Pool struct {
	sleep *sleep.Sleep // idle protocol; one sleeper per slot
	inj   injector     // tasks from outside

	// slots is replaced when it grows (under mu), never modified below its
	// length; every *worker stays valid. mu's holders read it, and so do
	// readers that found a slot's index where the slot was already listed
	// (the scan set, for the hand-off's poolView.HandOn; ReadStats).
	slots atomic.Pointer[[]*worker]
	// active is the scan set: the occupied slots that are not detached.
	// Whoever looks for tasks in the deques (thieves, an outside Wait,
	// queued, the monitor) reads this list, never slots: a burst of
	// blocked tasks can leave thousands of slots behind. It is copied on
	// write, under mu (setActive), so a scanner iterates over a snapshot.
	// A slot that leaves it has an empty deque, or one that its occupant
	// or the detacher is about to empty (see detach.go); a free slot's
	// deque is empty (a worker leaves its slot only with nothing in its
	// own deque, and only a slot's occupant pushes onto it).
	active atomic.Pointer[scanSet]

	// size is runtime.GOMAXPROCS(0) as last sampled (refreshSize): by
	// every spawn, every retirement and every monitor tick, so a change
	// of GOMAXPROCS while the process runs is followed within a tick of
	// the pool being saturated. (Asking the runtime on every post would
	// take its scheduler lock each time.)
	size atomic.Int32
	live atomic.Int32 // occupied slots; written under mu
	// detached is the number of occupied slots that are detached (see
	// detach.go); written under mu.
	detached atomic.Int32

	// ho hands stuck workers' slots on (package handoff), through the
	// pool's view of itself (handoff.go).
	ho handoff.Handoff

	mu poolMutex // guards slot occupancy and growth, live, detached and active changes; never parks (poolmutex.go)
	// freeSlots are the slots no goroutine occupies, most recently freed
	// last (its deque's ring and sleeper are the warmest); under mu.
	freeSlots []*worker
	spares    handoff.Spares[assignment] // goroutines without a slot, waiting to be reused

	counts  poolCounts                    // starts, retirements, compensations (stats.go)
	outside [outsideStripes]outsideStripe // counts of goroutines outside the pool (stats.go)
}

// global is the process's pool.
var global = newPool()

// workers maps worker goroutines to their slots. It is one of the
// package's two tables of goroutines; the other, runners (runners.go),
// holds the goroutines outside the pool that run a task of ours now. They
// differ on purpose: every worker must be found (a Go on a worker that
// could not be found would go to the injector, and a Wait on it would
// park instead of helping), so this table grows without bound, at the cost
// of a lock and an allocation per registration, made once per occupancy;
// runners is entered by every outside Wait that helps, where a lock or an
// allocation would cost each request, so it is a fixed lock-free table
// that may refuse, and a refused goroutine only parks.
var workers gid.Table[worker]

// current returns the worker running on the calling goroutine, or nil.
func current() *worker { return workers.Lookup() }

func newPool() *Pool {
	p := &Pool{sleep: sleep.New(0), inj: newInjector()}
	p.slots.Store(new([]*worker))
	p.active.Store(new(scanSet))
	p.ho.Init(poolView{p})
	p.refreshSize()
	return p
}

// refreshSize samples GOMAXPROCS (see Pool.size) and returns it.
func (p *Pool) refreshSize() int32 {
	n := int32(min(runtime.GOMAXPROCS(0), sleep.MaxWorkers))
	if p.size.Swap(n) != n {
		p.sleep.SetSpin(n > 1)
	}
	return n
}

func (p *Pool) newWorker(i int) *worker {
	w := &worker{pool: p, index: i, rng: uint64(i)*0x9E3779B97F4A7C15 + 1}
	w.rec.Init(i)
	// Task records live on in the free lists (freeTask clears their
	// closures), so the deque need not clear the slots it takes them from.
	w.dq.Retain()
	w.surplusFn = p.surplus
	w.injectedFn = p.inj.nonEmpty
	w.queuedFn = func() bool { return p.queued() > 0 }
	return w
}

// inject queues t from a goroutine that is not a worker.
func (p *Pool) inject(t job) {
	postBegin()
	hook := testHookPair.Load()
	hook.at(postPush, nil, -1)
	n := p.inj.push(t)
	// After the push: the sleep protocol needs this order (package sleep).
	hook.at(postCount, nil, -1)
	c := p.sleep.Post()
	if c.Sleeping() > 0 {
		// Only now is it worth reading the consumers' side of the queue.
		p.sleep.Wake(c, 1, p.inj.len() <= 1)
	}
	hook.at(postSpawn, nil, -1)
	p.maybeSpawn(c, uint32(n))
	postEnd()
}

// maybeSpawn starts a worker when a job was just posted and, by the
// counters c that the post returned, no worker is idle (awake or asleep) to
// take it. A worker that is busy will come back for it, but starting
// another one gets it done in parallel, up to the pool's capacity.
//
// This check pairs with release: a retiring worker first gives up its
// slot, then stops counting as inactive, then looks at the queues. If our
// read of the counters saw it inactive, its look at the queues comes after
// our push and finds the task; otherwise our read of live (below) comes
// after it gave up its slot, so we see room and start a worker.
//
// n is the poster's own count of posts, for handoff.Handoff.Saturated.
// With no room (full), the post is a saturated one, and the hand-off
// checks the workers and watches (Saturated), unless it has nothing to do
// for this post (handoff.Handoff.Quiet), which on a busy pool is most
// posts: then maybeSpawn calls nothing.
func (p *Pool) maybeSpawn(c sleep.Counters, n uint32) {
	if c.Inactive() != 0 {
		return
	}
	// spawn may still refuse: another poster took the last place, or
	// GOMAXPROCS went down since size was sampled.
	if p.full() {
		if !p.ho.Quiet(n) {
			p.ho.Saturated(n, nil)
		}
	} else if !p.spawn() {
		p.ho.Saturated(n, nil)
	}
}

// spawn starts a worker (startLocked) unless the pool already has
// capacity() workers.
func (p *Pool) spawn() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.roomLocked() {
		return false
	}
	return p.startLocked(false)
}

// startLocked starts a worker in a free slot, making one if need be, up to
// sleep.MaxWorkers slots, whatever the pool's capacity: spawn checks that
// first, and the hand-off's ramp (spawnExtra) goes above it. A worker
// started detached (by that ramp) counts as detached
// from the start: it takes one task and leaves when that task returns.
// The caller holds mu.
func (p *Pool) startLocked(detached bool) bool {
	w := p.freeSlotLocked()
	if w == nil {
		return false
	}
	p.countSpawn()
	// The first worker: the status check runs now, while the pool has
	// room, so that its probes find processors that the pool's work does
	// not hold yet.
	handoff.StartStatus()
	p.occupyLocked(w, detached)
	// The new worker counts as inactive (looking for work) from now on,
	// so posters that follow do not start more workers for the same job.
	idle := p.sleep.StartLooking(w.index)
	if !p.spares.Assign(assignment{w, idle}) {
		xsync.Go(func() { w.run(idle) })
	}
	return true
}

// spawnUpTo starts up to n workers within capacity, for the hand-off.
func (p *Pool) spawnUpTo(n int) {
	for range n {
		if !p.spawn() {
			return
		}
	}
}

// spawnExtra starts n workers above capacity, for the hand-off's ramp
// (handoff.Pool.StartExtra). Every spawnCheck workers it looks again at the queued
// tasks, and stops once the idle workers (the new ones among them, until
// they find work) are at least as many: n was sized from a count taken
// before, and workers that start with nothing to do only retire again.
func (p *Pool) spawnExtra(n int) {
	for i := range n {
		if i > 0 && i%spawnCheck == 0 && p.queued() <= int(p.sleep.Load().Inactive()) {
			return
		}
		p.mu.Lock()
		ok := p.startLocked(true)
		p.mu.Unlock()
		if !ok {
			return
		}
	}
}

// release frees w's slot. It reports false, and keeps the slot, when the
// worker must stay after all: tasks are queued and no other worker is there
// to take them. On true the goroutine must exit without touching the slot
// again.
func (p *Pool) release(w *worker, idle *sleep.Idle) bool {
	postBegin()
	defer postEnd()
	hook := testHookPair.Load()
	defer hook.at(retireDone, w, -1)
	hook.at(retireVacate, w, -1)
	p.mu.Lock()
	p.vacateLocked(w)
	live := p.live.Load()
	p.mu.Unlock()
	// Order: slot given up (above), no longer inactive (here), then a last
	// look at the queues (below). See maybeSpawn: a poster that read the
	// counters before our StopLooking saw us inactive and relied on us,
	// and its push comes before that read, so our look finds its task.
	hook.at(retireStop, w, live)
	c := p.sleep.StopLooking(idle)
	hook.at(retireLook, w, live)
	if p.queued() == 0 {
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
	if !w.occupied && p.roomLocked() {
		// Stay: take the slot back.
		p.retakeLocked(w)
		*idle = p.sleep.StartLooking(w.index)
		p.mu.Unlock()
		return false
	}
	p.mu.Unlock()
	// At capacity, and every live worker busy: they may all be blocked.
	p.ho.Saturated(0, nil)
	return true
}

// queued estimates the number of queued tasks: the injector's and the
// deques'. Racy by nature; a look made after a push sees that push's task
// unless it was taken meanwhile.
func (p *Pool) queued() int {
	n := p.inj.len()
	for _, w := range p.scanned() {
		n += w.dq.Len()
	}
	return n
}
