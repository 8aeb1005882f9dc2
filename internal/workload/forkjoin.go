package workload

import (
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"
)

// Group is the part of the errgroup API that the fork-join workloads use.
type Group interface {
	Go(f func() error)
	Wait() error
}

// InlineGroup runs each task at once on the caller's goroutine, in Go: the
// floor of a workload's shape, what its own code (closures, captured
// results, a group per fork) costs without any scheduling. Its size matches
// wsgroup.Group's (32 bytes: TestInlineGroupSize), so it allocates the
// same. SetLimit does nothing; the zero value is ready to use.
type InlineGroup struct {
	err error
	_   [16]byte // a wsgroup.Group: a 64-bit state word, a 64-bit limit and two pointers
}

// Go calls f and keeps its error if it is the first.
func (g *InlineGroup) Go(f func() error) {
	if err := f(); err != nil && g.err == nil {
		g.err = err
	}
}

// SetLimit does nothing: at most one task is ever active.
func (g *InlineGroup) SetLimit(int) {}

// Wait returns the first error of a task.
func (g *InlineGroup) Wait() error { return g.err }

// Fib computes fib(n) with a new group per call for n >= 2 (Go(fib(n-1)),
// Go(fib(n-2)), Wait) and returns the value and the number of tasks (Go
// calls) made in its subtree. The task count travels through the results,
// so a task that never ran shows up as a wrong count, without a shared
// counter that would add contention.
func Fib(newGroup func() Group, n int) (val, tasks int, err error) {
	if n < 2 {
		return n, 0, nil
	}
	g := newGroup()
	var a, b, ta, tb int
	g.Go(func() (err error) { a, ta, err = Fib(newGroup, n-1); return })
	g.Go(func() (err error) { b, tb, err = Fib(newGroup, n-2); return })
	if err := g.Wait(); err != nil {
		return 0, 0, err
	}
	return a + b, ta + tb + 2, nil
}

// FibSerial is the plain recursion, with the task count Fib would report.
func FibSerial(n int) (val, tasks int) {
	if n < 2 {
		return n, 0
	}
	a, ta := FibSerial(n - 1)
	b, tb := FibSerial(n - 2)
	return a + b, ta + tb + 2
}

// FibExpected returns fib(n) and the number of tasks Fib makes for n,
// without running it: calls(n) = 2*fib(n+1) - 1, and every call but the
// root is a task.
func FibExpected(n int) (val, tasks int) {
	f0, f1 := 0, 1
	for range n {
		f0, f1 = f1, f0+f1
	}
	return f0, 2*f1 - 2
}

// RandomInts returns n pseudo-random ints from seed.
func RandomInts(n int, seed uint64) []int {
	r := rand.New(rand.NewPCG(seed, seed^0x9E3779B97F4A7C15))
	a := make([]int, n)
	for i := range a {
		a[i] = r.Int()
	}
	return a
}

// Quicksort sorts a with a new group per split: the two halves of each
// partition are sorted by two tasks, down to cutoff elements, below which
// it sorts serially (slices.Sort). It returns the number of tasks made.
func Quicksort(newGroup func() Group, a []int, cutoff int) (tasks int, err error) {
	if len(a) <= cutoff {
		slices.Sort(a)
		return 0, nil
	}
	p := Partition(a)
	g := newGroup()
	var tl, tr int
	g.Go(func() (err error) { tl, err = Quicksort(newGroup, a[:p], cutoff); return })
	g.Go(func() (err error) { tr, err = Quicksort(newGroup, a[p+1:], cutoff); return })
	if err := g.Wait(); err != nil {
		return 0, err
	}
	return tl + tr + 2, nil
}

// QuicksortSerial is Quicksort without groups: the same partitions and
// cutoff, the halves sorted one after the other.
func QuicksortSerial(a []int, cutoff int) {
	if len(a) <= cutoff {
		slices.Sort(a)
		return
	}
	p := Partition(a)
	QuicksortSerial(a[:p], cutoff)
	QuicksortSerial(a[p+1:], cutoff)
}

// Partition partitions a (len(a) >= 3) around the median of its first,
// middle and last elements (Lomuto) and returns the pivot's final index:
// the elements before it are smaller than the pivot, those after it are
// not. Quicksort, QuicksortSerial and examples/quicksort split with it.
func Partition(a []int) int {
	n := len(a)
	m := n / 2
	// Median of three into a[n-1].
	if a[m] < a[0] {
		a[m], a[0] = a[0], a[m]
	}
	if a[n-1] < a[0] {
		a[n-1], a[0] = a[0], a[n-1]
	}
	if a[m] < a[n-1] {
		a[m], a[n-1] = a[n-1], a[m]
	}
	pivot := a[n-1]
	i := 0
	for j := 0; j < n-1; j++ {
		if a[j] < pivot {
			a[i], a[j] = a[j], a[i]
			i++
		}
	}
	a[i], a[n-1] = a[n-1], a[i]
	return i
}

// Costs returns n per-task cost multipliers between 1 and 100 for an
// imbalanced batch: cost grows with the index as a cube (1 + 100·(i/n)³,
// capped at 100), so most tasks are cheap, the last few cost up to 100
// times as much, and about half are below 13. A static split into equal
// contiguous chunks gives the last chunk most of the work (with two
// chunks, about 95% of it); a runtime that balances load does not care
// where the work sits.
func Costs(n int) []int {
	c := make([]int, n)
	for i := range c {
		x := float64(i) / float64(n)
		c[i] = min(100, 1+int(100*x*x*x))
	}
	return c
}

// Sleepers gives g n tasks that each sleep d and then add one to ran, and
// waits for them: the blocking fan-out that errgroup serves with a
// goroutine per task.
func Sleepers(g Group, n int, d time.Duration, ran *atomic.Int64) error {
	for range n {
		g.Go(func() error {
			time.Sleep(d)
			ran.Add(1)
			return nil
		})
	}
	return g.Wait()
}
