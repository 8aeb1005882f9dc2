package wsgroup_test

// PanicInWait: the first panic is recovered, cancels the
// context, the other tasks drain, and Wait raises it again on its caller's
// goroutine. The default mode's crash is tested in a subprocess
// (TestTaskPanicCrashesWithTaskStack).

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/go-steal/steal/wsgroup"
)

// waitPanic calls g.Wait and returns the *PanicError it panicked with; it
// fails the test if Wait returned or panicked with something else.
func waitPanic(t *testing.T, g *wsgroup.Group) *wsgroup.PanicError {
	t.Helper()
	var err error
	v, panicked := recoverPanic(func() { err = g.Wait() })
	if !panicked {
		t.Errorf("Wait() returned %v, want a panic", err)
		return nil
	}
	pe, ok := v.(*wsgroup.PanicError)
	if !ok {
		t.Errorf("Wait panicked with %T %v, want a *wsgroup.PanicError", v, v)
		return nil
	}
	return pe
}

func TestPanicInWait(t *testing.T) {
	withGOMAXPROCS(t, func(t *testing.T) {
		runWithTimeout(t, func() {
			g, ctx := wsgroup.WithContext(context.Background())
			g.SetPanicMode(wsgroup.PanicInWait)
			// Tasks that only end once the context is canceled: the panic
			// must cancel it, and they must all run to the end (drain).
			const n = 40
			var drained atomic.Int32
			for range n {
				g.Go(func() error {
					<-ctx.Done()
					drained.Add(1)
					return nil
				})
			}
			g.Go(panicInTask)
			pe := waitPanic(t, g)
			if pe == nil {
				return
			}
			if pe.Value != errPanicValue {
				t.Errorf("PanicError.Value = %v, want %v", pe.Value, errPanicValue)
			}
			if !errors.Is(pe, errPanicValue) {
				t.Errorf("errors.Is(PanicError, panic value) = false, want true (Unwrap)")
			}
			if !bytes.Contains(pe.Stack, []byte("wsgroup_test.panicInTask")) {
				t.Errorf("PanicError.Stack does not show the panicking function:\n%s", pe.Stack)
			}
			if got := pe.Later(); got != 0 {
				t.Errorf("PanicError.Later() = %d, want 0", got)
			}
			if cause := context.Cause(ctx); cause != error(pe) {
				t.Errorf("context.Cause(ctx) = %v, want the *PanicError", cause)
			}
			if got := drained.Load(); got != n {
				t.Errorf("%d of %d other tasks ran to the end, want all", got, n)
			}
		})
		goleak.VerifyNone(t)
	})
}

// TestPanicInWaitCountsLaterPanics: every task panics; one is raised by
// Wait, the others are counted.
func TestPanicInWaitCountsLaterPanics(t *testing.T) {
	withGOMAXPROCS(t, func(t *testing.T) {
		runWithTimeout(t, func() {
			var g wsgroup.Group
			g.SetPanicMode(wsgroup.PanicInWait)
			const n = 200
			for i := range n {
				g.Go(func() error { panic(i) })
			}
			pe := waitPanic(t, &g)
			if pe == nil {
				return
			}
			if v, ok := pe.Value.(int); !ok || v < 0 || v >= n {
				t.Errorf("PanicError.Value = %v, want one of the tasks' values", pe.Value)
			}
			if pe.Unwrap() != nil {
				t.Errorf("Unwrap() = %v for a non-error value, want nil", pe.Unwrap())
			}
			if got := pe.Later(); got != n-1 {
				t.Errorf("PanicError.Later() = %d, want %d", got, n-1)
			}
		})
		goleak.VerifyNone(t)
	})
}

// TestPanicInWaitAfterError: a panic outranks an error; the context's cause
// stays the first cancellation's (the error).
func TestPanicInWaitAfterError(t *testing.T) {
	runWithTimeout(t, func() {
		errFirst := errors.New("first")
		g, ctx := wsgroup.WithContext(context.Background())
		g.SetPanicMode(wsgroup.PanicInWait)
		// The second task panics once the first error has canceled the
		// context (the error is recorded before the cancel). Waiting for a
		// channel the first task closes in a defer would race: the defer
		// runs before its error is recorded.
		g.Go(func() error { return errFirst })
		g.Go(func() error { <-ctx.Done(); panic("after") })
		pe := waitPanic(t, g)
		if pe != nil && pe.Value != "after" {
			t.Errorf("PanicError.Value = %v, want %q", pe.Value, "after")
		}
		if cause := context.Cause(ctx); cause != errFirst {
			t.Errorf("context.Cause(ctx) = %v, want %v", cause, errFirst)
		}
	})
	goleak.VerifyNone(t)
}

// TestPanicInWaitNested: a task's panic in a nested group is raised by the
// nested Wait inside the outer task, which the outer group recovers in turn.
// At GOMAXPROCS=1 the nested tasks run on the outer task's own goroutine
// (the helping Wait), where the default mode would end the program.
func TestPanicInWaitNested(t *testing.T) {
	withGOMAXPROCS(t, func(t *testing.T) {
		runWithTimeout(t, func() {
			var outer wsgroup.Group
			outer.SetPanicMode(wsgroup.PanicInWait)
			var afterWait atomic.Bool
			outer.Go(func() error {
				var inner wsgroup.Group
				inner.SetPanicMode(wsgroup.PanicInWait)
				for range 8 {
					inner.Go(func() error { return nil })
				}
				inner.Go(panicInTask)
				inner.Wait()
				afterWait.Store(true)
				return nil
			})
			pe := waitPanic(t, &outer)
			if pe == nil {
				return
			}
			innerPE, ok := pe.Value.(*wsgroup.PanicError)
			if !ok {
				t.Fatalf("outer PanicError.Value = %T %v, want the inner group's *PanicError", pe.Value, pe.Value)
			}
			if !errors.Is(pe, errPanicValue) {
				t.Errorf("errors.Is(outer, panic value) = false, want true")
			}
			if !bytes.Contains(innerPE.Stack, []byte("wsgroup_test.panicInTask")) {
				t.Errorf("inner PanicError.Stack does not show the panicking function:\n%s", innerPE.Stack)
			}
			if afterWait.Load() {
				t.Errorf("the nested Wait returned; want it to panic")
			}
		})
		goleak.VerifyNone(t)
	})
}

// TestPanicInWaitGoexit: runtime.Goexit is not a panic, in either mode.
func TestPanicInWaitGoexit(t *testing.T) {
	runWithTimeout(t, func() {
		var g wsgroup.Group
		g.SetPanicMode(wsgroup.PanicInWait)
		g.SetLimit(1)
		var ran atomic.Int32
		for range 50 {
			g.Go(func() error { ran.Add(1); runtime.Goexit(); return nil })
		}
		if err := g.Wait(); err != nil {
			t.Errorf("Wait() = %v, want nil", err)
		}
		if got := ran.Load(); got != 50 {
			t.Errorf("%d of 50 tasks ran", got)
		}
	})
	goleak.VerifyNone(t)
}

// TestPanicInWaitPanicNil: panic(nil) is a panic (a *runtime.PanicNilError
// since Go 1.21), recovered like any other.
func TestPanicInWaitPanicNil(t *testing.T) {
	if strings.Contains(os.Getenv("GODEBUG"), "panicnil=1") {
		t.Skip("GODEBUG=panicnil=1: panic(nil) is recovered as nil; TestPanicInWaitPanicNilGODEBUG covers it")
	}
	runWithTimeout(t, func() {
		var g wsgroup.Group
		g.SetPanicMode(wsgroup.PanicInWait)
		g.Go(func() error { panic(nil) })
		pe := waitPanic(t, &g)
		if pe == nil {
			return
		}
		var pn *runtime.PanicNilError
		if !errors.As(pe, &pn) {
			t.Errorf("PanicError.Value = %T %v, want a *runtime.PanicNilError", pe.Value, pe.Value)
		}
	})
	goleak.VerifyNone(t)
}

// TestPanicInWaitSticks: like the first error, the panic stays with the
// group: a later Wait raises it again.
func TestPanicInWaitSticks(t *testing.T) {
	runWithTimeout(t, func() {
		var g wsgroup.Group
		g.SetPanicMode(wsgroup.PanicInWait)
		g.Go(panicInTask)
		first := waitPanic(t, &g)
		g.Go(func() error { return nil })
		if again := waitPanic(t, &g); first != nil && again != first {
			t.Errorf("second Wait panicked with %v, want the first *PanicError again", again)
		}
	})
	goleak.VerifyNone(t)
}

// TestPanicInWaitPanicNilGODEBUG: under GODEBUG=panicnil=1, recover returns
// nil for panic(nil); the group still records it (Value nil) rather than
// taking it for runtime.Goexit. Run in a subprocess, where the setting can
// be made.
func TestPanicInWaitPanicNilGODEBUG(t *testing.T) {
	if os.Getenv(panicChildEnv) == "panicnil" {
		var g wsgroup.Group
		g.SetPanicMode(wsgroup.PanicInWait)
		g.Go(func() error { panic(nil) })
		v, panicked := recoverPanic(func() { g.Wait() })
		pe, ok := v.(*wsgroup.PanicError)
		switch {
		case !panicked:
			os.Stdout.WriteString("RESULT: Wait returned\n")
		case !ok:
			os.Stdout.WriteString("RESULT: Wait panicked with something else\n")
		case pe.Value != nil:
			os.Stdout.WriteString("RESULT: Value not nil\n")
		default:
			os.Stdout.WriteString("RESULT: ok\n")
		}
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPanicInWaitPanicNilGODEBUG$", "-test.count=1")
	cmd.Env = append(os.Environ(), panicChildEnv+"=panicnil", "GODEBUG=panicnil=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("RESULT: ok\n")) {
		t.Errorf("child: %v; want RESULT: ok; output:\n%s", err, out)
	}
}
