// TestLinearizability checks that each slot of a Partition is a
// linearizable object: that in every history recorded from concurrent
// goroutines, the operations on one slot's word can be put in an order,
// consistent with real time, in which each takes effect at one instant and
// behaves as the sequential specification below says.
//
// The specification. A slot's state is its range [lo, hi), empty when
// lo >= hi (the exact lo of an empty range matters: Take reports it).
//
//   - take(k), the owner's Take: on an empty range, returns [lo, lo) and
//     changes nothing; otherwise returns [lo, lo+m), m = min(k, hi-lo), and
//     leaves [lo+m, hi).
//   - cut, a thief's successful compare-and-swap in Steal: on a non-empty
//     range of n indices, returns [hi-c, hi), c = n/2 or 1 if n is 1, and
//     leaves [lo, hi-c). Attempts that lose the race change nothing and
//     are not recorded.
//   - fill(r), the owner's store at the end of Steal: on an empty range
//     only; leaves r. New's split is recorded as one fill per slot, before
//     the participants start, so every slot starts empty.
//   - untake(r), the owner's Untake of r = [a, b): only when the range
//     begins at b; leaves [a, hi).
//   - empty, a thief's scan that found no victim: the slot was empty.
//
// Porcupine checks the slots separately (Model.Partition): the operations
// of different slots commute. Besides, each history must take every index
// exactly once (counting an untake as giving indices back) and end with
// Left() == 0, which no single slot's specification says.
//
// How histories are recorded. Each history is a fresh New(n, parts) with
// n and parts at random (n < parts included), and one goroutine per slot,
// started together at a spinning gate. Each goroutine is the owner of its
// slot: it takes runs of 1 to 4 indices, now and then gives back the end
// of a run, and when its range is empty it steals as Steal does, but
// through Steal's two halves, cutLongest and the store into its own slot,
// so that the cut and the fill are recorded as operations of their own.
// Every operation gets a Call timestamp from a shared atomic counter just
// before it starts and a Return timestamp just after it ends; the counter
// respects real time, which is all the check needs.
//
// What this does not verify. It samples the interleavings that the Go
// scheduler and the hardware produce (the explore tests enumerate small
// programs); it checks Steal's halves, not the loop around them, which the
// explore tests and TestConcurrent run as it is; and it does not model
// left beyond its final value.

package ranges

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/go-steal/steal/internal/testkit"
)

type linKind uint8

const (
	linTake linKind = iota
	linCut
	linFill
	linUntake
	linEmpty
)

// linInput is an operation on slot slot: k for a take, r for a fill or
// an untake.
type linInput struct {
	kind linKind
	slot int
	k    uint32
	r    span
}

// linOutput is the range a take or a cut returns.
type linOutput struct{ r span }

// linModel is the specification of one slot; the state is a span.
var linModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		var bySlot [][]porcupine.Operation
		for _, op := range history {
			s := op.Input.(linInput).slot
			for len(bySlot) <= s {
				bySlot = append(bySlot, nil)
			}
			bySlot[s] = append(bySlot[s], op)
		}
		return bySlot
	},
	Init: func() any { return span{} },
	Step: linStep,
	Hash: func(state any) uint64 {
		s := state.(span)
		return uint64(s.hi)<<32 | uint64(s.lo)
	},
	DescribeOperation: func(input, output any) string {
		return linDescribe(input.(linInput), output.(linOutput))
	},
	DescribeState: func(state any) string { return state.(span).String() },
}

func linStep(state, input, output any) (bool, any) {
	s, in, out := state.(span), input.(linInput), output.(linOutput).r
	empty := s.size() == 0
	switch in.kind {
	case linTake:
		if empty {
			return out == span{s.lo, s.lo}, s
		}
		end := s.lo + min(in.k, s.size())
		return out == span{s.lo, end}, span{end, s.hi}
	case linCut:
		if empty {
			return false, s
		}
		c := specCut(s.size())
		return out == span{s.hi - c, s.hi}, span{s.lo, s.hi - c}
	case linFill:
		return empty, in.r
	case linUntake:
		return in.r.lo < in.r.hi && s.lo == in.r.hi, span{in.r.lo, s.hi}
	case linEmpty:
		return empty, s
	}
	panic(fmt.Sprintf("unknown operation kind %d", in.kind))
}

func linDescribe(in linInput, out linOutput) string {
	switch in.kind {
	case linTake:
		return fmt.Sprintf("take(%d) = %v", in.k, out.r)
	case linCut:
		return fmt.Sprintf("cut = %v", out.r)
	case linFill:
		return fmt.Sprintf("fill %v", in.r)
	case linUntake:
		return fmt.Sprintf("untake %v", in.r)
	}
	return "looked empty"
}

// linFormat lists history by call, one operation a line.
func linFormat(history []porcupine.Operation) string {
	ops := slices.SortedFunc(slices.Values(history), func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
	var sb strings.Builder
	for _, op := range ops {
		in := op.Input.(linInput)
		fmt.Fprintf(&sb, "\t[%4d, %4d] participant %d, slot %d: %s\n", op.Call, op.Return, op.ClientId, in.slot,
			linDescribe(in, op.Output.(linOutput)))
	}
	return sb.String()
}

// linHistory is one history in the making, its operations by participant.
// The operations are recorded as linOps, in slices allocated beforehand,
// and turned into porcupine's Operations after the recording, and the
// garbage collector is off while recording: its worker would take a P
// from the participants, and participants that share a P take turns
// instead of overlapping.
type linHistory struct {
	p     *Partition
	clock atomic.Int64
	ops   [][]linOp
	taken []atomic.Int32 // by index: takes minus untakes
	lost  []int          // by participant: cutLongest attempts that lost a race
	stuck []string       // by participant: why it gave up waiting in steal
}

// linOp is one recorded operation of participant who.
type linOp struct {
	who       int
	in        linInput
	out       span
	call, ret int64
}

func newLinHistory(n, parts int) *linHistory {
	h := &linHistory{p: New(n, parts), ops: make([][]linOp, parts),
		taken: make([]atomic.Int32, n), lost: make([]int, parts), stuck: make([]string, parts)}
	for i := range h.ops {
		h.ops[i] = make([]linOp, 0, 4*n/parts+64)
	}
	for i, s := range spans(h.p) {
		h.op(i, linInput{kind: linFill, slot: i, r: s}, func() span { return span{} })
	}
	return h
}

// history returns the operations of every participant.
func (h *linHistory) history() []porcupine.Operation {
	var out []porcupine.Operation
	for _, ops := range h.ops {
		for _, op := range ops {
			out = append(out, porcupine.Operation{ClientId: op.who, Input: op.in, Output: linOutput{op.out}, Call: op.call, Return: op.ret})
		}
	}
	return out
}

// op runs f as an operation of participant who and records it.
func (h *linHistory) op(who int, in linInput, f func() span) span {
	call := h.clock.Add(1)
	out := f()
	h.ops[who] = append(h.ops[who], linOp{who, in, out, call, h.clock.Add(1)})
	return out
}

// take records that [lo, hi) was taken (d = 1) or given back (d = -1).
func (h *linHistory) take(r span, d int32) {
	for i := r.lo; i < r.hi; i++ {
		h.taken[i].Add(d)
	}
}

// participate is the goroutine of the owner of slot own.
func (h *linHistory) participate(own int, rng *rand.Rand) {
	p := h.p
	for {
		if rng.IntN(16) == 0 {
			runtime.Gosched() // interleave participants that share a P
		} else {
			linSpin(rng.IntN(64))
		}
		k := uint32(1 + rng.IntN(4))
		r := h.op(own, linInput{kind: linTake, slot: own, k: k}, func() span {
			lo, hi := p.Take(own, k)
			return span{lo, hi}
		})
		if r.size() > 0 {
			h.take(r, 1)
			if r.size() >= 2 && rng.IntN(6) == 0 {
				back := span{r.lo + 1 + uint32(rng.IntN(int(r.size()-1))), r.hi}
				h.take(back, -1)
				h.op(own, linInput{kind: linUntake, slot: own, r: back}, func() span {
					p.Untake(own, back.lo, back.hi)
					return span{}
				})
			}
			continue
		}
		if !h.steal(own) {
			return
		}
	}
}

// steal is Steal, through its two halves, recording the cut on the
// victim's slot, the scans that found every other slot empty, and the
// fill of slot own.
//
// A thief waits for indices in transit as long as their holder takes to
// store them, which is longer when the holder is descheduled: only its
// first linMaxEmpty scans that find nothing are recorded (a history may
// leave observations out), and after linStuck it gives up and records why.
// It gives up at once if Left() is negative: then it would wait forever.
func (h *linHistory) steal(own int) bool {
	p := h.p
	var since time.Time
	for empty := 0; ; {
		call := h.clock.Add(1)
		victim, lo, hi := p.cutLongest(own)
		ret := h.clock.Add(1)
		switch {
		case victim < 0:
			if empty++; empty <= linMaxEmpty {
				for i := range p.Parts() {
					if i != own {
						h.ops[own] = append(h.ops[own], linOp{own, linInput{kind: linEmpty, slot: i}, span{}, call, ret})
					}
				}
			}
			left := p.Left()
			if left == 0 {
				return false
			}
			switch {
			case left < 0:
				h.stuck[own] = fmt.Sprintf("participant %d: Left() = %d", own, left)
				return false
			case empty == linMaxEmpty:
				since = time.Now()
			case empty > linMaxEmpty && time.Since(since) > linStuck:
				h.stuck[own] = fmt.Sprintf("participant %d: every other slot looked empty for %v, with Left() = %d", own, linStuck, left)
				return false
			}
			runtime.Gosched()
		case lo == hi:
			h.lost[own]++
		default:
			h.ops[own] = append(h.ops[own], linOp{own, linInput{kind: linCut, slot: victim}, span{lo, hi}, call, ret})
			h.op(own, linInput{kind: linFill, slot: own, r: span{lo, hi}}, func() span {
				p.slots[own].word.Store(pack(lo, hi))
				return span{}
			})
			return true
		}
	}
}

// linSpin busy-waits for about n short steps, to vary how the goroutines'
// operations line up.
func linSpin(n int) {
	x := uint32(1)
	for range n {
		x = x*1664525 + 1013904223
	}
	if x == 0 {
		runtime.Gosched()
	}
}

// linRecord records one history of New(n, parts) for each n in ns.
//
// The participants live through all the histories, one round each, and
// meet at a barrier at the start of every round, where they spin: a
// goroutine that blocks is woken a few microseconds after the others
// leave, and the few microseconds a history takes are over by then. But a
// participant that spins for long shares its P or its CPU with the one it
// waits for: it blocks, on a channel that the last to arrive closes, which
// lets the other run and, when it is woken, hands it to an idle P if
// there is one, so that the next rounds start together.
func linRecord(parts int, ns []int, seed uint64) []*linHistory {
	hs := make([]*linHistory, len(ns))
	for r, n := range ns {
		hs[r] = newLinHistory(n, parts)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	// Round r starts once arrived reaches (r+1)*parts: each participant
	// arrives at the rounds in order, and arrived only grows. The last to
	// arrive closes the round's start channel.
	var arrived atomic.Int64
	start := make([]chan struct{}, len(hs))
	for r := range start {
		start[r] = make(chan struct{})
	}
	spin := linSpinAlone
	if parts > min(runtime.GOMAXPROCS(0), runtime.NumCPU()) {
		spin = 0 // some participants share a P or a CPU
	}
	var wg sync.WaitGroup
	for own := range parts {
		rng := rand.New(rand.NewPCG(seed, uint64(own)))
		wg.Go(func() {
			for r, h := range hs {
				if arrived.Add(1) == int64(r+1)*int64(parts) {
					close(start[r])
				}
				for i := 0; i < spin && arrived.Load() < int64(r+1)*int64(parts); i++ {
				}
				<-start[r]
				h.participate(own, rng)
			}
		})
	}
	wg.Wait()
	return hs
}

// linStats sums what the histories exercised.
type linStats struct {
	histories, ops int
	overlapping    int // operations that overlap one of another participant
	cuts, untakes  int
	lostRaces      int // cutLongest attempts that lost the race for the word
}

func (st *linStats) add(h *linHistory, history []porcupine.Operation) {
	for _, n := range h.lost {
		st.lostRaces += n
	}
	st.histories++
	st.ops += len(history)
	for _, a := range history {
		switch a.Input.(linInput).kind {
		case linCut:
			st.cuts++
		case linUntake:
			st.untakes++
		}
		for _, b := range history {
			if a.ClientId != b.ClientId && a.Call < b.Return && b.Call < a.Return {
				st.overlapping++
				break
			}
		}
	}
}

func (st *linStats) String() string {
	return fmt.Sprintf("%d histories, %d operations, %d of them overlap another participant's; %d cuts, %d cut attempts lost a race, %d untakes",
		st.histories, st.ops, st.overlapping, st.cuts, st.lostRaces, st.untakes)
}

// linCheckTimeout bounds porcupine on one history; a check that runs out
// of time fails the test.
const linCheckTimeout = 10 * time.Second

// linSpinAlone is how many turns a participant that could have a P of its
// own spins at the barrier before it blocks: far longer than the others
// take to arrive when they run in parallel.
const linSpinAlone = 1 << 20

// linMaxEmpty is how many scans that find nothing a thief records in a
// row; linStuck, how long it waits for indices in transit before it gives
// up (a livelock).
const (
	linMaxEmpty = 64
	linStuck    = 10 * time.Second
)

// linBatch is the number of histories recorded by one linRecord.
const linBatch = 10

// linCheck checks one recorded history: each slot linearizable, no thief
// stuck, every index taken once and Left() zero at the end.
func linCheck(t *testing.T, h *linHistory, history []porcupine.Operation, n, parts int) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("New(%d, %d): %s; the history by call ([call, return] on a logical clock):\n%s",
			n, parts, fmt.Sprintf(format, args...), linFormat(history))
	}
	switch res, info := porcupine.CheckOperationsVerbose(linModel, history, linCheckTimeout); res {
	case porcupine.Ok:
	case porcupine.Illegal:
		path := filepath.Join(t.ArtifactDir(), "history.html")
		if err := porcupine.VisualizePath(linModel, info, path); err != nil {
			path = err.Error()
		}
		fail("not linearizable (visualization: %s)", path)
	default:
		fail("porcupine says %s", res)
	}
	for _, why := range h.stuck {
		if why != "" {
			fail("%s", why)
		}
	}
	for i := range h.taken {
		if c := h.taken[i].Load(); c != 1 {
			fail("index %d taken %d times", i, c)
		}
	}
	if left := h.p.Left(); left != 0 {
		fail("Left() = %d at the end", left)
	}
}

func TestLinearizability(t *testing.T) {
	t.Run("checker", testLinearizabilityChecker)
	maxHistories := testkit.Scale(4000, 500)
	budget := time.Duration(testkit.Scale(150, 40)) * time.Millisecond
	testkit.ForProcs(t, func(t *testing.T) {
		procs := runtime.GOMAXPROCS(0)
		testkit.Guard(t, func() {
			rng := rand.New(rand.NewPCG(uint64(procs), 7))
			var st linStats
			start := time.Now()
			for st.histories < maxHistories && (st.histories == 0 || time.Since(start) < budget) {
				parts := 2 + rng.IntN(3)
				ns := make([]int, linBatch)
				for i := range ns {
					ns[i] = rng.IntN(201)
				}
				for i, h := range linRecord(parts, ns, rng.Uint64()) {
					history := h.history()
					linCheck(t, h, history, ns[i], parts)
					st.add(h, history)
				}
			}
			t.Log(&st)
		})
	})
}

// testLinearizabilityChecker runs the checker on handmade histories: the
// specification must reject what a slot must never do, and accept the
// races it is allowed to lose.
func testLinearizabilityChecker(t *testing.T) {
	op := func(who, slot int, call, ret int64, in linInput, out span) porcupine.Operation {
		in.slot = slot
		return porcupine.Operation{ClientId: who, Input: in, Output: linOutput{out}, Call: call, Return: ret}
	}
	fill := func(slot int, call, ret int64, lo, hi uint32) porcupine.Operation {
		return op(slot, slot, call, ret, linInput{kind: linFill, r: span{lo, hi}}, span{})
	}
	take := func(slot int, call, ret int64, k, lo, hi uint32) porcupine.Operation {
		return op(slot, slot, call, ret, linInput{kind: linTake, k: k}, span{lo, hi})
	}
	cutOp := func(thief, slot int, call, ret int64, lo, hi uint32) porcupine.Operation {
		return op(thief, slot, call, ret, linInput{kind: linCut}, span{lo, hi})
	}
	untake := func(slot int, call, ret int64, lo, hi uint32) porcupine.Operation {
		return op(slot, slot, call, ret, linInput{kind: linUntake, r: span{lo, hi}}, span{})
	}
	looked := func(thief, slot int, call, ret int64) porcupine.Operation {
		return op(thief, slot, call, ret, linInput{kind: linEmpty}, span{})
	}
	ok, bad := porcupine.Ok, porcupine.Illegal
	for _, tc := range []struct {
		name    string
		history []porcupine.Operation
		want    porcupine.CheckResult
	}{
		{"takes from the low end", []porcupine.Operation{
			fill(0, 1, 2, 0, 5), take(0, 3, 4, 2, 0, 2), take(0, 5, 6, 9, 2, 5), take(0, 7, 8, 1, 5, 5),
		}, ok},
		{"take skips an index", []porcupine.Operation{
			fill(0, 1, 2, 0, 5), take(0, 3, 4, 2, 1, 3),
		}, bad},
		{"take of more than k", []porcupine.Operation{
			fill(0, 1, 2, 0, 5), take(0, 3, 4, 2, 0, 3),
		}, bad},
		{"take reports a non-empty range empty", []porcupine.Operation{
			fill(0, 1, 2, 0, 5), take(0, 3, 4, 2, 0, 0),
		}, bad},
		{"cut and take race: the cut lands first", []porcupine.Operation{
			fill(0, 1, 2, 0, 4), take(0, 3, 6, 3, 0, 2), cutOp(1, 0, 4, 5, 2, 4),
		}, ok},
		{"cut and take race: both get index 2", []porcupine.Operation{
			fill(0, 1, 2, 0, 4), take(0, 3, 6, 3, 0, 3), cutOp(1, 0, 4, 5, 2, 4),
		}, bad},
		{"cut of the whole range", []porcupine.Operation{
			fill(0, 1, 2, 0, 4), cutOp(1, 0, 3, 4, 0, 4),
		}, bad},
		{"cut of the last index", []porcupine.Operation{
			fill(0, 1, 2, 0, 1), cutOp(1, 0, 3, 4, 0, 1), take(0, 5, 6, 1, 0, 0),
		}, ok},
		{"two thieves cut the same indices", []porcupine.Operation{
			fill(0, 1, 2, 0, 4), cutOp(1, 0, 3, 6, 2, 4), cutOp(2, 0, 4, 5, 2, 4),
		}, bad},
		{"two thieves cut one after the other", []porcupine.Operation{
			fill(0, 1, 2, 0, 4), cutOp(1, 0, 3, 6, 1, 2), cutOp(2, 0, 4, 5, 2, 4),
		}, ok},
		{"fill of a non-empty slot", []porcupine.Operation{
			fill(0, 1, 2, 0, 4), fill(0, 3, 4, 6, 8),
		}, bad},
		{"fill after the owner took everything", []porcupine.Operation{
			fill(0, 1, 2, 0, 1), take(0, 3, 4, 1, 0, 1), fill(0, 5, 6, 6, 8), take(0, 7, 8, 1, 6, 7),
		}, ok},
		{"untake to the front of the range", []porcupine.Operation{
			fill(0, 1, 2, 0, 6), take(0, 3, 4, 3, 0, 3), untake(0, 5, 6, 1, 3), take(0, 7, 8, 9, 1, 6),
		}, ok},
		{"untake after a thief cut the rest", []porcupine.Operation{
			fill(0, 1, 2, 0, 4), take(0, 3, 4, 3, 0, 3), cutOp(1, 0, 5, 6, 3, 4), untake(0, 7, 8, 1, 3), take(0, 9, 10, 5, 1, 3),
		}, ok},
		{"untake of indices that do not end at the range", []porcupine.Operation{
			fill(0, 1, 2, 0, 6), take(0, 3, 4, 3, 0, 3), untake(0, 5, 6, 0, 2),
		}, bad},
		{"untaken indices vanish", []porcupine.Operation{
			fill(0, 1, 2, 0, 6), take(0, 3, 4, 3, 0, 3), untake(0, 5, 6, 1, 3), take(0, 7, 8, 9, 3, 6),
		}, bad},
		{"scan sees a non-empty slot empty", []porcupine.Operation{
			fill(0, 1, 2, 0, 2), looked(1, 0, 3, 4),
		}, bad},
		{"scan races with the take of the last index", []porcupine.Operation{
			fill(0, 1, 2, 0, 1), looked(1, 0, 3, 6), take(0, 4, 5, 1, 0, 1),
		}, ok},
		{"slots are separate objects", []porcupine.Operation{
			fill(0, 1, 2, 0, 2), fill(1, 3, 4, 2, 4), take(0, 5, 6, 2, 0, 2), cutOp(0, 1, 7, 8, 3, 4), fill(0, 9, 10, 3, 4), take(1, 11, 12, 2, 2, 3),
		}, ok},
		{"a cut lands in the wrong slot", []porcupine.Operation{
			fill(0, 1, 2, 0, 2), fill(1, 3, 4, 2, 4), cutOp(0, 0, 5, 6, 3, 4),
		}, bad},
	} {
		if res := porcupine.CheckOperationsTimeout(linModel, tc.history, linCheckTimeout); res != tc.want {
			t.Errorf("%s: porcupine says %s, want %s; history:\n%s", tc.name, res, tc.want, linFormat(tc.history))
		}
	}
}
