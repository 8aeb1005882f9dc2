// Package wsgroup is golang.org/x/sync/errgroup on a work-stealing runtime.
//
// Change the import path, and the package name where it is spelled out:
//
//	import "golang.org/x/sync/errgroup"          // before
//	import errgroup "github.com/go-steal/steal/wsgroup" // after, or rename uses
//
// The API is errgroup's: [Group], [WithContext], [Group.Go],
// [Group.TryGo], [Group.SetLimit] and [Group.Wait], with the same
// documented behaviour. What changes is where the functions run.
//
// # How tasks run
//
// errgroup starts a goroutine per Go call. wsgroup runs the functions on a
// small set of reused worker goroutines, a pool: at most GOMAXPROCS of
// them, or n after SetLimit(n) with n below GOMAXPROCS. Workers are started
// on demand, when a task is queued and no worker is idle to take it.
//
//   - A Go called on a worker goroutine (that is, inside a task) pushes the
//     task onto that worker's own deque: no lock, no goroutine created.
//     The worker runs its newest task first, which keeps recursive work
//     cache-hot.
//   - A Go called anywhere else queues the task on the pool's injector,
//     from which workers take batches.
//   - An idle worker takes from its own deque, then the injector, then
//     steals the oldest task of a randomly chosen other worker (the oldest
//     task of a recursive computation is the biggest piece of it).
//   - A worker with nothing to do searches a few rounds, then sleeps; a new
//     task wakes it (see internal/sleep for the protocol and why no
//     wake-up is lost).
//
// # Nested groups and helping
//
// A Group whose first Go is called inside a task shares the pool of the
// worker that called it. Its Wait, called inside a task, does not block the
// worker: the worker runs queued tasks (its own first) until the group's
// tasks are done, and sleeps only when there is nothing to run. Recursive
// fork-join with a Group per level therefore runs on the fixed set of
// workers, without a goroutine per task and without deadlock.
//
// A Group whose first Go is called outside any task owns a new pool. When
// its Wait returns, the pool's workers have exited: no goroutine of the
// group remains (goleak.VerifyNone passes right after Wait), unless tasks of
// nested groups that nobody waited for are still running; those workers
// leave once idle. Idle workers of a pool whose group is never waited for
// leave after a few milliseconds.
//
// A Wait called outside the pool blocks without spinning.
//
// # Limits
//
// SetLimit(n) keeps errgroup's meaning: at most n of the group's tasks are
// active (queued or running), a Go from outside the pool blocks while n are
// active, and TryGo reports false then. A pool owned by a limited group has
// at most n workers. Inside a task, a Go on a limited group never
// deadlocks: on the group that owns the pool the task is queued even above
// the limit (only n workers run them, so at most n run at once); on a
// nested limited group the calling worker runs queued tasks until a slot
// frees. So recursion under SetLimit, which deadlocks with errgroup,
// completes. A task waiting in a nested Wait still counts as running for
// its group's limit: a helping worker does not start a further task of a
// group that is at its limit.
//
// # Memory model
//
// The call of Go (or of a TryGo that reports true) synchronizes before the
// start of the function it passes. The return of each function passed to Go
// synchronizes before the return of the Wait that waits for it. The first
// non-nil error is recorded before the group's context is canceled with it.
//
// # Zero value
//
// The zero Group is valid, has no limit, and does not cancel on error. A
// Group may be used again after Wait; its first error sticks. A Group must
// not be copied after first use (go vet reports copies).
//
// # Differences from errgroup
//
//   - Concurrency without a limit is GOMAXPROCS, not one goroutine per
//     task: tasks that block waiting for each other can stall a pool whose
//     workers are all blocked. (Adding workers when every worker is blocked
//     is the next step of this package's roadmap; see migrate.md.)
//   - A task's runtime.Goexit (for example t.FailNow in a test) ends the
//     worker goroutine that ran it; see migrate.md for the current state.
//   - Inside a task, Go on a limited group does not block (see Limits).
//   - Tasks run on worker goroutines: goroutine-specific state, such as
//     pprof labels set by the caller of Go, is not carried into the task.
//   - Misuse panics at the call site with a message that starts with
//     "wsgroup:": Go(nil), TryGo(nil), methods on a nil *Group, and SetLimit
//     while tasks are active (the last as errgroup does, as an error value).
package wsgroup
