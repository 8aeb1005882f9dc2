package sched

import (
	"os"
	"sync"
	stdatomic "sync/atomic"

	"github.com/go-steal/steal/internal/explore/xsync"
	"github.com/go-steal/steal/internal/gstatus"
)

// Giving way at a task end.
//
// errgroup runs each task on a goroutine of its own, which ends with the
// task: every task end lets the Go scheduler run what became ready on that
// P meanwhile (a goroutine let go at a barrier, a handler whose response
// arrived, one whose sleep is over). A worker, and a Wait that helps, run
// tasks back to back on one goroutine instead, which the Go scheduler
// preempts only after 10 ms. So at the end of each task such a goroutine
// can read what waits for its P (gstatus.Contended) and give way:
//
//   - at once (giveNow), when the task readied a goroutine that is not the
//     pool's (body: a barrier's waiters, a channel's receiver; the
//     goroutine of errgroup's would end here and let it run), with
//     runtime.Gosched: to the global run queue, so that its P runs every
//     goroutine in its local queue first (the readied ones may be many,
//     and may ready more), and the global queue gets its turn too; and
//     when a timer on the P is due (read every timerEvery-th task end: a
//     clock read; its goroutine is not even runnable until the P runs
//     it), the short way below (the P runs its timers first thing when it
//     schedules).
//   - once the P's budget has run out (giveBudget), when any other
//     goroutine waits in the P's local run queue or runnext slot: ones the
//     scheduler's own bookkeeping readied (a Wait's goroutine once its
//     group is done, a Go handed a slot), ones the runtime handed over
//     from its global queue. The budget is per P (turnsOfP), not per
//     goroutine: a P shared by many clients that each help in their Wait
//     gives way once per budget, not once per client; the goroutine that
//     finds it spent claims the turn before it gives way. It gives way with
//     the runtime's goyield: to the tail of the P's local queue, so that
//     it is back once the goroutines it let in have had their turn.
//
// But once a time slice at most (timeSlice) on each P, a goroutine that
// gives way goes through the global queue (runtime.Gosched), whatever the
// case. The runtime serves its global queue (where it puts the goroutines
// it preempts, and a local queue's overflow) when a P's local queue is
// empty, and otherwise once in 61 schedules; sysmon preempts a goroutine
// only when its P has not scheduled for a time slice. Goroutines that give
// way to the local queue's tail make their P schedule every budget, so
// sysmon never preempts them, and stay in the local queue, so it never
// empties: two such goroutines on one P (clients helping in their Waits)
// would leave the global queue a turn every 61 budgets, and a wave of
// thousands of goroutines queued there (the workers started for blocking
// tasks, or a preempted goroutine that holds the pool's lock) would wait
// for minutes. Sent through the global queue once a time slice, as sysmon
// would send a goroutine that ran that long, they join the tail of that
// queue one after another until the local queue empties and the P serves
// the global one in order.
//
// Never for the pool's own goroutines between tasks (poolGs): an idle
// worker that a Go has woken runs the same tasks as the goroutine that
// readied it. And the budget adapts: after each return it is twice the
// time the goroutine was away, within pBudget and pBudgetMax, so that
// where the goroutines let in take long (a CPU-bound goroutine runs a
// whole time slice, hundreds of clients each take a turn) the pool keeps
// about two thirds of the P.
//
// This is opt-in (giveWayOn: STEAL_GIVEWAY=on), and off by default: it
// cuts the wait of a goroutine readied beside a busy pool from the Go
// scheduler's 10 ms to a task or two at GOMAXPROCS 2 and more, but it
// costs the pool's own service shapes up to 84% (BENCHMARKS.md, "Giving
// way at task ends"). Off, the queue reader is not started and a task end
// costs one atomic load (reading) that finds it so.

// timerEvery: every how many task ends a goroutine also reads whether a
// timer on its P is due.
const timerEvery = 8

// clockEvery: every how many contended task ends a goroutine reads the
// clock for the budget of its P.
const clockEvery = 4

// The budgets of the Ps, in nanoseconds of the runtime's clock: a P's
// budget starts at pBudget, and after each return is twice the time the
// goroutine that gave way was away, within pBudget and pBudgetMax
// (turns.returned).
const (
	pBudget    = 200_000
	pBudgetMax = 10_000_000
)

// timeSlice is the Go scheduler's time slice (the runtime's
// forcePreemptNS), in nanoseconds: at least this long apart, a goroutine
// that gives way on a P goes through the global run queue (see above).
const timeSlice = 10_000_000

// turns is what a goroutine that runs tasks keeps for giving way. A
// worker keeps one in its slot (worker.turns), a helping Wait outside the
// pool its own.
type turns struct {
	ends      uint32  // task ends so far
	contended uint32  // task ends that found the P contended
	pid       int32   // the P it is giving way on (gstatus.Contended)
	now       bool    // giving way for what must run now, not for the budget
	last      uintptr // the P's runnext at the last look
	lastTail  uint32  // the P's run queue's tail at the last look
	lastP     int32   // the id of the P of the last look, plus one (0: no look yet)
	readied   bool    // the last task readied a goroutine (body)
}

// look notes who is in the P's runnext now, after the scheduler's own
// bookkeeping (a Wait's goroutine woken when its group is done, a Go given
// a slot): body then tells what a task readied from what that did.
func (tr *turns) look() {
	if !reading() {
		return
	}
	s := waiters(false)
	tr.last, tr.lastTail, tr.lastP = s.Next, s.Tail, s.P+1
}

// body is called when a task's own code has returned: the task readied a
// goroutine if the P's runnext changed since the last look to one that is
// not the pool's between tasks (only the P's own goroutine puts one there;
// another P's theft empties it), or, with runnext unchanged, goroutines
// were queued (the race detector's scheduler puts a readied goroutine at
// the tail of the queue half of the time). A goroutine of errgroup's would
// end here and let it run (a barrier's waiters, a channel's receiver): so
// does this one, at once, without waiting for the P's budget.
func (tr *turns) body() {
	if !reading() {
		return
	}
	s := waiters(false)
	if s.P+1 != tr.lastP || s.P < 0 {
		// The goroutine moved to another P since the last look (a look
		// before the first task, or a preemption): what that P holds is
		// none of this task's doing, as far as anyone can tell.
		return
	}
	if s.Next != tr.last && s.Next != 0 && !poolGs.idle(s.Next) || s.Next == tr.last && s.Tail != tr.lastTail {
		tr.readied = true
	}
}

// pTurns is turnsOfP's entry: when a goroutine last gave way on the P
// (gstatus.Nanotime), how long the next waits, and when one last gave way
// on it through the global run queue.
type pTurns struct {
	at, budget, global stdatomic.Int64
	_                  [40]byte // a cache line each
}

// turnsOfP is per P, by id modulo its length: Ps that share an entry
// share a budget, which only makes them give way less often.
var turnsOfP [64]pTurns

// due is called at a task end and reports whether to give way.
func (tr *turns) due() bool {
	if !reading() {
		return false
	}
	tr.ends++
	s := waiters(tr.ends%timerEvery == 0)
	tr.last, tr.lastTail, tr.lastP = s.Next, s.Tail, s.P+1
	readied := tr.readied
	tr.readied = false
	if s.Waiters == 0 {
		return false
	}
	tr.pid = s.P
	switch tr.decide(s.Waiters, readied, poolGs.idle(s.Next), &turnsOfP[uint32(s.P)%uint32(len(turnsOfP))], gstatus.Nanotime) {
	case giveNow:
		// For a due timer alone the short way does: the P runs its timers
		// first thing when it schedules.
		tr.now = readied
		return true
	case giveBudget:
		return true
	}
	return false
}

// What decide reports.
const (
	keepOn     = iota // do not give way
	giveNow           // give way for what must run now
	giveBudget        // give way: the P's budget has run out
)

// decide is due's rule, on what was read: w, what waits for the P (not 0);
// readied, whether the task just ended readied a goroutine (body);
// idleNext, whether the goroutine in runnext (if any) is the pool's
// between tasks; pt, the P's budget; clock, the runtime's clock, read only
// when the budget is checked.
func (tr *turns) decide(w gstatus.Waiters, readied, idleNext bool, pt *pTurns, clock func() int64) int {
	if readied || w&gstatus.TimerDue != 0 {
		return giveNow
	}
	if w&gstatus.RunQueue == 0 && idleNext {
		return keepOn
	}
	if tr.contended++; tr.contended%clockEvery != 0 {
		return keepOn
	}
	b := pt.budget.Load()
	if b == 0 {
		b = pBudget
	}
	now := clock()
	if now-pt.at.Load() < b {
		return keepOn
	}
	// Claim the turn before giving way: the goroutines that run on the P
	// meanwhile (those let in, and any other that runs tasks) would
	// otherwise find the budget spent too, and give way one after another.
	pt.at.Store(now)
	return giveBudget
}

// giveWay lets the goroutines that wait for the P run (see above for how),
// then sets the budget of the P it gave way on, and counts it.
func (tr *turns) giveWay(p *Pool) {
	pt := &turnsOfP[uint32(tr.pid)%uint32(len(turnsOfP))]
	start := gstatus.Nanotime()
	if tr.viaGlobal(pt, start) {
		xsync.Gosched()
	} else {
		yield()
	}
	tr.now = false
	now := gstatus.Nanotime()
	tr.look()
	tr.returned(pt, now-start, now)
	p.counts.gaveWay.Add(1)
}

// viaGlobal reports whether a goroutine that gives way on the P of pt at
// now goes through the global run queue: for what must run now, and when
// none has on this P for a time slice (see above), which it then records.
// Goroutines of one P that race here may both go that way, which only
// serves the global queue sooner.
func (tr *turns) viaGlobal(pt *pTurns, now int64) bool {
	if tr.now || now-pt.global.Load() >= timeSlice {
		pt.global.Store(now)
		return true
	}
	return false
}

// returned sets the P's budget after a goroutine that gave way on it got
// it back, away for d, at now (see above): twice d, within pBudget and
// pBudgetMax.
func (tr *turns) returned(pt *pTurns, d, now int64) {
	pt.at.Store(now)
	pt.budget.Store(min(max(2*d, pBudget), pBudgetMax))
}

// endTurn is called by a worker at a task end, in its loop and in a Wait
// that helps (worker.help). Before it gives way it settles its batched
// completions, as before any pause: a Wait elsewhere may be waiting for
// just those.
func (w *worker) endTurn() {
	if w.turns.due() {
		w.settle()
		w.turns.giveWay(w.pool)
	}
}

// poolGs is the set of the pool's worker goroutines (by gstatus.Current),
// each with the slot it serves (nil while it waits as a spare). One that
// is in the scheduler's own code (its slot's seq is even: idle, just woken
// for a task a Go queued, or a spare just given a slot) runs the same
// tasks as the goroutine that readied it would, so nobody gives way to
// it: that would only trade places. One readied while in a task (blocked
// there, on a barrier, a channel) is like any other goroutine.
var poolGs gset

// gset is a set of goroutine identities, each with the record of the slot
// it serves: open addressing over a fixed table, linear probing. Writers
// (add and remove: a goroutine's start and exit) hold mu; readers (idle)
// load the words without locks. Deletion shifts the entries after the
// removed one back (Knuth's algorithm R), so the table holds no
// tombstones: a lookup of a goroutine that is not the pool's stops at the
// first empty word, however many goroutines came and went.
//
// A reader that races with a writer may miss an entry being moved, or
// pair a key with a neighbour's record: the answer is then wrong for one
// task end, which gives way once when it need not, or once less; nothing
// else depends on it. The table can fill: a wave of blocking tasks
// starts thousands of goroutines (a test runs 10,000 at once). A full
// table drops the add (the goroutine is then taken for any other); every
// loop over the table makes one pass at most, so a lookup of a goroutine
// that is not in a full table costs gsetSize loads, and a removal from
// it moves each other entry at most once.
//
// The tempting version, tombstones for removed goroutines, degrades after
// a wave of blocking tasks: the pool starts and ends thousands of
// goroutines, tombstones fill the table, and every lookup probes all of
// it, at every contended task end. So does a copy-on-write table rebuilt
// at each start and exit: quadratic in the size of the wave.
type gset struct {
	mu   sync.Mutex
	keys [gsetSize]stdatomic.Uintptr
	recs [gsetSize]stdatomic.Pointer[gRecord]
}

// gRecord is one goroutine's entry: the slot it serves (nil: none, a
// spare). The goroutine stores it; readers load it.
type gRecord struct{ slot stdatomic.Pointer[worker] }

// serving records the slot the goroutine serves (nil: none); a nil record
// records nothing.
func (r *gRecord) serving(w *worker) {
	if r != nil {
		r.slot.Store(w)
	}
}

const gsetSize = 4096 // a power of two

func gsetHome(g uintptr) uint32 {
	return uint32(uint64(g)*0x9E3779B97F4A7C15>>32) & (gsetSize - 1)
}

// add puts g in the set with no slot and returns its record, or nil for
// no identity (the run queues are not read: nothing looks the goroutine
// up); the caller is goroutine g.
func (s *gset) add(g uintptr) *gRecord {
	if g == 0 {
		return nil
	}
	r := new(gRecord)
	s.mu.Lock()
	defer s.mu.Unlock()
	for n, i := 0, gsetHome(g); n < gsetSize; n, i = n+1, (i+1)&(gsetSize-1) {
		if s.keys[i].Load() == 0 {
			s.recs[i].Store(r)
			s.keys[i].Store(g) // after the record: a reader that sees the key sees it
			return r
		}
	}
	return r
}

// remove takes g out of the set; the caller is goroutine g.
func (s *gset) remove(g uintptr) {
	if g == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i, n := gsetHome(g), 0
	for ; s.keys[i].Load() != g; i = (i + 1) & (gsetSize - 1) {
		if n++; n == gsetSize || s.keys[i].Load() == 0 {
			return
		}
	}
	// Shift back every entry after i, up to the next empty word, whose
	// home is not between i (exclusive) and its place (inclusive): it was
	// placed past i because i was taken.
	//
	// One pass at most: a full table (gsetSize goroutines) has no empty
	// word to stop at, and the words after the first hole are then every
	// other word of the table, each looked at once. That is enough: an
	// entry left in place has its home between the hole of its time and
	// itself, and the hole only moves on, past it, so no probe sequence
	// crosses the final hole. The tempting loop that stops only at an
	// empty word never ends on a full table, holding mu, which every
	// worker goroutine needs to exit.
	for n, j := 1, (i+1)&(gsetSize-1); n < gsetSize; n, j = n+1, (j+1)&(gsetSize-1) {
		k := s.keys[j].Load()
		if k == 0 {
			break
		}
		h := gsetHome(k)
		if i <= j && (h <= i || h > j) || i > j && h <= i && h > j {
			s.recs[i].Store(s.recs[j].Load())
			s.keys[i].Store(k)
			i = j
		}
	}
	s.keys[i].Store(0)
	s.recs[i].Store(nil)
}

// find returns g's record, or nil.
func (s *gset) find(g uintptr) *gRecord {
	if g == 0 {
		return nil
	}
	for n, i := 0, gsetHome(g); n < gsetSize; n, i = n+1, (i+1)&(gsetSize-1) {
		switch s.keys[i].Load() {
		case g:
			return s.recs[i].Load()
		case 0:
			return nil
		}
	}
	return nil
}

// idle reports whether g is one of the pool's goroutines and in the
// scheduler's own code: a spare, or serving a slot between tasks.
func (s *gset) idle(g uintptr) bool {
	r := s.find(g)
	if r == nil {
		return false
	}
	w := r.slot.Load()
	return w == nil || w.seq.Load()&1 == 0
}

// giveWayOn reports whether giving way is on: STEAL_GIVEWAY=on in the
// environment, read once, when the pool starts its first worker.
var giveWayOn = sync.OnceValue(func() bool { return os.Getenv("STEAL_GIVEWAY") == "on" })
