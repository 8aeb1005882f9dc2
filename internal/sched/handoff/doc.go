// Package handoff is the scheduler's policy for workers that stop making
// progress: when the slot of a worker stuck in a task goes to another
// goroutine, who decides it, and how soon. The scheduler (package sched)
// keeps the mechanism: the slots, detaching one, starting workers. It
// marks where each worker is, a task's start and end, in a Slot record
// this package owns (Slot.Enter, Slot.Leave: one plain store each, the
// owner's store of package atomic, and none when a nested task ends), and
// answers the few questions of the Pool interface.
//
// # Why
//
// errgroup runs every task at once, so its users write tasks that block:
// on I/O, on a channel that a later task closes, on ctx.Done() until a
// ninth task fails. On a pool of GOMAXPROCS workers a blocked task holds
// its worker, and the tasks queued behind it wait; with every worker
// blocked, programs that are correct under errgroup would stall. So a
// worker found stuck is handed on: detached (it stops counting against
// GOMAXPROCS, and its queued tasks move to where others find them), and
// another goroutine starts in its place at once, a parked spare if there
// is one (Spares). When its task returns, the detached worker takes queued
// tasks one at a time, as errgroup's goroutines would run them, and leaves
// when it finds none.
//
// # Who looks
//
// Posters: a Go that finds the pool saturated (no worker idle, no room to
// start one) calls Handoff.Saturated, which checks the workers on one such
// post in checkEvery, at most once per blockedGap for the whole pool, so
// that detection does not wait for a monitor to get a CPU beside busy
// goroutines. The monitor (monitor.go): a goroutine that runs only while
// the pool is saturated, and every tick (watchTick) samples each worker's
// seq, as the runtime's sysmon samples each P's, fills the pool up to its
// capacity, and applies the detectors and the bounds.
//
// # Stood still
//
// Every detector starts from the same fact: the worker has stood still in
// one task. A Slot's still mark holds since when any looker has seen its
// occupant in the current task (its seq, which moves with every task); a
// worker between tasks, in the scheduler's own code, is never stuck.
//
// # The detectors, at once
//
//   - Known blocked (status.go), where package gstatus has proven the
//     layout of the runtime's goroutine records: two reads of the worker
//     goroutine's status at least blockedGap apart (syscallGap for a
//     system call) both found it blocked in the same task. Running,
//     runnable and waiting for the collector never count.
//   - Proven off the CPU (counts.go), where statuses are not read: the
//     runtime's counts of running and runnable goroutines prove that at
//     least k of the workers that stood still for stillGap are neither,
//     outside the collector's marking and its stops.
//
// # The ramp
//
// When a check hands one on and finds every other attached worker
// blocked (or off the CPU) too, the queued tasks are likely to block as
// well: it starts a worker for each queued task at once (Handoff.ramp), as
// errgroup would have, instead of one hand-off per check. Where the counts
// cannot prove the attached workers off the CPU (the CPUs are busy with
// other goroutines), the workers handed on before are evidence: once they
// stand still in their tasks and the counts prove them off the CPU, the
// monitor ramps up too (monitor.rampOnEvidence).
//
// # The bounds, without proof
//
// A worker the detectors cannot call blocked is handed on by the monitor
// when every attached worker has stood still: after unprovenWait where
// statuses are not read and the counts show it off a processor
// (monitor.boundOffProc), and after runWait in any case (monitor.boundLong),
// but not while the collector marks. A long CPU-bound task is the Go
// scheduler's to time-slice, but a task that spins until a queued task
// runs, or waits where nothing counts as blocked, must not hold its slot
// for ever.
//
// # The progress guarantee
//
// A task queued behind a worker that is blocked waits about one monitor
// tick, or one saturated post, for another worker; where statuses are not
// read, one check once the counts prove the worker off the CPU, and at
// most unprovenWait or runWait otherwise. It depends on no global sample,
// only on the monitor's ticks (which come late when every P runs a
// goroutine that does not block) and on the posts. CPU-bound tasks start
// one after another, so their workers' seqs move and the pool does not
// grow past GOMAXPROCS.
//
// # A blocked task's slot, step by step
//
//  1. The task blocks. Its worker's Slot says it is in a task (an odd seq,
//     stored by Slot.Enter when the task started) and does not move.
//  2. A Go that finds the pool saturated calls Handoff.Saturated, which
//     checks the workers (Handoff.check); or the monitor's next tick does
//     (monitor.tickStatus, monitor.tickFallback). The worker's still mark
//     ages; a detector finds it blocked, or off the CPU, or a bound
//     passes.
//  3. Handoff.handOn asks the scheduler to detach it (Pool.HandOn: in
//     sched, Pool.detach, which takes it out of the scan set and moves its
//     deque's tasks into the injector) and to start a worker in its place
//     (Pool.StartUpTo: sched's spawn, on the spare that parked last,
//     Spares.Assign, or a new goroutine). If every other worker is stuck
//     too, it ramps up (Handoff.ramp).
//  4. The new worker takes the queued tasks, the blocked worker's among
//     them, from the injector.
//  5. When the blocked task returns, its worker, still detached, takes
//     queued tasks one at a time and, finding none, leaves its slot to
//     wait as a spare (Spares.Wait) for the next one.
//
// # Where things are
//
// slot.go: the Slot record and its marks. handoff.go: the Pool interface,
// Handoff (the state), the posters' check, the hand-off and the ramp.
// status.go and counts.go: the two detectors. monitor.go: the monitor's
// loop, pace and life; bounds.go: its hand-offs. spares.go: the parked
// goroutines. params.go: every constant that tunes the above (the rule is
// in the scheduler's params.go). probe.go: the seams to the real runtime,
// which the interleaving explorer replaces (probe_explore.go).
package handoff
