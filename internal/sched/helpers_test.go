package sched

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/go-steal/steal/internal/gid"
	"github.com/go-steal/steal/internal/gstatus"
	"github.com/go-steal/steal/internal/testkit"
)

// Helpers shared by the tests of this package; the project-wide ones
// (hang guard, polling, GOMAXPROCS) are in internal/testkit.

// needGID skips tests that depend on telling workers from outsiders.
func needGID(t *testing.T) {
	if !gid.Trusted() {
		t.Skip("goroutine ids are not trusted here: every caller counts as an outsider")
	}
}

// wantNil fails t unless err, the result of what (a call such as
// "g.Wait()"), is nil.
func wantNil(t testing.TB, what string, err error) {
	t.Helper()
	if err != nil {
		t.Errorf("%s = %v", what, err)
	}
}

// forProcs runs f as one subtest "procs=N" for each N in procs, with
// GOMAXPROCS set to N, under guardPool.
func forProcs(t *testing.T, procs []int, f func(t *testing.T, procs int)) {
	t.Helper()
	for _, p := range procs {
		t.Run(fmt.Sprintf("procs=%d", p), func(t *testing.T) {
			testkit.SetProcs(t, p)
			guardPool(t, func() { f(t, p) })
		})
	}
}

// forLimits runs f as one subtest "limit=N" for each N in limits, under
// guardPool.
func forLimits(t *testing.T, limits []int, f func(t *testing.T, limit int)) {
	t.Helper()
	for _, limit := range limits {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			guardPool(t, func() { f(t, limit) })
		})
	}
}

// maxGauge tracks a level (for example, tasks executing at once) and the
// highest value it reached.
type maxGauge struct {
	cur, hi atomic.Int64
}

func (m *maxGauge) enter() int64 {
	c := m.cur.Add(1)
	m.observe(c)
	return c
}

func (m *maxGauge) exit() { m.cur.Add(-1) }

func (m *maxGauge) observe(v int64) {
	for {
		h := m.hi.Load()
		if v <= h || m.hi.CompareAndSwap(h, v) {
			return
		}
	}
}

// sampler calls f about every 50 µs on its own goroutine until stop is
// called (it sleeps in between, so it does not count as a running
// goroutine most of the time, which matters to the watchdog).
type sampler struct {
	quit chan struct{}
	done chan struct{}
}

func startSampler(f func()) *sampler {
	s := &sampler{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			f()
			select {
			case <-s.quit:
				f()
				return
			default:
			}
			time.Sleep(50 * time.Microsecond)
		}
	}()
	return s
}

func (s *sampler) stop() {
	close(s.quit)
	<-s.done
}

// poolIdle reports whether the pool has nothing left running: no worker
// occupies a slot, no watchdog runs, no worker counts as detached, no task
// is queued, and no spare goroutine waits.
func poolIdle() bool {
	if global.live.Load() != 0 || global.ho.Watching() || global.detached.Load() != 0 || global.queued() != 0 || global.spares.Len() != 0 {
		return false
	}
	global.mu.Lock() // occupied is guarded by mu
	defer global.mu.Unlock()
	for _, w := range *global.slots.Load() {
		if w.occupied {
			return false
		}
	}
	return true
}

// checkRetired waits until the pool has gone idle (poolIdle): after the
// last task, every worker retires once it has been idle for the linger and
// the watchdog exits after its quiet ticks. There is no deadline but the
// hang guard's: a worker or watchdog that never leaves fails the test with
// a goroutine dump.
func checkRetired(t *testing.T) {
	t.Helper()
	testkit.WaitUntil(t, "every worker retired and the watchdog gone", poolIdle)
	// With no slot occupied, nobody may be left scanning empty deques
	// (after a burst the pool can hold thousands of free slots).
	if u := len(global.scanned()); u != 0 {
		t.Errorf("no slot is occupied, but scans cover %d of %d slots", u, len(*global.slots.Load()))
	}
}

// detachedFor counts the occupied slots detached for why.
func detachedFor(why uint32) int {
	global.mu.Lock()
	defer global.mu.Unlock()
	n := 0
	for _, w := range *global.slots.Load() {
		if w.occupied && w.detachedBy.Load()&why != 0 {
			n++
		}
	}
	return n
}

// goFrom gives g n tasks f: all from the calling
// goroutine when from is "outside", into the injector; or, when from is
// "inside", from tasks of g, onto their workers' deques: at least 4 of
// them, and enough that none submits more than 1,000 (a submitting task
// is a task like any other, and one that ran for tens of milliseconds
// could be handed on as a task that runs long).
func goFrom(g *Group, from string, n int, f func() error) {
	switch from {
	case "outside":
		for range n {
			g.Go(f)
		}
	case "inside":
		submitters := max(4, (n+999)/1000)
		for i := range submitters {
			share := n/submitters + btoi(i < n%submitters)
			g.Go(func() error {
				for range share {
					g.Go(f)
				}
				return nil
			})
		}
	default:
		panic("goFrom: from is neither outside nor inside: " + from)
	}
}

// btoi is 1 for true, 0 for false.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// fibGroup is fork-join recursion with a nested group per call.
func fibGroup(n int) int {
	if n < 2 {
		return n
	}
	var a, b int
	var g Group
	g.Go(func() error { a = fibGroup(n - 1); return nil })
	g.Go(func() error { b = fibGroup(n - 2); return nil })
	g.Wait()
	return a + b
}

func fibPlain(n int) int {
	if n < 2 {
		return n
	}
	return fibPlain(n-1) + fibPlain(n-2)
}

// childVar marks a child process (testkit.Child) that runs one test's
// body in a process of its own.
const childVar = "SCHED_TEST_CHILD"

func TestMain(m *testing.M) {
	// The tests run with the status reader decided, as in a process whose
	// pool has started a worker a few milliseconds before
	// (TestStatusStartsWithFirstWorker checks what comes before, in a
	// child process, which leaves it undecided).
	if os.Getenv(childVar) == "" {
		_ = gstatus.Prove()
	}
	goleak.VerifyTestMain(testkit.Settled(m))
}

// spin busy-waits for about d.
func spin(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

// sink keeps the compiler from dropping work whose result no one reads.
var sink atomic.Int64

// guardPool runs body under the hang guard (testkit.Guard), then waits for
// the pool to go idle (checkRetired) and checks that no goroutine leaked.
func guardPool(t *testing.T, body func()) {
	t.Helper()
	testkit.Guard(t, func() {
		body()
		checkRetired(t)
	})
	testkit.VerifyNone(t)
}

// onOneProc runs body with GOMAXPROCS 1 on an idle pool (checkRetired),
// as guardPool does, for the tests that tell the workers from the test
// goroutine by goroutine id (needGID): with one processor, the test
// goroutine keeps it until it blocks, so a worker that a Go starts does
// not run before the test has looked.
func onOneProc(t *testing.T, body func()) {
	t.Helper()
	needGID(t)
	testkit.SetProcs(t, 1)
	guardPool(t, func() {
		checkRetired(t)
		body()
	})
}

// untilBuilt makes rounds of a test whose case depends on a schedule the
// runtime does not promise (at GOMAXPROCS 1, the test goroutine keeping
// the processor until its Wait), each checked by round, until one builds
// it (round reports true) or the test has failed. If none ever does,
// WaitUntil fails the test with a dump. what names the case, for the log.
func untilBuilt(t *testing.T, what string, round func() bool) {
	t.Helper()
	rounds := 0
	testkit.WaitUntil(t, what, func() bool {
		rounds++
		return round() || t.Failed()
	})
	t.Logf("rounds until %s: %d", what, rounds)
}
