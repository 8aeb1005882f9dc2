package wsgroup_test

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/go-steal/steal/internal/gid"
	"github.com/go-steal/steal/wsgroup"
)

// TestWaitDoesNotRunForeignTasks: a task queues a task that waits for
// something the first task does only after its nested Wait returns. errgroup
// runs it on its own goroutine; a Wait that helped by running any queued
// task would pick it up (newest first) on top of the waiting task's stack
// and never return. wsgroup's Wait runs only its own group's tasks.
func TestWaitDoesNotRunForeignTasks(t *testing.T) {
	withGOMAXPROCS(t, func(t *testing.T) {
		runWithTimeout(t, func() {
			var g wsgroup.Group
			g.Go(func() error {
				ch := make(chan struct{})
				var inner wsgroup.Group
				inner.Go(func() error { time.Sleep(time.Millisecond); return nil })
				g.Go(func() error { <-ch; return nil })
				if err := inner.Wait(); err != nil {
					return err
				}
				close(ch)
				return nil
			})
			if err := g.Wait(); err != nil {
				t.Errorf("Wait() = %v, want nil", err)
			}
		})
	})
}

// TestSetLimitNegativeWhileRunning: errgroup lets SetLimit(-1) remove the
// limit while tasks run. The task admitted under the old limit must still
// release its slot, or a later limit would park tasks forever.
func TestSetLimitNegativeWhileRunning(t *testing.T) {
	runWithTimeout(t, func() {
		var g wsgroup.Group
		g.SetLimit(1)
		started, release := make(chan struct{}), make(chan struct{})
		g.Go(func() error { close(started); <-release; return nil })
		<-started
		g.SetLimit(-1)
		close(release)
		if err := g.Wait(); err != nil {
			t.Fatalf("Wait() = %v", err)
		}
		g.SetLimit(1)
		ran := make(chan struct{})
		g.Go(func() error { close(ran); return nil })
		if err := g.Wait(); err != nil {
			t.Fatalf("second Wait() = %v", err)
		}
		select {
		case <-ran:
		default:
			t.Fatal("the task after SetLimit(-1) then SetLimit(1) did not run")
		}
	})
}

// The panic tests run the test binary again with WSGROUP_PANIC_CHILD set,
// as x/sync's singleflight tests do, and check how the child crashed.
const panicChildEnv = "WSGROUP_PANIC_CHILD"

var errPanicValue = errors.New("wsgroup test: task panic value")

func panicInTask() error { panic(errPanicValue) }

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

func TestTaskPanicCrashesWithTaskStack(t *testing.T) {
	for _, mode := range []string{"top", "waiter", "nested", "wait"} {
		t.Run(mode, func(t *testing.T) {
			s := crashChild(t, "TestPanicChild", panicChildEnv+"="+mode)
			wants := []string{"panic: " + errPanicValue.Error(), "wsgroup_test.panicInTask"}
			if mode == "wait" {
				// Raised again by Wait, on the test's goroutine, with the
				// task's stack in the message.
				wants = []string{"panic: wsgroup: task panicked: " + errPanicValue.Error(), "wsgroup_test.panicInTask", "wsgroup_test.TestPanicChild"}
			}
			if mode == "waiter" {
				wants = append(wants, "[in a task that ran on the goroutine of a Wait of its group]")
			}
			for _, want := range wants {
				if !strings.Contains(s, want) {
					t.Errorf("crash output lacks %q; output:\n%s", want, s)
				}
			}
			for _, bad := range []string{"SWALLOWED", "NO CRASH"} {
				if strings.Contains(s, bad) {
					t.Errorf("child printed %s; output:\n%s", bad, s)
				}
			}
		})
	}
}

// TestSkipQueuedWaitTwice: a SkipQueued group whose tasks all ran returns
// nil from every Wait, concurrent or repeated, although the first Wait
// canceled its context (found in review: the later Waits saw that
// cancellation and returned context.Canceled).
func TestSkipQueuedWaitTwice(t *testing.T) {
	runWithTimeout(t, func() {
		g, _ := wsgroup.WithContext(context.Background())
		g.SetCancelMode(wsgroup.SkipQueued)
		ran := make(chan struct{})
		g.Go(func() error { close(ran); return nil })
		<-ran
		errs := make(chan error, 2)
		for range 2 {
			go func() { errs <- g.Wait() }()
		}
		for range 2 {
			if err := <-errs; err != nil {
				t.Errorf("concurrent Wait() = %v, want nil: no task failed or was skipped", err)
			}
		}
		if err := g.Wait(); err != nil {
			t.Errorf("third Wait() = %v, want nil", err)
		}
	})
	goleak.VerifyNone(t)
}

// TestGoexitInHelpedTaskKeepsRecoveredPanic: task A waits on a nested
// PanicInWait group h whose two tasks run in A's helping Wait, on A's
// goroutine: the first panics (recovered by h), the second calls Goexit,
// which unwinds A's Wait too (a documented difference). h's panic must not
// be lost with it: it is raised in A, and the outer group's Wait raises it
// in turn (found in review: A ended as completed and nothing panicked).
func TestGoexitInHelpedTaskKeepsRecoveredPanic(t *testing.T) {
	withGOMAXPROCS(t, func(t *testing.T) {
		runWithTimeout(t, func() {
			var outer wsgroup.Group
			outer.SetPanicMode(wsgroup.PanicInWait)
			outer.SetLimit(1) // one worker: h's tasks run in A's helping Wait
			var waitReturned atomic.Bool
			outer.Go(func() error {
				var h wsgroup.Group
				h.SetPanicMode(wsgroup.PanicInWait)
				h.Go(func() error { runtime.Goexit(); return nil }) // runs second
				h.Go(panicInTask)                                   // runs first (newest first)
				h.Wait()
				waitReturned.Store(true)
				return nil
			})
			pe := waitPanic(t, &outer)
			if waitReturned.Load() {
				t.Errorf("h.Wait returned; the Goexit should have ended task A")
			}
			if pe == nil {
				return
			}
			inner, ok := pe.Value.(*wsgroup.PanicError)
			if !ok || inner.Value != errPanicValue {
				t.Errorf("outer Wait panicked with %v, want h's *PanicError for %v", pe.Value, errPanicValue)
			}
		})
		goleak.VerifyNone(t)
	})
}
