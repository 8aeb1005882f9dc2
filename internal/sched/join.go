package sched

import (
	"unsafe"

	"github.com/go-steal/steal/internal/explore/atomic"
)

// Helping the thieves: what a Wait may run besides its own group's tasks.
//
// A Wait for g runs g's queued tasks (wait.go). When all of them have been
// taken by other workers and still run there, it has nothing of g to run,
// and before this step it parked, giving its worker's place to another
// goroutine. In recursive fork-join (a group per call, as in fib) those
// parked Waits piled up. ForkJoinPool's answer is to help the thief: run
// the tasks that the stolen task itself is waiting for. This file decides
// which tasks those are.
//
// # The rule
//
// A Wait for h that runs inside a task of group p, and finds tasks of h
// still active, records p in h.awaitedIn (of two such Waits of h at once,
// the later store stays, and the record goes when h next starts from no
// active task; see enterJoin). Read as an edge "h is joined
// inside a task of p", the records form chains. A Wait for g may run a
// queued task t when the chain from t's group leads to g:
//
//	t.g = h_n, h_n.awaitedIn = h_{n-1}, ..., h_1.awaitedIn = h_0 = g
//
// (n = 0: t is g's own task). In words: t belongs to a group that a task
// of g, or a task of a group that a task of g waits for, and so on, is
// waiting for right now.
//
// # Why that adds no wait that errgroup lacks
//
// Running t on the waiting goroutine suspends the Wait for g until t
// returns. That is harmless if the Wait could not have returned before t
// anyway: then if t waits for something that the goroutine does only after
// its Wait returns, the Wait would never have returned under errgroup
// either. Along the chain it could not: a task T_1 of g is inside its
// Wait for h_1 and cannot return before every task of h_1 has, among them
// a task T_2 inside its Wait for h_2, and so on down to t's group h_n,
// whose Wait cannot return before t has. g's Wait waits for T_1.
//
// The records are read while other goroutines change them, so the chain
// is walked twice: once to choose a task (the steal's filter), and again,
// from t's group up to g, after the task is claimed (joinable), when
// nobody else can run or finish it. The second walk is what the argument
// rests on. It reads the link of h_n first, at a moment when t is
// unfinished and counted in h_n, so h_n has active tasks and its record
// is that of a Wait in progress (enterJoin), which cannot return before
// t does, so its task T_n is unfinished until t
// is (and counted in h_{n-1}); the next link is read later, while T_n is
// still unfinished, and so on up to g. Each link is read while the task
// below it is known unfinished, so each recorded Wait waits for it.
//
// One assumption: a Wait that is in progress and sees a task counted in
// its group returns only after that task, and a record left by a Wait
// that has returned is gone before the group has a task again. Both are
// sync.WaitGroup's rule for reuse (a Go that starts from zero active
// tasks must come after the Wait returned), which errgroup inherits; a
// program that breaks it could have a Wait return without that task, and
// the helping goroutine's Wait then waits for t where errgroup's would
// not. A task whose chain
// does not hold on the second walk is not run: it goes back to the queue
// of tasks from outside (Pool.inject), already counted, for any worker
// to take.
//
// # The tempting versions, and why not
//
//   - "Any task queued by a task of g" (its descendants): a task of g may
//     queue into a group it never waits for, and that task may wait for
//     what the goroutine of g's Wait does only after Wait returns:
//
//     g.Go(func() error { other.Go(func() error { <-ch; return nil }); return nil })
//     g.Wait() // must not run other's task
//     close(ch)
//
//     Only a Wait in progress turns a queued task into one that g's Wait
//     waits for: TestWaitRunsNoTaskItDoesNotWaitFor.
//   - Trusting the first walk: between the filter and the claim, the
//     Wait that recorded a link may have returned and its group been given
//     new tasks that nobody waits for (see the second walk above).
//   - Any task of any deque, as Rayon's wait_until runs: worker.help's
//     example deadlocks.
//
// # What a helped task does to the helper
//
// It runs on the waiting goroutine as g's own tasks do: its panic and
// runtime.Goexit are those of any task run by a Wait (panic.go: a panic
// the group does not recover ends the program, with frames of other
// tasks below; a Goexit unwinds the waiting task too, and helpUntilDone's
// deferred function finishes the Wait); if it blocks, the goroutine
// blocks in it, and the pool treats it as a worker blocked in a task
// (package handoff). Its completion is counted in its own group, at
// once (not in the helping Wait's batch, which is g's).
//
// # Only on a worker
//
// A Wait outside the pool (a request handler, main) runs its own group's
// tasks only, as before. Tried and measured: one that also ran the
// thieves' tasks was a goroutine beyond GOMAXPROCS running them, and the
// tasks they gave went to the injector rather than a deque, where the
// workers' own helping could not reach them (fib(25) peaked at 4 and 7
// goroutines above the start at GOMAXPROCS 2 and 4, against 3 and 5
// without); and searching the injector's shards for a chain's tasks took
// every non-empty shard's lock on each search (the service shapes ran
// 5–18% slower), or, gated by a count of such Waits, that count's cache
// line (nested service requests 15% slower). A Wait outside the pool
// records no join either: no chain that a worker follows passes through
// one, since such a goroutine runs only tasks of the groups it waits for.

// enterJoin records, when the caller is a task of group in (non-nil) and
// is about to wait for g's active tasks, that g is joined inside a task
// of in.
//
// Two Waits of g in tasks of two groups may record themselves at once,
// and the later store wins. Either record is right: each is that of a
// Wait in progress, which returns only once g has no active task, and its
// task with it, so a chain through it holds for as long as g has a task
// to help with. The one left out only hides its chain from helpers. (The
// tempting guard, record only where there is no record, costs a
// compare-and-swap, a locked instruction on every fork-join node, to keep
// the first of two records that are equally right.)
//
// The store is plain (atomic.StoreOwnedPointer), without the locked
// instruction of an atomic store: nothing pairs with it. A helper that
// loads the record before the store is visible only misses the chain, and
// the Wait goes on without counting on anyone having seen it; a helper
// that sees it follows a chain that holds, as above.
//
// The record is not cleared when the Wait returns: clearing it there cost
// every fork-join node a second store with the collector's write barrier.
// It is cleared by a Go that finds g with no active task (starting),
// before it adds its task to the count. In between, g has no task to help
// with, so nobody follows the record. Any record that Go sees is stale:
// under sync.WaitGroup's rule for reuse, a Go that starts g again comes
// after every Wait for g has returned, so it sees their stores, and no
// Wait of the new use is in progress while the count is zero. A Go that
// finds active tasks comes after the add of one that found none, and so
// after its clear (should the count fall to zero between its load and its
// add, no Wait has recorded itself since that clear, or one returned as
// the Go added, which the rule forbids). So every task of the new use is
// queued after the record of the last use has gone, and a group with
// active tasks carries only the record of a Wait in progress (or none).
// (Two tempting versions, and why
// not: clear after the add that makes the count one, and a second Go, at
// the same time, can add and queue its task between that add and the
// clear, for a helper to claim while the stale record is there; or leave
// the record and check that g has active tasks, which accepts the record
// of a Wait that returned, of a task that has gone on to give g new tasks
// it never waits for.)
func (g *Group) enterJoin(in *Group) {
	if in != nil && in != g {
		atomic.StoreOwnedPointer(&g.awaitedIn, in)
	}
}

// starting is told the state s of g that a Go, a TryGo or a Go that sets
// its task aside loaded before it adds its task to the count: when g has
// no active task, g starts again, and the record of the Wait that ended
// its last use goes (see enterJoin). The tests are inlined into every Go,
// the first Go of every fork-join node among them; the store, for a group
// used again, is not.
func (g *Group) starting(s uint64) {
	if s&countMask == 0 && g.awaitedIn.Load() != nil {
		g.restarted()
	}
}

// restarted clears the join record of g, which starts again from no
// active task (see starting). Not inlined, so that starting is.
//
//go:noinline
func (g *Group) restarted() { g.awaitedIn.Store(nil) }

// joinedFrom reports whether the chain of records from h leads to g
// (h == g included), following at most joinHops links.
func joinedFrom(h, g *Group) bool {
	for links := 0; ; links++ {
		if h == g {
			return true
		}
		if h == nil || links == joinHops {
			return false
		}
		h = h.awaitedIn.Load()
	}
}

// joinable reports whether t, a task claimed by a Wait for g (nobody else
// can run it now), may run on that Wait's goroutine: the second walk of
// the chain. The filter that chose t took the first.
func joinable(t *task, g *Group) bool { return joinedFrom(t.g.Load(), g) }

// requeue queues t, a task claimed by a helping Wait that may not run it
// after all (joinable), into the injector, for any worker to take: it is
// already counted in its group. The record is not recycled: this is rare.
func (p *Pool) requeue(t *task) { p.inject(job{fn: t.fn, g: t.g.Load(), plain: t.plain}) }

// groupRef is the address of a group that its holder knows to be alive:
// the group of a task running on the holder's goroutine, whose frames
// (worker.call's) hold the group itself. It is kept as an
// integer so that the store of every task's group, before and after the
// task, costs no write barrier while the collector marks (a *Group field
// of the worker would); the collector need not see it, since those frames
// keep the group alive for as long as the ref is set. Only the goroutine
// that runs the task reads it back (group), for enterJoin.
type groupRef uintptr

// refOf returns g's ref.
func refOf(g *Group) groupRef { return groupRef(uintptr(unsafe.Pointer(g))) }

// group returns the group r refers to, which must be alive (see groupRef),
// or nil. The conversion reads r's bits as a pointer: the group is live,
// so the collector can neither have freed nor moved it (Go's collector
// does not move heap objects).
func (r groupRef) group() *Group { return *(**Group)(unsafe.Pointer(&r)) }
