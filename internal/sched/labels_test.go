package sched

import (
	"context"
	"fmt"
	"runtime/pprof"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/go-steal/steal/internal/gid"
	"github.com/go-steal/steal/internal/gstatus"
)

// Profiler labels: a task wears the labels of the goroutine that called
// Go while it runs, wherever it runs (a worker, a helping Wait, a Wait
// outside the pool, a loop), and the goroutine that ran it wears its own
// afterwards. The tasks compare the labels they wear (getProfLabel, the
// pointer the profiler reads) with the ones their submitter wore.

// labelCheck counts the tasks that wore the labels they should and those
// that did not.
type labelCheck struct{ ok, wrong atomic.Int64 }

// task returns a task that checks that it wears want.
func (c *labelCheck) task(want unsafe.Pointer) func() error {
	return func() error {
		c.see(want)
		return nil
	}
}

func (c *labelCheck) see(want unsafe.Pointer) {
	if gstatus.Labels() == want {
		c.ok.Add(1)
	} else {
		c.wrong.Add(1)
	}
}

// want fails t unless exactly n tasks were checked, all with the right
// labels.
func (c *labelCheck) want(t *testing.T, what string, n int64) {
	t.Helper()
	if ok, wrong := c.ok.Load(), c.wrong.Load(); wrong != 0 || ok != n {
		t.Errorf("%s: %d tasks wore their submitter's labels and %d did not; want all %d", what, ok, wrong, n)
	}
}

// labelled runs f on the calling goroutine under the labels "k"=v, and
// passes f the pointer the goroutine wears then.
func labelled(v string, f func(labels unsafe.Pointer)) {
	labelledIn(context.Background(), v, func(_ context.Context, l unsafe.Pointer) { f(l) })
}

// labelledIn is labelled in a pprof.Do with parent ctx (which the
// goroutine wears again when it returns), passing f the Do's context too.
func labelledIn(ctx context.Context, v string, f func(ctx context.Context, labels unsafe.Pointer)) {
	pprof.Do(ctx, pprof.Labels("k", v), func(ctx context.Context) {
		f(ctx, gstatus.Labels())
	})
}

func labelTasks() int {
	if testing.Short() {
		return 300
	}
	return 3000
}

// TestLabelsFromOutside: tasks given by goroutines outside the pool, two
// label sets at once, and the tasks given by an unlabelled goroutine
// after them, under no limit and under a limit (Go then waits for a slot
// outside the pool). With one processor the submitter fills the injector
// before a worker runs, so the workers take it in batches.
func TestLabelsFromOutside(t *testing.T) {
	n := labelTasks()
	forProcs(t, []int{1, 2, 4, 8}, func(t *testing.T, _ int) {
		for _, limit := range []int{-1, 2} {
			var a, b, none labelCheck
			var g Group
			g.SetLimit(limit)
			done := make(chan struct{})
			go func() {
				defer close(done)
				labelled("b", func(lb unsafe.Pointer) {
					for range n {
						g.Go(b.task(lb))
					}
				})
			}()
			labelled("a", func(la unsafe.Pointer) {
				for range n {
					g.Go(a.task(la))
				}
				<-done
				wantNil(t, "g.Wait()", g.Wait())
				if gstatus.Labels() != la {
					t.Errorf("limit %d: the waiting goroutine does not wear its own labels after Wait", limit)
				}
			})
			a.want(t, fmt.Sprintf("limit %d, labels a", limit), int64(n))
			b.want(t, fmt.Sprintf("limit %d, labels b", limit), int64(n))
			// The workers ran the labelled tasks: none may keep their
			// labels for these.
			for range n {
				g.Go(none.task(nil))
			}
			wantNil(t, "g.Wait()", g.Wait())
			none.want(t, fmt.Sprintf("limit %d, no labels", limit), int64(n))
		}
	})
}

// TestLabelsInsideTasks: a task's own Go gives its subtasks the labels
// the task wears at that moment: its submitter's, or those of a pprof.Do
// inside it. The subtasks run on workers or in the task's own Wait (with
// one processor, all of them there), which then wears the task's labels
// again, as do the tasks that ran before on its worker. A limited group's
// subtasks set aside at the limit keep theirs too.
func TestLabelsInsideTasks(t *testing.T) {
	n := labelTasks() / 10
	forProcs(t, []int{1, 2, 4}, func(t *testing.T, _ int) {
		var outer, inherited, inDo, after labelCheck
		var g Group
		labelled("a", func(la unsafe.Pointer) {
			for range 10 {
				g.Go(func() error {
					outer.see(la)
					var sub Group
					sub.SetLimit(2)
					for range n {
						sub.Go(inherited.task(la))
					}
					wantNil(t, "sub.Wait()", sub.Wait())
					after.see(la)
					labelled("c", func(lc unsafe.Pointer) {
						for range n {
							sub.Go(inDo.task(lc))
						}
						wantNil(t, "sub.Wait()", sub.Wait())
						after.see(lc)
					})
					return nil
				})
			}
		})
		wantNil(t, "g.Wait()", g.Wait())
		outer.want(t, "tasks", 10)
		inherited.want(t, "subtasks given under the task's labels", int64(10*n))
		inDo.want(t, "subtasks given in a pprof.Do", int64(10*n))
		after.want(t, "tasks after their Wait", 20)
	})
}

// TestLabelsDoNotOutliveTask: whatever labels a task wears when it ends,
// its submitter's or its own (pprof.SetGoroutineLabels), the goroutine
// that ran it takes them off: the next task, given by an unlabelled
// goroutine, wears none, and so do the subtasks of an unlabelled task,
// which run on the workers of the labelled ones.
func TestLabelsDoNotOutliveTask(t *testing.T) {
	n := labelTasks()
	forProcs(t, []int{1, 2, 4}, func(t *testing.T, _ int) {
		var g Group
		ctx := pprof.WithLabels(context.Background(), pprof.Labels("k", "set"))
		labelled("a", func(unsafe.Pointer) {
			for i := range n {
				g.Go(func() error {
					if i%2 == 0 {
						pprof.SetGoroutineLabels(ctx)
					}
					return nil
				})
			}
		})
		wantNil(t, "g.Wait()", g.Wait())
		var none labelCheck
		for range n / 10 {
			g.Go(func() error {
				none.see(nil)
				var sub Group
				for range 10 {
					sub.Go(none.task(nil))
				}
				return sub.Wait()
			})
		}
		wantNil(t, "g.Wait()", g.Wait())
		none.want(t, "unlabelled tasks", int64(n/10*11))
	})
}

// TestLabelsOutsideWait: a Wait outside the pool that runs its group's
// tasks wears each task's labels while it runs, and its own again
// afterwards, also after a task that set labels of its own. With one
// processor the Wait takes its tasks back before a worker runs unless the
// test goroutine loses the processor first: rounds, each one checked, go
// on until one in which a task ran on the goroutine of Wait.
func TestLabelsOutsideWait(t *testing.T) {
	onOneProc(t, func() {
		untilBuilt(t, "a task ran on the goroutine of Wait", func() bool { return labelsOutsideWaitRound(t) })
	})
}

// labelsOutsideWaitRound makes one round of TestLabelsOutsideWait and
// reports whether a task ran on the goroutine of Wait.
func labelsOutsideWaitRound(t *testing.T) bool {
	t.Helper()
	me := gid.Current()
	var c labelCheck
	var here atomic.Int64
	var g Group
	ctx := pprof.WithLabels(context.Background(), pprof.Labels("k", "set"))
	const k = 20
	labelledIn(context.Background(), "w", func(ctxW context.Context, lw unsafe.Pointer) {
		labelledIn(ctxW, "a", func(_ context.Context, la unsafe.Pointer) {
			for range k {
				g.Go(func() error {
					if gid.Current() == me {
						here.Add(1)
					}
					c.see(la)
					pprof.SetGoroutineLabels(ctx)
					return nil
				})
			}
		})
		wantNil(t, "g.Wait()", g.Wait())
		if gstatus.Labels() != lw {
			t.Errorf("the goroutine of Wait wears other labels than its own after running tasks")
		}
	})
	c.want(t, "tasks", k)
	return here.Load() != 0
}

// TestLabelsLoop: a loop's bodies wear the labels of the loop's caller,
// on every worker that takes part.
func TestLabelsLoop(t *testing.T) {
	n := labelTasks() * 10
	forProcs(t, []int{1, 2, 4}, func(t *testing.T, _ int) {
		var c labelCheck
		labelled("a", func(la unsafe.Pointer) {
			err := For(context.Background(), n, func(context.Context, int) error {
				c.see(la)
				return nil
			}, nil)
			wantNil(t, "For", err)
		})
		c.want(t, "bodies", int64(n))
	})
}

// TestLabelsBlockedTask: a task that gives subtasks and then blocks
// outside the scheduler (on a channel that only its subtasks close) has
// its worker's place handed on, and the subtasks, stolen from its deque
// or moved to the injector, run elsewhere wearing the labels they were
// given under; the blocked task wears its own when it goes on.
func TestLabelsBlockedTask(t *testing.T) {
	forProcs(t, []int{1, 2}, func(t *testing.T, _ int) {
		const k = 16
		var subs, blocked labelCheck
		var g Group
		labelledIn(context.Background(), "a", func(ctxA context.Context, la unsafe.Pointer) {
			g.Go(func() error {
				release := make(chan struct{})
				var left atomic.Int64
				left.Store(k)
				labelledIn(ctxA, "b", func(_ context.Context, lb unsafe.Pointer) {
					var sub Group
					for range k {
						sub.Go(func() error {
							subs.see(lb)
							if left.Add(-1) == 0 {
								close(release)
							}
							return nil
						})
					}
					<-release
					blocked.see(lb)
					wantNil(t, "sub.Wait()", sub.Wait())
				})
				blocked.see(la)
				return nil
			})
		})
		wantNil(t, "g.Wait()", g.Wait())
		subs.want(t, "subtasks of a blocked task", k)
		blocked.want(t, "the blocked task", 2)
	})
}
