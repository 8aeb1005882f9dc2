// TestLinearizability checks that the deque is linearizable: that every
// history recorded from concurrent goroutines can be explained by some order
// of its operations, consistent with real time, in which each operation
// takes effect at one instant and behaves as the sequential specification
// below says. This covers the race between Pop and the thieves for the last
// item, races between thieves, growth and shrinking of the ring and the lazy
// allocation of a zero Deque's ring, in the normal and the Retain mode.
//
// The specification. The state is the sequence of the items in the deque,
// from the oldest (top) to the newest (bottom).
//
//   - Push(x) appends x at the bottom.
//   - Pop returns the bottom item and removes it, or nil if the deque is
//     empty. (Pop also returns nil when it loses the last item to a thief;
//     that linearizes as a Pop of the empty deque right after the Steal.)
//   - PopIf(keep) is Pop if the bottom item satisfies keep; otherwise, or if
//     the deque is empty, it returns nil and changes nothing.
//   - Steal returns the top item and removes it, with retry false. A nil
//     with retry false means the deque was empty. A nil with retry true is a
//     lost race: it linearizes as an attempt that changes nothing, whatever
//     the state. A non-nil item with retry true is never allowed.
//   - StealIf(keep) is Steal if the top item satisfies keep; if it does not,
//     it returns nil with retry false and changes nothing.
//
// Every item is pushed once, so an item returned twice, an item returned
// out of order, and (because the owner drains the deque at the end of each
// history) an item lost by the deque all make a history illegal.
//
// How histories are recorded. An owner goroutine and three thieves record
// many short histories, one per round, each on a fresh deque: New(2), whose
// ring grows several times and shrinks again within a history, or the zero
// Deque. In each round the owner pushes (in bursts), pops and pop-ifs at
// random, then pops until Pop returns nil; meanwhile each thief steals and
// steal-ifs, up to a few times, mostly while the deque looks non-empty.
// The four goroutines meet at a spinning barrier at the start of every
// round, so that their operations overlap. Each operation gets a Call
// timestamp from a shared atomic counter just before it starts and a Return
// timestamp just after it ends. The counter is a logical clock that
// respects real time (an operation that ends before another starts gets a
// smaller Return than the other's Call), which is all linearizability
// checking needs. A history has a few dozen operations, so porcupine
// decides it in well under a millisecond; a check that times out fails the
// test as an illegal history does. All this runs with GOMAXPROCS 1, 2, 4 and
// 8, each for at most a fixed number of histories or a time budget.
//
// What this does not verify. It samples the interleavings that the Go
// scheduler and the hardware happen to produce and proves nothing about
// the others (the explore tests enumerate small programs exhaustively): a
// bug whose window is a few instructions wide, such as Pop loading top
// before it stores bottom, is unlikely to show up here. The owner's
// operations are serialized by construction, so misuse of the owner-only
// methods is not exercised. Only the items that operations return are
// checked, not the contents of the ring's slots: whether taken items are
// cleared for the garbage collector is checked by the other tests. Len and
// Cap are not part of the histories. A panic inside the deque (its checks
// for an empty slot) crashes the test binary rather than failing the test.
// A data race that never changes a returned value goes unnoticed unless
// the test runs under the race detector.

package deque

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/go-steal/steal/internal/testkit"
)

// linKind is the kind of a recorded operation.
type linKind uint8

const (
	linPush linKind = iota
	linPop
	linPopIf
	linSteal
	linStealIf
)

// linInput is the input of an operation. Item ids start at 1.
type linInput struct {
	kind linKind
	item int // the pushed item, for linPush
}

// linOutput is the output of an operation: the id of the item returned (0
// for nil), and Steal's and StealIf's retry.
type linOutput struct {
	item  int
	retry bool
}

// linKeep is the predicate that PopIf and StealIf are called with, on item
// ids; the specification applies the same one.
func linKeep(id int) bool { return id%3 != 0 }

// linID is the id of x, or 0 for nil.
func linID(x *int) int {
	if x == nil {
		return 0
	}
	return *x
}

// linModel is the sequential specification of the deque. A state is a
// []int of item ids, oldest first. Step never modifies the state it is
// given (porcupine keeps old states for backtracking and in its cache): it
// returns a new slice for every state it changes.
var linModel = porcupine.Model{
	Init: func() any { return []int(nil) },
	Step: linStep,
	Equal: func(a, b any) bool {
		return slices.Equal(a.([]int), b.([]int))
	},
	Hash: func(state any) uint64 {
		h := uint64(14695981039346656037) // FNV-1a over the ids
		for _, x := range state.([]int) {
			h = (h ^ uint64(x)) * 1099511628211
		}
		return h
	},
	DescribeOperation: func(input, output any) string {
		return linDescribe(input.(linInput), output.(linOutput))
	},
	DescribeState: func(state any) string {
		return fmt.Sprint(state.([]int))
	},
}

// linStep is the specification of one operation: whether it may return
// output in state, and the state it leaves.
func linStep(state, input, output any) (bool, any) {
	s := state.([]int)
	in := input.(linInput)
	out := output.(linOutput)
	switch in.kind {
	case linPush:
		next := make([]int, len(s)+1)
		copy(next, s)
		next[len(s)] = in.item
		return true, next
	case linPop, linPopIf:
		if out.retry {
			return false, s
		}
		if out.item == 0 {
			// Empty, or (PopIf) the newest item is not wanted.
			empty := len(s) == 0
			return empty || in.kind == linPopIf && !linKeep(s[len(s)-1]), s
		}
		if len(s) == 0 || s[len(s)-1] != out.item || in.kind == linPopIf && !linKeep(out.item) {
			return false, s
		}
		return true, slices.Clone(s[:len(s)-1])
	case linSteal, linStealIf:
		if out.item == 0 {
			if out.retry {
				return true, s // a lost race changes nothing
			}
			// Empty, or (StealIf) the oldest item is not wanted.
			empty := len(s) == 0
			return empty || in.kind == linStealIf && !linKeep(s[0]), s
		}
		if out.retry || len(s) == 0 || s[0] != out.item || in.kind == linStealIf && !linKeep(out.item) {
			return false, s
		}
		return true, slices.Clone(s[1:])
	}
	panic(fmt.Sprintf("unknown operation kind %d", in.kind))
}

func linDescribe(in linInput, out linOutput) string {
	var call string
	switch in.kind {
	case linPush:
		return fmt.Sprintf("Push(%d)", in.item)
	case linPop:
		call = "Pop()"
	case linPopIf:
		call = "PopIf()"
	case linSteal:
		call = "Steal()"
	case linStealIf:
		call = "StealIf()"
	}
	item := "nil"
	if out.item != 0 {
		item = fmt.Sprint(out.item)
	}
	switch in.kind {
	case linSteal, linStealIf:
		return fmt.Sprintf("%s = %s, %v", call, item, out.retry)
	}
	return fmt.Sprintf("%s = %s", call, item)
}

// linFormat lists the operations of history in the order of their calls.
func linFormat(history []porcupine.Operation) string {
	ops := slices.Clone(history)
	slices.SortFunc(ops, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
	var sb strings.Builder
	for _, op := range ops {
		who := "owner"
		if op.ClientId > 0 {
			who = fmt.Sprintf("thief %d", op.ClientId)
		}
		fmt.Fprintf(&sb, "\t[%3d, %3d] %-8s %s\n", op.Call, op.Return, who,
			linDescribe(op.Input.(linInput), op.Output.(linOutput)))
	}
	return sb.String()
}

// linCheckTimeout bounds porcupine's search on one history. The histories
// are short enough to be decided in far less; a check that runs out of time
// fails the test.
const linCheckTimeout = 10 * time.Second

// linFailure is a history that did not check out.
type linFailure struct {
	index   int // of the history, from 1, among those of its subtest
	result  porcupine.CheckResult
	history []porcupine.Operation
}

// report fails t with the history and, if porcupine found it illegal, an
// HTML visualization of its longest linearizable prefixes, written to t's
// artifact directory (kept by go test -artifacts).
func (f *linFailure) report(t *testing.T) {
	t.Helper()
	msg := fmt.Sprintf("history %d: porcupine says %s; its %d operations in order of calls ([call, return] on a logical clock):\n%s",
		f.index, f.result, len(f.history), linFormat(f.history))
	if f.result == porcupine.Illegal {
		_, info := porcupine.CheckOperationsVerbose(linModel, f.history, linCheckTimeout)
		path := filepath.Join(t.ArtifactDir(), "history.html")
		if err := porcupine.VisualizePath(linModel, info, path); err != nil {
			msg += fmt.Sprintf("cannot write the visualization: %v\n", err)
		} else {
			msg += fmt.Sprintf("visualization: %s\n", path)
		}
	}
	t.Fatal(msg)
}

// linRecorder records the operations of one goroutine in one history.
type linRecorder struct {
	clock  *atomic.Int64
	client int // 0 for the owner, i for thief i
	ops    []porcupine.Operation
}

// do runs op and records it with input in.
func (r *linRecorder) do(in linInput, op func() linOutput) linOutput {
	call := r.clock.Add(1)
	out := op()
	ret := r.clock.Add(1)
	r.ops = append(r.ops, porcupine.Operation{
		ClientId: r.client, Input: in, Call: call, Output: out, Return: ret,
	})
	return out
}

// linConfig is the kind of deque the histories are recorded on.
type linConfig struct {
	zero   bool // the zero Deque; otherwise New(2)
	retain bool
}

func (c linConfig) String() string {
	s := "New(2)"
	if c.zero {
		s = "zero"
	}
	if c.retain {
		s += "+Retain"
	}
	return s
}

const (
	linThieves      = 3
	linOwnerActions = 10 // bursts, pops and yields before the final drain
	linThiefBudget  = 6  // recorded steals per thief and history

	// linMaxSpin bounds the random pause before each action of the owner
	// and each steal, in iterations of linSpin: the pauses vary how the
	// operations of the goroutines line up.
	linMaxSpin = 64

	// linYieldEvery is how many iterations of a spin-wait pass between
	// yields.
	linYieldEvery = 256
)

// linSink keeps linSpin's loop from being optimized away.
var linSink atomic.Int64

// linSpin busy-waits for about n short steps.
func linSpin(n int) {
	x := 0
	for i := range n {
		x += i * i
	}
	if x == -1 {
		linSink.Store(int64(x))
	}
}

// linYield is called on the i-th iteration of a spin-wait. It yields the
// processor every linYieldEvery iterations, so that a goroutine waiting for
// another lets it run even when there are fewer Ps than goroutines; and once
// the wait has gone on for a while it sleeps instead, which frees the OS
// thread: with more Ps than CPUs (or a loaded machine), the goroutine being
// waited for may be on a thread that the OS is not running, and yielding
// to Go's scheduler does not help it.
func linYield(i int) {
	switch {
	case i%linYieldEvery != 0:
	case i < 64*linYieldEvery:
		runtime.Gosched()
	default:
		time.Sleep(20 * time.Microsecond)
	}
}

// linRound is one history in the making: a fresh deque, the clock of the
// history, and one recorder per goroutine.
type linRound struct {
	d     *Deque[int]
	clock atomic.Int64
	done  atomic.Bool // the owner has drained d
	recs  [linThieves + 1]linRecorder
}

// linKeepPtr is linKeep on items, for PopIf and StealIf.
func linKeepPtr(x *int) bool { return linKeep(*x) }

// linRecord records n histories and returns them.
//
// The owner (the calling goroutine) and the thieves live through all the
// histories, one round each, and meet at a barrier at the start of every
// round. The barrier spins rather than blocking: goroutines woken from a
// channel or a lock start only after the scheduler gets round to them,
// typically after the owner has finished its few microseconds of work,
// whereas goroutines that spin (yielding now and then) stay on their Ps
// and leave the barrier together.
func linRecord(cfg linConfig, seed uint64, n int, st *linStats) [][]porcupine.Operation {
	rounds := make([]*linRound, n)
	for i := range rounds {
		r := &linRound{}
		if cfg.zero {
			r.d = new(Deque[int])
		} else {
			r.d = New[int](2)
		}
		if cfg.retain {
			r.d.Retain()
		}
		for c := range r.recs {
			r.recs[c] = linRecorder{clock: &r.clock, client: c}
		}
		rounds[i] = r
	}
	// Barrier i is passed once all the goroutines have arrived at it, that
	// is, once arrived reaches (i+1) times their number: each arrives at
	// the barriers in order, and arrived only grows.
	var arrived atomic.Int64
	barrier := func(i int) {
		arrived.Add(1)
		for j := 1; arrived.Load() < int64(i+1)*(linThieves+1); j++ {
			linYield(j)
		}
	}
	var wg sync.WaitGroup
	for c := 1; c <= linThieves; c++ {
		rng := rand.New(rand.NewPCG(seed, uint64(c)))
		wg.Go(func() {
			for i, r := range rounds {
				barrier(i)
				linThief(r, &r.recs[c], rng)
			}
		})
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	for i, r := range rounds {
		barrier(i)
		linOwner(r, rng, st)
	}
	wg.Wait()

	histories := make([][]porcupine.Operation, n)
	for i, r := range rounds {
		for c := range r.recs {
			histories[i] = append(histories[i], r.recs[c].ops...)
		}
		st.add(histories[i])
	}
	return histories
}

// linOwner runs the owner's part of a round: pushes in bursts, pops and
// pop-ifs at random, then pops until Pop returns nil.
func linOwner(r *linRound, rng *rand.Rand, st *linStats) {
	d, rec := r.d, &r.recs[0]
	next := 1
	push := func() {
		x := new(int)
		*x = next
		next++
		rec.do(linInput{kind: linPush, item: *x}, func() linOutput {
			d.Push(x)
			return linOutput{}
		})
		st.maxCap = max(st.maxCap, d.Cap())
	}
	pop := func() int {
		return rec.do(linInput{kind: linPop}, func() linOutput {
			return linOutput{item: linID(d.Pop())}
		}).item
	}
	for range linOwnerActions {
		linSpin(rng.IntN(linMaxSpin))
		switch k := rng.IntN(20); {
		case k < 9:
			// A burst of pushes; now and then a long one. Bursts grow
			// New(2)'s ring several times.
			n := 1 + rng.IntN(4)
			if rng.IntN(6) == 0 {
				n = 5 + rng.IntN(10)
			}
			for range n {
				push()
			}
		case k < 15:
			pop()
		case k < 18:
			rec.do(linInput{kind: linPopIf}, func() linOutput {
				return linOutput{item: linID(d.PopIf(linKeepPtr))}
			})
		default:
			runtime.Gosched()
		}
	}
	// Drain: a Pop that returns nil leaves the deque empty, and it stays
	// empty because only the owner pushes. An item the deque lost would
	// make this last nil illegal.
	for pop() != 0 {
	}
	r.done.Store(true)
}

// linThief runs one thief's part of a round: up to linThiefBudget steals
// and steal-ifs, most of them while the deque looks non-empty, until the
// owner has drained the deque.
func linThief(r *linRound, rec *linRecorder, rng *rand.Rand) {
	d := r.d
	for range linThiefBudget {
		if r.done.Load() && d.Len() == 0 {
			return // nothing more to steal, ever
		}
		// Wait for items, except now and then, to steal from a deque that
		// is (apparently) empty.
		if rng.IntN(8) != 0 {
			for i := 1; d.Len() == 0 && !r.done.Load(); i++ {
				linYield(i)
			}
		}
		linSpin(rng.IntN(linMaxSpin))
		if rng.IntN(4) == 0 {
			rec.do(linInput{kind: linStealIf}, func() linOutput {
				x, retry := d.StealIf(linKeepPtr)
				return linOutput{linID(x), retry}
			})
		} else {
			rec.do(linInput{kind: linSteal}, func() linOutput {
				x, retry := d.Steal()
				return linOutput{linID(x), retry}
			})
		}
	}
}

// linStats sums what the recorded histories exercised.
type linStats struct {
	histories, ops  int
	overlapping     int // operations that overlap one of another goroutine
	retries         int // steals that reported a lost race
	emptySteals     int // steals that returned nil, false
	ownerEmptyTakes int // pops and pop-ifs that returned nil
	maxCap          int // largest ring seen by the owner
}

func (st *linStats) add(history []porcupine.Operation) {
	st.histories++
	st.ops += len(history)
	for i, a := range history {
		for j, b := range history {
			if i != j && a.ClientId != b.ClientId && a.Call < b.Return && b.Call < a.Return {
				st.overlapping++
				break
			}
		}
		out := a.Output.(linOutput)
		switch k := a.Input.(linInput).kind; {
		case (k == linSteal || k == linStealIf) && out.retry:
			st.retries++
		case (k == linSteal || k == linStealIf) && out.item == 0:
			st.emptySteals++
		case (k == linPop || k == linPopIf) && out.item == 0:
			st.ownerEmptyTakes++
		}
	}
}

func (st *linStats) String() string {
	return fmt.Sprintf("%d histories, %d operations: %d overlap another goroutine's; %d steals lost a race, %d found nothing; %d pops found nothing; largest ring %d",
		st.histories, st.ops, st.overlapping, st.retries, st.emptySteals, st.ownerEmptyTakes, st.maxCap)
}

// linHistories returns the most histories to record per configuration and
// GOMAXPROCS, and the time after which no new batch of them is started.
// Recording slows down a lot when the goroutines outnumber the CPUs that
// actually run them (GOMAXPROCS 8 on a small or busy machine); the time
// budget keeps the test short then, at the cost of fewer histories.
func linHistories() (n int, budget time.Duration) {
	switch {
	case testing.Short() && testkit.Race:
		return 150, 150 * time.Millisecond
	case testing.Short():
		return 600, 60 * time.Millisecond
	case testkit.Race:
		return 600, 300 * time.Millisecond
	}
	return 3000, 150 * time.Millisecond
}

// linBatch is the number of histories recorded by one linRecord.
const linBatch = 50

// linRun records and checks up to n histories, in batches, until the time
// budget runs out. It returns the first history that is not linearizable,
// or nil if all are.
func linRun(cfg linConfig, procs, n int, budget time.Duration, st *linStats) *linFailure {
	start := time.Now()
	for h := 0; h < n && (h == 0 || time.Since(start) < budget); h += linBatch {
		seed := uint64(procs)<<32 | uint64(h)
		for i, history := range linRecord(cfg, seed, min(linBatch, n-h), st) {
			if res := porcupine.CheckOperationsTimeout(linModel, history, linCheckTimeout); res != porcupine.Ok {
				return &linFailure{h + i + 1, res, history}
			}
		}
	}
	return nil
}

func TestLinearizability(t *testing.T) {
	t.Run("checker", testLinearizabilityChecker)
	n, budget := linHistories()
	for _, cfg := range []linConfig{{}, {retain: true}, {zero: true}, {zero: true, retain: true}} {
		t.Run(fmt.Sprint(cfg), func(t *testing.T) {
			testkit.ForProcs(t, func(t *testing.T) {
				var st linStats
				var f *linFailure
				testkit.Guard(t, func() { f = linRun(cfg, runtime.GOMAXPROCS(0), n, budget, &st) })
				if f != nil {
					f.report(t)
				}
				t.Log(&st)
			})
		})
	}
}

// testLinearizabilityChecker runs the checker on handmade histories, to show
// that the specification rejects wrong behavior and accepts the races the
// deque is allowed to lose.
func testLinearizabilityChecker(t *testing.T) {
	// op is an operation of client c over [call, ret].
	op := func(c int, call, ret int64, in linInput, out linOutput) porcupine.Operation {
		return porcupine.Operation{ClientId: c, Input: in, Call: call, Output: out, Return: ret}
	}
	push := func(call, ret int64, x int) porcupine.Operation {
		return op(0, call, ret, linInput{kind: linPush, item: x}, linOutput{})
	}
	pop := func(call, ret int64, x int) porcupine.Operation {
		return op(0, call, ret, linInput{kind: linPop}, linOutput{item: x})
	}
	popIf := func(call, ret int64, x int) porcupine.Operation {
		return op(0, call, ret, linInput{kind: linPopIf}, linOutput{item: x})
	}
	steal := func(c int, call, ret int64, x int, retry bool) porcupine.Operation {
		return op(c, call, ret, linInput{kind: linSteal}, linOutput{x, retry})
	}
	stealIf := func(c int, call, ret int64, x int, retry bool) porcupine.Operation {
		return op(c, call, ret, linInput{kind: linStealIf}, linOutput{x, retry})
	}
	for _, tc := range []struct {
		name    string
		history []porcupine.Operation
		want    porcupine.CheckResult
	}{
		{"steal takes the oldest", []porcupine.Operation{
			push(1, 2, 1), push(3, 4, 2), steal(1, 5, 6, 1, false), pop(7, 8, 2), pop(9, 10, 0),
		}, porcupine.Ok},
		{"steal takes the newest", []porcupine.Operation{
			push(1, 2, 1), push(3, 4, 2), steal(1, 5, 6, 2, false),
		}, porcupine.Illegal},
		{"pop takes the oldest", []porcupine.Operation{
			push(1, 2, 1), push(3, 4, 2), pop(5, 6, 1),
		}, porcupine.Illegal},
		{"pop and steal race for the last item: the thief wins", []porcupine.Operation{
			push(1, 2, 1), pop(3, 6, 0), steal(1, 4, 5, 1, false),
		}, porcupine.Ok},
		{"pop and steal race for the last item: both win", []porcupine.Operation{
			push(1, 2, 1), pop(3, 6, 1), steal(1, 4, 5, 1, false),
		}, porcupine.Illegal},
		{"two thieves take the same item", []porcupine.Operation{
			push(1, 2, 1), push(3, 4, 2), steal(1, 5, 8, 1, false), steal(2, 6, 7, 1, false),
		}, porcupine.Illegal},
		{"two concurrent thieves take the two items", []porcupine.Operation{
			push(1, 2, 1), push(3, 4, 2), steal(1, 5, 8, 2, false), steal(2, 6, 7, 1, false),
		}, porcupine.Ok},
		{"steal skips an item", []porcupine.Operation{
			push(1, 2, 1), push(3, 4, 2), steal(1, 5, 6, 2, false), pop(7, 8, 1),
		}, porcupine.Illegal},
		{"steal of a non-empty deque reports empty", []porcupine.Operation{
			push(1, 2, 1), steal(1, 3, 4, 0, false),
		}, porcupine.Illegal},
		{"steal of a non-empty deque reports a lost race", []porcupine.Operation{
			push(1, 2, 1), steal(1, 3, 4, 0, true), steal(1, 5, 6, 1, false),
		}, porcupine.Ok},
		{"steal returns an item and retry", []porcupine.Operation{
			push(1, 2, 1), steal(1, 3, 4, 1, true),
		}, porcupine.Illegal},
		{"steal of an empty deque concurrent with a push", []porcupine.Operation{
			push(2, 4, 1), steal(1, 1, 3, 0, false), pop(5, 6, 1),
		}, porcupine.Ok},
		{"the deque loses an item", []porcupine.Operation{
			push(1, 2, 1), push(3, 4, 2), pop(5, 6, 2), pop(7, 8, 0),
		}, porcupine.Illegal},
		{"an item is popped twice", []porcupine.Operation{
			push(1, 2, 1), pop(3, 4, 1), pop(5, 6, 1),
		}, porcupine.Illegal},
		{"steal returns an item never pushed", []porcupine.Operation{
			push(1, 2, 1), steal(1, 3, 4, 7, false),
		}, porcupine.Illegal},
		{"steal returns an item before its push began", []porcupine.Operation{
			steal(1, 1, 2, 1, false), push(3, 4, 1),
		}, porcupine.Illegal},
		{"stealIf leaves an unwanted item", []porcupine.Operation{
			push(1, 2, 3), stealIf(1, 3, 4, 0, false), pop(5, 6, 3),
		}, porcupine.Ok},
		{"stealIf leaves a wanted item and reports no race", []porcupine.Operation{
			push(1, 2, 1), stealIf(1, 3, 4, 0, false),
		}, porcupine.Illegal},
		{"stealIf takes an unwanted item", []porcupine.Operation{
			push(1, 2, 3), stealIf(1, 3, 4, 3, false),
		}, porcupine.Illegal},
		{"popIf leaves an unwanted item", []porcupine.Operation{
			push(1, 2, 1), push(3, 4, 3), popIf(5, 6, 0), pop(7, 8, 3),
		}, porcupine.Ok},
		{"popIf leaves a wanted item", []porcupine.Operation{
			push(1, 2, 1), push(3, 4, 2), popIf(5, 6, 0),
		}, porcupine.Illegal},
	} {
		res := porcupine.CheckOperationsTimeout(linModel, tc.history, linCheckTimeout)
		if res != tc.want {
			t.Errorf("%s: porcupine says %s, want %s; history:\n%s", tc.name, res, tc.want, linFormat(tc.history))
		}
	}
}
