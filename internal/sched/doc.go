// Package sched is wsgroup's runtime: pools of worker goroutines with
// per-worker deques, an injector queue for tasks from outside, work
// stealing, the groups' counts, limits and waiting (helping), the
// compensation of blocked workers (the watchdog), the opt-in failure
// modes, and data-parallel loops.
//
// The files each hold one part: pool.go (a pool's workers: start, retire,
// shut down), worker.go (the run loop, finding, stealing, running and
// accounting a task, helping in a Wait), injector.go (the outside queue),
// group.go (a group's count, limit, waiting and parking), failure.go
// (errors, recovered panics, skipped tasks), watchdog.go (blocked-worker
// compensation), task.go (task records), loop.go (a data-parallel loop as a group of
// range-stealing tasks over package ranges), panic.go (ending the program for a
// task's panic), params.go (the tunable parameters), probe.go (what the
// interleaving explorer of package explore sees: empty in a normal build).
package sched
