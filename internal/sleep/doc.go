// Package sleep puts idle workers to sleep and wakes them without losing a wake-up.
//
// It implements a jobs-event-counter (JEC) protocol, after the design of
// Rayon's rayon-core/src/sleep. All the shared state lives in one 64-bit
// word (see [Counters]): the JEC, the number of inactive workers (searching
// for work or asleep) and the number of sleeping workers.
//
// # The protocol
//
// A worker that runs out of work calls [Sleep.StartLooking] once, then
// searches for work in a loop. After each fruitless search it calls
// [Sleep.NoWorkFound], which does one of three things, depending on how many
// rounds the worker has already searched:
//
//  1. the first [Rounds] times: return, so the worker searches again, at
//     once for the first [SpinRounds] (when GOMAXPROCS > 1), then after
//     yielding the processor (through the runtime's global run queue the
//     first time, then to the goroutines queued on the processor, waking
//     no thread: Idle.yield). Only one worker at a time makes these
//     rounds (the spinner), and for at most [SpinFor]; any
//     other worker, and a worker whose sleep a wake-up ended but whose
//     search found nothing, goes straight to step 2. These rules only
//     shorten the search, so the argument below does not depend on them;
//  2. once: announce sleepiness by making the JEC even (if it is odd) and
//     remember its value, then yield and return, so the worker makes one
//     last search;
//  3. then: sleep, but only if the JEC still has the remembered value, which
//     proves that no job was announced since the last search began.
//
// A worker that finds work calls [Sleep.WorkFound].
//
// Whoever makes a job visible to idle workers (a push onto a worker's deque,
// or onto the pool's injector) calls [Sleep.NewInternalJobs] or
// [Sleep.NewInjectedJobs] after the push. If the JEC is even (a worker is
// getting sleepy) the poster makes it odd, which stops that worker from
// falling asleep; then, if workers are sleeping, it wakes some. When the JEC
// is already odd and nobody sleeps, posting costs one atomic load: a poster
// that makes that load itself ([Sleep.Load]) and finds the counters
// [Counters.Calm] need not call NewInternalJobs at all.
//
// # Why no wake-up is lost
//
// Go's atomic operations are sequentially consistent, so all the loads and
// read-modify-writes on the counters word and on the queues' indices fall
// into one total order. Take a worker W that sleeps and a job J posted by P.
// P pushes J, then reads the counters. W announces sleepiness (JEC even),
// then searches, then adds itself as a sleeper with a compare-and-swap that
// requires the JEC to be unchanged.
//
//   - If P's read of the counters comes before W's announcement, then P's
//     push comes before it too, and W's last search, which follows the
//     announcement, finds J.
//   - Otherwise P sees the JEC even (or a later value) and increments it,
//     unless it sees W already registered as a sleeper. If the increment
//     comes first, W's compare-and-swap fails and W does not sleep; if W's
//     registration comes first, P sees a sleeper and wakes one. Any worker it
//     wakes searches again and finds J.
//
// The JEC is 32 bits wide; if it were to wrap around to exactly the value W
// remembered, W's check would pass wrongly. A final look at the injector
// after registering as a sleeper closes that hole for injected jobs; an
// internal job is pushed by a running worker, which will run it itself.
package sleep
