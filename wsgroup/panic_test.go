package wsgroup_test

// Panics and runtime.Goexit in tasks. In the default mode (PanicCrash) a
// task's panic crashes the program as with errgroup, which the tests
// check in a child process (TestPanicChild). In PanicInWait mode the first
// panic is recovered, cancels the context, the other tasks drain, and Wait
// raises it again on its caller's goroutine. runtime.Goexit is not a
// panic: the task counts as completed, in either mode. Every Goexit test of
// groups is here; For's (TestForGoexit) is with the loops, and the counts
// of Goexits (TestStatsGoexit) with the stats.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-steal/steal/internal/gid"
	"github.com/go-steal/steal/internal/testkit"
	"github.com/go-steal/steal/wsgroup"
)

// The panic tests run the test binary again with WSGROUP_PANIC_CHILD set,
// as x/sync's singleflight tests do, and check how the child crashed.
const panicChildEnv = "WSGROUP_PANIC_CHILD"

func TestPanicChild(t *testing.T) {
	switch os.Getenv(panicChildEnv) {
	case "":
		return // only ever runs as a child
	case "top":
		// A panic in a task on a worker's own stack: as errgroup, a crash.
		// Nobody waits, so only a worker runs the task.
		var g wsgroup.Group
		g.Go(panicInTask)
		time.Sleep(time.Minute)
	case "waiter":
		// A panic in a task that Wait runs on its caller's goroutine: the
		// caller's recover must not see it. Only a task that runs on the
		// waiter panics; requests repeat until Wait has run one itself.
		waiter := gid.Current()
		for range 100_000 {
			func() {
				defer func() {
					if r := recover(); r != nil {
						os.Stdout.WriteString("SWALLOWED\n")
					}
				}()
				var g wsgroup.Group
				g.Go(func() error {
					if gid.Current() == waiter {
						panicInTask()
					}
					return nil
				})
				g.Wait()
			}()
		}
	case "nested":
		// A panic in a task run by a helping Wait, below which a task
		// that recovers is suspended: errgroup would never let that task
		// see the panic, so it must crash here too, not be swallowed.
		var g wsgroup.Group
		g.Go(func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					os.Stdout.WriteString("SWALLOWED\n")
				}
			}()
			var inner wsgroup.Group
			inner.Go(panicInTask)
			return inner.Wait()
		})
		g.Wait()
	case "limit":
		// The crash ends the program before anything can see the task
		// finished: here, a TryGo under SetLimit(1) would succeed as soon
		// as the panicking task gave its place up. It is tried at the one
		// moment that decides, not raced against the crash: the panic value
		// is a crashObserver, whose Error method the runtime calls once the
		// panic has unwound through every deferred call (the library's
		// among them) and before it ends the program; the method has this
		// goroutine try TryGo then, and waits for the answer.
		var g wsgroup.Group
		g.SetLimit(1)
		obs := newCrashObserver()
		g.Go(func() error { return panicInTaskObserved(obs) })
		<-obs.ask
		if g.TryGo(func() error { return nil }) {
			os.Stdout.WriteString("FINISHED BEFORE CRASH\n")
		}
		close(obs.answered)
		time.Sleep(time.Minute) // the crash ends the program
	case "wait":
		// PanicInWait, and nobody recovers Wait's panic: the crash must
		// still show where the task panicked.
		var g wsgroup.Group
		g.SetPanicMode(wsgroup.PanicInWait)
		g.Go(panicInTask)
		g.Wait()
	}
	os.Stdout.WriteString("NO CRASH\n")
	os.Exit(0)
}

// crashObserver is a panic value that reads as errPanicValue and lets the
// crashing program be looked at while it ends: the runtime calls Error
// (once per panic it prints) after the panic has run every deferred call
// on its goroutine and before it ends the program. The first call sends on
// ask and waits until answered is closed; the goroutine that received does
// its checks meanwhile.
type crashObserver struct {
	once     sync.Once
	ask      chan struct{}
	answered chan struct{}
}

func newCrashObserver() *crashObserver {
	return &crashObserver{ask: make(chan struct{}), answered: make(chan struct{})}
}

func (o *crashObserver) Error() string {
	o.once.Do(func() {
		o.ask <- struct{}{}
		<-o.answered
	})
	return errPanicValue.Error()
}

// panicInTaskObserved is panicInTask with an observer for the panic value.
func panicInTaskObserved(o *crashObserver) error { panic(o) }

func TestTaskPanicCrashesWithTaskStack(t *testing.T) {
	for _, mode := range []string{"top", "waiter", "nested", "limit", "wait"} {
		t.Run(mode, func(t *testing.T) {
			s := testkit.CrashChild(t, "TestPanicChild", panicChildEnv+"="+mode)
			wants := []string{"panic: " + errPanicValue.Error(), "wsgroup_test.panicInTask"}
			if mode == "wait" {
				// Raised again by Wait, on the test's goroutine, with the
				// task's stack in the message.
				wants = []string{"panic: wsgroup: task panicked: " + errPanicValue.Error(), "wsgroup_test.panicInTask", "wsgroup_test.TestPanicChild"}
			}
			bads := []string{"SWALLOWED", "NO CRASH", "FINISHED BEFORE CRASH"}
			switch mode {
			case "top", "limit":
				// The only task on its worker's goroutine: the runtime's
				// own report of the panic, raised again above the task.
				wants = append(wants, "[recovered, repanicked]")
				bads = append(bads, "[in a task that ran")
			case "waiter":
				wants = append(wants, "[in a task that ran on the goroutine of a Wait of its group]")
			}
			for _, want := range wants {
				if !strings.Contains(s, want) {
					t.Errorf("crash output lacks %q; output:\n%s", want, s)
				}
			}
			for _, bad := range bads {
				if strings.Contains(s, bad) {
					t.Errorf("child printed %s; output:\n%s", bad, s)
				}
			}
		})
	}
}

// waitPanic calls g.Wait and returns the *PanicError it panicked with; it
// fails the test if Wait returned or panicked with something else.
func waitPanic(t *testing.T, g *wsgroup.Group) *wsgroup.PanicError {
	t.Helper()
	var err error
	v, panicked := testkit.Recover(func() { err = g.Wait() })
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
	testkit.ForProcs(t, func(t *testing.T) {
		testkit.Guard(t, func() {
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
		testkit.VerifyNone(t)
	})
}

// TestPanicInWaitCountsLaterPanics: every task panics; one is raised by
// Wait, the others are counted.
func TestPanicInWaitCountsLaterPanics(t *testing.T) {
	testkit.ForProcs(t, func(t *testing.T) {
		testkit.Guard(t, func() {
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
		testkit.VerifyNone(t)
	})
}

// TestPanicInWaitAfterError: a panic outranks an error; the context's cause
// stays the first cancellation's (the error).
func TestPanicInWaitAfterError(t *testing.T) {
	testkit.Guard(t, func() {
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
	testkit.VerifyNone(t)
}

// TestPanicInWaitNested: a task's panic in a nested group is raised by the
// nested Wait inside the outer task, which the outer group recovers in turn.
// At GOMAXPROCS=1 the nested tasks run on the outer task's own goroutine
// (the helping Wait), where the default mode would end the program.
func TestPanicInWaitNested(t *testing.T) {
	testkit.ForProcs(t, func(t *testing.T) {
		testkit.Guard(t, func() {
			pe, innerPE, afterWait := waitNestedPanic(t, -1, func(inner *wsgroup.Group) {
				for range 8 {
					inner.Go(func() error { return nil })
				}
				inner.Go(panicInTask)
			})
			if pe == nil {
				return
			}
			if innerPE == nil {
				t.Fatalf("outer PanicError.Value = %T %v, want the inner group's *PanicError", pe.Value, pe.Value)
			}
			if !errors.Is(pe, errPanicValue) {
				t.Errorf("errors.Is(outer, panic value) = false, want true")
			}
			if !bytes.Contains(innerPE.Stack, []byte("wsgroup_test.panicInTask")) {
				t.Errorf("inner PanicError.Stack does not show the panicking function:\n%s", innerPE.Stack)
			}
			if afterWait {
				t.Errorf("the nested Wait returned; want it to panic")
			}
		})
		testkit.VerifyNone(t)
	})
}

// TestPanicInWaitPanicNil: panic(nil) is a panic (a *runtime.PanicNilError
// since Go 1.21), recovered like any other.
func TestPanicInWaitPanicNil(t *testing.T) {
	if strings.Contains(os.Getenv("GODEBUG"), "panicnil=1") {
		t.Skip("GODEBUG=panicnil=1: panic(nil) is recovered as nil; TestPanicInWaitPanicNilGODEBUG covers it")
	}
	testkit.Guard(t, func() {
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
	testkit.VerifyNone(t)
}

// TestPanicInWaitSticks: like the first error, the panic stays with the
// group: a later Wait raises it again.
func TestPanicInWaitSticks(t *testing.T) {
	testkit.Guard(t, func() {
		var g wsgroup.Group
		g.SetPanicMode(wsgroup.PanicInWait)
		g.Go(panicInTask)
		first := waitPanic(t, &g)
		g.Go(func() error { return nil })
		if again := waitPanic(t, &g); first != nil && again != first {
			t.Errorf("second Wait panicked with %v, want the first *PanicError again", again)
		}
	})
	testkit.VerifyNone(t)
}

// TestPanicInWaitPanicNilGODEBUG: under GODEBUG=panicnil=1, recover returns
// nil for panic(nil); the group still records it (Value nil) rather than
// taking it for runtime.Goexit, whether the task ran on the goroutine of
// the Wait or on a worker (the Wait of a group made inside a task runs the
// group's tasks there). Run in a subprocess, where the setting can be made.
func TestPanicInWaitPanicNilGODEBUG(t *testing.T) {
	if os.Getenv(panicChildEnv) != "panicnil" {
		testkit.Child(t, "TestPanicInWaitPanicNilGODEBUG", panicChildEnv+"=panicnil", "GODEBUG=panicnil=1")
		return
	}
	testkit.Guard(t, func() {
		// check waits for a group whose one task panics with nil.
		check := func(where string) {
			var g wsgroup.Group
			g.SetPanicMode(wsgroup.PanicInWait)
			g.Go(func() error { panic(nil) })
			v, panicked := testkit.Recover(func() { g.Wait() })
			pe, ok := v.(*wsgroup.PanicError)
			switch {
			case !panicked:
				t.Errorf("%s: Wait returned", where)
			case !ok:
				t.Errorf("%s: Wait panicked with %T %v, want a *PanicError", where, v, v)
			case pe.Value != nil:
				t.Errorf("%s: PanicError.Value = %v, want nil", where, pe.Value)
			}
		}
		check("outside the pool")
		// A worker runs the outer task: the Wait below starts after it
		// has ended, so it cannot run it itself.
		var outer wsgroup.Group
		done := make(chan struct{})
		outer.Go(func() error { defer close(done); check("on a worker"); return nil })
		<-done
		if err := outer.Wait(); err != nil {
			t.Error(err)
		}
	})
}

// TestGoexit: a task that calls runtime.Goexit (t.FailNow does) counts as
// completed; no task is lost and Wait returns, or, when a Goexit task ran
// on the goroutine of the Wait (which it then ends), that Wait first waits
// for every other task of the group.
func TestGoexit(t *testing.T) {
	for _, limit := range []int{-1, 1, 2} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			const n = 100
			var ran, exited atomic.Int32
			returned := guardOnOwnGoroutine(t, func() {
				g, ctx := wsgroup.WithContext(context.Background())
				g.SetLimit(limit)
				for i := 0; i < n; i++ {
					g.Go(func() error {
						if i%3 == 0 {
							defer exited.Add(1)
							runtime.Goexit()
						}
						ran.Add(1)
						return nil
					})
				}
				wantNil(t, "Wait()", g.Wait())
				if cause := context.Cause(ctx); cause != context.Canceled {
					t.Errorf("context.Cause(ctx) = %v, want %v", cause, context.Canceled)
				}
			})
			wantExited := int32((n + 2) / 3)
			if got := exited.Load(); got != wantExited {
				t.Errorf("%d tasks called Goexit, want %d (Wait returned: %v)", got, wantExited, returned)
			}
			if got := ran.Load(); got != n-wantExited {
				t.Errorf("%d tasks ran to the end, want %d (Wait returned: %v)", got, n-wantExited, returned)
			}
		})
	}
}

// TestPanicInWaitGoexit: runtime.Goexit is not a panic, in either mode.
func TestPanicInWaitGoexit(t *testing.T) {
	var ran atomic.Int32
	guardOnOwnGoroutine(t, func() {
		var g wsgroup.Group
		g.SetPanicMode(wsgroup.PanicInWait)
		g.SetLimit(1)
		for range 50 {
			g.Go(func() error { ran.Add(1); runtime.Goexit(); return nil })
		}
		wantNil(t, "Wait()", g.Wait())
	})
	// Whether Wait returned or a Goexit ended its goroutine, it did so
	// after every task.
	if got := ran.Load(); got != 50 {
		t.Errorf("%d of 50 tasks ran", got)
	}
	testkit.VerifyNone(t)
}

// TestGoexitInTaskRunByWaiter: a task that calls runtime.Goexit while it
// runs on the goroutine of its group's Wait ends that goroutine, as the
// package documentation says, but only after Wait has waited for the rest
// of the group. Each round submits a task that calls Goexit when it runs on
// the waiter and a slower one that it waits for; rounds repeat until a
// Goexit happened on the waiter. Fails if the Goexit is swallowed (Wait
// returns) or if the goroutine ends before the rest of its group.
func TestGoexitInTaskRunByWaiter(t *testing.T) {
	testkit.ForProcs(t, func(t *testing.T) {
		for round := 0; ; round++ {
			if round == 10_000 {
				t.Errorf("in %d rounds, Wait never ran its own task", round)
				return
			}
			var other, exitedAfterOther atomic.Bool
			returned := guardOnOwnGoroutine(t, func() {
				defer func() { exitedAfterOther.Store(other.Load()) }()
				me := gid.Current()
				var g wsgroup.Group
				g.Go(func() error {
					for range 1000 {
						runtime.Gosched() // long enough to still run when Goexit comes
					}
					other.Store(true)
					return nil
				})
				g.Go(func() error {
					if gid.Current() == me {
						runtime.Goexit()
					}
					return nil
				})
				g.Wait()
			})
			if returned {
				continue // the Goexit task ran on a worker this time
			}
			if !exitedAfterOther.Load() {
				t.Errorf("the waiter's goroutine ended before the rest of its group had run")
			}
			return
		}
	})
}

// waitNestedPanic runs, in an outer PanicInWait group with the given
// limit, one task A that gives a nested PanicInWait group the tasks fill
// adds and waits for it. It returns the *PanicError the outer Wait panicked
// with (nil, the test failed, if it did not), the nested group's
// *PanicError it holds (nil if it holds something else), and whether the
// nested Wait returned.
func waitNestedPanic(t *testing.T, limit int, fill func(h *wsgroup.Group)) (outer, inner *wsgroup.PanicError, nestedReturned bool) {
	t.Helper()
	var g wsgroup.Group
	g.SetPanicMode(wsgroup.PanicInWait)
	g.SetLimit(limit)
	var returned atomic.Bool
	g.Go(func() error {
		var h wsgroup.Group
		h.SetPanicMode(wsgroup.PanicInWait)
		fill(&h)
		h.Wait()
		returned.Store(true)
		return nil
	})
	outer = waitPanic(t, &g)
	if outer != nil {
		inner, _ = outer.Value.(*wsgroup.PanicError)
	}
	return outer, inner, returned.Load()
}

// TestGoexitInHelpedTaskKeepsRecoveredPanic: task A waits on a nested
// PanicInWait group h whose two tasks run in A's helping Wait, on A's
// goroutine: the first panics (recovered by h), the second calls Goexit,
// which unwinds A's Wait too (a documented difference). h's panic must not
// be lost with it: it is raised in A, and the outer group's Wait raises it
// in turn, rather than A ending as completed with nothing raised.
func TestGoexitInHelpedTaskKeepsRecoveredPanic(t *testing.T) {
	testkit.ForProcs(t, func(t *testing.T) {
		guardOnOwnGoroutine(t, func() {
			// One worker: h's tasks run in A's helping Wait.
			pe, inner, waitReturned := waitNestedPanic(t, 1, func(h *wsgroup.Group) {
				h.Go(func() error { runtime.Goexit(); return nil }) // runs second
				h.Go(panicInTask)                                   // runs first (newest first)
			})
			if waitReturned {
				t.Errorf("h.Wait returned; the Goexit should have ended task A")
			}
			if pe == nil {
				return
			}
			if inner == nil || inner.Value != errPanicValue {
				t.Errorf("outer Wait panicked with %v, want h's *PanicError for %v", pe.Value, errPanicValue)
			}
		})
		testkit.VerifyNone(t)
	})
}

// TestPanicDuringGoexitOnWorker: a task on a worker calls runtime.Goexit,
// and one of its deferred calls panics; its PanicInWait group records the
// panic. Recovering the panic does not stop the Goexit, which ends the
// worker's goroutine: the task must count as finished once, Wait must
// raise the panic, and the slot must get a fresh goroutine, which runs the
// next task.
func TestPanicDuringGoexitOnWorker(t *testing.T) {
	testkit.ForProcs(t, func(t *testing.T) {
		guardOnOwnGoroutine(t, func() {
			var g wsgroup.Group
			g.SetPanicMode(wsgroup.PanicInWait)
			started := make(chan struct{})
			// The Wait below starts after the task has started on a
			// worker, so it cannot run it itself.
			g.Go(func() error {
				close(started)
				defer func() { panic(errPanicValue) }()
				runtime.Goexit()
				return nil
			})
			<-started
			if pe := waitPanic(t, &g); pe != nil && pe.Value != errPanicValue {
				t.Errorf("Wait panicked with %v, want %v", pe.Value, errPanicValue)
			}
			// A worker runs the next task.
			var next wsgroup.Group
			ran := make(chan struct{})
			next.Go(func() error { close(ran); return nil })
			<-ran
			if err := next.Wait(); err != nil {
				t.Error(err)
			}
		})
		testkit.VerifyNone(t)
	})
}
