//go:build linux && (amd64 || arm64 || 386 || arm)

package gstatus

import (
	"bytes"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-steal/steal/internal/testkit"
)

// expectedWords are the words runtime.Stack prints for the ways to block
// that count as blocked: exactly these, and none of the collector's own
// ("GC assist wait", "wait for GC cycle", ...) or the runtime's
// ("semacquire", ...).
var expectedWords = []string{
	"IO wait",
	"chan receive",
	"chan send",
	"select",
	"sleep",
	"sync.Cond.Wait",
	"sync.Mutex.Lock",
	"sync.RWMutex.Lock",
	"sync.RWMutex.RLock",
	"sync.WaitGroup.Wait",
}

// learnedWords returns the words of rs, sorted.
func learnedWords(rs reasons) []string {
	var ws []string
	for r, w := range rs.words {
		if !rs.blocking[r] {
			continue
		}
		ws = append(ws, w)
	}
	slices.Sort(ws)
	return ws
}

func TestCheckPassed(t *testing.T) {
	if os.Getenv(envVar) == "off" {
		if err := Prove(); On() || err != errEnvOff {
			t.Fatalf("with %s=off: On() = %v, Prove() = %v", envVar, On(), err)
		}
		t.Skipf("%s=off: the check does not run", envVar)
	}
	if err := Prove(); err != nil || !On() {
		t.Fatalf("Prove() = %v, On() = %v; want the check to pass on linux/%s", err, On(), runtime.GOARCH)
	}
	t.Logf("the check took %v and found %+v, labels at %d", checkTime, found.layout, found.labels)
	if found.labels == 0 {
		t.Error("the check did not find the labels word")
	}
	if got := learnedWords(found.reasons); !slices.Equal(got, expectedWords) {
		t.Fatalf("learned %q, want %q", got, expectedWords)
	}
	n := 0
	for _, b := range found.reasons.blocking {
		if b {
			n++
		}
	}
	if n != len(expectedWords) || len(found.reasons.words) != len(expectedWords) {
		t.Fatalf("%d blocking reasons and %d words learned, want %d of each", n, len(found.reasons.words), len(expectedWords))
	}
}

// TestCheckPasses runs the search again: it must pass, find what the
// check that turned the reader on found, and leave no goroutine behind:
// when it returns, every probe has exited (goleak, which lists the
// goroutines that have not, sees none).
func TestCheckPasses(t *testing.T) {
	requireOn(t)
	for range 5 {
		before := runtime.NumGoroutine()
		start := time.Now()
		f, err := check(everywhere())
		took := time.Since(start)
		if err != nil {
			t.Fatalf("check(everywhere()): %v", err)
		}
		if n := goroutinesAlive(); n > 0 {
			t.Fatalf("check left %d goroutines alive", n)
		}
		// The runtime counts a goroutine out of NumGoroutine a moment
		// after it reads dead: wait for that moment, not more.
		testkit.WaitUntil(t, "the check's goroutines are counted out", func() bool { return runtime.NumGoroutine() <= before })
		if f.layout != found.layout || f.labels != found.labels || f.reasons.blocking != found.reasons.blocking {
			t.Fatalf("check found %+v, labels at %d, reasons %v; the first check %+v, %d, %v",
				f.layout, f.labels, f.reasons.words, found.layout, found.labels, found.reasons.words)
		}
		t.Logf("check took %v", took)
	}
}

// TestCheckPassesBesideBusyGoroutines runs the search at GOMAXPROCS 1
// beside two goroutines that never block (as a client whose Wait runs its
// own tasks): its polls and its probes get the processor only when the
// runtime preempts them, every 10 to 20 ms. The check must pass all the
// same, each time, and leave no goroutine behind. (It used to run out of
// time here more often than not: the sleeping probe, woken every 250 µs,
// was queued behind every poll.)
func TestCheckPassesBesideBusyGoroutines(t *testing.T) {
	requireOn(t)
	testkit.SetProcs(t, 1)
	var stop atomic.Bool
	var busy sync.WaitGroup
	var sink atomic.Uint64 // the spinners' results, so that they compute them
	for range 2 {
		busy.Go(func() {
			x := uint64(1)
			for !stop.Load() {
				for range 1000 {
					x = x*6364136223846793005 + 1442695040888963407
				}
				sink.Add(x)
			}
		})
	}
	defer busy.Wait()
	defer stop.Store(true)
	for i := range testkit.ScaleDown(5, 3) {
		before := runtime.NumGoroutine()
		start := time.Now()
		f, err := check(everywhere())
		took := time.Since(start)
		if err != nil {
			t.Fatalf("check %d beside busy goroutines: %v (after %v)", i, err, took)
		}
		if f.layout != found.layout {
			t.Fatalf("check found %+v, the first check %+v", f.layout, found.layout)
		}
		if after := runtime.NumGoroutine(); after > before {
			t.Fatalf("check left %d goroutines, had %d before", after, before)
		}
		t.Logf("check took %v", took)
	}
}

// TestCheckEndsBesideNewGoroutines: goroutines that the program starts
// while the check runs (a pool ramping up) and that are still there when
// it ends must not hold it up: once its probes read dead, it is over. The
// check's bound on its last step is lifted, so that one that waited for
// the goroutine count to come down again would hang (the goroutines here
// wait for the check to return) instead of passing at that bound, a
// second later, with the reader proven and not on meanwhile.
func TestCheckEndsBesideNewGoroutines(t *testing.T) {
	requireOn(t)
	testkit.Guard(t, func() {
		ch := newChecker(everywhere())
		ch.settleFor = time.Hour
		release := make(chan struct{})
		var others sync.WaitGroup
		started := make(chan struct{})
		go func() {
			defer close(started)
			// After the check has taken its baseline: it has.
			for range 4 {
				others.Go(func() { <-release })
			}
		}()
		<-started
		f, err := ch.check()
		close(release)
		others.Wait()
		if err != nil {
			t.Fatalf("check beside new goroutines: %v", err)
		}
		if f.layout != found.layout {
			t.Fatalf("check found %+v, the first check %+v", f.layout, found.layout)
		}
	})
}

// TestReasonsMatchRuntimeStack parks one goroutine in each of the probes'
// ways, reads each through the layout found, and compares the words the
// check learned for the wait reason read with the words runtime.Stack
// prints in the goroutine's header: the byte the search found is the one
// the runtime reports.
func TestReasonsMatchRuntimeStack(t *testing.T) {
	requireOn(t)
	testkit.Guard(t, func() {
		type parked struct {
			k       *kind
			h       Handle
			release func()
		}
		var ps []parked
		done := make(chan struct{}, len(kinds))
		for i := range kinds {
			k := &kinds[i]
			park, release, err := k.arm()
			if err != nil {
				t.Fatal(err)
			}
			hs := make(chan Handle, 1)
			go func() {
				defer func() { done <- struct{}{} }()
				hs <- Self()
				park()
			}()
			ps = append(ps, parked{k: k, h: <-hs, release: release})
		}
		defer func() {
			for _, p := range ps {
				p.release()
			}
			for range ps {
				<-done
			}
		}()
		ids := make(map[uint64]bool)
		for _, p := range ps {
			ids[p.h.id] = true
		}
		testkit.WaitUntil(t, "every goroutine parked as runtime.Stack and the layout both say", func() bool {
			words := headerWords(testkit.Stacks(), ids)
			for _, p := range ps {
				status, reason, ok := found.layout.load(p.h)
				if !ok || status != p.k.status || words[p.h.id] != p.k.words {
					return false
				}
				if status == gWaiting && found.reasons.words[reason] != words[p.h.id] {
					t.Fatalf("goroutine %d reads wait reason %d, learned as %q; runtime.Stack prints %q",
						p.h.id, reason, found.reasons.words[reason], words[p.h.id])
				}
			}
			return true
		})
	})
}

// TestShiftedLayoutsRejected runs the check against layouts that are
// wrong in one way or another. Each must fail, and leave no goroutine.
func TestShiftedLayoutsRejected(t *testing.T) {
	requireOn(t)
	l := found.layout
	s, g, r := l.status, l.goid, l.reason
	layouts := map[string]layout{
		"status-8":         {s - 8, g, r},
		"status-4":         {s - 4, g, r},
		"status+4":         {s + 4, g, r},
		"goid-8":           {s, g - 8, r},
		"goid+8":           {s, g + 8, r},
		"goid+16":          {s, g + 16, r},
		"status,goid swap": {g, s, r},
		"reason-8":         {s, g, r - 8},
		"reason-4":         {s, g, r - 4},
		"reason-1":         {s, g, r - 1},
		"reason+1":         {s, g, r + 1},
		"reason+4":         {s, g, r + 4},
		"reason+8":         {s, g, r + 8},
		"reason+15":        {s, g, r + 15}, // a counter that differs between goroutines
		"reason in goid":   {s, g, g},
		"all shifted +8":   {s + 8, g + 8, r + 8},
		"all shifted -8":   {s - 8, g - 8, r - 8},
	}
	for name, l := range layouts {
		t.Run(name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			start := time.Now()
			_, err := check(only(l, found.labels))
			took := time.Since(start)
			if err == nil {
				t.Fatalf("check(%+v) passed", l)
			}
			if after := runtime.NumGoroutine(); after > before {
				t.Fatalf("check left %d goroutines, had %d before", after, before)
			}
			t.Logf("rejected in %v: %v", took, err)
		})
	}
	// The layout itself passes the same way.
	if _, err := check(only(l, found.labels)); err != nil {
		t.Fatalf("check(only(the layout found)) = %v", err)
	}
	// valid rejects what the reader could not even load.
	for _, l := range []layout{{s + 2, g, r}, {s, g + 4, r}, {s, g, searchBound}, {s, s, r}} {
		if l.valid() == nil {
			t.Errorf("%+v is valid", l)
		}
	}
}

func TestParseHeader(t *testing.T) {
	for _, c := range []struct {
		line  string
		id    uint64
		words string
		ok    bool
	}{
		{"goroutine 1 [running]:", 1, "running", true},
		{"goroutine 17 [chan receive]:", 17, "chan receive", true},
		{"goroutine 17 [chan receive, 2 minutes]:", 17, "chan receive", true},
		{"goroutine 9 [select, 3 minutes, locked to thread]:", 9, "select", true},
		{"goroutine 9 [running, locked to thread]:", 9, "running", true},
		{"goroutine 5 [select (scan)]:", 5, "select", true},
		{"goroutine 5 [select (leaked) (scan), 4 minutes]:", 5, "select", true},
		{"goroutine 5 [chan receive (nil chan)]:", 5, "chan receive (nil chan)", true},
		{"goroutine 5 [select (no cases)]:", 5, "select (no cases)", true},
		{`goroutine 5 [sleep labels:{"a": "b, c", "d": "e"}]:`, 5, "sleep", true},
		{`goroutine 5 [sleep, 7 minutes labels:{"a": "b"}]:`, 5, "sleep", true},
		{"goroutine 5 gp=0xc000002380 m=nil [IO wait]:", 5, "IO wait", true},
		{"goroutine 18446744073709551615 [syscall]:", 1<<64 - 1, "syscall", true},
		{"goroutine x [syscall]:", 0, "", false},
		{"goroutine 5 []:", 0, "", false},
		{"goroutine 5 [sleep]", 0, "", false},
		{"created by main.main in goroutine 1", 0, "", false},
		{"\tmain.go:12 +0x1d", 0, "", false},
		{"", 0, "", false},
	} {
		id, words, ok := parseHeader([]byte(c.line))
		if id != c.id || words != c.words || ok != c.ok {
			t.Errorf("parseHeader(%q) = %d, %q, %v; want %d, %q, %v", c.line, id, words, ok, c.id, c.words, c.ok)
		}
	}
}

// headerWords returns, for each goroutine of ids that has an entry in the
// dump, the words in its header.
func headerWords(dump []byte, ids map[uint64]bool) map[uint64]string {
	words := make(map[uint64]string, len(ids))
	for len(dump) > 0 {
		var line []byte
		line, dump, _ = bytes.Cut(dump, []byte("\n"))
		if id, w, ok := parseHeader(line); ok && ids[id] {
			words[id] = w
		}
	}
	return words
}

// BenchmarkCheck measures the check, the search over every candidate.
func BenchmarkCheck(b *testing.B) {
	for b.Loop() {
		if _, err := check(everywhere()); err != nil {
			b.Fatal(err)
		}
	}
}

// goroutinesAlive returns how many goroutines that a check started have
// not exited, as a dump of all goroutines (what goleak reads) lists them.
func goroutinesAlive() int {
	n := 0
	for _, g := range bytes.Split(testkit.Stacks(), []byte("\n\n")) {
		if bytes.Contains(g, []byte("created by github.com/go-steal/steal/internal/gstatus.(*checker).spawn")) {
			n++
		}
	}
	return n
}
