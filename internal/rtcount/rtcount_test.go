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
	s := []metrics.Sample{{Name: nameRunning}, {Name: nameRunnable}, {Name: nameCycles}, {Name: nameStops}}
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
		if c.Stops != stops {
			return false // a stop in between
		}
		if c.Marking && int64(stops) == 2*int64(s[2].Value.Uint64()) {
			t.Fatalf("just after runtime.GC, with as many stops as twice the cycles (%d): Marking = true", stops)
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
	defer testkit.CollectAlways()()
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

// TestMarkingLearnsRestarts feeds Reader.marking the stops beyond twice
// the completed cycles that a run of the collector leaves, with a mark
// the runtime restarts in the middle: after it, marking reads as marking
// until the Reader has learned the extra stop, then as the cycles go; a
// Reader that learned an excess wrongly unlearns it at the first Read that
// finds less.
func TestMarkingLearnsRestarts(t *testing.T) {
	var r Reader
	type read struct {
		excess  int64
		cycles  uint64
		marking bool
	}
	feed := func(reads ...read) {
		t.Helper()
		for _, rd := range reads {
			if got := r.marking(rd.excess, rd.cycles); got != rd.marking {
				t.Fatalf("marking(%d stops over, %d cycles) = %v, want %v", rd.excess, rd.cycles, got, rd.marking)
			}
		}
	}
	// Cycles without a restart: one stop more while marking.
	feed(read{0, 5, false}, read{1, 5, true}, read{0, 6, false}, read{1, 6, true}, read{0, 7, false})
	// A restarted mark: two stops more while marking, one after.
	feed(read{1, 7, true}, read{2, 7, true}, read{1, 8, true})
	// Two cycles more, but not yet markLimit: still taken as marking.
	feed(read{2, 8, true}, read{1, 9, true}, read{1, 10, true})
	r.moreSince = r.moreSince.Add(-markLimit) // as if markLimit had passed
	feed(read{1, 10, false}, read{2, 10, true}, read{1, 11, false})
	// Learned wrongly: fewer stops than it knew of.
	feed(read{0, 11, false}, read{1, 11, true})
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
