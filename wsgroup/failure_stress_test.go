package wsgroup_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/go-steal/steal/internal/testkit"
	"github.com/go-steal/steal/wsgroup"
)

// TestStressFailureModes: random trees of nested groups with random limits
// and modes, whose tasks return errors, panic (in PanicInWait groups) or
// recurse. For every group it checks what Wait must report, from counts the
// tasks keep themselves: a panic if any of its tasks panicked (with Later
// counting the rest), else the first error if any task failed, else nil; in
// RunQueued mode every task ran once, in SkipQueued mode none ran twice.
// Nothing may hang or leak.
func TestStressFailureModes(t *testing.T) {
	trees := testkit.Scale(300, 40)
	testkit.ForProcs(t, func(t *testing.T) {
		testkit.Guard(t, func() {
			for i := range trees {
				r := rand.New(rand.NewPCG(uint64(i), 7))
				var st failureStats
				runFailureNode(t, r.Uint64(), 0, &st)
				if t.Failed() {
					t.Logf("tree %d failed", i)
					return
				}
			}
		})
		testkit.VerifyNone(t)
	})
}

type failureStats struct {
	groups, panics, errs atomic.Int64
}

var errFailureStress = errors.New("wsgroup test: stress error")

// runFailureNode makes one group at the given depth, fills it with tasks,
// waits, and checks the outcome. It returns normally in every case (it
// recovers Wait's panic to check it).
func runFailureNode(t *testing.T, seed uint64, depth int, st *failureStats) {
	r := rand.New(rand.NewPCG(seed, uint64(depth)))
	g := new(wsgroup.Group)
	if r.IntN(2) == 0 {
		g, _ = wsgroup.WithContext(context.Background())
	}
	recoverMode := r.IntN(2) == 0
	skip := r.IntN(2) == 0
	if recoverMode {
		g.SetPanicMode(wsgroup.PanicInWait)
	}
	if skip {
		g.SetCancelMode(wsgroup.SkipQueued)
	}
	if r.IntN(3) == 0 {
		g.SetLimit(1 + r.IntN(3))
	}
	st.groups.Add(1)

	n := 1 + r.IntN(12)
	var ran, panicked, failed atomic.Int64
	runs := make([]atomic.Int32, n)
	for i := range n {
		kind := r.IntN(10)
		childSeed := r.Uint64()
		f := func() error {
			if runs[i].Add(1) != 1 {
				t.Errorf("depth %d: task %d ran twice", depth, i)
			}
			ran.Add(1)
			switch {
			case kind == 0 && recoverMode:
				panicked.Add(1)
				st.panics.Add(1)
				panic(fmt.Sprintf("task %d", i))
			case kind == 1:
				failed.Add(1)
				st.errs.Add(1)
				return errFailureStress
			case kind >= 5 && depth < 3:
				runFailureNode(t, childSeed, depth+1, st)
			}
			return nil
		}
		// Half the tasks are submitted from a task of the group (a
		// worker's deque), half from here (the injector, or this task's
		// deque when depth > 0).
		if r.IntN(2) == 0 {
			g.Go(f)
		} else {
			g.Go(func() error { g.Go(f); return nil })
		}
	}
	var err error
	v, didPanic := testkit.Recover(func() { err = g.Wait() })
	if !skip && ran.Load() != int64(n) {
		t.Errorf("depth %d: RunQueued, Wait returned after %d of %d tasks ran", depth, ran.Load(), n)
	}

	p, e := panicked.Load(), failed.Load()
	switch {
	case p > 0:
		pe, ok := v.(*wsgroup.PanicError)
		if !didPanic || !ok {
			t.Errorf("depth %d: %d tasks panicked; Wait = (%v, panic %v %v), want a panic with *PanicError", depth, p, err, didPanic, v)
			return
		}
		if got := int64(pe.Later()) + 1; got != p {
			t.Errorf("depth %d: PanicError.Later()+1 = %d, want %d panics", depth, got, p)
		}
	case didPanic:
		t.Errorf("depth %d: Wait panicked with %v; no task panicked", depth, v)
	case e > 0 && err != errFailureStress:
		t.Errorf("depth %d: %d tasks failed; Wait() = %v, want %v", depth, e, err, errFailureStress)
	case e == 0 && err != nil:
		t.Errorf("depth %d: no task failed; Wait() = %v, want nil", depth, err)
	}
	if !skip {
		for i := range runs {
			if runs[i].Load() != 1 {
				t.Errorf("depth %d: RunQueued, task %d ran %d times, want once", depth, i, runs[i].Load())
			}
		}
	}
}
