package rtcount

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/go-steal/steal/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestLayoutVerified: the first Read's check passes here, on the release
// and port that run the tests.
func TestLayoutVerified(t *testing.T) {
	if !verified() {
		t.Fatal("the runtime's metrics are not laid out as this package reads them")
	}
}

// TestReadMatchesRuntimeMetrics reads the same metrics through
// runtime/metrics and through a Reader, with the world quiet enough that
// the values cannot differ: the collector's cycles and stops just after a
// collection, and the running and runnable goroutines with nothing else
// to run (this goroutine runs, and no other is runnable).
func TestReadMatchesRuntimeMetrics(t *testing.T) {
	var r Reader
	s := []metrics.Sample{{Name: nameRunning}, {Name: nameRunnable}, {Name: nameCycles}, {Name: namePauses}}
	testkit.WaitUntil(t, "two reads in a quiet moment agree", func() bool {
		runtime.GC()
		metrics.Read(s)
		c, ok := r.Read()
		if !ok {
			t.Fatal("Read reports the counts unreadable")
		}
		raw := r.samples // what the Reader read, kind by kind
		var stops uint64
		for _, n := range s[3].Value.Float64Histogram().Counts {
			stops += n
		}
		if raw[2].value.scalar != s[2].Value.Uint64() || raw[3].value.kind != kindHistogram {
			return false // a collection in between (the runtime's own)
		}
		if c.Marking || int64(stops)-2*int64(s[2].Value.Uint64()) != 0 {
			t.Fatalf("just after runtime.GC: Marking = %v, %d stops and %d cycles", c.Marking, stops, s[2].Value.Uint64())
		}
		return c.Running == int(s[0].Value.Uint64()) && c.Runnable == int(s[1].Value.Uint64()) && c.Running >= 1
	})
}

// TestReadSeesRunnable: goroutines that spin on more processors than
// GOMAXPROCS allows are counted, running and runnable.
func TestReadSeesRunnable(t *testing.T) {
	testkit.SetProcs(t, 2)
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			for !stop.Load() {
			}
		})
	}
	defer wg.Wait()
	defer stop.Store(true)
	var r Reader
	testkit.WaitUntil(t, "both processors running and goroutines waiting for one", func() bool {
		running, runnable, ok := r.Running()
		if !ok {
			t.Fatal("Running reports the counts unreadable")
		}
		return running == 2 && runnable >= 1
	})
}

// TestReadSeesMarking: while runtime.GC runs on another goroutine, a
// Read sees the collector marking at some point, and not marking at
// another.
func TestReadSeesMarking(t *testing.T) {
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for !stop.Load() {
			runtime.GC()
		}
	})
	defer wg.Wait()
	defer stop.Store(true)
	var r Reader
	seen := map[bool]int{}
	testkit.WaitUntil(t, "reads both while the collector marks and while it does not", func() bool {
		c, ok := r.Read()
		if !ok {
			t.Fatal("Read reports the counts unreadable")
		}
		seen[c.Marking]++
		return seen[true] > 0 && seen[false] > 0
	})
}

func BenchmarkRead(b *testing.B) {
	var r Reader
	for b.Loop() {
		r.Read()
	}
}

func BenchmarkRunning(b *testing.B) {
	var r Reader
	for b.Loop() {
		r.Running()
	}
}
