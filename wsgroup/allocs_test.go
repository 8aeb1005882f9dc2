//go:build !race

package wsgroup_test

// Allocation bounds of Go and For. The race detector allocates on its
// own account, so these run without it. Both measure with a task function
// made once, outside the measured loop: what remains is wsgroup's.

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/go-steal/steal/internal/testkit"
	"github.com/go-steal/steal/internal/workload"
	"github.com/go-steal/steal/wsgroup"
)

// TestInlineGroupSize: the benchmarks' inline floor allocates a group of
// wsgroup.Group's size, so that it allocates what the measured rows do;
// and a Group stays a 64-bit state word, a 64-bit limit and two
// pointers, which fork-join code allocates per call.
func TestInlineGroupSize(t *testing.T) {
	ws, inline := unsafe.Sizeof(wsgroup.Group{}), unsafe.Sizeof(workload.InlineGroup{})
	if ws != inline {
		t.Errorf("wsgroup.Group is %d bytes, the inline floor's group %d", ws, inline)
	}
	if want := 16 + 2*unsafe.Sizeof(uintptr(0)); ws > want {
		t.Errorf("wsgroup.Group is %d bytes, more than two 64-bit words and two pointers (%d)", ws, want)
	}
}

// TestGoFromWorkerAllocatesNothing: in steady state, Go called inside a task
// pushes onto the worker's deque in a task record recycled from the
// worker's free list, and Wait runs the tasks in place: nothing is
// allocated beyond the caller's closure. One worker (GOMAXPROCS 1, and
// SetLimit(1) on the outer group), so that no steal moves records to
// another worker's list (with several workers a thief keeps the records
// of the tasks it stole, and the victim makes new ones: an amortized cost
// bounded by the steals). AllocsPerRun reports whole allocations per run,
// so 0 here means fewer than one per 100 calls over 200 runs. It counts
// the whole process's allocations, and goroutines of earlier tests may
// still be winding down, so the test measures up to three times and takes
// the least: an allocation of Go's own shows in every measurement. It
// catches a deque whose ring grows and shrinks with each batch (a floor
// too low for the batch).
func TestGoFromWorkerAllocatesNothing(t *testing.T) {
	testkit.SetProcs(t, 1)
	least := -1.0
	measured := 0
	var ran atomic.Int64
	for least != 0 && measured < 3 {
		allocs := goFromWorkerAllocs(t, &ran)
		measured++
		t.Logf("%.2f allocations per 100 Go calls from a task (and their Wait)", allocs)
		if least < 0 || allocs < least {
			least = allocs
		}
	}
	if least != 0 {
		t.Errorf("Go from a worker allocated %.2f objects per 100 calls in steady state, want 0", least)
	}
	if got, want := ran.Load(), int64(measured*100*202); got != want {
		t.Errorf("%d tasks ran, want %d", got, want)
	}
}

// goFromWorkerAllocs is one measurement of TestGoFromWorkerAllocatesNothing;
// ran counts the tasks that ran.
func goFromWorkerAllocs(t *testing.T, ran *atomic.Int64) float64 {
	var allocs float64
	testkit.Guard(t, func() {
		var outer wsgroup.Group
		outer.SetLimit(1)
		outer.Go(func() error {
			f := func() error { ran.Add(1); return nil }
			var g wsgroup.Group
			run := func() {
				for range 100 {
					g.Go(f)
				}
				if err := g.Wait(); err != nil {
					t.Error(err)
				}
			}
			run() // bind the group, fill the free list
			allocs = testing.AllocsPerRun(200, run)
			return nil
		})
		if err := outer.Wait(); err != nil {
			t.Error(err)
		}
	})
	return allocs
}

// TestGoFromOutsideAllocation: a Go from outside the pool queues its task
// by value in a block of the injector; blocks are recycled, so with the
// workers' own start-up (after a linger without tasks) the whole cost
// amortizes to a small fraction of an object per task, on top of the
// caller's closure.
func TestGoFromOutsideAllocation(t *testing.T) {
	const batch = 10_000
	var ran atomic.Int64
	f := func() error { ran.Add(1); return nil }
	var g wsgroup.Group
	run := func() {
		for range batch {
			g.Go(f)
		}
		if err := g.Wait(); err != nil {
			t.Error(err)
		}
	}
	var allocs float64
	testkit.Guard(t, func() {
		run()
		allocs = testing.AllocsPerRun(20, run)
	})
	perTask := allocs / batch
	t.Logf("%.1f allocations per batch of %d outside Go calls and Wait: %.4f per task", allocs, batch, perTask)
	if perTask > 0.1 {
		t.Errorf("Go from outside allocated %.4f objects per task (amortized), want at most 0.1 beyond the caller's closure", perTask)
	}
	if got := ran.Load(); got != 22*batch {
		t.Errorf("%d tasks ran, want %d", got, 22*batch)
	}
}

// TestForAllocatesPerCallNotPerIndex: a loop allocates a fixed amount per
// call, whatever its length: a loop of 100,000 indices allocates no more
// than one of 10 (and some, so the measure is not blind). At GOMAXPROCS 2,
// the loop's tasks and partition are the same for both lengths.
func TestForAllocatesPerCallNotPerIndex(t *testing.T) {
	testkit.SetProcs(t, 2)
	var sum atomic.Int64
	body := func(_ context.Context, i int) error {
		if i%1024 == 0 {
			sum.Add(1)
		}
		return nil
	}
	allocs := func(n int) float64 {
		var a float64
		testkit.Guard(t, func() {
			a = testing.AllocsPerRun(50, func() {
				if err := wsgroup.For(context.Background(), n, body); err != nil {
					t.Errorf("For(%d) = %v", n, err)
				}
			})
		})
		return a
	}
	short, long := allocs(10), allocs(100_000)
	t.Logf("allocations per For: %v for 10 indices, %v for 100,000", short, long)
	if short == 0 || long > short+1 {
		t.Errorf("For allocates %v per call for 10 indices and %v for 100,000: want a fixed, nonzero amount", short, long)
	}
	runtime.KeepAlive(sum.Load())
}
