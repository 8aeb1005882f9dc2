package wsgroup_test

// SetLimit: how many of a group's tasks run at once, changing the limit,
// and a Go inside a task on a full group, which sets its task aside until
// a slot frees instead of blocking as errgroup's Go would.

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/go-steal/steal/internal/testkit"
	"github.com/go-steal/steal/wsgroup"
)

// TestLimitBoundsConcurrency: under SetLimit(n) no more than n of the
// group's tasks execute at once (a task counts from its first to its last
// instruction, including while it waits on a nested group).
func TestLimitBoundsConcurrency(t *testing.T) {
	for _, limit := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			check := func(t *testing.T, what string, tr *concTracker) {
				t.Helper()
				if m := tr.max.Load(); m > int32(limit) {
					t.Errorf("%s: %d tasks executed at once under SetLimit(%d)", what, m, limit)
				}
				if c := tr.cur.Load(); c != 0 {
					t.Errorf("%s: %d tasks still executing after Wait", what, c)
				}
			}

			t.Run("flat", func(t *testing.T) {
				var tr concTracker
				rc := newRunCounts(300)
				testkit.Guard(t, func() {
					var g wsgroup.Group
					g.SetLimit(limit)
					for i := 0; i < 300; i++ {
						g.Go(func() error {
							tr.enter()
							defer tr.exit()
							rc.ran(i)
							busy()
							return nil
						})
					}
					wantNil(t, "Wait()", g.Wait())
				})
				check(t, "flat", &tr)
				rc.check(t, 0)
			})

			// A binary tree on one group: every task calls Go for its
			// children while it executes.
			recursiveTree := func(g *wsgroup.Group, tr *concTracker, rc *runCounts, depth int) {
				var node func(id, d int) func() error
				node = func(id, d int) func() error {
					return func() error {
						tr.enter()
						defer tr.exit()
						rc.ran(id)
						if d < depth {
							g.Go(node(2*id, d+1))
							busy()
							g.Go(node(2*id+1, d+1))
						}
						busy()
						return nil
					}
				}
				g.Go(node(1, 0))
			}
			const depth = 9 // 1023 tasks

			t.Run("recursive", func(t *testing.T) {
				var tr concTracker
				rc := newRunCounts(1 << (depth + 1))
				testkit.Guard(t, func() {
					var g wsgroup.Group
					g.SetLimit(limit)
					recursiveTree(&g, &tr, rc, depth)
					wantNil(t, "Wait()", g.Wait())
				})
				check(t, "recursive", &tr)
				rc.check(t, 1)
			})

			t.Run("recursive-nested-limited", func(t *testing.T) {
				// Several limited groups, each created inside a task of an
				// unlimited group (so their tasks are pushed on workers), each running a
				// recursive tree.
				const groups = 4
				trs := make([]concTracker, groups)
				rcs := make([]*runCounts, groups)
				for i := range rcs {
					rcs[i] = newRunCounts(1 << (depth + 1))
				}
				testkit.Guard(t, func() {
					var outer wsgroup.Group
					for i := 0; i < groups; i++ {
						outer.Go(func() error {
							var g wsgroup.Group
							g.SetLimit(limit)
							recursiveTree(&g, &trs[i], rcs[i], depth)
							return g.Wait()
						})
					}
					wantNil(t, "outer Wait()", outer.Wait())
				})
				for i := range trs {
					check(t, fmt.Sprintf("nested group %d", i), &trs[i])
					rcs[i].check(t, 1)
				}
			})

			// The group's tasks Wait on nested groups of their own while more
			// of the group's tasks are queued: a task that waits still counts
			// as executing, so a worker that helps while it waits must not
			// start more of this group's tasks than the limit allows.
			nestedWaits := func(t *testing.T, recursive bool) {
				const tasks = 60
				var tr concTracker
				rc := newRunCounts(2 * tasks)
				var nestedRan atomic.Int32
				testkit.Guard(t, func() {
					var g wsgroup.Group
					g.SetLimit(limit)
					body := func(id int) error {
						tr.enter()
						defer tr.exit()
						rc.ran(id)
						var h wsgroup.Group
						for j := 0; j < 8; j++ {
							h.Go(func() error { nestedRan.Add(1); busy(); return nil })
						}
						return h.Wait()
					}
					for i := 0; i < tasks; i++ {
						if recursive {
							// The second task is added from inside the first.
							g.Go(func() error {
								g.Go(func() error { return body(2*i + 1) })
								return body(2 * i)
							})
						} else {
							g.Go(func() error { return body(2 * i) })
							g.Go(func() error { return body(2*i + 1) })
						}
					}
					wantNil(t, "Wait()", g.Wait())
				})
				check(t, "tasks waiting on nested groups", &tr)
				rc.check(t, 0)
				if n := nestedRan.Load(); n != 2*tasks*8 {
					t.Errorf("%d nested tasks ran, want %d", n, 2*tasks*8)
				}
			}
			t.Run("nested-waits", func(t *testing.T) { nestedWaits(t, false) })
			t.Run("nested-waits-recursive", func(t *testing.T) { nestedWaits(t, true) })
		})
	}
}

// TestNegativeLimit: a negative limit removes a previous limit.
func TestNegativeLimit(t *testing.T) {
	testkit.Guard(t, func() {
		var g wsgroup.Group
		g.SetLimit(1)
		g.SetLimit(-1)
		release := make(chan struct{})
		const n = 64
		for i := 0; i < n; i++ {
			if !g.TryGo(func() error { <-release; return nil }) {
				t.Errorf("TryGo #%d with no limit = false, want true", i)
				break
			}
		}
		close(release)
		wantNil(t, "Wait()", g.Wait())
	})
}

// TestSetLimitNegativeWhileRunning: errgroup lets SetLimit(-1) remove the
// limit while tasks run. The task admitted under the old limit must still
// release its slot, or a later limit would park tasks forever.
func TestSetLimitNegativeWhileRunning(t *testing.T) {
	testkit.Guard(t, func() {
		var g wsgroup.Group
		g.SetLimit(1)
		started, release := make(chan struct{}), make(chan struct{})
		g.Go(func() error { close(started); <-release; return nil })
		<-started
		g.SetLimit(-1)
		close(release)
		if err := g.Wait(); err != nil {
			t.Fatalf("Wait() = %v", err)
		}
		g.SetLimit(1)
		ran := make(chan struct{})
		g.Go(func() error { close(ran); return nil })
		if err := g.Wait(); err != nil {
			t.Fatalf("second Wait() = %v", err)
		}
		select {
		case <-ran:
		default:
			t.Fatal("the task after SetLimit(-1) then SetLimit(1) did not run")
		}
	})
}

// TestSetLimitWhileActivePanics: SetLimit with tasks active panics with an
// error value that says how many were seen, with a limit or without one
// (errgroup panics only with one), and the group stays usable.
func TestSetLimitWhileActivePanics(t *testing.T) {
	for _, c := range []struct{ limit, active int }{{4, 1}, {4, 2}, {-1, 1}} {
		active := c.active
		t.Run(fmt.Sprintf("limit=%d/active=%d", c.limit, active), func(t *testing.T) {
			testkit.Guard(t, func() {
				var g wsgroup.Group
				g.SetLimit(c.limit) // -1: no limit, where errgroup would not panic
				release := make(chan struct{})
				for i := 0; i < active; i++ {
					g.Go(func() error { <-release; return nil })
				}
				v, panicked := testkit.Recover(func() { g.SetLimit(8) })
				close(release)
				wantNil(t, "Wait()", g.Wait())
				if !panicked {
					t.Errorf("SetLimit with %d active tasks did not panic", active)
					return
				}
				err, ok := v.(error)
				if !ok {
					t.Errorf("SetLimit panicked with %T %v, want an error value", v, v)
					return
				}
				want := fmt.Sprintf("%smodify limit while %d goroutines in the group are still active", panicPrefix, active)
				if err.Error() != want {
					t.Errorf("SetLimit panicked with %q, want %q", err.Error(), want)
				}
				// The group is still usable, and SetLimit is allowed again
				// once nothing is active.
				if _, panicked := testkit.Recover(func() { g.SetLimit(8) }); panicked {
					t.Errorf("SetLimit after Wait panicked")
				}
				runTasks(t, &g, 16, func() {})
			})
		})
	}
}

// A Go inside a task on a full limited group starts its task only after a
// task of the group has ended, as errgroup's blocking Go does, so a later
// task may wait for an earlier one. Here the second task waits for the
// cancellation that the first task's error causes; with a limit of one it
// must not take the slot before the first has run: a Go that queued the
// second task where it ran first would deadlock.
func TestLimitInTaskKeepsOrder(t *testing.T) {
	errA := errors.New("a")
	testkit.ForProcs(t, func(t *testing.T) {
		for _, limit := range []int{1, 2} {
			testkit.Guard(t, func() {
				var outer wsgroup.Group
				outer.Go(func() error {
					g, ctx := wsgroup.WithContext(context.Background())
					g.SetLimit(limit)
					for range limit {
						g.Go(func() error { return errA })
					}
					// Each of these waits for an earlier task's error.
					for range limit {
						g.Go(func() error { <-ctx.Done(); return nil })
					}
					return g.Wait()
				})
				if err := outer.Wait(); err != errA {
					t.Errorf("limit %d: Wait returned %v, want %v", limit, err, errA)
				}
			})
			// The same with a channel that the first task closes.
			testkit.Guard(t, func() {
				var outer wsgroup.Group
				outer.Go(func() error {
					var g wsgroup.Group
					g.SetLimit(limit)
					ch := make(chan struct{})
					g.Go(func() error { close(ch); return nil })
					for range limit {
						g.Go(func() error { <-ch; return nil })
					}
					return g.Wait()
				})
				if err := outer.Wait(); err != nil {
					t.Errorf("limit %d: Wait returned %v", limit, err)
				}
			})
		}
	})
}
