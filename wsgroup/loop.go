package wsgroup

import (
	"context"
	"fmt"

	"github.com/go-steal/steal/internal/sched"
)

// A LoopOption changes how For (and ForEach and Map) handles what its
// bodies do. The only options are the values of PanicMode.
type LoopOption interface{ loopOption() }

func (PanicMode) loopOption() {}

// For calls body(ctx, i) once for each i in [0, n), on the scheduler, and
// returns the first non-nil error a body returned, or nil.
//
// The loop runs as a few tasks, not one per index: [0, n) is split into
// one contiguous range per GOMAXPROCS; each task runs the indices of its
// range from the low end, and a task whose range is done takes the upper
// half of the longest range left (range stealing), so a loop whose bodies
// differ in cost is balanced to the end. Bodies run in no particular
// order, and at most GOMAXPROCS of them at a time, even while some block (a
// blocked body holds its range's task; other groups' tasks get workers of
// their own meanwhile, see Blocking tasks in the package documentation): a
// body must not wait for another index of the same loop to run. A loop
// whose bodies mostly wait on I/O wants more at once than that: use a Group
// with the limit it needs.
//
// The ctx passed to body is derived from ctx. It is canceled when a body
// returns a non-nil error, when a body panics and the loop recovers it (see
// below), when ctx is canceled, and when For returns. Once a body has
// failed, no further index starts: each task looks before every index at
// whether one has. A cancellation of ctx is seen between runs of indices,
// which each task sizes to take about ten microseconds (one index at a time
// for bodies slower than that): the indices of the runs under way still
// start. Bodies already running are not interrupted; For
// returns once every body that started has returned. Each index that
// started ran exactly once; if none failed but ctx was canceled before
// every index started, For returns context.Cause(ctx), so that nil always
// means that every index ran.
//
// A body's panic crashes the program, as a task's panic does in a Group
// (PanicCrash). With the option PanicInWait, For recovers the first panic,
// cancels the loop's ctx, lets the bodies that are running return, starts
// no other, and then panics with a *PanicError on its caller's goroutine.
// A body that calls runtime.Goexit ends as if it had returned nil, and the
// loop goes on. Bodies may run on the goroutine that called For, while it
// waits, as tasks run on the goroutine of a Wait (see [Group.Wait]): a
// Goexit there ends that goroutine once the loop has finished, and a panic
// there is never seen by its caller's recover.
//
// Bodies wear the profiler labels of the goroutine that called For, and,
// while the execution tracer runs, each of the loop's tasks runs in a trace
// region named after the function that called For (see [Group.Go]).
//
// For may be called anywhere, including inside a task or inside the body of
// another For: while it waits, the caller runs the loop's own tasks, as
// Wait does, so nested loops keep every worker busy and do not deadlock.
// For allocates a fixed amount per call, proportional to GOMAXPROCS and not
// to n.
//
// If n <= 0, For returns nil without calling body. A nil body panics.
// Any n an int holds is run in full: on 64-bit ports up to math.MaxInt
// indices, and on 32-bit ports (such as 386 and arm), where int is 32
// bits, at most math.MaxInt32 (2,147,483,647) indices in one loop.
//
// In the terminology of [the Go memory model], the call of For
// synchronizes before the start of each body, and the return of each body
// synchronizes before the return (or the panic) of For.
//
// [the Go memory model]: https://go.dev/ref/mem
func For(ctx context.Context, n int, body func(ctx context.Context, i int) error, opts ...LoopOption) error {
	if body == nil {
		panic("wsgroup: For called with a nil body")
	}
	return runLoop(ctx, n, body, opts)
}

// ForEach calls f(ctx, &s[i]) for each element of s, as For calls its body
// for each index, and returns the first error. f may modify the element.
// Everything For promises holds, its memory-model clause included, with
// the elements for the indices.
func ForEach[E any](ctx context.Context, s []E, f func(ctx context.Context, e *E) error, opts ...LoopOption) error {
	if f == nil {
		panic("wsgroup: ForEach called with a nil function")
	}
	return runLoop(ctx, len(s), func(ctx context.Context, i int) error { return f(ctx, &s[i]) }, opts)
}

// Map calls f(ctx, &s[i]) for each element of s, as For calls its body for
// each index, and returns the results in a slice of len(s), the result for
// s[i] at index i, with the first error. When an error is returned, the
// results of the elements whose f did not run or failed are zero values.
// Everything For promises holds, its memory-model clause included, with
// the elements for the indices.
func Map[E, R any](ctx context.Context, s []E, f func(ctx context.Context, e *E) (R, error), opts ...LoopOption) ([]R, error) {
	if f == nil {
		panic("wsgroup: Map called with a nil function")
	}
	out := make([]R, len(s))
	err := runLoop(ctx, len(s), func(ctx context.Context, i int) error {
		r, err := f(ctx, &s[i])
		if err == nil {
			out[i] = r
		}
		return err
	}, opts)
	return out, err
}

// runLoop is For without the check of body.
func runLoop(ctx context.Context, n int, body func(context.Context, int) error, opts []LoopOption) error {
	if n <= 0 {
		return nil
	}
	mode := PanicCrash
	for _, o := range opts {
		switch o := o.(type) {
		case PanicMode:
			if o != PanicCrash && o != PanicInWait {
				panic(fmt.Sprintf("wsgroup: For called with unknown panic mode %d", int(o)))
			}
			mode = o
		default:
			panic(fmt.Sprintf("wsgroup: For called with unknown option %v", o))
		}
	}
	return sched.For(ctx, n, body, mode.recoverer())
}
