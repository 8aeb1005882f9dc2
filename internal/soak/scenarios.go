package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/go-steal/steal/adapter"
	"github.com/go-steal/steal/internal/workload"
	"github.com/go-steal/steal/wsgroup"
)

// A scenario exercises one promise of the package documentation (or
// several that go together) with sizes, limits and choices drawn from its
// env, and checks the outcome exactly. It returns what was wrong, or nil.
type scenario struct {
	name string
	both bool // errgroup can run it too; otherwise wsgroup only
	run  func(e *env) error
}

// scenarios is the mix the clients draw from, each with the same chance.
var scenarios = []scenario{
	{"fan-out", true, fanOut},
	{"reuse", true, reuse},
	{"first-error", true, firstError},
	{"errors", true, severalErrors},
	{"fork-join", true, forkJoin},
	{"cross-group", true, crossGroup},
	{"io-limit", true, ioLimit},
	{"chain-outside", true, chainOutside},
	{"chain-inside", true, chainInside},
	{"trygo", true, tryGo},
	{"goexit", true, goexitWait},
	{"goexit-nested", true, goexitNested},
	{"cancel-run-queued", true, cancelRunQueued},
	{"cancel-skip-queued", false, cancelSkipQueued},
	{"panic-in-wait", false, panicInWait},
	{"loops", false, loops},
	{"loop-errors", false, loopErrors},
	{"loop-cancel", false, loopCancel},
	{"loop-panic", false, loopPanic},
}

// Errors the scenarios' tasks return. Each failing task returns an error
// of its own, so a check can tell which one Wait returned.
type taskError struct{ task int }

func (e *taskError) Error() string { return fmt.Sprintf("task %d failed", e.task) }

var errParent = errors.New("parent canceled")

// fanOut: a flat fan-out, with or without a limit, on a zero group or one
// made by WithContext. Every task runs once, within the limit; Wait
// returns nil and cancels the context with context.Canceled.
func fanOut(e *env) error {
	g, ctx := e.group(context.Background())
	limit := e.limit(8)
	g.SetLimit(limit)
	if err := fanOutAndWait(e, "fan-out", g, limit, e.fan(), func(int) error { return nil }, nil); err != nil {
		return err
	}
	return wantCause(ctx, context.Canceled)
}

// fanOutAndWait queues n tasks on g, whose limit is limit, each of which
// returns body(i); it waits, and checks that Wait returned want, that
// every task ran once, and that no more than the limit ran at once.
func fanOutAndWait(e *env, what string, g adapter.Group, limit, n int, body func(i int) error, want error) error {
	hits := make(tally, n)
	var run running
	for i := range n {
		g.Go(func() error {
			run.enter()
			defer run.leave()
			hits[i]++
			return body(i)
		})
	}
	e.started(n)
	e.mark()
	if err := g.Wait(); err != want {
		return fmt.Errorf("%s: Wait() = %v, want %v", what, err, want)
	}
	if err := hits.once(what); err != nil {
		return err
	}
	return run.within(limit)
}

// wantCause checks the cause of a group's context after Wait (no check for
// a zero group, whose ctx is nil).
func wantCause(ctx context.Context, want error) error {
	if ctx == nil {
		return nil
	}
	if ctx.Err() == nil {
		return errors.New("the group's context is not canceled after Wait")
	}
	if got := context.Cause(ctx); got != want {
		return fmt.Errorf("context.Cause of the group's context = %v, want %v", got, want)
	}
	return nil
}

// reuse: one group used for several rounds of Go and Wait, with a new
// limit each round; in one round, maybe, a task fails, and from then on
// every Wait returns that first error. Tasks still run in the rounds after
// the context is canceled.
func reuse(e *env) error {
	g, ctx := e.group(context.Background())
	rounds := e.intn(2, 4)
	failIn := e.intn(0, rounds) // == rounds: no round fails
	var first error
	for r := range rounds {
		limit := e.limit(8)
		g.SetLimit(limit)
		n := e.intn(1, 64)
		failing := -1
		var failErr error
		if r == failIn {
			failing = e.rng.IntN(n)
			failErr = &taskError{failing}
			first = failErr
		}
		body := func(i int) error {
			if i == failing {
				return failErr
			}
			return nil
		}
		if err := fanOutAndWait(e, fmt.Sprintf("round %d", r), g, limit, n, body, first); err != nil {
			return err
		}
	}
	// The context is canceled once: by the error, if the first round
	// failed, or else by the first Wait.
	if failIn == 0 {
		return wantCause(ctx, first)
	}
	return wantCause(ctx, context.Canceled)
}

// firstError: one task (the leader) fails at once; a few others fail only
// after the group's context is canceled. The leader's error is recorded
// before the context is canceled, so it is the first, whatever the
// scheduling: Wait returns it, again on a second Wait, and it is the
// context's cause. The followers block until the leader has run, so this
// is also a set of tasks that wait for another task (with a limit, the
// leader is the first task, so it holds a slot).
func firstError(e *env) error {
	g, ctx := adapter.WithContext(e.kind, context.Background())
	limit := e.limit(8)
	g.SetLimit(limit)
	n := e.intn(2, 64)
	leader := 0
	if limit < 0 {
		leader = e.rng.IntN(n)
	}
	followers := e.picks(e.intn(0, 3), n)
	followers[leader] = false
	hits := make(tally, n)
	var leaderErr error
	for i := range n {
		err := error(&taskError{i})
		if i == leader {
			leaderErr = err
		}
		g.Go(func() error {
			hits[i]++
			switch {
			case i == leader:
				return err
			case followers[i]:
				e.mark()
				<-ctx.Done()
				return err
			}
			return nil
		})
	}
	e.started(n)
	e.mark()
	for _, which := range []string{"Wait()", "second Wait()"} {
		if err := g.Wait(); err != leaderErr {
			return fmt.Errorf("%s = %v, want the first error, %v", which, err, leaderErr)
		}
	}
	if err := hits.once("first-error"); err != nil {
		return err
	}
	return wantCause(ctx, leaderErr)
}

// severalErrors: several tasks fail at about the same time. Wait returns
// one of their errors, the same one on a second Wait, and it is the
// context's cause; every task ran.
func severalErrors(e *env) error {
	g, ctx := e.group(context.Background())
	limit := e.limit(8)
	g.SetLimit(limit)
	n := e.intn(2, 128)
	failing := e.picks(e.intn(2, 5), n)
	hits := make(tally, n)
	for i := range n {
		g.Go(func() error {
			hits[i]++
			if failing[i] {
				return &taskError{i}
			}
			return nil
		})
	}
	e.started(n)
	e.mark()
	err := g.Wait()
	var te *taskError
	if !errors.As(err, &te) || !failing[te.task] {
		return fmt.Errorf("Wait() = %v, want the error of one of the failing tasks", err)
	}
	if again := g.Wait(); again != err {
		return fmt.Errorf("second Wait() = %v, want %v again", again, err)
	}
	if err := hits.once("errors"); err != nil {
		return err
	}
	return wantCause(ctx, err)
}

// forkJoin: a recursive computation with a group per node, each with a
// limit (or none) and a context (or none) drawn per level, summing its
// leaves through plain writes into its parent's slice.
func forkJoin(e *env) error {
	depth := e.intn(1, 4)
	fan := e.intn(2, 4)
	limits := make([]int, depth+1)
	withCtx := make([]bool, depth+1)
	for d := range limits {
		limits[d] = e.limit(3)
		withCtx[d] = e.coin(2)
	}
	var node func(parent context.Context, d int) (int, error)
	node = func(parent context.Context, d int) (int, error) {
		if d == 0 {
			return 1, nil
		}
		g, ctx := newGroup(e.kind, withCtx[d], parent)
		if ctx == nil {
			ctx = parent
		}
		g.SetLimit(limits[d])
		sums := make([]int, fan)
		for c := range fan {
			g.Go(func() error {
				s, err := node(ctx, d-1)
				sums[c] = s
				return err
			})
		}
		e.started(fan)
		if d == 1 {
			e.mark()
		}
		if err := g.Wait(); err != nil {
			return 0, err
		}
		total := 0
		for _, s := range sums {
			total += s
		}
		return total, nil
	}
	got, err := node(context.Background(), depth)
	if err != nil {
		return fmt.Errorf("fork-join: %v", err)
	}
	want := 1
	for range depth {
		want *= fan
	}
	if got != want {
		return fmt.Errorf("fork-join of depth %d and fan %d counted %d leaves, want %d", depth, fan, got, want)
	}
	return nil
}

// crossGroup: each task of an outer group makes a group of its own (under
// the outer context, or none), fans out on it, waits and writes the sum;
// limits drawn for both.
func crossGroup(e *env) error {
	outer, octx := e.group(context.Background())
	if octx == nil {
		octx = context.Background()
	}
	outerLimit := e.limit(4)
	outer.SetLimit(outerLimit)
	n := e.intn(1, 8)
	sizes := make([]int, n)
	limits := make([]int, n)
	withCtx := make([]bool, n)
	for i := range n {
		sizes[i], limits[i], withCtx[i] = e.intn(1, 32), e.limit(4), e.coin(2)
	}
	sums := make([]int, n)
	for i := range n {
		outer.Go(func() error {
			inner, _ := newGroup(e.kind, withCtx[i], octx)
			inner.SetLimit(limits[i])
			parts := make([]int, sizes[i])
			for j := range parts {
				inner.Go(func() error { parts[j] = j + 1; return nil })
			}
			e.started(len(parts))
			e.mark()
			if err := inner.Wait(); err != nil {
				return err
			}
			for _, p := range parts {
				sums[i] += p
			}
			return nil
		})
	}
	e.started(n)
	if err := outer.Wait(); err != nil {
		return fmt.Errorf("outer Wait() = %v, want nil", err)
	}
	for i, s := range sums {
		if m := sizes[i]; s != m*(m+1)/2 {
			return fmt.Errorf("inner group %d summed %d, want %d", i, s, m*(m+1)/2)
		}
	}
	return nil
}

// ioLimit: tasks that sleep (as I/O waits) under a limit. Every task runs
// once, and no more than the limit at once.
func ioLimit(e *env) error {
	g, _ := e.group(context.Background())
	limit := e.intn(1, 8)
	g.SetLimit(limit)
	n := e.intn(1, 64)
	naps := make([]time.Duration, n)
	for i := range naps {
		naps[i] = time.Duration(e.rng.IntN(200)) * time.Microsecond
	}
	return fanOutAndWait(e, "io-limit", g, limit, n, func(i int) error { time.Sleep(naps[i]); return nil }, nil)
}

// chain queues on g n tasks, each of which waits for the next one to
// finish: the first task queued waits for all the others, which a pool of
// fixed size never gets to if it runs tasks in order and does not notice
// that its workers are blocked.
func chain(e *env, g adapter.Group, hits tally) {
	n := len(hits)
	tasks, _ := workload.Chain(n, func(i int) {
		if i == n-1 {
			e.mark()
		}
		hits[i]++
	})
	for _, f := range tasks {
		g.Go(f)
	}
	e.started(n)
}

// chainOutside: a chain queued and waited for by the client goroutine.
func chainOutside(e *env) error {
	g, _ := e.group(context.Background())
	hits := make(tally, e.intn(2, 32))
	chain(e, g, hits)
	if err := g.Wait(); err != nil {
		return fmt.Errorf("Wait() = %v, want nil", err)
	}
	return hits.once("chain")
}

// chainInside: a chain queued and waited for inside a task of another
// group.
func chainInside(e *env) error {
	outer, _ := e.group(context.Background())
	hits := make(tally, e.intn(2, 32))
	withCtx := e.coin(2)
	outer.Go(func() error {
		g, _ := newGroup(e.kind, withCtx, context.Background())
		chain(e, g, hits)
		return g.Wait()
	})
	e.started(1)
	if err := outer.Wait(); err != nil {
		return fmt.Errorf("Wait() = %v, want nil", err)
	}
	return hits.once("chain")
}

// tryGo: on a group with a limit, TryGo queues exactly limit tasks that
// block, then reports false; once Wait has returned, it queues again.
func tryGo(e *env) error {
	g, _ := e.group(context.Background())
	limit := e.intn(1, 8)
	g.SetLimit(limit)
	gate := make(chan struct{})
	hits := make(tally, limit+1)
	for i := range limit {
		if !g.TryGo(func() error { <-gate; hits[i]++; return nil }) {
			close(gate)
			g.Wait()
			return fmt.Errorf("TryGo number %d on a group with limit %d = false, want true", i+1, limit)
		}
	}
	e.started(limit)
	e.mark()
	extra := g.TryGo(func() error { hits[limit] += 2; return nil })
	close(gate)
	if err := g.Wait(); err != nil {
		return fmt.Errorf("Wait() = %v, want nil", err)
	}
	if extra {
		return fmt.Errorf("TryGo with %d tasks active under a limit of %d = true, want false", limit, limit)
	}
	if !g.TryGo(func() error { hits[limit]++; return nil }) {
		return errors.New("TryGo after Wait on an empty group = false, want true")
	}
	e.started(1)
	if err := g.Wait(); err != nil {
		return fmt.Errorf("second Wait() = %v, want nil", err)
	}
	return hits.once("trygo")
}

// expendable calls f on a goroutine of its own, which a task's
// runtime.Goexit may end (a Wait runs tasks on its caller's goroutine), and
// reports whether f returned.
func expendable(f func()) (returned bool) {
	done := make(chan bool, 1)
	go func() {
		ok := false
		defer func() { done <- ok }()
		f()
		ok = true
	}()
	return <-done
}

// goexitWait: some tasks call runtime.Goexit. Each ends as completed, with
// no error. On wsgroup a Goexit may end the goroutine that called Wait
// (when that Wait ran the task), and then only after every task of the
// group has ended; errgroup's Wait never runs a task, so it returns.
func goexitWait(e *env) error {
	g, _ := e.group(context.Background())
	g.SetLimit(e.limit(4))
	n := e.intn(1, 32)
	exits := e.picks(e.intn(1, 3), n)
	hits := make(tally, n)
	var ended atomic.Int64 // tasks that have ended
	var err error
	var endedAtExit int64
	returned := expendable(func() {
		defer func() { endedAtExit = ended.Load() }()
		for i := range n {
			g.Go(func() error {
				defer ended.Add(1)
				hits[i]++
				if exits[i] {
					runtime.Goexit()
				}
				return nil
			})
		}
		e.started(n)
		e.mark()
		err = g.Wait()
	})
	switch {
	case !returned && !e.ws():
		return errors.New("a task's Goexit ended the goroutine that called errgroup's Wait")
	case !returned && endedAtExit != int64(n):
		return fmt.Errorf("a task's Goexit ended the goroutine of Wait with %d of %d tasks ended, want all", endedAtExit, n)
	case returned && err != nil:
		return fmt.Errorf("Wait() = %v, want nil: Goexit ends a task as completed", err)
	}
	return hits.once("goexit")
}

// goexitNested: tasks of an outer group each wait for an inner group some
// of whose tasks call runtime.Goexit. On wsgroup a Goexit may unwind the
// outer task too (when its inner Wait ran the task), and the goroutine of
// the outer Wait, if that ran the outer task: each Wait so unwound waits
// for the rest of its group first, and an outer task so ended ends as
// completed.
func goexitNested(e *env) error {
	outer, _ := e.group(context.Background())
	n := e.intn(1, 4)
	sizes := make([]int, n)
	exits := make([][]bool, n)
	hits := make([]tally, n)
	for i := range n {
		sizes[i] = e.intn(1, 16)
		exits[i] = e.picks(e.intn(1, 2), sizes[i])
		hits[i] = make(tally, sizes[i])
	}
	waited := make([]bool, n)
	for i := range n {
		outer.Go(func() error {
			inner, _ := newGroup(e.kind, false, nil)
			for j := range sizes[i] {
				inner.Go(func() error {
					hits[i][j]++
					if exits[i][j] {
						runtime.Goexit()
					}
					return nil
				})
			}
			e.started(sizes[i])
			e.mark()
			err := inner.Wait()
			waited[i] = true
			return err
		})
	}
	e.started(n)
	var err error
	returned := expendable(func() { err = outer.Wait() })
	if !returned && !e.ws() {
		return errors.New("a task's Goexit ended the goroutine that called errgroup's Wait")
	}
	if err != nil {
		return fmt.Errorf("outer Wait() = %v, want nil", err)
	}
	for i := range n {
		if !waited[i] && !e.ws() {
			return errors.New("a task's Goexit unwound errgroup's Wait")
		}
		if err := hits[i].once(fmt.Sprintf("inner group %d", i)); err != nil {
			return err
		}
	}
	return nil
}

// cancelRunQueued: the parent of a group made by WithContext is canceled
// by one of its tasks. In the default mode every task still runs, and
// Wait returns nil: no task failed. The context's cause is the parent's.
func cancelRunQueued(e *env) error { return cancelParent(e, false) }

// cancelSkipQueued: the same in SkipQueued mode, where tasks still queued
// (or not yet submitted) when the parent is canceled are dropped. No task
// runs twice; Wait returns nil exactly when every task ran, and otherwise
// the parent's cause.
func cancelSkipQueued(e *env) error { return cancelParent(e, true) }

// cancelParent is cancelRunQueued, or with skip cancelSkipQueued (on
// wsgroup). Some tasks take a while, so that others are still queued when
// the parent is canceled.
func cancelParent(e *env, skip bool) error {
	parent, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	g, ctx := adapter.WithContext(e.kind, parent)
	if skip {
		g.(*wsgroup.Group).SetCancelMode(wsgroup.SkipQueued)
	}
	g.SetLimit(e.limit(4))
	n := e.intn(1, 256)
	at := e.rng.IntN(n)
	naps := make([]time.Duration, n)
	for i := range naps {
		if e.coin(4) {
			naps[i] = time.Duration(e.rng.IntN(50)) * time.Microsecond
		}
	}
	hits := make(tally, n)
	for i := range n {
		g.Go(func() error {
			hits[i]++
			if i == at {
				cancel(errParent)
			}
			time.Sleep(naps[i])
			return nil
		})
	}
	e.started(n)
	e.mark()
	err := g.Wait()
	if !skip {
		if err != nil {
			return fmt.Errorf("Wait() = %v, want nil: no task failed", err)
		}
		if err := hits.once("cancel-run-queued"); err != nil {
			return err
		}
		return wantCause(ctx, errParent)
	}
	ran, herr := hits.atMostOnce("cancel-skip-queued")
	if herr != nil {
		return herr
	}
	if err := wantAllOrCause("Wait()", err, ran, n); err != nil {
		return err
	}
	return wantCause(ctx, errParent)
}

// wantAllOrCause checks err, what call returned after a cancellation by
// errParent that may have kept some of n tasks (or indices) from running:
// nil exactly when all ran, and otherwise errParent, the cause.
func wantAllOrCause(call string, err error, ran, n int) error {
	if ran == n && err != nil {
		return fmt.Errorf("%s = %v with every one of %d run, want nil", call, err, n)
	}
	if ran < n && err != errParent {
		return fmt.Errorf("%s = %v with %d of %d run, want the parent's cause, %v", call, err, ran, n, errParent)
	}
	return nil
}

// panicValue is what the k-th panicking task of a run panics with: an
// error or a string, so that PanicError.Unwrap is checked both ways.
func panicValue(task int) any {
	if task%2 == 0 {
		return &taskError{task}
	}
	return fmt.Sprintf("task %d panicked", task)
}

// wantPanic checks that f panics with a *wsgroup.PanicError for one of the
// values in vals, with the given count of later panics, and returns it.
func wantPanic(what string, vals map[any]bool, later int, f func()) (*wsgroup.PanicError, error) {
	var r any
	func() {
		defer func() { r = recover() }()
		f()
	}()
	pe, ok := r.(*wsgroup.PanicError)
	if !ok {
		return nil, fmt.Errorf("%s panicked with %v (%T), want a *wsgroup.PanicError", what, r, r)
	}
	if !vals[pe.Value] {
		return nil, fmt.Errorf("%s panicked with a PanicError of %v, not a value a task panicked with", what, pe.Value)
	}
	if err, isErr := pe.Value.(error); isErr != (pe.Unwrap() != nil) || isErr && pe.Unwrap() != err {
		return nil, fmt.Errorf("%s: PanicError.Unwrap() = %v for the value %v", what, pe.Unwrap(), pe.Value)
	}
	if later >= 0 && pe.Later() != later {
		return nil, fmt.Errorf("%s: PanicError.Later() = %d, want %d", what, pe.Later(), later)
	}
	return pe, nil
}

// panicInWait: in PanicInWait mode, some tasks panic. Wait panics with a
// PanicError of one of their values once every task has returned, counts
// the others as later panics, panics again on a second Wait, and the
// context's cause is that PanicError.
func panicInWait(e *env) error {
	var g *wsgroup.Group
	var ctx context.Context
	if e.coin(2) {
		g, ctx = wsgroup.WithContext(context.Background())
	} else {
		g = new(wsgroup.Group)
	}
	g.SetPanicMode(wsgroup.PanicInWait)
	g.SetLimit(e.limit(4))
	n := e.intn(1, 64)
	k := min(e.intn(1, 3), n)
	panics := e.picks(k, n)
	vals := map[any]bool{}
	hits := make(tally, n)
	for i := range n {
		v := panicValue(i)
		if panics[i] {
			vals[v] = true
		}
		g.Go(func() error {
			hits[i]++
			if panics[i] {
				panic(v)
			}
			return nil
		})
	}
	e.started(n)
	e.mark()
	pe, err := wantPanic("Wait()", vals, k-1, func() { g.Wait() })
	if err != nil {
		return err
	}
	if err := hits.once("panic-in-wait"); err != nil {
		return err
	}
	again, err := wantPanic("second Wait()", vals, -1, func() { g.Wait() })
	if err != nil {
		return err
	}
	if again.Value != pe.Value {
		return fmt.Errorf("second Wait() panicked with %v, the first with %v", again.Value, pe.Value)
	}
	if ctx != nil {
		var cause *wsgroup.PanicError
		if !errors.As(context.Cause(ctx), &cause) || cause.Value != pe.Value {
			return fmt.Errorf("context.Cause = %v, want the PanicError of %v", context.Cause(ctx), pe.Value)
		}
	}
	return nil
}

// loops: For, ForEach or Map over a range whose bodies, now and then, run
// a nested For of their own. Every index runs once, nested ones included;
// Map's results are in place.
func loops(e *env) error {
	ctx := context.Background()
	n := e.intn(0, 5000)
	if e.coin(8) {
		n = e.intn(5000, 50000)
	}
	var opts []wsgroup.LoopOption
	if e.coin(2) {
		opts = append(opts, wsgroup.PanicInWait)
	}
	e.started(n)
	switch e.rng.IntN(3) {
	case 0:
		hits := make(tally, n)
		inner := make([]tally, n)
		for i := range inner {
			if e.coin(64) {
				inner[i] = make(tally, e.intn(0, 64))
			}
		}
		err := wsgroup.For(ctx, n, func(ctx context.Context, i int) error {
			hits[i]++
			if i == n/2 {
				e.mark()
			}
			if in := inner[i]; in != nil {
				if err := wsgroup.For(ctx, len(in), func(_ context.Context, j int) error { in[j]++; return nil }, opts...); err != nil {
					return fmt.Errorf("nested For() = %v, want nil", err)
				}
				return in.once(fmt.Sprintf("nested For in index %d", i))
			}
			return nil
		}, opts...)
		if err != nil {
			return fmt.Errorf("For() = %v, want nil", err)
		}
		return hits.once("For")
	case 1:
		s := make(tally, n)
		if err := wsgroup.ForEach(ctx, s, func(_ context.Context, x *int32) error { *x++; return nil }, opts...); err != nil {
			return fmt.Errorf("ForEach() = %v, want nil", err)
		}
		return s.once("ForEach")
	}
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	got, err := wsgroup.Map(ctx, s, func(_ context.Context, x *int) (int, error) { return 2**x + 1, nil }, opts...)
	if err != nil {
		return fmt.Errorf("Map() = %v, want nil", err)
	}
	if len(got) != n {
		return fmt.Errorf("%d results of Map for %d elements", len(got), n)
	}
	for i, r := range got {
		if r != 2*i+1 {
			return fmt.Errorf("result %d of Map = %d, want %d", i, r, 2*i+1)
		}
	}
	return nil
}

// loopErrors: a For some of whose bodies fail. For returns one of their
// errors (the only one, when one body fails), no index runs twice, and the
// bodies' context is canceled once For has returned.
func loopErrors(e *env) error {
	n := e.intn(1, 2000)
	k := min(e.intn(1, 3), n)
	failing := e.picks(k, n)
	hits := make(tally, n)
	var bodyCtx context.Context // the failing body's, when one fails
	err := wsgroup.For(context.Background(), n, func(ctx context.Context, i int) error {
		hits[i]++
		if failing[i] {
			e.mark()
			if k == 1 {
				bodyCtx = ctx // before the body returns: visible after For
			}
			return &taskError{i}
		}
		return nil
	})
	ran, herr := hits.atMostOnce("loop-errors")
	e.started(ran)
	if herr != nil {
		return herr
	}
	var te *taskError
	if !errors.As(err, &te) || !failing[te.task] {
		return fmt.Errorf("For() = %v, want the error of one of the failing indices", err)
	}
	if k == 1 && bodyCtx.Err() == nil {
		return errors.New("the bodies' context is not canceled after For returned an error")
	}
	return nil
}

// loopCancel: a For whose parent context is canceled by one of its
// bodies. No index runs twice; For returns nil exactly when every index
// ran, and otherwise the parent's cause.
func loopCancel(e *env) error {
	parent, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	n := e.intn(1, 20000)
	at := e.rng.IntN(n)
	hits := make(tally, n)
	err := wsgroup.For(parent, n, func(_ context.Context, i int) error {
		hits[i]++
		if i == at {
			e.mark()
			cancel(errParent)
		}
		return nil
	})
	ran, herr := hits.atMostOnce("loop-cancel")
	e.started(ran)
	if herr != nil {
		return herr
	}
	return wantAllOrCause("For()", err, ran, n)
}

// loopPanic: a For with the PanicInWait option, one of whose bodies
// panics, panics with a PanicError of that value; no index runs twice.
func loopPanic(e *env) error {
	n := e.intn(1, 2000)
	at := e.rng.IntN(n)
	v := panicValue(at)
	hits := make(tally, n)
	_, err := wantPanic("For()", map[any]bool{v: true}, 0, func() {
		wsgroup.For(context.Background(), n, func(_ context.Context, i int) error {
			hits[i]++
			if i == at {
				e.mark()
				panic(v)
			}
			return nil
		}, wsgroup.PanicInWait)
	})
	ran, herr := hits.atMostOnce("loop-panic")
	e.started(ran)
	if herr != nil {
		return herr
	}
	return err
}
