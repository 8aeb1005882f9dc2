package handoff

import (
	"testing"
	"time"

	"github.com/go-steal/steal/internal/rtcount"
)

// fakeCounts stands in for the runtime's counts in signals.
type fakeCounts struct{ c rtcount.Counts }

func (f *fakeCounts) Read() (rtcount.Counts, bool) { return f.c, true }
func (f *fakeCounts) Running() (running, runnable int, ok bool) {
	return f.c.Running, f.c.Runnable, true
}

// TestOffCPUProof walks signals.offCPU through the rules of the
// fallback's proof with counts it is given: who counts as off the CPU;
// that a proof counts at once, except within stopSettle after a check found
// that the collector stopped the world, when it counts only once a check
// at least stillGap later makes it again with no stop in between; and
// that nothing counts while the collector marks.
func TestOffCPUProof(t *testing.T) {
	var f fakeCounts
	s := signals{src: &f}
	const gap = int64(stillGap)
	idle := 0
	check := func(now int64, stuck, want int, why string) {
		t.Helper()
		if got := s.offCPU(stuck, func() int { return idle }, now); got != want {
			t.Fatalf("%s: offCPU(%d stuck) = %d, want %d", why, stuck, got, want)
		}
	}
	now := int64(time.Hour)

	// Three stuck workers; the checker and one more goroutine run, one
	// waits for a CPU: at least one stuck worker is off the CPU.
	f.c = rtcount.Counts{Running: 2, Runnable: 1}
	check(now, 3, 1, "no stop of the collector ever")

	// A worker waiting for a CPU is not off it.
	f.c.Runnable = 2
	check(now+gap, 3, 0, "every stuck worker but the running ones waits for a CPU")
	f.c.Runnable = 1

	// An idle worker awake is running or runnable without being stuck,
	// so one more stuck worker is off the CPU.
	idle = 1
	check(now+2*gap, 3, 2, "an idle worker among the running")
	idle = 0

	// The collector stopped the world: within stopSettle, twice.
	now += 3 * gap
	f.c.Stops = 10
	check(now, 3, 0, "the first proof after a stop")
	check(now+gap/2, 3, 0, "the proof made again before stillGap")
	check(now+gap, 3, 1, "the proof made again after stillGap")
	check(now+2*gap, 3, 1, "the proof made once more")

	// A stop between two proofs.
	f.c.Stops++
	stop := now + 3*gap
	check(stop, 3, 0, "a proof with a stop since the last")
	check(stop+gap, 3, 1, "made again without a stop")

	// The collector marks: nothing counts, and the proof starts over.
	f.c.Marking = true
	check(stop+2*gap, 3, 0, "while the collector marks")
	f.c.Marking = false
	check(stop+3*gap, 3, 0, "the first proof after the collector marked, within stopSettle")
	check(stop+4*gap, 3, 1, "made again after it")

	// stopSettle over: at once again, after a check that proved nothing.
	f.c.Runnable = 2
	check(stop+int64(stopSettle), 3, 0, "no proof")
	f.c.Runnable = 1
	check(stop+int64(stopSettle)+1, 3, 1, "a first proof after stopSettle")

	// Another goroutine reads the counts: the check does not wait.
	s.mu.Lock()
	check(stop+2*int64(stopSettle), 3, 0, "while another goroutine reads the counts")
	s.mu.Unlock()
}
