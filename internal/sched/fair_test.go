package sched

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/go-steal/steal/internal/gstatus"
	"github.com/go-steal/steal/internal/testkit"
)

// Giving way at a task end (fair.go): the rule on given readings, the
// budget's back-off, the set of the pool's goroutines, and, on the real
// runtime, a goroutine readied by a task beside a busy pool.

// needQueue turns giving way on for the rest of t, as STEAL_GIVEWAY=on
// does for a process (the pool starts the run-queue reader only then;
// reading is what gives way), and off again when t ends, so that the
// tests after t run with the setting they were started with. It skips t
// in a build or process where the run queues are not read (another Go
// release or architecture, the interleaving explorer, or
// STEAL_GSTATUS=off).
func needQueue(t *testing.T) {
	t.Helper()
	release, err := gstatus.UseQueue()
	t.Cleanup(release)
	if err != nil || !gstatus.QueueOn() {
		t.Skipf("the run queues are not read here: %v", err)
	}
}

// TestGiveWayRules walks decide's rule, reading by reading.
func TestGiveWayRules(t *testing.T) {
	const now = int64(1) << 40
	const (
		next  = gstatus.RunNext
		queue = gstatus.RunQueue
		timer = gstatus.TimerDue
	)
	for _, c := range []struct {
		name              string
		w                 gstatus.Waiters
		readied, idleNext bool
		since, budget     int64 // since the P last gave way; its budget (0: never set)
		want              int
	}{
		{"the task readied a goroutine", next, true, false, 0, 0, giveNow},
		{"the task readied goroutines, one left in the queue", queue, true, true, 0, 0, giveNow},
		{"a timer is due", timer, false, false, 0, 0, giveNow},
		{"an idle worker in runnext", next, false, true, 100 * pBudgetMax, 0, keepOn},
		{"a client in runnext, within the budget", next, false, false, pBudget - 1, 0, keepOn},
		{"a client in runnext, the budget spent", next, false, false, pBudget, 0, giveBudget},
		{"the run queue, the budget spent", queue, false, true, pBudget, 0, giveBudget},
		{"the run queue, within a doubled budget", queue, false, false, 2*pBudget - 1, 2 * pBudget, keepOn},
		{"the run queue, a doubled budget spent", queue, false, false, 2 * pBudget, 2 * pBudget, giveBudget},
	} {
		t.Run(c.name, func(t *testing.T) {
			var pt pTurns
			pt.at.Store(now - c.since)
			pt.budget.Store(c.budget)
			tr := turns{contended: clockEvery - 1} // the next contended end reads the clock
			if got := tr.decide(c.w, c.readied, c.idleNext, &pt, func() int64 { return now }); got != c.want {
				t.Errorf("decide = %d, want %d", got, c.want)
			}
		})
	}
}

// TestGiveWayClockEvery: the budget's clock is read at one contended task
// end in clockEvery, and not at all for what gives way at once.
func TestGiveWayClockEvery(t *testing.T) {
	var pt pTurns
	reads := 0
	clock := func() int64 { reads++; return 0 }
	var tr turns
	for range 10 * clockEvery {
		tr.decide(gstatus.RunQueue, false, false, &pt, clock)
		tr.decide(gstatus.TimerDue, true, false, &pt, clock)
	}
	if reads != 10 {
		t.Errorf("%d clock reads in %d contended ends, want 10", reads, 10*clockEvery)
	}
}

// TestGiveWayBackOff: the P's budget after a return is twice the time the
// goroutine was away, within pBudget and pBudgetMax, and counts from the
// return.
func TestGiveWayBackOff(t *testing.T) {
	var pt pTurns
	var tr turns
	for _, c := range []struct{ away, want int64 }{
		{0, pBudget},
		{pBudget / 2, pBudget},
		{pBudget, 2 * pBudget},
		{3 * pBudget, 6 * pBudget},
		{pBudgetMax / 2, pBudgetMax},
		{10 * pBudgetMax, pBudgetMax},
		{1, pBudget},
	} {
		tr.returned(&pt, c.away, c.away+7)
		if got := pt.budget.Load(); got != c.want {
			t.Errorf("away %d: budget %d, want %d", c.away, got, c.want)
		}
		if got := pt.at.Load(); got != c.away+7 {
			t.Errorf("away %d: the budget counts from %d, want %d", c.away, got, c.away+7)
		}
	}
}

// TestGiveWayClaimsTheTurn: the goroutine that finds the P's budget spent
// claims the turn at once, so that the goroutines that run on the P while
// it is away do not give way too.
func TestGiveWayClaimsTheTurn(t *testing.T) {
	var pt pTurns
	now := int64(10 * pBudget)
	clock := func() int64 { return now }
	first := turns{contended: clockEvery - 1}
	if got := first.decide(gstatus.RunQueue, false, false, &pt, clock); got != giveBudget {
		t.Fatalf("decide = %d with the budget spent, want giveBudget", got)
	}
	second := turns{contended: clockEvery - 1}
	if got := second.decide(gstatus.RunQueue, false, false, &pt, clock); got != keepOn {
		t.Errorf("decide = %d right after another goroutine gave way on the P, want keepOn", got)
	}
}

// TestGiveWayThroughGlobalQueue: what must run now goes through the
// global run queue; otherwise one giving way a time slice on each P does,
// and the others go to the tail of the local queue.
func TestGiveWayThroughGlobalQueue(t *testing.T) {
	var pt pTurns
	now := int64(1) << 40
	var tr turns
	for _, c := range []struct {
		name  string
		now   bool  // what must run now
		at    int64 // when it gives way
		want  bool
		since int64 // what pt.global holds afterwards
	}{
		{"the first on the P", false, now, true, now},
		{"within the time slice", false, now + timeSlice - 1, false, now},
		{"within it, for what must run now", true, now + 1, true, now + 1},
		{"within the slice since then", false, now + timeSlice, false, now + 1},
		{"a time slice since the last", false, now + 1 + timeSlice, true, now + 1 + timeSlice},
	} {
		tr.now = c.now
		if got := tr.viaGlobal(&pt, c.at); got != c.want {
			t.Errorf("%s: viaGlobal = %v, want %v", c.name, got, c.want)
		}
		if got := pt.global.Load(); got != c.since {
			t.Errorf("%s: the P last gave way through the global queue at %d, want %d", c.name, got, c.since)
		}
	}
}

// TestPoolGoroutineSet: the set finds what was added and not removed,
// also after many goroutines came and went, and tells a goroutine between
// tasks from one in a task.
func TestPoolGoroutineSet(t *testing.T) {
	var s gset
	var busy, idle worker
	busy.seq.Store(3) // in a task
	idle.seq.Store(4) // between tasks
	id := func(i int) uintptr { return uintptr(i+1) * 64 }
	recs := map[int]*gRecord{}
	for round := range 4 {
		for i := range 1000 {
			if s.find(id(i)) == nil {
				recs[i] = s.add(id(i))
			}
		}
		for i := range 1000 {
			if i%4 != round {
				s.remove(id(i))
			}
		}
	}
	// Goroutines 0..3 mod 4 were each left in by one round, and added
	// again by the later ones: every one is in.
	for i := range 1000 {
		want := i%4 == 3
		if got := s.find(id(i)) != nil; got != want {
			t.Fatalf("goroutine %d: in the set %v, want %v", i, got, want)
		}
	}
	if n := s.count(); n != 250 {
		t.Errorf("the set holds %d goroutines, want 250", n)
	}
	// A chain of goroutines with the same home: removing any one must
	// leave the others found.
	var chain []uintptr
	for g := uintptr(64); len(chain) < 8; g += 64 {
		if gsetHome(g) == gsetHome(1<<20) && s.find(g) == nil {
			chain = append(chain, g)
		}
	}
	for _, g := range chain {
		s.add(g)
	}
	for k, g := range chain {
		s.remove(g)
		for _, h := range chain[k+1:] {
			if s.find(h) == nil {
				t.Fatalf("goroutine %#x lost when %#x, with the same home, was removed", h, g)
			}
		}
	}
	g := id(3)
	if !s.idle(g) {
		t.Error("a goroutine with no slot (a spare) is not idle")
	}
	recs[3].slot.Store(&busy)
	if s.idle(g) {
		t.Error("a goroutine in a task is idle")
	}
	s.remove(id(7)) // a removal may move others' entries, with their records
	recs[3].slot.Store(&idle)
	if !s.idle(g) {
		t.Error("a goroutine between tasks is not idle")
	}
	if s.idle(id(4000)) {
		t.Error("a goroutine never added is idle")
	}
}

// TestPoolGoroutineSetFull: a wave of blocking tasks can start more pool
// goroutines than the set has words. Filled to the last word, the set
// drops the next add, and every removal ends (one pass over the table at
// most) and leaves the others found; it is filled and emptied again in
// rounds, against a map of what it must hold. A removal that loops until
// it meets an empty word never ends on the full table: the hang guard
// reports it.
func TestPoolGoroutineSetFull(t *testing.T) {
	testkit.Guard(t, func() {
		s := new(gset)
		rng := rand.New(rand.NewPCG(uint64(gsetSize), 43))
		in := map[uintptr]bool{} // the goroutines the set must hold
		// Ones it must not: removed, or dropped. Every id drawn is kept
		// apart from the others (seen), but only the latest 64 are looked
		// up: a lookup of an absent id in a full table reads all of it.
		seen := map[uintptr]bool{}
		var out []uintptr
		gone := func(g uintptr) {
			if out = append(out, g); len(out) > 64 {
				out = out[1:]
			}
		}
		fresh := func() uintptr {
			for {
				// Like a g's address: aligned, never 0, never seen before.
				g := uintptr(rng.Uint64()>>8) &^ 63
				if g != 0 && !seen[g] {
					seen[g] = true
					return g
				}
			}
		}
		check := func(when string) {
			t.Helper()
			if n := s.count(); n != len(in) {
				t.Fatalf("%s: the set holds %d goroutines, want %d", when, n, len(in))
			}
			for g := range in {
				if s.find(g) == nil {
					t.Fatalf("%s: goroutine %#x is lost", when, g)
				}
			}
			for _, g := range out {
				if s.find(g) != nil {
					t.Fatalf("%s: goroutine %#x is found, but it was removed or never added", when, g)
				}
			}
		}
		for round := range 3 {
			for len(in) < gsetSize {
				g := fresh()
				if s.add(g) == nil {
					t.Fatal("add returned no record")
				}
				in[g] = true
			}
			check(fmt.Sprintf("round %d, full", round))
			// Full: the next add is dropped, and still returns a record.
			g := fresh()
			if s.add(g) == nil {
				t.Fatal("add to the full set returned no record")
			}
			gone(g)
			s.remove(g) // not in the set: nothing to do
			check(fmt.Sprintf("round %d, full, an add dropped", round))
			// Empty it in a random order; the first removals are from a
			// full table, where no word is empty to stop at.
			order := make([]uintptr, 0, len(in))
			for g := range in {
				order = append(order, g)
			}
			rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			keep := round * gsetSize / 4 // what this round leaves in
			for k, g := range order[:len(order)-keep] {
				s.remove(g)
				delete(in, g)
				gone(g)
				if k < 8 || k%512 == 0 {
					check(fmt.Sprintf("round %d, after %d removals", round, k+1))
				}
			}
			check(fmt.Sprintf("round %d, %d left", round, keep))
		}
	})
}

// TestReadiedGoroutineRunsSoon: on one P busy with a stream of tiny tasks
// that never ends by itself, a task closes a channel that a goroutine
// waits on. That goroutine must run within a few tasks, as it would once
// a goroutine of errgroup's ended, not when the Go scheduler preempts the
// worker (10 ms, tens of thousands of these tasks) or the stream ends. The
// bound counts tasks, not time.
func TestReadiedGoroutineRunsSoon(t *testing.T) {
	needQueue(t)
	testkit.SetProcs(t, 1)
	const rounds = 20
	guardPool(t, func() {
		for r := range rounds {
			var tasks, ranAt atomic.Int64
			ranAt.Store(-1)
			release := make(chan struct{})
			waiter := make(chan struct{})
			go func() {
				close(waiter)
				<-release
				ranAt.Store(tasks.Load())
			}()
			<-waiter // parked on release, or about to
			var at atomic.Int64
			var g Group
			g.Go(func() error {
				// The stream: rounds of 64 tiny tasks until the waiter has
				// run (or a cap far above the bound, so that a broken rule
				// fails instead of hanging).
				for i := 0; ranAt.Load() < 0 && i < 20_000; i++ {
					var inner Group
					for k := range 64 {
						inner.Go(func() error {
							if i == 10 && k == 0 {
								at.Store(tasks.Load())
								close(release)
							}
							tasks.Add(1)
							return nil
						})
					}
					wantNil(t, "inner Wait", inner.Wait())
				}
				return nil
			})
			wantNil(t, "Wait", g.Wait())
			got := ranAt.Load()
			if got < 0 {
				t.Fatalf("round %d: the readied goroutine did not run while the pool ran %d tasks", r, tasks.Load())
			}
			if d := got - at.Load(); d > 64 {
				t.Fatalf("round %d: the readied goroutine ran %d tasks after it was readied, want at most 64", r, d)
			}
		}
	})
}

// BenchmarkGiveWayCheck is the cost of the check at a task end that finds
// nothing waiting (the common case of a pool alone on its Ps).
func BenchmarkGiveWayCheck(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("reader=%v", on), func(b *testing.B) {
			if on {
				release, err := gstatus.UseQueue()
				defer release()
				if err != nil {
					b.Skip(err)
				}
			} else {
				defer gstatus.SetOff(true)()
			}
			var tr turns
			for b.Loop() {
				tr.due()
			}
		})
	}
}
