package workload

import (
	"runtime"
	"testing"

	"github.com/go-steal/steal/internal/testkit"
)

func TestCrossCPU(t *testing.T) {
	testkit.ForProcs(t, func(t *testing.T) {
		d, ok := CrossCPU()
		procs := runtime.GOMAXPROCS(0)
		if ok != (procs > 1) || ok != (d > 0) {
			t.Fatalf("CrossCPU() = %v, %v at GOMAXPROCS %d", d, ok, procs)
		}
	})
}

// TestCrossCPUOneP: the spinners give the P up now and then, so a pass ends
// even when both of them share one P. Without that, each exchange would wait
// for the runtime to preempt a spinner (10 ms), and the pass below would
// take minutes: the guard would report a hang.
func TestCrossCPUOneP(t *testing.T) {
	testkit.SetProcs(t, 1)
	testkit.Guard(t, func() {
		if d := xcpuPass(10000); d <= 0 {
			t.Fatalf("xcpuPass = %v", d)
		}
	})
}
