package wsgroup_test

// Fork-join: what errgroup cannot do. Tasks call Go on their own
// (possibly limited) group without waiting, create nested groups and Wait on
// them, and Wait on groups fed from elsewhere. With errgroup, recursive Go under
// SetLimit deadlocks; with wsgroup every one of these must complete, running
// every task exactly once.

import (
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-steal/steal/internal/testkit"
	"github.com/go-steal/steal/wsgroup"
)

// TestRecursiveGoUnderLimit: a binary tree of 2047 tasks, each task at depth
// < 10 calling g.Go twice on its own group for its children without waiting,
// under SetLimit. errgroup deadlocks here: each running task holds a slot and
// blocks in Go waiting for another.
func TestRecursiveGoUnderLimit(t *testing.T) {
	const depth = 10
	const nodes = 1<<(depth+1) - 1 // 2047, heap-numbered from 1
	for _, limit := range []int{2, 1, 3} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			rc := newRunCounts(nodes + 1)
			testkit.Guard(t, func() {
				var g wsgroup.Group
				g.SetLimit(limit)
				var node func(id, d int) func() error
				node = func(id, d int) func() error {
					return func() error {
						rc.ran(id)
						if d < depth {
							g.Go(node(2*id, d+1))
							g.Go(node(2*id+1, d+1))
						}
						return nil
					}
				}
				g.Go(node(1, 0))
				wantNil(t, "Wait()", g.Wait())
			})
			rc.check(t, 1)
		})
	}
}

func TestFibNestedGroups(t *testing.T) {
	testkit.ForProcs(t, func(t *testing.T) {
		var got int
		testkit.Guard(t, func() { got = fibGroups(20) })
		if got != 6765 {
			t.Errorf("fib(20) = %d, want 6765", got)
		}
	})
}

// TestNestedWaitInLimitOneTask: the tasks of a SetLimit(1) group each create
// a nested group, give it tasks (some of which add more tasks to it) and Wait
// on it.
func TestNestedWaitInLimitOneTask(t *testing.T) {
	const outerTasks, innerTasks = 8, 50
	rc := newRunCounts(outerTasks * innerTasks * 2)
	var outerRan atomic.Int32
	testkit.Guard(t, func() {
		var outer wsgroup.Group
		outer.SetLimit(1)
		for o := 0; o < outerTasks; o++ {
			outer.Go(func() error {
				outerRan.Add(1)
				var inner wsgroup.Group
				for i := 0; i < innerTasks; i++ {
					id := (o*innerTasks + i) * 2
					inner.Go(func() error {
						rc.ran(id)
						inner.Go(func() error { rc.ran(id + 1); return nil })
						return nil
					})
				}
				return inner.Wait()
			})
		}
		wantNil(t, "outer Wait()", outer.Wait())
	})
	if n := outerRan.Load(); n != outerTasks {
		t.Errorf("%d outer tasks ran, want %d", n, outerTasks)
	}
	rc.check(t, 0)
}

// TestReuseAfterWait: a group takes more Go, SetLimit and Wait after a Wait,
// and the first error sticks across later Waits.
func TestReuseAfterWait(t *testing.T) {
	errFirst := errors.New("wsgroup_test: first")
	errSecond := errors.New("wsgroup_test: second")
	testkit.Guard(t, func() {
		var g wsgroup.Group
		var ran atomic.Int32
		round := func(n int) {
			for i := 0; i < n; i++ {
				g.Go(func() error { ran.Add(1); return nil })
			}
		}
		expectRan := int32(0)
		wait := func(what string, want error, n int) {
			expectRan += int32(n)
			if err := g.Wait(); err != want {
				t.Errorf("%s: Wait() = %v, want %v", what, err, want)
			}
			if got := ran.Load(); got != expectRan {
				t.Errorf("%s: %d tasks ran so far, want %d", what, got, expectRan)
			}
		}

		round(10)
		wait("first round", nil, 10)

		g.SetLimit(2)
		round(20)
		wait("after SetLimit(2)", nil, 20)

		// Recursive Go under the new limit after reuse.
		g.Go(func() error {
			for i := 0; i < 5; i++ {
				g.Go(func() error { ran.Add(1); return nil })
			}
			return nil
		})
		wait("recursive round", nil, 5)

		g.Go(func() error { return errFirst })
		round(5)
		wait("round with an error", errFirst, 5)

		g.SetLimit(-1)
		round(10)
		wait("successful round after an error", errFirst, 10)

		g.SetLimit(1)
		g.Go(func() error { return errSecond })
		round(3)
		wait("round with a second error", errFirst, 3)

		wait("Wait with no new tasks", errFirst, 0)
	})
}

// TestConcurrentGoCallers: 8 goroutines call Go on one group at once.
func TestConcurrentGoCallers(t *testing.T) {
	const callers = 8
	perCaller := testkit.Scale(10000, 1000)
	testkit.ForProcs(t, func(t *testing.T) {
		for _, limit := range []int{-1, 3} {
			t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
				rc := newRunCounts(callers * perCaller)
				testkit.Guard(t, func() {
					var g wsgroup.Group
					g.SetLimit(limit)
					var wg sync.WaitGroup
					start := make(chan struct{})
					for c := 0; c < callers; c++ {
						wg.Add(1)
						go func() {
							defer wg.Done()
							<-start
							for i := 0; i < perCaller; i++ {
								id := c*perCaller + i
								g.Go(func() error { rc.ran(id); return nil })
							}
						}()
					}
					close(start)
					wg.Wait()
					wantNil(t, "Wait()", g.Wait())
				})
				rc.check(t, 0)
			})
		}
	})
}

// TestGoWhileWaiting: tasks keep calling Go on their own group while Wait is
// already waiting: a chain where each task spawns the next.
func TestGoWhileWaiting(t *testing.T) {
	const n = 1000
	chain := func(t *testing.T, g *wsgroup.Group) {
		rc := newRunCounts(n)
		var link func(i int) func() error
		link = func(i int) func() error {
			return func() error {
				rc.ran(i)
				if i+1 < n {
					g.Go(link(i + 1))
				}
				return nil
			}
		}
		g.Go(link(0))
		wantNil(t, "Wait()", g.Wait())
		rc.check(t, 0)
	}
	for _, limit := range []int{-1, 1, 2} {
		t.Run(fmt.Sprintf("top/limit=%d", limit), func(t *testing.T) {
			testkit.Guard(t, func() {
				var g wsgroup.Group
				g.SetLimit(limit)
				chain(t, &g)
			})
		})
		t.Run(fmt.Sprintf("nested/limit=%d", limit), func(t *testing.T) {
			testkit.Guard(t, func() {
				var outer wsgroup.Group
				outer.Go(func() error {
					var g wsgroup.Group
					g.SetLimit(limit)
					chain(t, &g)
					return nil
				})
				wantNil(t, "outer Wait()", outer.Wait())
			})
		})
	}
	t.Run("fan-out-while-waiting", func(t *testing.T) {
		// The first task starts many tasks which each start one more, while
		// the test goroutine is already in Wait.
		const width = 500
		rc := newRunCounts(2 * width)
		testkit.Guard(t, func() {
			var g wsgroup.Group
			g.SetLimit(2)
			proceed := make(chan struct{})
			g.Go(func() error {
				<-proceed // Wait is (most likely) already waiting
				for i := 0; i < width; i++ {
					g.Go(func() error {
						rc.ran(2 * i)
						g.Go(func() error { rc.ran(2*i + 1); return nil })
						return nil
					})
				}
				return nil
			})
			go close(proceed)
			wantNil(t, "Wait()", g.Wait())
		})
		rc.check(t, 0)
	})
}

// TestWaitOnOtherGroupFromTask: a task of one group waits on another
// top-level group (created outside any task) to which it gave tasks.
func TestWaitOnOtherGroupFromTask(t *testing.T) {
	const n = 200
	t.Run("first-Go-from-task", func(t *testing.T) {
		for _, limit := range []int{-1, 1} {
			t.Run(fmt.Sprintf("outer-limit=%d", limit), func(t *testing.T) {
				rc := newRunCounts(n)
				testkit.Guard(t, func() {
					var a, b wsgroup.Group // both created outside any task
					a.SetLimit(limit)
					a.Go(func() error {
						for i := 0; i < n; i++ {
							b.Go(func() error { rc.ran(i); return nil })
						}
						return b.Wait()
					})
					wantNil(t, "a.Wait()", a.Wait())
				})
				rc.check(t, 0)
			})
		}
	})
	t.Run("other-group-already-running", func(t *testing.T) {
		// b got its first task from outside (from the injector) and
		// is still busy when a's task adds to it and waits on it.
		rc := newRunCounts(n + 1)
		testkit.Guard(t, func() {
			var a, b wsgroup.Group
			release := make(chan struct{})
			b.Go(func() error { <-release; rc.ran(n); return nil })
			a.Go(func() error {
				for i := 0; i < n; i++ {
					b.Go(func() error { rc.ran(i); return nil })
				}
				close(release)
				return b.Wait()
			})
			wantNil(t, "a.Wait()", a.Wait())
			wantNil(t, "b.Wait()", b.Wait())
		})
		rc.check(t, 0)
	})
	t.Run("other-group-limited", func(t *testing.T) {
		// b has SetLimit(2); several tasks of a feed it at once and all
		// wait on it. A blocker
		// keeps b active until every feeder has submitted, so no Go races
		// with a Wait that could already return.
		const feeders = 4
		rc := newRunCounts(feeders * n)
		testkit.Guard(t, func() {
			var a, b wsgroup.Group
			b.SetLimit(2)
			allSubmitted := make(chan struct{})
			b.Go(func() error { <-allSubmitted; return nil })
			var submitted sync.WaitGroup
			submitted.Add(feeders)
			go func() { submitted.Wait(); close(allSubmitted) }()
			for f := 0; f < feeders; f++ {
				a.Go(func() error {
					for i := 0; i < n; i++ {
						id := f*n + i
						b.Go(func() error { rc.ran(id); return nil })
					}
					submitted.Done()
					return b.Wait()
				})
			}
			wantNil(t, "a.Wait()", a.Wait())
		})
		rc.check(t, 0)
	})
	t.Run("two-groups-feed-each-other", func(t *testing.T) {
		// A task of a feeds b, a task of b feeds a; each also waits on a
		// nested group of its own. a's first task stays active until b's
		// has fed a, so every Go happens before the Wait that covers it.
		rc := newRunCounts(4 * n)
		testkit.Guard(t, func() {
			var a, b wsgroup.Group
			bFedA := make(chan struct{})
			a.Go(func() error {
				var inner wsgroup.Group
				for i := 0; i < n; i++ {
					b.Go(func() error { rc.ran(i); return nil })
					inner.Go(func() error { rc.ran(n + i); return nil })
				}
				err := inner.Wait()
				<-bFedA
				return err
			})
			b.Go(func() error {
				var inner wsgroup.Group
				for i := 0; i < n; i++ {
					a.Go(func() error { rc.ran(2*n + i); return nil })
					inner.Go(func() error { rc.ran(3*n + i); return nil })
				}
				close(bFedA)
				return inner.Wait()
			})
			wantNil(t, "a.Wait()", a.Wait())
			wantNil(t, "b.Wait()", b.Wait())
		})
		rc.check(t, 0)
	})
}

// TestNestedLimitedTree: recursive fork-join where every node creates a
// nested group with its own limit, under SetLimit(1) on the outer group.
func TestNestedLimitedTree(t *testing.T) {
	const k, depth, roots = 3, 6, 4
	size := treeSize(k, depth) // 1093 per root
	for _, tc := range []struct {
		name         string
		nestedLimit  int
		siblingSpawn bool // children also add a sibling to their own nested group
	}{
		{"nested-limit=2", 2, false},
		{"nested-limit=1", 1, false},
		{"nested-limit=1/sibling-spawn", 1, true},
		{"nested-limit=2/sibling-spawn", 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := newRunCounts(roots * size)
			extra := newRunCounts(roots * size)
			testkit.Guard(t, func() {
				var node func(base, id, d int) error
				node = func(base, id, d int) error {
					rc.ran(base + id)
					if d == depth {
						return nil
					}
					var g wsgroup.Group
					g.SetLimit(tc.nestedLimit)
					for c := 1; c <= k; c++ {
						child := id*k + c
						g.Go(func() error {
							if tc.siblingSpawn {
								g.Go(func() error { extra.ran(base + child); return nil })
							}
							return node(base, child, d+1)
						})
					}
					return g.Wait()
				}
				var outer wsgroup.Group
				outer.SetLimit(1)
				for r := 0; r < roots; r++ {
					outer.Go(func() error { return node(r*size, 0, 0) })
				}
				wantNil(t, "outer Wait()", outer.Wait())
			})
			rc.check(t, 0)
			if tc.siblingSpawn {
				// Every node except the roots was spawned with a sibling.
				want := int64(roots * (size - 1))
				if got := extra.total.Load(); got != want {
					t.Errorf("%d sibling tasks ran, want %d", got, want)
				}
				for r := 0; r < roots; r++ {
					for i := 1; i < size; i++ {
						if n := extra.counts[r*size+i].Load(); n != 1 {
							t.Errorf("sibling of node %d/%d ran %d times, want 1", r, i, n)
						}
					}
				}
			}
		})
	}
}

// TestTryGoInsideTask: TryGo from a task on its own limited group reports
// false exactly when the group's active tasks (the caller included) have
// reached the limit. Deterministic: the spawned tasks block until the
// calling task has made all its calls.
func TestTryGoInsideTask(t *testing.T) {
	for _, limit := range []int{1, 2, 3, 5} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			var results []bool
			var childRan atomic.Int32
			testkit.Guard(t, func() {
				var g wsgroup.Group
				g.SetLimit(limit)
				release := make(chan struct{})
				g.Go(func() error {
					defer close(release)
					// limit-1 calls fit beside the caller; the next two
					// must be refused.
					for i := 0; i < limit+1; i++ {
						results = append(results, g.TryGo(func() error {
							<-release
							childRan.Add(1)
							return nil
						}))
					}
					return nil
				})
				wantNil(t, "Wait()", g.Wait())
				// Nothing is active any more: TryGo from outside succeeds.
				if !g.TryGo(func() error { return nil }) {
					t.Errorf("TryGo after Wait = false, want true")
				}
				g.Wait()
			})
			for i, ok := range results {
				want := i < limit-1
				if ok != want {
					t.Errorf("TryGo #%d from a task under SetLimit(%d) = %v, want %v", i, limit, ok, want)
				}
			}
			if n := childRan.Load(); n != int32(limit-1) {
				t.Errorf("%d accepted tasks ran, want %d", n, limit-1)
			}
		})
	}
	t.Run("no-limit", func(t *testing.T) {
		var refused atomic.Int32
		testkit.Guard(t, func() {
			var g wsgroup.Group
			g.Go(func() error {
				for i := 0; i < 100; i++ {
					if !g.TryGo(func() error { return nil }) {
						refused.Add(1)
					}
				}
				return nil
			})
			wantNil(t, "Wait()", g.Wait())
		})
		if n := refused.Load(); n != 0 {
			t.Errorf("TryGo with no limit refused %d times, want 0", n)
		}
	})
}

// stressNode is a node of a random spawn tree laid out breadth first: the
// children of a node are the consecutive nodes first .. first+n-1.
type stressNode struct {
	first, n int32
	mode     uint8 // 0: children on the caller's group; 1: on a nested group; 2: both
	limit    int8  // the nested group's limit (-1: none)
}

func genStressTree(seed int64, total int) []stressNode {
	r := rand.New(rand.NewSource(seed))
	nodes := make([]stressNode, total)
	next := 1
	for i := 0; i < total && next < total; i++ {
		k := r.Intn(5)
		if k == 0 && i == next-1 {
			k = 1 // the last known node must keep the tree growing
		}
		k = min(k, total-next)
		nodes[i] = stressNode{
			first: int32(next),
			n:     int32(k),
			mode:  uint8(r.Intn(3)),
			limit: int8(r.Intn(4)),
		}
		if nodes[i].limit == 0 {
			nodes[i].limit = -1
		}
		next += k
	}
	if next != total {
		panic("stress tree generation did not reach every node")
	}
	return nodes
}

var errStress = errors.New("wsgroup_test: stress root error")

// runStressTree runs the tree from its root on top and checks that every node
// ran exactly once. With rootErr, the root returns errStress after spawning:
// the other tasks must still all run (cancellation is cooperative).
func runStressTree(t *testing.T, nodes []stressNode, top *wsgroup.Group, rootErr bool) {
	rc := newRunCounts(len(nodes))
	testkit.Guard(t, func() {
		var run func(g *wsgroup.Group, i int32) error
		run = func(g *wsgroup.Group, i int32) error {
			rc.ran(int(i))
			nd := &nodes[i]
			var h *wsgroup.Group
			if nd.n > 0 && nd.mode != 0 {
				h = new(wsgroup.Group)
				h.SetLimit(int(nd.limit))
			}
			for c := nd.first; c < nd.first+nd.n; c++ {
				target := g
				if nd.mode == 1 || (nd.mode == 2 && c%2 == 0) {
					target = h
				}
				target.Go(func() error { return run(target, c) })
			}
			var err error
			if h != nil {
				err = h.Wait()
			}
			if i == 0 && rootErr && err == nil {
				err = errStress
			}
			return err
		}
		top.Go(func() error { return run(top, 0) })
		want := error(nil)
		if rootErr {
			want = errStress
		}
		if err := top.Wait(); err != want {
			t.Errorf("Wait() = %v, want %v", err, want)
		}
	})
	rc.check(t, 0)
}

// TestStressRandomTree: a random recursive spawn tree mixing nested groups
// (with random limits) and Go on the caller's own group.
func TestStressRandomTree(t *testing.T) {
	total := testkit.Scale(200000, 20000)
	seed := int64(1)
	testkit.ForProcs(t, func(t *testing.T) {
		for _, tc := range []struct {
			name     string
			topLimit int
			rootErr  bool
		}{
			{"top-no-limit", -1, false},
			{"top-limit=2", 2, false},
			{"with-context-error", 3, true},
		} {
			seed++
			nodes := genStressTree(seed, total)
			t.Run(tc.name, func(t *testing.T) {
				t.Logf("seed %d, %d tasks", seed, total)
				top, _ := wsgroup.WithContext(t.Context())
				if !tc.rootErr {
					top = new(wsgroup.Group)
				}
				top.SetLimit(tc.topLimit)
				runStressTree(t, nodes, top, tc.rootErr)
			})
		}
	})
}
