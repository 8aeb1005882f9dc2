package wsgroup_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/go-steal/steal/internal/workload"
	"github.com/go-steal/steal/wsgroup"
)

// BenchmarkForkJoinNode: one fork-join node, a new group, two Go of
// functions that do nothing and a Wait, made again and again inside one
// task, ns/op. With procs=1 (GOMAXPROCS 1) nobody steals: the cost of a
// node whose tasks its own worker pops back. With procs=2 a second worker,
// idle, steals what it can: the cost of a node at the leaves of a tree
// that has run out of parallelism. impl=inline is the same node on a group
// that runs each function at once (the node's own cost: its group and its
// closures).
//
// GOMAXPROCS is set inside each row: the testing package sets it again
// before each -count run of a row.
func BenchmarkForkJoinNode(b *testing.B) {
	var sink, nodes int
	node := func(g workload.Group) {
		nodes++
		var x, y int
		g.Go(func() error { x = 1; return nil })
		g.Go(func() error { y = 2; return nil })
		if err := g.Wait(); err != nil {
			b.Error(err)
		}
		sink += x + y
	}
	for _, procs := range []int{1, 2} {
		b.Run(fmt.Sprintf("procs=%d/impl=wsgroup", procs), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			b.ReportAllocs()
			// The loop runs in a task, on a worker. Not outer.Wait, which
			// would run the task itself, outside the pool.
			var outer wsgroup.Group
			done := make(chan struct{})
			outer.Go(func() error {
				defer close(done)
				for b.Loop() {
					node(new(wsgroup.Group))
				}
				return nil
			})
			<-done
			if err := outer.Wait(); err != nil {
				b.Fatal(err)
			}
		})
		b.Run(fmt.Sprintf("procs=%d/impl=inline", procs), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			b.ReportAllocs()
			for b.Loop() {
				node(new(workload.InlineGroup))
			}
		})
	}
	if sink != 3*nodes || nodes == 0 {
		b.Fatalf("%d nodes summed to %d, want 3 each", nodes, sink)
	}
}
