package sched

import (
	"sync/atomic"
	"unsafe"

	"github.com/go-steal/steal/internal/gid"
)

// Blocking sites. A Go call site whose tasks block (an HTTP call, a
// database query, a sleep) gains nothing from the pool: each of its tasks
// holds a worker until the worker is handed on (status.go), and costs a
// hand-off more than errgroup's goroutine. So the scheduler learns which
// sites block, by the code pointer of the task's function (shared by
// every closure that one func literal makes, where the compiler has not
// copied the literal by inlining the function around it, and by every use
// of one named function), and runs their next tasks as errgroup does: each on a goroutine of
// its own, started by the Go, counted in the group like any task
// (Group.queue, goOwn).
//
// A site is marked when a task of it, run by a worker, returns after that
// worker was handed on as blocked (worker.execute: the seq recorded by
// handOffBlocked is the task's). A mark is good for siteBudget tasks of
// the site; the next one is a probe: it goes to the pool, while the tasks
// after it still start on their own goroutines. The probe marks the site
// again if it blocks; if it returns without having been handed on, it
// counts a strike against the site and starts a new budget, and the
// siteStrikes-th strike in a row clears the mark (worker.execute,
// siteTable.ended): a site that stops blocking returns to the pool. (One
// strike is not enough: while every CPU is busy, a probe that blocks for a
// millisecond may end before two reads have seen it blocked.) Only statuses mark sites, so where they are not
// read (package gstatus off) no site is ever marked.
//
// The table is direct-mapped by code pointer: two sites that share a slot
// evict each other, which costs only a hand-off now and then. A Go pays
// one load (sites.any) until the process has marked a site, and then a
// hash and one load more, and so does the end of a task run by a worker
// (siteTable.ended). Every field is atomic: a reader may see a slot's
// new code pointer with its old budget, or the reverse, for a moment,
// which misroutes at most a task or two, either way correctly.
type siteTable struct {
	any   atomic.Bool // some site has been marked: Go looks sites up
	slots [siteSlots]site
}

// site is one slot of the table: a code pointer and the tasks left before
// the site is tried on the pool again.
type site struct {
	pc      atomic.Uintptr
	budget  atomic.Int32
	strikes atomic.Int32 // probes in a row that did not block
}

const (
	siteSlots   = 256  // a power of two
	siteBudget  = 1024 // tasks run on their own goroutines per mark
	siteStrikes = 4    // probes in a row that do not block to clear a mark
)

// sites is the process's table.
var sites siteTable

// siteOf returns the code pointer of f: a func value points at a record
// whose first word is the function's entry.
func siteOf(f func() error) uintptr {
	return **(**uintptr)(unsafe.Pointer(&f))
}

func (t *siteTable) slot(pc uintptr) *site {
	return &t.slots[uint64(pc)*0x9E3779B97F4A7C15>>(64-8)]
}

// blocking reports whether f's task is to start on a goroutine of its
// own: its site is marked blocking, and the task is not the site's probe
// (the one that spends the budget's last task; see above).
func (t *siteTable) blocking(f func() error) bool {
	pc := siteOf(f)
	s := t.slot(pc)
	return s.pc.Load() == pc && s.budget.Add(-1) != 0
}

// ended is called, while some site is marked, when a task of f that a
// worker ran returns without its worker having been handed on: if f's
// site has spent its budget (the task may be its probe), that is a strike
// (see above).
func (t *siteTable) ended(f func() error) {
	pc := siteOf(f)
	s := t.slot(pc)
	if s.pc.Load() != pc || s.budget.Load() > 0 {
		return
	}
	if s.strikes.Add(1) < siteStrikes {
		s.budget.Store(siteBudget)
		return
	}
	s.strikes.Store(0)
	s.pc.CompareAndSwap(pc, 0)
}

// mark marks f's site blocking for siteBudget tasks.
func (t *siteTable) mark(f func() error) {
	pc := siteOf(f)
	s := t.slot(pc)
	s.pc.Store(pc)
	s.budget.Store(siteBudget)
	s.strikes.Store(0)
	if !t.any.Load() {
		t.any.Store(true)
	}
}

// goOwn runs f, a task of g already counted as active, on a goroutine of
// its own, as errgroup would (see above). The goroutine is marked in
// runners while the task runs, so that a Go inside the task on a full
// limited group sets its task aside instead of blocking, as inside any
// task of ours.
func (g *Group) goOwn(f func() error) {
	go func() {
		id := gid.Current()
		if j, ok := runners.add(id); ok {
			defer runners.remove(j) // deferred: a task's Goexit unwinds through here
		}
		var c outsideCounts
		defer global.publishOutside(id, &c)
		g.runOutside(f, &c, true)
	}()
}

// ForgetSites forgets every site marked blocking, as if the process had
// just started. For tests: a test of the pool's own handling of blocking
// tasks must not find their site learned by the tests before it (see
// testkit.AtGuard).
func ForgetSites() {
	for i := range sites.slots {
		sites.slots[i].pc.Store(0)
		sites.slots[i].budget.Store(0)
		sites.slots[i].strikes.Store(0)
	}
}
