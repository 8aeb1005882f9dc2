package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync/atomic"

	"github.com/go-steal/steal/adapter"
)

// env is what one run of a scenario works with: the implementation under
// test, a random source seeded by the run's seed, and what the run counts.
//
// rng belongs to the client goroutine that runs the scenario: tasks run on
// other goroutines, so a scenario draws every choice its tasks need before
// it starts them.
type env struct {
	kind  adapter.Kind
	rng   *rand.Rand
	tasks atomic.Int64 // tasks and loop bodies the run started

	// solo is set while the scenario runs alone in the process, for the
	// report's peak goroutines: then mark samples the goroutine count.
	solo bool
	peak maxGauge
}

func newEnv(kind adapter.Kind, seed uint64) *env {
	return &env{kind: kind, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// ws reports whether the run is on wsgroup.
func (e *env) ws() bool { return e.kind == adapter.Wsgroup }

// intn returns a number in [lo, hi].
func (e *env) intn(lo, hi int) int { return lo + e.rng.IntN(hi-lo+1) }

// coin reports true with probability 1/n.
func (e *env) coin(n int) bool { return e.rng.IntN(n) == 0 }

// limit returns no limit (-1) half the time, and otherwise a limit in
// [1, hi].
func (e *env) limit(hi int) int {
	if e.coin(2) {
		return -1
	}
	return e.intn(1, hi)
}

// maxFan bounds a fan-out on each implementation. errgroup's is lower:
// it starts a goroutine per task, and the race detector allows no more
// than 8128 goroutines at once, which the clients together must stay
// under.
func (e *env) maxFan() int {
	if e.ws() {
		return 4096
	}
	return 256
}

// fan returns the size of a fan-out: mostly a few tasks, as a request
// handler has, sometimes hundreds, now and then thousands.
func (e *env) fan() int {
	switch r := e.rng.IntN(20); {
	case r < 14:
		return e.intn(1, 16)
	case r < 19 || e.maxFan() <= 256:
		return e.intn(17, 256)
	}
	return e.intn(257, e.maxFan())
}

// picks returns k distinct indices of [0, n) as a set.
func (e *env) picks(k, n int) []bool {
	set := make([]bool, n)
	for _, i := range e.rng.Perm(n)[:min(k, n)] {
		set[i] = true
	}
	return set
}

// group returns a new group of the implementation under test: a zero
// group half the time (ctx is then nil), one made by WithContext(parent)
// the other half.
func (e *env) group(parent context.Context) (adapter.Group, context.Context) {
	return newGroup(e.kind, e.coin(2), parent)
}

func newGroup(k adapter.Kind, withContext bool, parent context.Context) (adapter.Group, context.Context) {
	if !withContext {
		return adapter.New(k), nil
	}
	return adapter.WithContext(k, parent)
}

// started counts n tasks started by the run.
func (e *env) started(n int) { e.tasks.Add(int64(n)) }

// mark samples the number of goroutines, when the run is alone in the
// process. Scenarios call it where they are widest: after their last Go,
// and in tasks that block.
func (e *env) mark() {
	if e.solo {
		e.peak.see(int64(runtime.NumGoroutine()))
	}
}

// tally counts the runs of each of n tasks in plain memory. Each task
// writes only its own element, so it is the Wait that waits for the tasks
// that makes their writes visible to the check after it (the race detector
// reports a Wait that does not), and a task run twice leaves a 2.
type tally []int32

// once checks that every task ran exactly once.
func (t tally) once(what string) error {
	for i, v := range t {
		if v != 1 {
			return fmt.Errorf("%s: task %d of %d ran %d times, want once", what, i, len(t), v)
		}
	}
	return nil
}

// atMostOnce checks that no task ran twice, and returns how many ran.
func (t tally) atMostOnce(what string) (int, error) {
	ran := 0
	for i, v := range t {
		if v > 1 {
			return ran, fmt.Errorf("%s: task %d of %d ran %d times, want at most once", what, i, len(t), v)
		}
		ran += int(v)
	}
	return ran, nil
}

// maxGauge keeps the largest value it has seen.
type maxGauge struct{ v atomic.Int64 }

func (m *maxGauge) see(x int64) {
	for old := m.v.Load(); x > old && !m.v.CompareAndSwap(old, x); old = m.v.Load() {
	}
}

func (m *maxGauge) load() int64 { return m.v.Load() }

// running counts the tasks of a group that execute at once, and the most
// that ever did.
type running struct {
	now  atomic.Int64
	most maxGauge
}

func (r *running) enter() { r.most.see(r.now.Add(1)) }
func (r *running) leave() { r.now.Add(-1) }

// within checks that no more than limit tasks executed at once (any number
// when limit < 0).
func (r *running) within(limit int) error {
	if m := r.most.load(); limit >= 0 && m > int64(limit) {
		return fmt.Errorf("%d tasks executed at once, over the limit of %d", m, limit)
	}
	return nil
}
