package sched

import (
	"fmt"
	"os"
	"runtime/debug"
	stdatomic "sync/atomic"
	"unsafe"

	"github.com/go-steal/steal/internal/explore/atomic"
	"github.com/go-steal/steal/internal/gstatus"
)

// The panic path: what happens when a task panics. A task runs in call (on
// a worker) or callOutside (on a goroutine waiting outside the pool), which
// tell a panic from a runtime.Goexit and pass the panic to taskPanicked: a
// group that recovers panics (SetRecoverPanics) records the first one
// (panicRecord), which Wait raises again (groupSlow.result); otherwise the
// program crashes, by the panic raised again or, where frames of someone
// else's are suspended below the task, by fatalPanic.

// panicRecord is the first recovered panic of a group.
type panicRecord struct {
	// set is won by the first panicking task. Its winner writes err
	// before its task finishes, so a Wait that saw the group's count reach
	// zero reads err after it is written. A load of set that sees true
	// (canceled) does not read err.
	set   atomic.Bool
	err   error
	later stdatomic.Int64 // recovered panics that lost the race for set; a plain counter the wsgroup package reads, not part of any protocol
}

// SetRecoverPanics makes the group recover its tasks' panics (wrap != nil)
// or let them crash the program (wrap == nil). wrap builds the value that
// cancels the context and that Wait panics with. Like SetSkipQueued, it
// refuses while tasks are active.
func (g *Group) SetRecoverPanics(wrap func(v any, stack []byte, later *stdatomic.Int64) error) (active int64) {
	if active = g.count(); active != 0 {
		return active
	}
	g.sl().wrapPanic = wrap
	return 0
}

// taskPanicked handles a panic with value v in a task of g that ran on w
// (nil outside the pool): a group that recovers panics records it;
// otherwise it crashes the program, by raising the panic again (on a
// worker running no other task), or, where frames below could recover it
// (crashHow), by fatalPanic, which says where the task ran. It runs in the
// deferred function that recovered the panic, above the task's frames, so
// the stack taken here shows where it panicked.
//
// A panic raised again marks w as crashing first: the deferred half of
// call then leaves the task unfinished, so no Wait returns, and nothing
// its caller does next runs, while the panic unwinds to the end of the
// program. (Finishing it, as errgroup's deferred done does, would let the
// Wait return and its caller go on, and even exit cleanly, before the
// crash: a race the program can lose.)
func (g *Group) taskPanicked(v any, w *worker) {
	sl := g.slow.Load()
	if sl == nil || sl.wrapPanic == nil {
		if crash := crashHow(w); crash != "" {
			fatalPanic(v, crash)
		}
		w.crashing = true
		panic(v)
	}
	if !sl.pan.set.CompareAndSwap(false, true) {
		sl.pan.later.Add(1)
		return
	}
	sl.pan.err = sl.wrapPanic(v, debug.Stack(), &sl.pan.later)
	if sl.cancel != nil {
		sl.cancel(sl.pan.err)
	}
}

// call runs f, a task of g, on w (admitted: it holds a running slot).
//
// If f neither returns nor panics, it called runtime.Goexit (t.FailNow
// does): the deferred function counts the task as finished, as errgroup's
// deferred done does, and marks the goroutine as exiting so that run
// starts a fresh goroutine in the slot.
//
// A panic must be told apart from Goexit, and only recover can do that:
// callTask recovers it, still above f's frames, and passes it to
// taskPanicked: a group that recovers panics records it (the task then
// ends as finished); otherwise the panic is raised again at once, so the
// crash shows the task's own stack. If other tasks are suspended below
// this one on the goroutine (in a Wait or Go that runs queued tasks),
// re-raising would let them recover a panic that errgroup would never let
// them see (a task's panic crashes the program there, from the task's own
// goroutine); then the program is ended the way an unrecovered panic ends
// it (crashHow).
//
// Under GODEBUG=panicnil=1, recover returns nil for panic(nil) but still
// stops the panic; callTask then returns, which it never does after a
// Goexit, reporting neither a return nor a handled panic, and the last
// check catches it. (Counting the task there as Goexit would count it
// twice.) callTask returns, too, after a panic that the group recovered.
// This is the shape of x/sync/singleflight's doCall.
//
// While f runs, w.running is g (join.go); the deferred function puts back
// the group of the task below, which is still running when a Goexit
// unwinds through its deferred calls.
func (w *worker) call(f fn, g *Group, admitted bool) {
	ended := false // callTask returned: no Goexit
	outer := w.running
	w.running = refOf(g) // g stays alive meanwhile: the deferred call below uses it
	defer func() {
		if w.crashing {
			return // the task's panic is ending the program (taskPanicked)
		}
		w.running = outer
		w.depth--
		w.countTask()
		if ended {
			return
		}
		w.afterTask(g, admitted, false, nil)
		w.goexit = true
	}()
	w.depth++
	returned, handled := g.callTask(f, w)
	ended = true
	if !returned && !handled {
		g.taskPanicked(nil, w) // panic(nil) under GODEBUG=panicnil=1
	}
}

// crashHow tells taskPanicked how the panic of a task that ran on w (or,
// w nil, on the goroutine of a Wait outside the pool) must crash the
// program (see call): "" to raise it again, for a task that is the only
// one on its worker's goroutine; otherwise what fatalPanic should say.
// The depth it reads, when the panic is recovered, is the task's own: the
// tasks nested above it on the goroutine have ended (and restored it) by
// then. It is only called on the panic path, not for every task.
func crashHow(w *worker) string {
	switch {
	case w == nil:
		return onWaiter
	case w.depth > 1:
		return onOtherTask
	}
	return ""
}

// callTask calls f, a task of g running on w (nil outside the pool), and
// passes its error to fail or its panic to taskPanicked.
// It reports returned when f returned, handled when f panicked with a
// non-nil value that taskPanicked handled (the group recovered it); it
// does not return when f called runtime.Goexit, nor when taskPanicked
// raised the panic again. The deferred function runs above f's frames, so
// a stack taken there shows where f panicked.
//
// The goroutine wears f's profiler labels while f runs (labels.go), and
// then its own again (home), whatever f left: a worker's first task on
// the goroutine starts from none, which the worker wears between tasks;
// a task nested in another (run by a Wait or Go inside it) or run outside
// the pool reads what the goroutine wears now. The deferred function
// restores them, so a panic's crash report and a Goexit's unwinding, too,
// go on under the goroutine's own labels.
func (g *Group) callTask(f fn, w *worker) (returned, handled bool) {
	var home unsafe.Pointer
	if w == nil || w.depth > 1 {
		home = w.wears()
	}
	if f.labels != home {
		gstatus.SetLabels(f.labels)
	}
	defer func() {
		if w.wears() != home {
			gstatus.SetLabels(home)
		}
		if returned {
			return
		}
		if r := recover(); r != nil {
			handled = true
			g.taskPanicked(r, w)
		}
	}()
	if err := f.f(); err != nil {
		g.fail(err)
	}
	return true, false
}

// callOutside calls f as worker.call does, on a goroutine that is not a
// worker, finishes the task (admitted: it held a running slot) and counts
// it in c.
//
// The differences: frames of the caller of Wait lie below f, and
// they must not recover a task's panic (errgroup never lets them), so a
// panic that the group does not recover ends the program (fatalPanic); and
// a runtime.Goexit in f ends the task as finished and goes on unwinding
// the caller's goroutine, which has no slot to hand to a successor.
func (g *Group) callOutside(f fn, admitted bool, c *outsideCounts) {
	ended := false // callTask returned: no Goexit
	defer func() {
		c.tasks++
		if ended {
			return
		}
		g.afterOutsideTask(admitted) // runtime.Goexit
	}()
	returned, handled := g.callTask(f, nil)
	ended = true
	if !returned && !handled {
		g.taskPanicked(nil, nil) // panic(nil) under GODEBUG=panicnil=1
	}
	g.afterOutsideTask(admitted)
}

// afterOutsideTask finishes a task that ran outside the pool.
func (g *Group) afterOutsideTask(admitted bool) {
	if admitted {
		g.stopRunning()
	}
	g.done(1)
}

// fatalPanic ends the program for a task's panic the way the runtime ends it
// for an unrecovered one: the value, where the task ran, the panicking
// goroutine's stack (taken here, above the task's frames), exit status 2.
// It is used when frames of someone else's are suspended below the
// panicking task on its goroutine, where a plain panic could be recovered
// by them: other tasks on a worker (see worker.call), or the caller of a
// Wait that ran the task outside the pool (see callOutside).
func fatalPanic(v any, where string) {
	fmt.Fprintf(os.Stderr, "panic: %s [%s]\n\n%s", panicText(v), where, debug.Stack())
	os.Exit(2)
}

// What fatalPanic says of where the task ran.
const (
	onOtherTask = "in a task that ran on another task's goroutine"
	onWaiter    = "in a task that ran on the goroutine of a Wait of its group"
)

// panicText formats a panic value for fatalPanic's report: an error's
// Error, a fmt.Stringer's String, a string itself, anything else with %#v
// (the runtime's own report differs for other values: it prints a named
// basic type as main.E(42) and a struct by type and address).
func panicText(v any) string {
	switch v := v.(type) {
	case nil:
		return "nil"
	case error:
		return v.Error()
	case fmt.Stringer:
		return v.String()
	case string:
		return v
	default:
		return fmt.Sprintf("%#v", v)
	}
}
