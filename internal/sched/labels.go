package sched

import (
	"context"
	"runtime"
	"runtime/trace"
	"strings"
	"sync"
	"unsafe"

	"github.com/go-steal/steal/internal/gstatus"
)

// What a task takes from the goroutine that called Go, so that profiles
// and traces see it as they would see errgroup's goroutine: the
// goroutine's profiler labels, and, while the execution tracer runs, a
// trace region named after the function that called Go.
//
// Labels: Go reads the caller's labels and keeps them with the function
// (fn). The goroutine that runs the task wears them while it runs and goes
// back to its own afterwards (worker.call, callOutside), so no label outlives the task,
// even one the task set itself with pprof.SetGoroutineLabels: a worker
// between tasks wears none, and a goroutine that runs a task inside a Wait
// wears its own again.
//
// The labels are read and set as runtime/pprof does it (package gstatus:
// Labels, SetLabels). A worker also reads its own labels with a plain load
// where gstatus proved the word that holds them (worker.wears), so that a
// task submitted without labels costs it a pointer comparison before the
// task and a load after it; a Go outside the pool reads them with a call.

// fn is a task's function with the profiler labels of the goroutine that
// submitted it (nil: none).
type fn struct {
	f      func() error
	labels unsafe.Pointer
}

// wears returns the labels the calling goroutine wears, which must be w's
// occupant, or any goroutine outside the pool if w is nil.
func (w *worker) wears() unsafe.Pointer {
	if w != nil && w.labels != nil {
		return *w.labels
	}
	return gstatus.Labels()
}

// clearLabels takes off the labels a goroutine of the pool inherited from
// the goroutine that started it: a worker may be started by any caller of
// Go, and between tasks it must wear none.
func clearLabels() {
	if gstatus.Labels() != nil {
		gstatus.SetLabels(nil)
	}
}

// submitted is f as Go, TryGo or a loop queues it for group g, called on
// worker w (nil: outside the pool): with the caller's labels and, while
// the execution tracer runs, inside a trace region named after the caller
// (see traced).
func (g *Group) submitted(f func() error, w *worker) fn {
	if trace.IsEnabled() {
		f = g.traced(f)
	}
	return fn{f: f, labels: w.wears()}
}

// traced wraps f in a trace region named after the function that called
// Go: the first frame on the stack outside this module's packages that
// implement Go (see ours), so that a task is named after the user's code
// whether it came through Group.Go, the adapter or a loop. The region is
// attached to the trace task of the group's context, if it has one.
//
// It runs only while tracing, and costs a stack walk per Go then; the
// names are cached by program counter.
func (g *Group) traced(f func() error) func() error {
	var pcs [16]uintptr
	n := runtime.Callers(3, pcs[:]) // runtime.Callers, traced, submitted
	site := "wsgroup task"
	for _, pc := range pcs[:n] {
		if name := siteOf(pc); name != "" {
			site = name
			break
		}
	}
	ctx := context.Background()
	if sl := g.slow.Load(); sl != nil && sl.ctx != nil {
		ctx = sl.ctx
	}
	return func() error {
		defer trace.StartRegion(ctx, site).End()
		return f()
	}
}

// sites caches siteOf: a program counter's answer never changes.
var sites sync.Map // uintptr → string

// siteOf returns the name of the innermost function at return address pc
// that is not one of ours (several, when calls are inlined there), or ""
// if all of them are.
func siteOf(pc uintptr) string {
	if v, ok := sites.Load(pc); ok {
		return v.(string)
	}
	name := ""
	frames := runtime.CallersFrames([]uintptr{pc})
	for {
		fr, more := frames.Next()
		if fr.Function != "" && !ours(fr.Function) {
			name = fr.Function
			break
		}
		if !more {
			break
		}
	}
	sites.Store(pc, name)
	return name
}

// ours reports whether function name belongs to one of the packages whose
// code lies between a user's call and the submission: wsgroup, adapter
// and this one. Their tests' packages (…/wsgroup_test) are users.
func ours(name string) bool {
	const mod = "github.com/go-steal/steal/"
	rest, ok := strings.CutPrefix(name, mod)
	if !ok {
		return false
	}
	for _, pkg := range [...]string{"wsgroup.", "adapter.", "internal/sched."} {
		if strings.HasPrefix(rest, pkg) {
			return true
		}
	}
	return false
}
