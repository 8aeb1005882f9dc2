package sched

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
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
// A panic raised again leaves the task unfinished: worker.unwound finishes
// a task only after this returns, so no Wait returns, and nothing its
// caller does next runs, while the panic unwinds to the end of the
// program. (Finishing it first, as errgroup's deferred done does, would
// let the Wait return and its caller go on, and even exit cleanly, before
// the crash: a race the program can lose.)
func (g *Group) taskPanicked(v any, w *worker) {
	sl := g.slow.Load()
	if sl == nil || sl.wrapPanic == nil {
		if crash := crashHow(w); crash != "" {
			fatalPanic(v, crash)
		}
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
// It has one deferred call, which does nothing when f returns: the task's
// epilogue (its labels off, w.running back to the group of the task below,
// the count of tasks run) is done inline after f. When f does not return,
// the deferred call recovers and passes the rest to unwound, which tells
// why:
//
//   - f panicked: a group that recovers panics records it, and the task
//     ends as finished there and then (call reports that it did, and
//     execute has nothing left to do); otherwise the panic is raised again
//     at once, so the crash shows the task's own stack. If other tasks are
//     suspended below this one on the goroutine (in a Wait or Go that runs
//     queued tasks), raising it again would let them recover a panic that
//     errgroup would never let them see (a task's panic crashes the
//     program there, from the task's own goroutine); then the program is
//     ended the way an unrecovered panic ends it (crashHow).
//   - f called runtime.Goexit (t.FailNow does): the task counts as finished,
//     as errgroup's deferred done counts it, and the goroutine is marked as
//     exiting so that serve starts a fresh goroutine in the slot.
//
// recover tells the two apart except under GODEBUG=panicnil=1, where it
// returns nil for panic(nil) as it does during Goexit (and stops the panic
// all the same): unwoundBy then asks the stack which of the runtime's two
// unwinders called the deferred function. (The usual way, singleflight's
// doCall, is a second frame inside the first whose return shows that a
// panic was recovered; it costs a second deferred call for every task.)
//
// While f runs, w.running is g (join.go), and the goroutine wears f's
// profiler labels (labels.go), then its own again (home), whatever f left:
// a worker's first task on the goroutine starts from none, which the
// worker wears between tasks; a task nested in another (run by a Wait or
// Go inside it) reads what the goroutine wears now. On the way out of a
// panic or a Goexit the labels come off first, so a crash report and the
// deferred calls below go on under the goroutine's own labels.
func (w *worker) call(f fn, g *Group, admitted bool) (finished bool) {
	outer := w.running
	w.running = refOf(g) // g stays alive meanwhile: the deferred call below uses it
	w.depth++
	var home unsafe.Pointer
	if w.depth > 1 {
		home = w.wears()
	}
	if f.labels != home {
		gstatus.SetLabels(f.labels)
	}
	ended := false // f returned
	defer func() {
		if !ended {
			finished = w.unwound(recover(), g, admitted, outer, home)
		}
	}()
	if err := f.f(); err != nil {
		g.fail(err)
	}
	ended = true
	w.leaveTask(outer, home)
	return false
}

// runOwn runs t, a plain task of g (task.plain) that help popped from w's
// deque for g's Wait, and then each task of g that is the newest in the
// deque after it, one after another in one frame: call's, set up once for
// the run instead of once per task. Each of them is counted in *own, as
// execute counts a task that help runs (afterTask). It returns when the
// newest task in the deque is not g's, or when a task of g it popped is
// not plain after all: it returns that task, for execute. (That cannot
// happen while the rule of task.plain holds: all the tasks of g queued now
// are active, so g cannot have changed its limit or mode since the first.)
//
// The frame is call's, and so is the end of a task that does not return
// (unwound, with the task's own labels, group and depth): a panic ends
// the run, finished there and then if g records it (finished reports
// that, as call does), and the tasks of g left in the deque go back to
// help; a runtime.Goexit goes on through the run. Between the tasks of a
// run, w.running stays g and the depth the run's, which is what they are
// for each task of the run anyway; everything else a task's end does is
// done for each task, in execute's order: the labels of the goroutine
// back (home), the task counted, the hand-off told that the worker is
// between tasks (endTask: the Wait's task below goes on), a detach by the
// hand-off undone (afterTask).
func (w *worker) runOwn(t *task, g *Group, own *int64) (rest *task, finished bool) {
	// call's prologue, repeated: as a function of its own it is too large
	// for the compiler to inline, and call runs for every other task.
	outer := w.running
	w.running = refOf(g)
	w.depth++
	var home unsafe.Pointer
	if w.depth > 1 {
		home = w.wears()
	}
	ended := true // no task of the run is in progress
	defer func() {
		if !ended {
			finished = w.unwound(recover(), g, false, outer, home)
		}
	}()
	for {
		f := t.fn
		w.freeTask(t)
		w.started++
		w.rec.Enter(w.started)
		if g != w.cur && w.curDone != 0 {
			w.settleNow() // see execute
		}
		if f.labels != home {
			gstatus.SetLabels(f.labels)
		}
		ended = false
		if err := f.f(); err != nil {
			g.fail(err)
		}
		ended = true
		if w.wears() != home {
			gstatus.SetLabels(home)
		}
		w.countTask()
		w.rec.Leave(w.started, w.depth > 1) // endTask, at the depth below the run's
		if w.detachedBy.Load()&detachHandOff != 0 {
			w.reattach(detachHandOff) // see afterTask
		}
		*own++
		// The next task: the deque's PopIf for g's tasks, its filter
		// written in (Newest), as in help.
		t = nil
		if x := w.dq.Newest(); x != nil && x.g.Load() == g {
			t = w.dq.Pop() // nil if a thief won it
		}
		if t == nil {
			break
		}
		w.st.localPops++
		if !t.plain {
			break
		}
	}
	w.running = outer
	w.depth--
	return t, false
}

// leaveTask is the epilogue of call: the labels of the goroutine (home),
// the group of the task below (outer) and the depth back, the task counted.
func (w *worker) leaveTask(outer groupRef, home unsafe.Pointer) {
	if w.wears() != home {
		gstatus.SetLabels(home)
	}
	w.running = outer
	w.depth--
	w.countTask()
}

// unwound finishes the task of g that call ran when it did not return: r
// is what the deferred call recovered (see call). After a Goexit the
// unwinding goes on; after a panic that the group recorded, it reports
// true, and call returns to execute, unless a runtime.Goexit is on its way
// through call's frame too.
//
// That happens when the panic was raised while a Goexit unwound the task:
// by a deferred call in f, or in a Wait inside f whose helping ran a task
// that called Goexit (the Wait raises its group's recorded panic as it
// ends). Recovering the panic does not stop the Goexit (the runtime goes
// on with it, past our frame), and execute never runs again. So the task
// is finished here, whichever follows, and w.goexit is set, for serve to
// replace the goroutine should it exit; execute clears it again when call
// returns after all (a Goexit that started in a task further down the
// goroutine sets it again when it reaches that task's frame).
//
//go:noinline
func (w *worker) unwound(r any, g *Group, admitted bool, outer groupRef, home unsafe.Pointer) (finished bool) {
	if r == nil && unwoundBy() == byGoexit {
		w.leaveTask(outer, home)
		w.afterTask(g, admitted, false, nil)
		w.goexit = true
		return false
	}
	// A panic (r nil only for panic(nil) under GODEBUG=panicnil=1). The
	// labels come off first, for the crash report; the rest stays as the
	// task left it if the panic crashes the program (taskPanicked).
	if w.wears() != home {
		gstatus.SetLabels(home)
	}
	g.taskPanicked(r, w)
	w.leaveTask(outer, home)
	w.endTask()
	w.afterTask(g, admitted, false, nil)
	w.goexit = true
	return true
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

// The unwinders unwoundBy tells apart.
const (
	byGoexit = iota
	byPanic
)

// unwoundBy tells, in a function that the deferred call of a task's frame
// (call, callOutside) calls when the task did not return, whether the
// runtime is running that deferred call for a panic (runtime.gopanic
// called it) or for runtime.Goexit: the first of the runtime's functions
// among its callers. Only for a recover that returned nil, so
// only after a Goexit or, under GODEBUG=panicnil=1, a panic(nil). Should
// a future runtime name neither, it answers byGoexit, which is right for
// every program but one that sets panicnil=1 and panics with nil; a test
// (TestUnwoundBy) proves the answer for each at every Go release that CI
// runs.
func unwoundBy() int {
	var pcs [8]uintptr
	n := runtime.Callers(2, pcs[:]) // from our caller up
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if strings.HasPrefix(f.Function, "runtime.") {
			if f.Function == "runtime.gopanic" {
				return byPanic
			}
			return byGoexit
		}
		if !more {
			return byGoexit
		}
	}
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
	home := gstatus.Labels()
	if f.labels != home {
		gstatus.SetLabels(f.labels)
	}
	ended := false // f returned
	defer func() {
		if !ended {
			g.unwoundOutside(recover(), admitted, home, c)
		}
	}()
	if err := f.f(); err != nil {
		g.fail(err)
	}
	ended = true
	if gstatus.Labels() != home {
		gstatus.SetLabels(home)
	}
	c.tasks++
	g.afterOutsideTask(admitted)
}

// unwoundOutside is worker.unwound for callOutside.
//
//go:noinline
func (g *Group) unwoundOutside(r any, admitted bool, home unsafe.Pointer, c *outsideCounts) {
	if gstatus.Labels() != home {
		gstatus.SetLabels(home)
	}
	c.tasks++
	if r != nil || unwoundBy() == byPanic {
		g.taskPanicked(r, nil) // ends the program unless the group records it
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
