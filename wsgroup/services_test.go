package wsgroup_test

// Many top-level groups at once, the way a service runs them: every request
// makes a group, gives it tasks, waits, and goes on with the next request,
// on many goroutines at the same time. These tests use the public API only.
// They hold whether each top-level group owns its workers or one
// process-wide scheduler serves every group.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-steal/steal/internal/gid"
	"github.com/go-steal/steal/internal/testkit"
	"github.com/go-steal/steal/wsgroup"
)

// A requestKind is the shape of one request: what its group is and what its
// tasks do.
type requestKind int

const (
	// kindFanOut: a zero Group, up to 64 tasks, some queued from inside a
	// task of the group.
	kindFanOut requestKind = iota
	// kindForkJoin: a few trees of nested groups, up to 3 levels below the
	// top, each nested group with its own random limit.
	kindForkJoin
	// kindLimit: SetLimit(l) with more tasks than l; no more than l of them
	// may execute at once.
	kindLimit
	// kindLimitRecursive: SetLimit(l), and every task calls Go on its own
	// group for its two children (errgroup deadlocks here).
	kindLimitRecursive
	// kindError: WithContext; one to three tasks return distinct errors,
	// some tasks block until the context is canceled.
	kindError
	// kindParentCancel: WithContext on a parent that the client cancels
	// while it queues the tasks; some tasks block until then.
	kindParentCancel
	// kindSkipQueued: SetCancelMode(SkipQueued), canceled by a task's
	// error or by the parent while the tasks are queued.
	kindSkipQueued
	// kindPanic: SetPanicMode(PanicInWait); one to three tasks panic.
	kindPanic
	// kindGoexit: some tasks call runtime.Goexit.
	kindGoexit
	// kindBlocking: every task but the last waits for the task queued
	// after it (as errgroup allows), so the group needs all its tasks
	// running at once.
	kindBlocking

	numRequestKinds
)

var requestKindNames = [numRequestKinds]string{
	"fan-out", "fork-join", "limit", "limit-recursive", "error",
	"parent-cancel", "skip-queued", "panic", "goexit", "blocking",
}

func (k requestKind) String() string {
	if k >= 0 && k < numRequestKinds {
		return requestKindNames[k]
	}
	return fmt.Sprintf("requestKind(%d)", int(k))
}

// A request is one request of a client, for the messages of its checks.
// Its fields are set before any of its tasks is queued and never change, so
// tasks may report through it.
type request struct {
	t      *testing.T
	client int
	seed   uint64
	index  int
	kind   requestKind
}

// errorf fails the test with a message that names the request, the client
// and the seed that generated its shape (the same seed gives the same
// requests, though not the same interleaving).
func (q *request) errorf(format string, args ...any) {
	q.t.Helper()
	q.t.Errorf("client %d (seed %d), request %d (%s): %s", q.client, q.seed, q.index, q.kind, fmt.Sprintf(format, args...))
}

// checkRuns reports the tasks that did not run exactly once, or, with
// mayDrop, that ran more than once. It returns how many ran (once).
func (q *request) checkRuns(what string, runs []atomic.Int32, mayDrop bool) (ran int) {
	q.t.Helper()
	bad := 0
	for i := range runs {
		n := runs[i].Load()
		if n == 1 {
			ran++
		}
		if n == 1 || n == 0 && mayDrop {
			continue
		}
		if bad < 5 {
			want := "exactly once"
			if mayDrop {
				want = "at most once"
			}
			q.errorf("%s %d ran %d times, want %s", what, i, n, want)
		}
		bad++
	}
	if bad > 5 {
		q.errorf("... and %d more %ss", bad-5, what)
	}
	return ran
}

// checkLimit reports a group whose tasks executed more than limit at once,
// or that still has tasks executing after its Wait returned.
func (q *request) checkLimit(tr *concTracker, limit int) {
	q.t.Helper()
	if m := tr.max.Load(); m > int32(limit) {
		q.errorf("%d tasks executed at once under SetLimit(%d)", m, limit)
	}
	if c := tr.cur.Load(); c != 0 {
		q.errorf("%d tasks still executing after Wait returned", c)
	}
}

// wantWaitErr calls g.Wait and reports an error unless it returns want.
func (q *request) wantWaitErr(g *wsgroup.Group, want error) {
	q.t.Helper()
	if err := g.Wait(); err != want {
		q.errorf("Wait() = %v, want %v", err, want)
	}
}

// submit queues f on g: directly, or, one time in four, from inside a task
// of g (so that it goes through a worker's own queue instead of the queue
// for tasks from outside).
func submit(r *rand.Rand, g *wsgroup.Group, f func() error) {
	if r.IntN(4) == 0 {
		g.Go(func() error { g.Go(f); return nil })
		return
	}
	g.Go(f)
}

// A client runs requests one after another on its own goroutine, with a
// generator seeded from (seed, id) that decides every request's shape.
type client struct {
	t    *testing.T
	id   int
	seed uint64
	r    *rand.Rand
	n    int // requests run so far
}

func newClient(t *testing.T, id int, seed uint64) *client {
	return &client{t: t, id: id, seed: seed, r: rand.New(rand.NewPCG(seed, uint64(id)))}
}

// next runs one request of a randomly drawn kind.
func (c *client) next() {
	kind := requestKind(c.r.IntN(int(numRequestKinds)))
	q := &request{t: c.t, client: c.id, seed: c.seed, index: c.n, kind: kind}
	c.n++
	r := c.r
	switch kind {
	case kindFanOut:
		q.fanOut(r)
	case kindForkJoin:
		q.forkJoin(r)
	case kindLimit:
		q.limit(r)
	case kindLimitRecursive:
		q.limitRecursive(r)
	case kindError:
		q.failing(r)
	case kindParentCancel:
		q.parentCancel(r)
	case kindSkipQueued:
		q.skipQueued(r)
	case kindPanic:
		q.panicking(r)
	case kindGoexit:
		q.goexit(r)
	case kindBlocking:
		q.blocking(r)
	default:
		panic(kind)
	}
}

// runClients starts clients goroutines, each a client that runs requests
// while more, given the number it has run, reports true, and waits for
// them. Clients stop early once the test has failed. A client goroutine
// that ends in any other way than by leaving its loop (a task's
// runtime.Goexit unwinding the goroutine that called Wait) fails the test.
func runClients(t *testing.T, clients int, seed uint64, more func(done int) bool) {
	var wg sync.WaitGroup
	for id := range clients {
		wg.Add(1)
		go func() {
			c := newClient(t, id, seed)
			finished := false
			defer func() {
				if !finished {
					t.Errorf("client %d (seed %d): its goroutine ended during request %d, which must not happen: a task's runtime.Goexit ends only that task", id, seed, c.n-1)
				}
				wg.Done()
			}()
			for more(c.n) && !t.Failed() {
				c.next()
			}
			finished = true
		}()
	}
	wg.Wait()
}

// fanOut: every task runs exactly once and Wait returns nil.
func (q *request) fanOut(r *rand.Rand) {
	n := 1 + r.IntN(64)
	runs := make([]atomic.Int32, n)
	var g wsgroup.Group
	for i := range n {
		submit(r, &g, func() error { runs[i].Add(1); return nil })
	}
	q.wantWaitErr(&g, nil)
	q.checkRuns("task", runs, false)
}

// forkJoin: every node of every tree runs exactly once, each nested Wait
// returns nil, and so does the top Wait.
func (q *request) forkJoin(r *rand.Rand) {
	k, depth, roots := 2+r.IntN(2), 1+r.IntN(3), 1+r.IntN(3)
	size := treeSize(k, depth)
	limits := make([]int, roots*size)
	for i := range limits {
		if limits[i] = r.IntN(4); limits[i] == 0 {
			limits[i] = -1
		}
	}
	runs := make([]atomic.Int32, roots*size)
	var node func(base, id, d int) error
	node = func(base, id, d int) error {
		runs[base+id].Add(1)
		if d == depth {
			busy()
			return nil
		}
		var h wsgroup.Group
		h.SetLimit(limits[base+id])
		for c := 1; c <= k; c++ {
			h.Go(func() error { return node(base, id*k+c, d+1) })
		}
		if err := h.Wait(); err != nil {
			q.errorf("nested Wait() = %v, want nil", err)
		}
		return nil
	}
	var g wsgroup.Group
	for root := range roots {
		g.Go(func() error { return node(root*size, 0, 0) })
	}
	q.wantWaitErr(&g, nil)
	q.checkRuns("node", runs, false)
}

// limit: more tasks than the limit; at most l execute at once, all run once.
func (q *request) limit(r *rand.Rand) {
	l := 1 + r.IntN(4)
	n := l + 1 + r.IntN(40)
	runs := make([]atomic.Int32, n)
	var tr concTracker
	var g wsgroup.Group
	g.SetLimit(l)
	for i := range n {
		g.Go(func() error {
			tr.enter()
			defer tr.exit()
			runs[i].Add(1)
			busy()
			return nil
		})
	}
	q.wantWaitErr(&g, nil)
	q.checkLimit(&tr, l)
	q.checkRuns("task", runs, false)
}

// limitRecursive: a binary tree on one limited group, each task queuing its
// children from inside; completes, at most l execute at once, all run once.
func (q *request) limitRecursive(r *rand.Rand) {
	l := 1 + r.IntN(3)
	depth := 2 + r.IntN(5)
	runs := make([]atomic.Int32, 1<<(depth+1)) // heap order from 1
	var tr concTracker
	var g wsgroup.Group
	g.SetLimit(l)
	var node func(id, d int) func() error
	node = func(id, d int) func() error {
		return func() error {
			tr.enter()
			defer tr.exit()
			runs[id].Add(1)
			if d < depth {
				g.Go(node(2*id, d+1))
				g.Go(node(2*id+1, d+1))
			}
			return nil
		}
	}
	g.Go(node(1, 0))
	q.wantWaitErr(&g, nil)
	q.checkLimit(&tr, l)
	q.checkRuns("node", runs[1:], false)
}

// failing: Wait returns one of the tasks' errors, the same one the context
// was canceled with and that every task blocked on ctx.Done() saw; a second
// Wait returns it again; every task ran once (RunQueued). The other tasks
// return ctx.Err(), non-nil only after the first error, so never first.
func (q *request) failing(r *rand.Rand) {
	n := 2 + r.IntN(30)
	const plain, fails, waits = 0, 1, 2
	role := make([]int, n)
	perm := r.Perm(n)
	nFail := 1 + r.IntN(min(3, n-1))
	for _, i := range perm[:nFail] {
		role[i] = fails
	}
	for _, i := range perm[nFail : nFail+r.IntN(min(4, n-nFail)+1)] {
		role[i] = waits
	}
	errs := make([]error, n)
	for i := range n {
		if role[i] == fails {
			errs[i] = fmt.Errorf("wsgroup test: client %d request %d task %d failed", q.client, q.index, i)
		}
	}
	runs := make([]atomic.Int32, n)
	seen := make([]error, n) // the cause each waiting task saw
	g, ctx := wsgroup.WithContext(context.Background())
	for i := range n {
		submit(r, g, func() error {
			runs[i].Add(1)
			switch role[i] {
			case fails:
				return errs[i]
			case waits:
				<-ctx.Done()
				seen[i] = context.Cause(ctx)
			}
			return ctx.Err()
		})
	}
	err := g.Wait()
	first := -1
	for i, e := range errs {
		if e != nil && e == err {
			first = i
		}
	}
	if first < 0 {
		q.errorf("Wait() = %v, want one of its tasks' errors", err)
	}
	if cause := context.Cause(ctx); cause != err {
		q.errorf("context.Cause(ctx) = %v, want %v (the error Wait returned)", cause, err)
	}
	for i := range n {
		if role[i] == waits && seen[i] != err {
			q.errorf("task %d waiting on ctx.Done() saw the cause %v, want %v", i, seen[i], err)
		}
	}
	if again := g.Wait(); again != err {
		q.errorf("second Wait() = %v, want %v", again, err)
	}
	q.checkRuns("task", runs, false)
}

// parentCancel: the parent is canceled after a random number of the tasks
// were queued; tasks queued after it still run (RunQueued), the ones
// waiting on ctx.Done() see the parent's cause, and Wait returns nil (no
// task failed).
func (q *request) parentCancel(r *rand.Rand) {
	n := 1 + r.IntN(30)
	cut := r.IntN(n + 1)
	waits := make([]bool, n)
	for i := range waits {
		waits[i] = r.IntN(3) == 0
	}
	cause := fmt.Errorf("wsgroup test: client %d request %d: parent canceled", q.client, q.index)
	parent, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	g, ctx := wsgroup.WithContext(parent)
	runs := make([]atomic.Int32, n)
	for i := range n {
		if i == cut {
			cancel(cause)
		}
		submit(r, g, func() error {
			runs[i].Add(1)
			if waits[i] {
				<-ctx.Done()
				if c := context.Cause(ctx); c != cause {
					q.errorf("task %d saw the cause %v, want the parent's %v", i, c, cause)
				}
			}
			return nil
		})
	}
	cancel(cause)
	q.wantWaitErr(g, nil)
	if c := context.Cause(ctx); c != cause {
		q.errorf("context.Cause(ctx) = %v, want the parent's %v", c, cause)
	}
	q.checkRuns("task", runs, false)
}

// skipQueued: tasks may be dropped once the group is canceled, but none
// runs twice, and Wait's result agrees with what ran. Canceled by an
// error: the failing task ran once and Wait returns its error. Canceled by
// the parent after a random number of tasks were queued: the tasks queued
// after the cancellation did not run (Go queues nothing then), and Wait
// returns nil if every task ran, the parent's cause if any was dropped or
// refused.
func (q *request) skipQueued(r *rand.Rand) {
	n := 2 + r.IntN(40)
	cause := fmt.Errorf("wsgroup test: client %d request %d: parent canceled", q.client, q.index)
	parent, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	g, ctx := wsgroup.WithContext(parent)
	g.SetCancelMode(wsgroup.SkipQueued)
	runs := make([]atomic.Int32, n)

	if r.IntN(2) == 0 {
		failAt := r.IntN(n)
		errFail := fmt.Errorf("wsgroup test: client %d request %d task %d failed", q.client, q.index, failAt)
		for i := range n {
			submit(r, g, func() error {
				runs[i].Add(1)
				if i == failAt {
					return errFail
				}
				busy()
				return nil
			})
		}
		q.wantWaitErr(g, errFail)
		if c := context.Cause(ctx); c != errFail {
			q.errorf("context.Cause(ctx) = %v, want %v", c, errFail)
		}
		if got := runs[failAt].Load(); got != 1 {
			q.errorf("the failing task ran %d times, want once: nothing canceled the group before it", got)
		}
		q.checkRuns("task", runs, true)
		return
	}

	cut := r.IntN(n + 1)
	for i := range n {
		f := func() error { runs[i].Add(1); busy(); return nil }
		switch {
		case i == cut:
			cancel(cause)
			fallthrough
		case i > cut:
			g.Go(f) // refused: the group is canceled
		default:
			submit(r, g, f)
		}
	}
	cancel(cause)
	err := g.Wait()
	ran := q.checkRuns("task", runs, true)
	for i := cut; i < n; i++ {
		if got := runs[i].Load(); got != 0 {
			q.errorf("task %d, queued after the parent was canceled, ran %d times, want 0", i, got)
		}
	}
	switch {
	case ran == n && err != nil:
		q.errorf("every task ran, yet Wait() = %v, want nil", err)
	case ran < n && err != cause:
		q.errorf("%d of %d tasks ran, yet Wait() = %v, want the parent's cause %v", ran, n, err, cause)
	}
}

// A panicValue is what a task of kindPanic panics with: unique per task.
type panicValue struct{ client, request, task int }

// panicking: Wait panics with a *PanicError holding one of the values the
// tasks panicked with, counting the others in Later; the context's cause is
// that *PanicError; every task ran once; a second Wait panics again with it.
func (q *request) panicking(r *rand.Rand) {
	n := 1 + r.IntN(30)
	panics := make([]bool, n)
	nPanic := 1 + r.IntN(min(3, n))
	for _, i := range r.Perm(n)[:nPanic] {
		panics[i] = true
	}
	g := new(wsgroup.Group)
	var ctx context.Context
	if r.IntN(2) == 0 {
		g, ctx = wsgroup.WithContext(context.Background())
	}
	g.SetPanicMode(wsgroup.PanicInWait)
	if r.IntN(3) == 0 {
		g.SetLimit(1 + r.IntN(3))
	}
	runs := make([]atomic.Int32, n)
	for i := range n {
		submit(r, g, func() error {
			runs[i].Add(1)
			if panics[i] {
				panic(panicValue{q.client, q.index, i})
			}
			busy()
			return nil
		})
	}
	var err error
	v, panicked := testkit.Recover(func() { err = g.Wait() })
	q.checkRuns("task", runs, false)
	pe, ok := v.(*wsgroup.PanicError)
	if !panicked || !ok {
		q.errorf("%d tasks panicked; Wait = (%v, panic %v %v), want a panic with a *PanicError", nPanic, err, panicked, v)
		return
	}
	pv, ok := pe.Value.(panicValue)
	if !ok || pv.client != q.client || pv.request != q.index || pv.task < 0 || pv.task >= n || !panics[pv.task] {
		q.errorf("PanicError.Value = %#v, want the value one of this request's tasks panicked with", pe.Value)
	}
	if got := pe.Later() + 1; got != nPanic {
		q.errorf("PanicError.Later()+1 = %d, want %d panics", got, nPanic)
	}
	if ctx != nil && context.Cause(ctx) != error(pe) {
		q.errorf("context.Cause(ctx) = %v, want the *PanicError", context.Cause(ctx))
	}
	if v, _ := testkit.Recover(func() { g.Wait() }); v != any(pe) {
		q.errorf("second Wait panicked with %v, want the same *PanicError", v)
	}
}

// goexit: tasks that call runtime.Goexit count as completed (their slot
// under a limit is released too), Wait returns nil on the client's
// goroutine, and every task ran once. A task that the client's own Wait
// runs does not call Goexit: there it would end the client, as documented
// (TestGoexitInTaskRunByWaiter checks that).
func (q *request) goexit(r *rand.Rand) {
	client := gid.Current()
	n := 1 + r.IntN(30)
	exits := make([]bool, n)
	for i := range exits {
		exits[i] = r.IntN(3) == 0
	}
	g := new(wsgroup.Group)
	var ctx context.Context
	if r.IntN(2) == 0 {
		g, ctx = wsgroup.WithContext(context.Background())
	}
	if r.IntN(3) == 0 {
		g.SetLimit(1 + r.IntN(3))
	}
	runs := make([]atomic.Int32, n)
	exited := make([]atomic.Int32, n)
	onClient := make([]atomic.Bool, n)
	for i := range n {
		submit(r, g, func() error {
			runs[i].Add(1)
			if exits[i] {
				if gid.Current() == client {
					onClient[i].Store(true)
					return nil
				}
				defer exited[i].Add(1)
				runtime.Goexit()
			}
			return nil
		})
	}
	q.wantWaitErr(g, nil)
	q.checkRuns("task", runs, false)
	for i := range n {
		if exits[i] && !onClient[i].Load() && exited[i].Load() != 1 {
			q.errorf("task %d called Goexit; its deferred call ran %d times, want once", i, exited[i].Load())
		}
	}
	if ctx != nil && context.Cause(ctx) != context.Canceled {
		q.errorf("context.Cause(ctx) = %v, want %v: Goexit is not an error", context.Cause(ctx), context.Canceled)
	}
}

// blocking: task i waits until task i+1 has finished, so the last task
// queued must run while all the others are blocked: the group completes
// only if all its tasks are running at once, as they are with errgroup.
func (q *request) blocking(r *rand.Rand) {
	n := 2 + r.IntN(16)
	done := make([]chan struct{}, n)
	for i := range done {
		done[i] = make(chan struct{})
	}
	runs := make([]atomic.Int32, n)
	var g wsgroup.Group
	for i := range n {
		submit(r, &g, func() error {
			runs[i].Add(1)
			if i+1 < n {
				<-done[i+1]
			}
			close(done[i])
			return nil
		})
	}
	q.wantWaitErr(&g, nil)
	q.checkRuns("task", runs, false)
}

// TestConcurrentRequests runs many clients at once, each running requests
// back to back (a seeded mix of every kind above: fan-out, nested fork-join,
// limits with recursion from inside tasks, errors and cancellation through
// WithContext, SkipQueued, PanicInWait panics, Goexit, tasks blocked on
// later tasks), at GOMAXPROCS 1, 2, 4 and 8. Every request checks, from
// counts its tasks keep, that no task was lost or run twice (or, in
// SkipQueued mode, that drops agree with Wait's result), that limits held,
// and that Wait reported exactly what its own tasks did.
//
// It catches a scheduler shared by many groups that loses or duplicates a
// task under contention (a lost wake-up, a steal race, a task given to the
// wrong group), that mixes up groups' counts, errors, causes or panics
// (every error and panic value names its request), that lets a limit
// leak across groups, or that deadlocks when many groups block at once
// (the hang guard); and a Wait that runs a task's Goexit on the client's
// own goroutine (the client would be ended; reported by runClients).
func TestConcurrentRequests(t *testing.T) {
	clients := testkit.Scale(200, 32)
	perClient := testkit.Scale(25, 20)
	testkit.ForProcs(t, func(t *testing.T) {
		seed := uint64(runtime.GOMAXPROCS(0))
		testkit.Guard(t, func() {
			runClients(t, clients, seed, func(done int) bool { return done < perClient })
		})
		if t.Failed() {
			t.Logf("seed %d, %d clients of %d requests", seed, clients, perClient)
		}
	})
}

// TestGOMAXPROCSChangesWhileRunning keeps clients running requests (every
// kind) while another goroutine sets GOMAXPROCS to 1, 2, 4 and 8 in a
// seeded random order, over and over; the clients go on until both they
// have run their requests and GOMAXPROCS has changed a number of times.
// Every request checks what TestConcurrentRequests checks.
//
// It catches a scheduler that sizes itself by GOMAXPROCS once and then
// loses or strands tasks when it shrinks (a worker slot or a sleeping
// worker no longer counted, a queue nobody scans) or misbehaves when it
// grows (more workers than slots, a deque reused by two workers).
func TestGOMAXPROCSChangesWhileRunning(t *testing.T) {
	const seed = 42
	clients := testkit.Scale(8, 4)
	perClient := testkit.Scale(40, 10)
	minChanges := int64(testkit.Scale(200, 40))
	var changes atomic.Int64
	prev := runtime.GOMAXPROCS(0)
	stop := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		r := rand.New(rand.NewPCG(seed, 0))
		procs := []int{1, 2, 4, 8}
		for {
			select {
			case <-stop:
				return
			default:
			}
			runtime.GOMAXPROCS(procs[r.IntN(len(procs))])
			changes.Add(1)
			time.Sleep(200 * time.Microsecond)
		}
	}()
	// Also when the test fails: the changer stops first,
	// then GOMAXPROCS is restored.
	defer func() {
		close(stop)
		<-stopped
		runtime.GOMAXPROCS(prev)
	}()
	testkit.Guard(t, func() {
		runClients(t, clients, seed, func(done int) bool {
			return done < perClient || changes.Load() < minChanges
		})
	})
	t.Logf("GOMAXPROCS changed %d times (seed %d)", changes.Load(), seed)
}

// TestIOShapedFanOut: many groups at once (one goroutine each), whose tasks
// sleep a millisecond, wait on a timer (or the group's context), or wait
// on a nested group of such tasks: the shape of a service fanning out
// calls to other services. Each group's Wait returns only after every one
// of its tasks finished, each task ran once, and everything completes
// (the hang guard).
//
// It catches a Wait that returns before its blocked tasks end (it would
// see a task unfinished), a parked Wait or worker whose wake-up is lost
// when the blocked tasks come back all at once, tasks lost or run twice
// while the workers are all blocked, and a scheduler that deadlocks when
// every worker of every group blocks at once.
func TestIOShapedFanOut(t *testing.T) {
	groups := testkit.Scale(200, 50)
	testkit.ForProcs(t, func(t *testing.T) {
		testkit.Guard(t, func() {
			var wg sync.WaitGroup
			for i := range groups {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ioRequest(t, i)
				}()
			}
			wg.Wait()
		})
	})
}

// ioRequest runs one group of I/O-shaped tasks and checks that all of them
// finished, once, before its Wait returned.
func ioRequest(t *testing.T, i int) {
	g, ctx := wsgroup.WithContext(context.Background())
	if i%2 == 1 {
		g, ctx = new(wsgroup.Group), context.Background()
	}
	n := 4 + i%13
	const nested = 3
	done := make([]atomic.Int32, n)
	nestedDone := make([]atomic.Int32, n*nested)
	for j := range n {
		g.Go(func() error {
			switch j % 3 {
			case 0:
				time.Sleep(time.Millisecond)
			case 1:
				tm := time.NewTimer(time.Millisecond)
				select {
				case <-tm.C:
				case <-ctx.Done(): // never: no task fails
					tm.Stop()
					t.Errorf("group %d: context canceled while its tasks run: %v", i, context.Cause(ctx))
				}
			case 2:
				var h wsgroup.Group
				for k := range nested {
					h.Go(func() error {
						time.Sleep(time.Millisecond)
						nestedDone[j*nested+k].Add(1)
						return nil
					})
				}
				if err := h.Wait(); err != nil {
					t.Errorf("group %d task %d: nested Wait() = %v, want nil", i, j, err)
				}
				for k := range nested {
					if got := nestedDone[j*nested+k].Load(); got != 1 {
						t.Errorf("group %d task %d: nested Wait returned with nested task %d finished %d times, want once", i, j, k, got)
					}
				}
			}
			done[j].Add(1)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Errorf("group %d: Wait() = %v, want nil", i, err)
	}
	for j := range n {
		if got := done[j].Load(); got != 1 {
			t.Errorf("group %d: Wait returned with task %d finished %d times, want once", i, j, got)
		}
	}
}

// TestManyGroupsBlockedAtOnce: many groups start at once, each on its own
// goroutine, and in each the first task waits for the second, queued after
// it: every group needs a worker for its second task while the first
// blocks one, all at the same time. With errgroup each task has its own
// goroutine and all of them complete.
//
// It catches blocked-worker compensation that does not scale with the
// number of groups: per-group detectors that each see the others' work
// (their own polling included) as busy CPUs and so never add a worker,
// or a single detector that adds one worker for the whole process when
// every group needs one.
func TestManyGroupsBlockedAtOnce(t *testing.T) {
	groups := testkit.Scale(500, 64)
	testkit.ForProcs(t, func(t *testing.T) {
		testkit.Guard(t, func() {
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range groups {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					var g wsgroup.Group
					var ran atomic.Int32
					second := make(chan struct{})
					g.Go(func() error { ran.Add(1); <-second; return nil })
					g.Go(func() error { ran.Add(1); close(second); return nil })
					if err := g.Wait(); err != nil {
						t.Errorf("group %d: Wait() = %v, want nil", i, err)
					}
					if n := ran.Load(); n != 2 {
						t.Errorf("group %d: %d of 2 tasks ran", i, n)
					}
				}()
			}
			close(start)
			wg.Wait()
		})
	})
}
