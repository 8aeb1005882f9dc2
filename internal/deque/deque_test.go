package deque

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-steal/steal/internal/testkit"
)

func TestPopLIFO(t *testing.T) {
	d := New[int](4)
	xs := ints(10)
	for _, x := range xs {
		d.Push(x)
	}
	for i := len(xs) - 1; i >= 0; i-- {
		wantPop(t, d, xs[i])
	}
	if got := d.Pop(); got != nil {
		t.Fatalf("Pop() on empty deque = %s, want nil", show(got))
	}
}

func TestStealFIFO(t *testing.T) {
	d := New[int](4)
	xs := ints(10)
	for _, x := range xs {
		d.Push(x)
	}
	for i := range xs {
		got, retry := d.Steal()
		if got != xs[i] || retry {
			t.Fatalf("Steal() = %s, %v, want %s, false", show(got), retry, show(xs[i]))
		}
	}
	if got, retry := d.Steal(); got != nil || retry {
		t.Fatalf("Steal() on empty deque = %s, %v, want nil, false", show(got), retry)
	}
}

func TestMixedEnds(t *testing.T) {
	d := New[int](2)
	xs := ints(5)
	for _, x := range xs {
		d.Push(x)
	}
	// 0 1 2 3 4: steal 0, pop 4, steal 1, pop 3, pop 2.
	steal := func(want *int) {
		t.Helper()
		if got, retry := d.Steal(); got != want || retry {
			t.Fatalf("Steal() = %s, %v, want %s, false", show(got), retry, show(want))
		}
	}
	pop := func(want *int) {
		t.Helper()
		wantPop(t, d, want)
	}
	steal(xs[0])
	pop(xs[4])
	steal(xs[1])
	pop(xs[3])
	pop(xs[2])
	pop(nil)
	steal(nil)
	// The deque is reusable after being emptied from both ends.
	d.Push(xs[0])
	steal(xs[0])
	d.Push(xs[1])
	pop(xs[1])
}

func TestLen(t *testing.T) {
	d := New[int](2)
	xs := ints(100)
	for i, x := range xs {
		if got := d.Len(); got != i {
			t.Fatalf("Len() = %d before push %d", got, i)
		}
		d.Push(x)
	}
	if got := d.Len(); got != 100 {
		t.Fatalf("Len() = %d, want 100", got)
	}
	d.Steal()
	d.Pop()
	if got := d.Len(); got != 98 {
		t.Fatalf("Len() = %d after a steal and a pop, want 98", got)
	}
	for d.Pop() != nil {
	}
	if got := d.Len(); got != 0 {
		t.Fatalf("Len() = %d after draining, want 0", got)
	}
	d.Pop() // bottom goes below top and back inside Pop
	if got := d.Len(); got != 0 {
		t.Fatalf("Len() = %d after Pop of empty deque, want 0", got)
	}
}

// TestPushReportsEmpty: Push reports whether d was empty before it, as Len
// would have said: after pushes, pops, a steal of the last item, and a Pop
// of an empty deque.
func TestPushReportsEmpty(t *testing.T) {
	d := New[int](2)
	xs := ints(6)
	want := func(step string, got, empty bool) {
		t.Helper()
		if got != empty {
			t.Errorf("%s: Push reported empty=%v, want %v", step, got, empty)
		}
	}
	want("first push", d.Push(xs[0]), true)
	want("second push", d.Push(xs[1]), false)
	d.Pop()
	want("push after a pop left one", d.Push(xs[2]), false)
	d.Pop()
	d.Pop()
	want("push after the pops emptied it", d.Push(xs[3]), true)
	d.Steal()
	want("push after a steal of the last item", d.Push(xs[4]), true)
	d.Pop()
	d.Pop() // bottom goes below top and back inside Pop
	want("push after a Pop of an empty deque", d.Push(xs[5]), true)
}

func TestZeroValue(t *testing.T) {
	var d Deque[int]
	if got := d.Pop(); got != nil {
		t.Fatalf("Pop() on zero Deque = %s, want nil", show(got))
	}
	if got, retry := d.Steal(); got != nil || retry {
		t.Fatalf("Steal() on zero Deque = %s, %v, want nil, false", show(got), retry)
	}
	if got := d.Len(); got != 0 {
		t.Fatalf("Len() on zero Deque = %d, want 0", got)
	}
	if got := d.Cap(); got != 0 {
		t.Fatalf("zero Deque allocated a ring of %d before the first Push", got)
	}
	xs := ints(3)
	for _, x := range xs {
		d.Push(x)
	}
	if got := d.Cap(); got != defaultCapacity {
		t.Fatalf("Cap() = %d after the first Push to a zero Deque, want %d", got, defaultCapacity)
	}
	wantSteal(t, &d, xs[0])
	wantPop(t, &d, xs[2])
	if got := d.Len(); got != 1 {
		t.Fatalf("Len() = %d, want 1", got)
	}
}

func TestInitEmbedded(t *testing.T) {
	var s struct {
		name string
		q    Deque[int]
	}
	s.q.Init(5)
	if got := s.q.Cap(); got != 8 {
		t.Fatalf("Cap() after Init(5) = %d, want 8", got)
	}
	x := new(int)
	s.q.Push(x)
	if got := s.q.Pop(); got != x {
		t.Fatalf("Pop() = %s, want %s", show(got), show(x))
	}
}

func TestNewCapacity(t *testing.T) {
	for _, tc := range []struct{ in, want int }{
		{-5, 2}, {0, 2}, {1, 2}, {2, 2}, {3, 4}, {4, 4}, {5, 8}, {63, 64}, {64, 64}, {65, 128}, {1000, 1024},
	} {
		d := New[int](tc.in)
		if got := d.Cap(); got != tc.want {
			t.Errorf("New(%d).Cap() = %d, want %d", tc.in, got, tc.want)
		}
		if got := d.Floor(); got != tc.want {
			t.Errorf("New(%d) floor = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestPushNilPanics(t *testing.T) {
	for _, d := range []*Deque[int]{New[int](2), new(Deque[int])} {
		func() {
			defer func() {
				r := recover()
				if r == nil {
					t.Fatal("Push(nil) did not panic")
				}
				if r != "deque: Push(nil)" {
					t.Fatalf("Push(nil) panicked with %v, want %q", r, "deque: Push(nil)")
				}
			}()
			d.Push(nil)
		}()
		if got := d.Len(); got != 0 {
			t.Fatalf("Len() = %d after Push(nil), want 0", got)
		}
	}
}

func TestGrowShrink(t *testing.T) {
	for _, tc := range []struct {
		name  string
		d     *Deque[int]
		floor int
	}{
		{"New(2)", New[int](2), 2},
		{"New(16)", New[int](16), 16},
		{"zero", new(Deque[int]), defaultCapacity},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.d
			xs := ints(1000)
			for i, x := range xs {
				d.Push(x)
				// The ring is the smallest power of two >= the floor
				// that holds all the items.
				want := tc.floor
				for want < i+1 {
					want *= 2
				}
				if got := d.Cap(); got != want {
					t.Fatalf("Cap() = %d with %d items, want %d", got, i+1, want)
				}
			}
			if got := d.Cap(); got != 1024 {
				t.Fatalf("Cap() = %d with 1000 items, want 1024", got)
			}
			shrinks := 0
			for i := len(xs) - 1; i >= 0; i-- {
				c := d.Cap()
				wantPop(t, d, xs[i])
				switch nc := d.Cap(); {
				case nc == c:
					if c > tc.floor && i < c/4 {
						t.Fatalf("Pop left %d items in a ring of %d without shrinking", i, c)
					}
				case nc == c/2 && i < c/4 && c > tc.floor:
					shrinks++
				default:
					t.Fatalf("Pop left %d items and resized the ring from %d to %d", i, c, nc)
				}
			}
			if d.Cap() != tc.floor {
				t.Fatalf("Cap() = %d after popping everything, want the floor %d", d.Cap(), tc.floor)
			}
			if want := 10 - bits.TrailingZeros(uint(tc.floor)); shrinks != want {
				t.Fatalf("%d shrinks from 1024 to %d, want %d", shrinks, tc.floor, want)
			}
		})
	}
}

// TestShrinkAfterSteals checks that a ring emptied by thieves shrinks on the
// owner's next Pops, which find it empty.
func TestShrinkAfterSteals(t *testing.T) {
	d := New[int](2)
	xs := ints(100)
	for _, x := range xs {
		d.Push(x)
	}
	for range xs {
		d.Steal()
	}
	if got := d.Cap(); got != 128 {
		t.Fatalf("Cap() = %d, want 128: Steal must not resize", got)
	}
	for range 6 {
		if got := d.Pop(); got != nil {
			t.Fatalf("Pop() = %s on empty deque", show(got))
		}
	}
	if got := d.Cap(); got != 2 {
		t.Fatalf("Cap() = %d after 6 Pops of an empty deque, want 2", got)
	}
	// The indices kept running; the small ring still works.
	for _, x := range xs[:5] {
		d.Push(x)
	}
	wantSteal(t, d, xs[0])
	wantPop(t, d, xs[4])
}

func TestSlotsCleared(t *testing.T) {
	d := New[int](8)
	xs := ints(4)
	for _, x := range xs {
		d.Push(x)
	}
	for i, x := range xs {
		if got := d.SlotAt(int64(i)); got != x {
			t.Fatalf("slot %d = %s before any take, want %s", i, show(got), show(x))
		}
	}
	wantPop(t, d, xs[3])
	if got := d.SlotAt(3); got != nil {
		t.Fatalf("slot 3 = %s after Pop, want nil", show(got))
	}
	wantSteal(t, d, xs[0])
	if got := d.SlotAt(0); got != nil {
		t.Fatalf("slot 0 = %s after Steal, want nil", show(got))
	}
	// The last item, taken by Pop through the CAS on top.
	d.Steal()
	wantPop(t, d, xs[2])
	for i := range int64(8) {
		if got := d.SlotAt(i); got != nil {
			t.Fatalf("slot %d = %s after emptying the deque, want nil", i, show(got))
		}
	}
	// Slots copied by a grow: only the live range is copied.
	for _, x := range ints(9) {
		d.Push(x)
		d.Steal()
	}
	for i := range int64(8) {
		if got := d.SlotAt(i); got != nil {
			t.Fatalf("slot %d = %s after steals, want nil", i, show(got))
		}
	}
}

// TestStealReadThenLose runs the owner, or another thief, between the two
// halves of a Steal; the late claim must fail and leave everything intact.
func TestStealReadThenLose(t *testing.T) {
	t.Run("owner pops the last item", func(t *testing.T) {
		d, a, b, _ := fullRingOfTwo()
		i, r, x, ok := d.stealRead()
		if !ok || i != 0 || x != a {
			t.Fatalf("stealRead() = %d, %s, %v, want 0, %s, true", i, show(x), ok, show(a))
		}
		wantPop(t, d, b)
		wantPop(t, d, a) // top == bottom-1: wins by CAS
		if got, retry := d.stealClaim(i, r, x); got != nil || !retry {
			t.Fatalf("late stealClaim() = %s, %v, want nil, true", show(got), retry)
		}
		if got := d.Len(); got != 0 {
			t.Fatalf("Len() = %d, want 0", got)
		}
	})

	t.Run("slot reused", func(t *testing.T) {
		d, a, b, c := fullRingOfTwo()
		i, r, x, _ := d.stealRead()
		wantSteal(t, d, a)
		d.Push(c) // index 2: the slot of index 0, no grow
		wantCap(t, d, 2)
		if got := d.SlotAt(0); got != c {
			t.Fatalf("slot of index 0 = %s, want %s", show(got), show(c))
		}
		if got, retry := d.stealClaim(i, r, x); got != nil || !retry {
			t.Fatalf("late stealClaim() = %s, %v, want nil, true", show(got), retry)
		}
		wantSteal(t, d, b)
		wantSteal(t, d, c)
	})
}

// TestStealClearsCurrentRing has the owner grow the ring between the two
// halves of a Steal, so that the new ring holds a copy of the item the
// thief then wins; the thief must clear that copy too.
func TestStealClearsCurrentRing(t *testing.T) {
	d, a, b, c := fullRingOfTwo()
	i, r, x, _ := d.stealRead()
	d.Push(c) // full: grows to 4, copying a and b
	wantCap(t, d, 4)
	if got := d.SlotAt(0); got != a {
		t.Fatalf("slot of index 0 in the new ring = %s before the steal, want %s", show(got), show(a))
	}
	if got, retry := d.stealClaim(i, r, x); got != a || retry {
		t.Fatalf("stealClaim() = %s, %v, want %s, false", show(got), retry, show(a))
	}
	if got := r.slot(0).Load(); got != nil {
		t.Fatalf("slot of index 0 in the old ring = %s after the steal, want nil", show(got))
	}
	if got := d.SlotAt(0); got != nil {
		t.Fatalf("slot of index 0 in the new ring = %s after the steal, want nil", show(got))
	}
	wantPop(t, d, c)
	wantSteal(t, d, b)
}

// TestResizeClearsStolenCopies steals while the owner is inside resize,
// after the copy and before the new ring is published: the thief clears
// only the old ring, so the owner must clear the copy in the new one.
func TestResizeClearsStolenCopies(t *testing.T) {
	d, a, b, c := fullRingOfTwo()
	var stolen []*int
	testHookResize = func() {
		x, _ := d.Steal()
		stolen = append(stolen, x)
	}
	defer func() { testHookResize = nil }()
	d.Push(c) // full: grows to 4, with a steal in the middle
	if len(stolen) != 1 || stolen[0] != a {
		t.Fatalf("stole %v during resize, want [%s]", stolen, show(a))
	}
	wantCap(t, d, 4)
	for i, want := range []*int{nil, b, c, nil} {
		if got := d.SlotAt(int64(i)); got != want {
			t.Fatalf("slot of index %d = %s, want %s", i, show(got), show(want))
		}
	}
}

// stressItems returns the number of items per run of TestStress.
func stressItems() int {
	switch {
	case testing.Short():
		return 200_000
	case testkit.Race:
		return 1_000_000
	}
	return 2_000_000
}

// TestStress has one owner pushing and popping and three thieves stealing,
// on a deque that starts with two slots, so that the ring grows and shrinks
// many times under contention; every item must be taken exactly once.
func TestStress(t *testing.T) {
	n := stressItems()
	for _, retain := range []bool{false, true} {
		t.Run(fmt.Sprintf("retain=%v", retain), func(t *testing.T) {
			testkit.ForProcs(t, func(t *testing.T) {
				stress(t, n, 3, uint64(runtime.GOMAXPROCS(0)), retain)
			})
		})
	}
}

// stressRounds is the number of rounds a stress run is cut into. After each
// round, with every goroutine but the owner stopped, the ring must be empty:
// every slot nil (unless the deque Retains taken items).
const stressRounds = 50

// stress pushes n distinct items through one deque in stressRounds rounds.
// In each round an owner goroutine pushes its share of the items in bursts,
// popping some of them itself, then pops until the deque is empty, while
// thieves goroutines steal until the owner is done and the deque is empty.
func stress(t *testing.T, n, thieves int, seed uint64, retain bool) {
	d := New[int](2)
	if retain {
		d.Retain()
	}
	xs := ints(n)
	takes := make([]atomic.Int32, n) // takes[i]: how many times item i was taken
	var (
		popped, stolen atomic.Int64
		// Errors seen by the workers, reported by the test goroutine
		// once they have all stopped.
		errMu sync.Mutex
		errs  []string
		// Written by the owner, read after the run.
		grows, shrinks, maxCap int
	)
	report := func(format string, args ...any) {
		errMu.Lock()
		defer errMu.Unlock()
		if len(errs) < 10 {
			errs = append(errs, fmt.Sprintf(format, args...))
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	c := d.Cap()
	// noteCap counts the owner's resizes. Only the owner calls it.
	noteCap := func() {
		switch nc := d.Cap(); {
		case nc > c:
			grows++
		case nc < c:
			shrinks++
		}
		c = d.Cap()
		maxCap = max(maxCap, c)
	}
	pop := func() bool {
		x := d.Pop()
		noteCap()
		if x == nil {
			return false
		}
		popped.Add(1)
		takes[*x].Add(1)
		return true
	}
	owner := func(items []*int, done *atomic.Bool) {
		defer done.Store(true)
		for len(items) > 0 {
			burst := 1 + rng.IntN(32)
			if rng.IntN(64) == 0 {
				burst = 1 + rng.IntN(4096)
			}
			burst = min(burst, len(items))
			for _, x := range items[:burst] {
				d.Push(x)
				noteCap()
			}
			items = items[burst:]
			// Pop some; sometimes more than there are, to race thieves
			// for the last item and to hit the empty deque.
			for range rng.IntN(burst + 4) {
				if !pop() {
					break
				}
			}
			if rng.IntN(32) == 0 {
				runtime.Gosched()
			}
		}
		// A Pop that returns nil leaves the deque empty, and nothing is
		// pushed any more.
		for pop() {
		}
	}
	// last[i] is the last item thief i stole, kept across rounds.
	last := make([]int, thieves)
	for i := range last {
		last[i] = -1
	}
	thief := func(i int, done *atomic.Bool) {
		for {
			x, retry := d.Steal()
			switch {
			case x != nil:
				stolen.Add(1)
				takes[*x].Add(1)
				// The deque always holds increasing ids from top to
				// bottom, so each thief's steals are increasing.
				if *x <= last[i] {
					report("thief %d stole %d after %d", i, *x, last[i])
				}
				last[i] = *x
			case retry:
				// Lost a race; try again at once.
			case done.Load():
				// Empty, and the owner is done: every item of the
				// round has been claimed.
				if x, _ := d.Steal(); x != nil {
					report("Steal() = %d after the owner drained the deque", *x)
				}
				return
			default:
				runtime.Gosched()
			}
		}
	}
	run := func() {
		for r := range stressRounds {
			var done atomic.Bool
			var wg sync.WaitGroup
			for i := range thieves {
				wg.Go(func() { thief(i, &done) })
			}
			owner(xs[r*n/stressRounds:(r+1)*n/stressRounds], &done)
			wg.Wait()
			// Everyone else has stopped: no item may stay reachable
			// from the ring.
			if l := d.Len(); l != 0 {
				report("round %d: Len() = %d after draining", r, l)
			}
			// (Unless the deque Retains taken items in their slots.)
			for i := 0; i < c && !retain; i++ {
				if x := d.SlotAt(int64(i)); x != nil {
					report("round %d: slot %d of %d holds item %d after draining", r, i, c, *x)
					break
				}
			}
		}
		// Pops of the empty deque shrink it back to the floor.
		for range 64 {
			pop()
		}
	}

	testkit.Guard(t, run)

	for _, e := range errs {
		t.Error(e)
	}
	bad := 0
	for i := range takes {
		if c := takes[i].Load(); c != 1 {
			if bad++; bad <= 10 {
				t.Errorf("item %d taken %d times, want 1", i, c)
			}
		}
	}
	if bad > 10 {
		t.Errorf("... %d items in all taken other than once", bad)
	}
	if got := popped.Load() + stolen.Load(); got != int64(n) {
		t.Errorf("popped %d + stolen %d = %d items, want %d", popped.Load(), stolen.Load(), got, n)
	}
	if grows == 0 || shrinks == 0 {
		t.Errorf("saw %d grows and %d shrinks; the test should force both", grows, shrinks)
	}
	if got := d.Cap(); got != 2 {
		t.Errorf("Cap() = %d at the end, want 2", got)
	}
	t.Logf("%d items: popped %d, stolen %d; %d grows, %d shrinks, largest ring %d",
		n, popped.Load(), stolen.Load(), grows, shrinks, maxCap)
}

// BenchmarkPushPop: the owner pushes an item and pops it back, the last
// item each time (which Pop races the thieves for): ns/op per pair, in the
// mode that clears taken slots and in the Retain mode the scheduler uses.
func BenchmarkPushPop(b *testing.B) {
	for _, retain := range []bool{false, true} {
		b.Run(fmt.Sprintf("retain=%v", retain), func(b *testing.B) {
			d := New[int](64)
			if retain {
				d.Retain()
			}
			x := new(int)
			for b.Loop() {
				d.Push(x)
				d.Pop()
			}
		})
	}
}

// BenchmarkPushBurst pushes and then pops bursts of 100 items on a deque
// with a floor of 2, so every burst grows the ring from 2 to 128 and the
// pops shrink it back: ns/op is per burst, resizing included.
func BenchmarkPushBurst(b *testing.B) {
	d := New[int](2)
	xs := ints(100)
	for b.Loop() {
		for _, x := range xs {
			d.Push(x)
		}
		for range xs {
			d.Pop()
		}
	}
}

// BenchmarkSteal measures an uncontended Steal; ns/op is per stolen item.
func BenchmarkSteal(b *testing.B) {
	d := New[int](1024)
	xs := ints(1024)
	for b.Loop() {
		b.StopTimer()
		for _, x := range xs {
			d.Push(x)
		}
		b.StartTimer()
		for range xs {
			d.Steal()
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(xs)), "ns/steal")
}

// BenchmarkStealContended has GOMAXPROCS thieves stealing from one deque
// that holds b.N items; ns/op is per successful steal.
func BenchmarkStealContended(b *testing.B) {
	d := New[int](2)
	for _, x := range ints(b.N) {
		d.Push(x)
	}
	var retries atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			for {
				x, retry := d.Steal()
				if x != nil {
					break
				}
				if !retry {
					panic("deque ran dry")
				}
				retries.Add(1)
			}
		}
	})
	b.ReportMetric(float64(retries.Load())/float64(b.N), "retries/op")
}
