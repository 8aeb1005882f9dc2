//go:build go1.26 && !go1.27 && linux && (amd64 || arm64)

package gstatus

import (
	"os"
	"runtime"
	"slices"
	"testing"
	"time"
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

func TestStartupCheckPassed(t *testing.T) {
	if os.Getenv(envVar) == "off" {
		if On() {
			t.Fatalf("On() with %s=off", envVar)
		}
		t.Skipf("%s=off: the start-up check did not run", envVar)
	}
	if !On() || offReason != nil {
		t.Fatalf("On() = %v, offReason = %v; want the start-up check to pass on linux/%s", On(), offReason, runtime.GOARCH)
	}
	t.Logf("the start-up check took %v", checkTime)
	if got := learnedWords(learned); !slices.Equal(got, expectedWords) {
		t.Fatalf("learned %q, want %q", got, expectedWords)
	}
	n := 0
	for _, b := range learned.blocking {
		if b {
			n++
		}
	}
	if n != len(expectedWords) || len(learned.words) != len(expectedWords) {
		t.Fatalf("%d blocking reasons and %d words learned, want %d of each", n, len(learned.words), len(expectedWords))
	}
}

// TestCheckPasses runs the check again, whatever STEAL_GSTATUS says: it
// must pass, learn the same reasons as at start-up (if it ran), and leave
// no goroutine behind.
func TestCheckPasses(t *testing.T) {
	for range 5 {
		before := runtime.NumGoroutine()
		start := time.Now()
		rs, err := check(goLayout)
		took := time.Since(start)
		if err != nil {
			t.Fatalf("check(goLayout): %v", err)
		}
		if after := runtime.NumGoroutine(); after > before {
			t.Fatalf("check left %d goroutines, had %d before", after, before)
		}
		if got := learnedWords(rs); !slices.Equal(got, expectedWords) {
			t.Fatalf("learned %q, want %q", got, expectedWords)
		}
		if On() && rs.blocking != learned.blocking {
			t.Fatalf("check learned other reasons than at start-up: %v, then %v", learned.words, rs.words)
		}
		t.Logf("check took %v", took)
	}
}

// TestShiftedLayoutsRejected runs the check against layouts that are
// wrong in one way or another. Each must fail, and leave no goroutine.
func TestShiftedLayoutsRejected(t *testing.T) {
	const s, g, r = statusOffset, goidOffset, reasonOffset
	layouts := map[string]layout{
		"status-8":         {s - 8, g, r},
		"status-4":         {s - 4, g, r},
		"status+4":         {s + 4, g, r},
		"goid-4":           {s, g - 4, r},
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
		"beyond the g":     {s, g, gBound},
		"all shifted +8":   {s + 8, g + 8, r + 8},
		"all shifted -8":   {s - 8, g - 8, r - 8},
	}
	for name, l := range layouts {
		t.Run(name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			start := time.Now()
			_, err := check(l)
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

// BenchmarkCheck measures the start-up check.
func BenchmarkCheck(b *testing.B) {
	for b.Loop() {
		if _, err := check(goLayout); err != nil {
			b.Fatal(err)
		}
	}
}
