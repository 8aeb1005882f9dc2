package gid

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-steal/steal/internal/testkit"
)

// stackID parses the calling goroutine's id from runtime.Stack, with a
// parser of its own (not slowID, which the package under test uses).
func stackID(t testing.TB) int64 {
	buf := make([]byte, 256)
	buf = buf[:runtime.Stack(buf, false)]
	f := bytes.Fields(buf)
	if len(f) < 2 || string(f[0]) != "goroutine" {
		t.Errorf("unexpected stack header %q", buf)
		return -1
	}
	id, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		t.Errorf("unexpected stack header %q: %v", buf, err)
		return -1
	}
	return id
}

func TestTrusted(t *testing.T) {
	if !Trusted() {
		t.Fatal("Trusted() = false: the fast goroutine id disagrees with runtime.Stack on this toolchain")
	}
	if got, want := Current(), stackID(t); got != want {
		t.Fatalf("Current() = %d, runtime.Stack says %d", got, want)
	}
	if got, want := slowID(), stackID(t); got != want {
		t.Fatalf("slowID() = %d, runtime.Stack says %d", got, want)
	}
	const n = 32
	ids := make([][3]int64, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			runtime.Gosched() // and maybe move to another P
			ids[i] = [3]int64{Current(), stackID(t), slowID()}
		})
	}
	wg.Wait()
	seen := map[int64]bool{Current(): true}
	for i, id := range ids {
		if id[0] != id[1] || id[2] != id[1] {
			t.Errorf("goroutine %d: Current() = %d, slowID() = %d, runtime.Stack says %d", i, id[0], id[2], id[1])
		}
		if seen[id[0]] {
			t.Errorf("goroutine %d: id %d seen twice among live goroutines", i, id[0])
		}
		seen[id[0]] = true
	}
}

// TestUntrustedTableStaysEmpty: where the fast id disagrees with
// runtime.Stack, Register records nothing, so Lookup, which does not check
// the trust itself, reports nil to every goroutine. The check's outcome
// is forced here; it is restored before any other test runs (the tests of
// this package do not run in parallel).
func TestUntrustedTableStaysEmpty(t *testing.T) {
	Trusted() // the check runs now, not while the outcome is forced
	saved := trust.Load()
	trust.Store(trustNo)
	defer trust.Store(saved)
	var tab Table[int]
	x := 1
	tab.Register(&x)
	if v := tab.Lookup(); v != nil {
		t.Errorf("Lookup after Register with an untrusted id = %p, want nil", v)
	}
	tab.Unregister()
	if Trusted() {
		t.Errorf("Trusted() = true with the outcome forced to untrusted")
	}
}

func TestLookupUnregistered(t *testing.T) {
	var tab Table[int] // the zero value is an empty table
	if v := tab.Lookup(); v != nil {
		t.Fatalf("Lookup on an empty table = %p", v)
	}
	tab.Unregister() // nothing registered: a no-op
	x := 1
	tab.Register(&x)
	if v := tab.Lookup(); v != &x {
		t.Fatalf("Lookup = %p, want %p", v, &x)
	}
	// Another goroutine, never registered, sees nothing.
	got := make(chan *int)
	go func() { got <- tab.Lookup() }()
	if v := <-got; v != nil {
		t.Fatalf("Lookup from an unregistered goroutine = %p (the test goroutine's value is %p)", v, &x)
	}
	tab.Unregister()
	if v := tab.Lookup(); v != nil {
		t.Fatalf("Lookup after Unregister = %p", v)
	}
	// Tables are independent.
	var other Table[string]
	s := "s"
	other.Register(&s)
	if tab.Lookup() != nil || other.Lookup() != &s {
		t.Fatalf("tables interfere")
	}
	other.Unregister()
}

// TestConcurrent: many goroutines register, look up and unregister at
// once; each must see its own value, never another's, and nil when not
// registered. Some goroutines stay registered throughout and keep checking.
func TestConcurrent(t *testing.T) {
	const (
		churners = 64
		stayers  = 8
	)
	cycles := testkit.Scale(1000, 200)
	var tab Table[int]
	report := firstErrors(t)
	var stop atomic.Bool
	var wg, stayWG sync.WaitGroup
	for i := range stayers {
		stayWG.Go(func() {
			v := -1 - i
			tab.Register(&v)
			defer tab.Unregister()
			for !stop.Load() {
				if got := tab.Lookup(); got != &v {
					report("stayer %d: Lookup = %p (%v), want its own %p", i, got, deref(got), &v)
					return
				}
				runtime.Gosched()
			}
		})
	}
	for i := range churners {
		wg.Go(func() {
			v := i
			for c := range cycles {
				if got := tab.Lookup(); got != nil {
					report("goroutine %d cycle %d: Lookup before Register = %p (%v)", i, c, got, *got)
					return
				}
				tab.Register(&v)
				if got := tab.Lookup(); got != &v {
					report("goroutine %d cycle %d: Lookup = %p (%v), want its own %p", i, c, got, deref(got), &v)
					return
				}
				tab.Unregister()
			}
			if got := tab.Lookup(); got != nil {
				report("goroutine %d: Lookup after the last Unregister = %p", i, got)
			}
		})
	}
	wg.Wait()
	stop.Store(true)
	stayWG.Wait()
	for b := range tab.buckets {
		if e := tab.buckets[b].Load(); e != nil {
			t.Fatalf("bucket %d not empty at the end: id %d", b, e.id)
		}
	}
}

// firstErrors returns a function that reports an error as t.Errorf does,
// for the first ten calls only, from any goroutine.
func firstErrors(t *testing.T) func(format string, args ...any) {
	var bad atomic.Int64
	return func(format string, args ...any) {
		if bad.Add(1) <= 10 {
			t.Errorf(format, args...)
		}
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// agent is a goroutine that runs the functions it is given, so that a test
// can act as a goroutine of a chosen id.
type agent struct {
	id   int64
	cmd  chan func()
	done chan struct{}
}

func startAgent() *agent {
	a := &agent{cmd: make(chan func()), done: make(chan struct{})}
	id := make(chan int64)
	go func() {
		defer close(a.done)
		id <- Current()
		for f := range a.cmd {
			f()
		}
	}()
	a.id = <-id
	return a
}

func (a *agent) do(f func()) {
	ran := make(chan struct{})
	a.cmd <- func() { f(); close(ran) }
	<-ran
}

func (a *agent) stop() { close(a.cmd); <-a.done }

// sameBucket starts n agents whose ids fall into one bucket.
func sameBucket(t *testing.T, n int) []*agent {
	t.Helper()
	first := startAgent()
	agents := []*agent{first}
	b := bucket(first.id)
	for tries := 0; len(agents) < n; tries++ {
		if tries > 1<<20 {
			t.Fatalf("no %d goroutines in one bucket after %d tries", n, tries)
		}
		a := startAgent()
		if bucket(a.id) == b {
			agents = append(agents, a)
		} else {
			a.stop()
		}
	}
	t.Cleanup(func() {
		for _, a := range agents {
			a.stop()
		}
	})
	return agents
}

func chain[V any](tab *Table[V], b int) []int64 {
	var ids []int64
	for e := tab.buckets[b].Load(); e != nil; e = e.next {
		ids = append(ids, e.id)
	}
	return ids
}

// TestCollidingBuckets registers goroutines that share a bucket and removes
// them from the head, the middle and the tail of the bucket's list.
func TestCollidingBuckets(t *testing.T) {
	ag := sameBucket(t, 5)
	var tab Table[int]
	b := bucket(ag[0].id)
	vals := make([]int, len(ag))
	for i := range vals {
		vals[i] = 100 + i
	}
	register := func(i int) { ag[i].do(func() { tab.Register(&vals[i]) }) }
	unregister := func(i int) { ag[i].do(func() { tab.Unregister() }) }
	// check: exactly the agents in want are registered, each sees its own
	// value, the others nil, and the bucket holds them in this order.
	check := func(step string, want ...int) {
		t.Helper()
		registered := map[int]bool{}
		var ids []int64
		for _, i := range want {
			registered[i] = true
			ids = append(ids, ag[i].id)
		}
		for i, a := range ag {
			var got *int
			a.do(func() { got = tab.Lookup() })
			if registered[i] && got != &vals[i] || !registered[i] && got != nil {
				t.Fatalf("%s: agent %d sees %v, want registered=%v", step, i, deref(got), registered[i])
			}
		}
		if got := chain(&tab, b); fmt.Sprint(got) != fmt.Sprint(ids) {
			t.Fatalf("%s: bucket holds %v, want %v", step, got, ids)
		}
	}
	for i := range 4 {
		register(i)
	}
	check("4 registered", 3, 2, 1, 0)
	unregister(4) // not registered, same bucket: nothing changes
	check("unregister of an unregistered goroutine", 3, 2, 1, 0)
	unregister(1) // middle
	check("middle removed", 3, 2, 0)
	unregister(2) // middle again, next to the head
	check("second middle removed", 3, 0)
	register(4)
	check("re-registered at the head", 4, 3, 0)
	unregister(4) // head
	check("head removed", 3, 0)
	unregister(0) // tail
	check("tail removed", 3)
	unregister(3)
	check("all removed")
}

// TestCollidingConcurrent: goroutines that share a bucket register, look
// up and unregister at once, so removals in the middle of the list race
// with lock-free lookups of the others.
func TestCollidingConcurrent(t *testing.T) {
	cycles := testkit.Scale(20000, 2000)
	ag := sameBucket(t, 4)
	var tab Table[int]
	report := firstErrors(t)
	var wg sync.WaitGroup
	for i, a := range ag {
		wg.Add(1)
		a.cmd <- func() {
			defer wg.Done()
			v := i
			for c := range cycles {
				tab.Register(&v)
				if got := tab.Lookup(); got != &v {
					report("agent %d cycle %d: Lookup = %v, want its own", i, c, deref(got))
					return
				}
				runtime.Gosched()
				if got := tab.Lookup(); got != &v {
					report("agent %d cycle %d: Lookup after yielding = %v, want its own", i, c, deref(got))
					return
				}
				tab.Unregister()
				if got := tab.Lookup(); got != nil {
					report("agent %d cycle %d: Lookup after Unregister = %v", i, c, *got)
					return
				}
			}
		}
	}
	wg.Wait()
	if got := chain(&tab, bucket(ag[0].id)); len(got) != 0 {
		t.Fatalf("bucket holds %v at the end", got)
	}
}

var sink *int

func BenchmarkLookup(b *testing.B) {
	b.Run("hit", func(b *testing.B) {
		var tab Table[int]
		x := 1
		tab.Register(&x)
		defer tab.Unregister()
		for b.Loop() {
			sink = tab.Lookup()
		}
		if sink != &x {
			b.Fatal("miss")
		}
	})
	b.Run("miss", func(b *testing.B) {
		var tab Table[int]
		for b.Loop() {
			sink = tab.Lookup()
		}
		if sink != nil {
			b.Fatal("hit")
		}
	})
	b.Run("miss-crowded", func(b *testing.B) {
		// Other goroutines registered, one in this goroutine's bucket.
		var tab Table[int]
		ag := sameBucketAs(b, Current())
		x := 2
		ag.do(func() { tab.Register(&x) })
		defer ag.stop()
		defer ag.do(func() { tab.Unregister() })
		for b.Loop() {
			sink = tab.Lookup()
		}
		if sink != nil {
			b.Fatal("hit")
		}
	})
}

// sameBucketAs starts an agent in the bucket of id.
func sameBucketAs(b *testing.B, id int64) *agent {
	for {
		a := startAgent()
		if bucket(a.id) == bucket(id) {
			return a
		}
		a.stop()
	}
}

func BenchmarkCurrent(b *testing.B) {
	var s int64
	for b.Loop() {
		s += Current()
	}
	_ = s
}
