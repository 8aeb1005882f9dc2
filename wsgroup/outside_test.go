package wsgroup_test

// Tasks run on a goroutine that is not a worker: Wait called outside any
// task (by a request's own goroutine), and Go on a full limited group, may
// run the group's own queued tasks on the caller's goroutine. Whatever
// they do, the caller must see errgroup's behaviour: tasks that wait for
// each other complete, every task runs once, a Go on the task's own full
// group sets it aside instead of waiting for itself, and no other group's
// task ever runs on the caller's goroutine. A task's nested Wait helps
// the same way and runs only its own group's tasks too. The crash of a
// panic in a task that a Wait runs is tested with the other crashes
// (TestPanicChild), a Goexit there with the other Goexits
// (TestGoexitInTaskRunByWaiter).

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-steal/steal/internal/gid"
	"github.com/go-steal/steal/internal/testkit"
	"github.com/go-steal/steal/wsgroup"
)

// TestWaitOutsideRunsOwnTasks: a goroutine that submits a few tasks and
// waits runs some of them itself. Fails if Wait outside the pool only
// parks (every task would run on a worker), and if it runs a task twice or
// loses one (the counts).
func TestWaitOutsideRunsOwnTasks(t *testing.T) {
	const requests, k = 2000, 4
	var onWaiter, ran atomic.Int64
	testkit.Guard(t, func() {
		me := gid.Current()
		for range requests {
			var g wsgroup.Group
			for range k {
				g.Go(func() error {
					ran.Add(1)
					if gid.Current() == me {
						onWaiter.Add(1)
					}
					return nil
				})
			}
			if err := g.Wait(); err != nil {
				t.Errorf("Wait() = %v", err)
			}
		}
	})
	if got := ran.Load(); got != requests*k {
		t.Errorf("%d tasks ran, want %d", got, requests*k)
	}
	t.Logf("%d of %d tasks ran on the waiting goroutine", onWaiter.Load(), requests*k)
	if onWaiter.Load() == 0 {
		t.Errorf("no task ran on the goroutine that waited: Wait outside the pool did not help")
	}
}

// TestRecursionUnderLimitOnWaiter: tasks of a SetLimit(1) group call Go on
// their own group, and the goroutine that waits runs them. A task running
// on the waiter holds the one slot, so its Go must follow the rule for Go
// inside a task (set the task aside until a slot frees) instead of waiting for a slot: if
// it waited, the waiter would wait for itself.
func TestRecursionUnderLimitOnWaiter(t *testing.T) {
	testkit.ForProcs(t, func(t *testing.T) {
		for _, limit := range []int{1, 2} {
			var ran atomic.Int64
			testkit.Guard(t, func() {
				for range 100 {
					var g wsgroup.Group
					g.SetLimit(limit)
					g.Go(binaryTree(&g, &ran, 0, 5))
					if err := g.Wait(); err != nil {
						t.Errorf("Wait() = %v", err)
					}
				}
			})
			if got, want := ran.Load(), int64(100*63); got != want {
				t.Errorf("limit %d: %d tasks ran, want %d", limit, got, want)
			}
		}
	})
}

// goroutineID returns the calling goroutine's id: internal/gid's fast read
// when gid has checked it against runtime.Stack at start-up, and otherwise
// the id parsed from runtime.Stack here.
func goroutineID() int64 {
	if gid.Trusted() {
		return gid.Current()
	}
	var buf [64]byte
	s := strings.TrimPrefix(string(buf[:runtime.Stack(buf[:], false)]), "goroutine ")
	if i := strings.IndexByte(s, ' '); i > 0 {
		s = s[:i]
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		panic("wsgroup test: no goroutine id in runtime.Stack: " + err.Error())
	}
	return id
}

// goroutineStack returns the stack of goroutine id as runtime.Stack shows
// it, or "" if there is no such goroutine.
func goroutineStack(id int64) string {
	prefix := fmt.Sprintf("goroutine %d [", id)
	for _, s := range strings.Split(string(testkit.Stacks()), "\n\n") {
		if strings.HasPrefix(s, prefix) {
			return s
		}
	}
	return ""
}

// waitFrame is how a call of Group.Wait shows in a stack.
const waitFrame = "wsgroup.(*Group).Wait("

// awaitInWait returns once goroutine id is inside Group.Wait (blocked, or
// running its group's tasks).
func awaitInWait(t testing.TB, id int64) {
	t.Helper()
	testkit.WaitUntil(t, "the goroutine is in Group.Wait", func() bool {
		return strings.Contains(goroutineStack(id), waitFrame)
	})
}

// A waitingShape is a group whose tasks wait for each other, as errgroup
// allows, waited for from outside. run builds it, waits, and checks that
// Wait returned nil and every task ran exactly once.
type waitingShape struct {
	name string
	run  func(t *testing.T)
}

// waitingShapes: a chain in which each task waits for the next one
// queued; a first task waiting for the last of many; a task released by a
// task that another task queues from inside; and a task released by a
// task queued from another goroutine while the caller is already in Wait.
var waitingShapes = []waitingShape{
	{"chain", func(t *testing.T) {
		const n = 32
		rc := newRunCounts(n)
		done := make([]chan struct{}, n)
		for i := range done {
			done[i] = make(chan struct{})
		}
		var g wsgroup.Group
		for i := range n {
			g.Go(func() error {
				rc.ran(i)
				if i+1 < n {
					<-done[i+1]
				}
				close(done[i])
				return nil
			})
		}
		wantNil(t, "Wait()", g.Wait())
		rc.check(t, 0)
	}},
	{"first-waits-for-last", func(t *testing.T) {
		const n = 64
		rc := newRunCounts(n)
		last := make(chan struct{})
		var g wsgroup.Group
		for i := range n {
			g.Go(func() error {
				rc.ran(i)
				switch i {
				case 0:
					<-last
				case n - 1:
					close(last)
				}
				return nil
			})
		}
		wantNil(t, "Wait()", g.Wait())
		rc.check(t, 0)
	}},
	{"released-from-inside", func(t *testing.T) {
		const n = 16
		rc := newRunCounts(n + 1)
		ch := make(chan struct{})
		var g wsgroup.Group
		g.Go(func() error { rc.ran(0); <-ch; return nil })
		for i := 1; i < n; i++ {
			g.Go(func() error {
				rc.ran(i)
				if i == n/2 {
					g.Go(func() error { rc.ran(n); close(ch); return nil })
				}
				return nil
			})
		}
		wantNil(t, "Wait()", g.Wait())
		rc.check(t, 0)
	}},
	{"go-while-waiting", func(t *testing.T) {
		rc := newRunCounts(2)
		ch := make(chan struct{})
		var g wsgroup.Group
		g.Go(func() error { rc.ran(0); <-ch; return nil })
		caller := make(chan int64, 1)
		waited := make(chan error, 1)
		go func() {
			caller <- goroutineID()
			waited <- g.Wait()
		}()
		awaitInWait(t, <-caller)
		// The group is active (its first task is blocked), so Go may be
		// called while Wait waits.
		g.Go(func() error { rc.ran(1); close(ch); return nil })
		if err := <-waited; err != nil {
			t.Errorf("Wait() = %v, want nil", err)
		}
		rc.check(t, 0)
	}},
}

// TestOutsideWaitBlockingTasks runs each of waitingShapes a number of
// times at GOMAXPROCS 1 to 8. The tasks are queued just before Wait, so a
// Wait that runs its own group's tasks is likely to find some queued
// (with one P, none has started yet).
//
// It catches a Wait that runs a blocking task of its group on the
// caller's goroutine while it holds tasks it has taken but not started (a
// batch taken from a queue, a local list), so that the task they would
// release never runs; a Wait that takes a blocking task while the
// releasing one sits where no worker looks; a Go that races with a Wait
// already parked (go-while-waiting) and is not seen; and a scheduler that
// does not add workers when its workers block. Each also checks that every
// task ran exactly once.
func TestOutsideWaitBlockingTasks(t *testing.T) {
	rounds := testkit.Scale(20, 4)
	for _, sh := range waitingShapes {
		t.Run(sh.name, func(t *testing.T) {
			testkit.ForProcs(t, func(t *testing.T) {
				testkit.Guard(t, func() {
					for range rounds {
						sh.run(t)
						if t.Failed() {
							return
						}
					}
				})
			})
		})
	}
}

// TestOutsideWaitRunsNoForeignTask: a goroutine X waits from outside on a
// group A whose one task is blocked (and, in one variant, whose other
// tasks were queued just before, which X may run itself), and stays in
// Wait while other goroutines run many other groups (tasks queued from
// outside and from inside their tasks, with nested groups). Every one of
// those tasks records the goroutine it runs on: none may be X. X is seen
// to be inside Wait (by its stack) before the other groups start, and
// still there when they are done.
//
// It catches a Wait called outside the pool that helps by running whatever
// is queued, as a worker does: with errgroup, and with wsgroup as
// documented, Wait runs no other group's task, and code relies on it (the
// caller may hold a lock that the other task takes, or the other task may
// wait for something the caller does after its Wait returns).
func TestOutsideWaitRunsNoForeignTask(t *testing.T) {
	testkit.ForProcs(t, func(t *testing.T) {
		for _, own := range []int{0, 64} {
			t.Run(fmt.Sprintf("own-queued=%d", own), func(t *testing.T) {
				testkit.Guard(t, func() { waitRunsNoForeignTask(t, own) })
			})
		}
	})
}

// waitRunsNoForeignTask is one run of TestOutsideWaitRunsNoForeignTask,
// with own tasks of A queued before X's Wait.
func waitRunsNoForeignTask(t *testing.T, own int) {
	var a wsgroup.Group
	release := make(chan struct{})
	free := sync.OnceFunc(func() { close(release) })
	t.Cleanup(free) // if the test fails before it releases them
	started := make(chan struct{})
	a.Go(func() error { close(started); <-release; return nil })
	<-started
	var ownRan atomic.Int32
	for range own {
		a.Go(func() error { ownRan.Add(1); busy(); return nil })
	}
	caller := make(chan int64, 1)
	waited := make(chan error, 1)
	go func() {
		caller <- goroutineID()
		waited <- a.Wait()
	}()
	x := <-caller
	awaitInWait(t, x)

	loaders, perLoader := testkit.Scale(8, 4), testkit.Scale(40, 10)
	const tasks, nested = 16, 4
	var ran, foreign atomic.Int64
	record := func() {
		ran.Add(1)
		if goroutineID() == x {
			foreign.Add(1)
		}
	}
	testkit.Parallel(loaders, func(int) {
		for range perLoader {
			var b wsgroup.Group
			for range tasks {
				b.Go(func() error { record(); return nil })
			}
			b.Go(func() error {
				record()
				var h wsgroup.Group
				for range nested {
					h.Go(func() error { record(); return nil })
				}
				b.Go(func() error { record(); return nil })
				return h.Wait()
			})
			if err := b.Wait(); err != nil {
				t.Errorf("Wait() of another group = %v, want nil", err)
			}
		}
	})
	if !strings.Contains(goroutineStack(x), waitFrame) {
		t.Errorf("goroutine %d left a.Wait while a's first task was still blocked", x)
	}
	free()
	if err := <-waited; err != nil {
		t.Errorf("a.Wait() = %v, want nil", err)
	}
	if want := int64(loaders * perLoader * (tasks + nested + 2)); ran.Load() != want {
		t.Errorf("%d tasks of the other groups ran, want %d", ran.Load(), want)
	}
	if n := foreign.Load(); n != 0 {
		t.Errorf("%d tasks of other groups ran on goroutine %d, which was blocked in a.Wait", n, x)
	}
	if got := ownRan.Load(); got != int32(own) {
		t.Errorf("%d of a's %d queued tasks ran, want all", got, own)
	}
}

// TestWaitDoesNotRunForeignTasks: a task queues a task that waits for
// something the first task does only after its nested Wait returns. errgroup
// runs it on its own goroutine; a Wait that helped by running any queued
// task would pick it up (newest first) on top of the waiting task's stack
// and never return. wsgroup's Wait runs only its own group's tasks.
func TestWaitDoesNotRunForeignTasks(t *testing.T) {
	testkit.ForProcs(t, func(t *testing.T) {
		testkit.Guard(t, func() {
			var g wsgroup.Group
			g.Go(func() error {
				ch := make(chan struct{})
				var inner wsgroup.Group
				inner.Go(func() error { time.Sleep(time.Millisecond); return nil })
				g.Go(func() error { <-ch; return nil })
				if err := inner.Wait(); err != nil {
					return err
				}
				close(ch)
				return nil
			})
			wantNil(t, "Wait()", g.Wait())
		})
	})
}
