package workload

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/go-steal/steal/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(testkit.Settled(m)) }

// newInline makes a group that runs every task at once on the caller's
// goroutine.
func newInline() Group { return new(InlineGroup) }

// recordingGroup is an InlineGroup that records, after each Go, how many
// tasks had counted themselves as run.
type recordingGroup struct {
	InlineGroup
	ran   *atomic.Int64
	after []int64
}

func (g *recordingGroup) Go(f func() error) {
	g.InlineGroup.Go(f)
	g.after = append(g.after, g.ran.Load())
}

// TestSleepers: Sleepers gives the group n tasks, one Go each, and each
// counts itself once, after its sleep (an inline group runs each within
// its Go).
func TestSleepers(t *testing.T) {
	var ran atomic.Int64
	g := &recordingGroup{ran: &ran}
	if err := Sleepers(g, 3, time.Microsecond, &ran); err != nil || ran.Load() != 3 {
		t.Fatalf("Sleepers(3) = %v with %d tasks run, want nil and 3", err, ran.Load())
	}
	if want := []int64{1, 2, 3}; !slices.Equal(g.after, want) {
		t.Errorf("tasks counted after each Go: %v, want %v", g.after, want)
	}
}

func TestFib(t *testing.T) {
	for n := range 20 {
		val, tasks, err := Fib(newInline, n)
		sv, st := FibSerial(n)
		ev, et := FibExpected(n)
		if err != nil || val != sv || tasks != st || val != ev || tasks != et {
			t.Errorf("n=%d: Fib = (%d, %d, %v), FibSerial = (%d, %d), FibExpected = (%d, %d)", n, val, tasks, err, sv, st, ev, et)
		}
	}
	if v, _ := FibExpected(25); v != 75025 {
		t.Errorf("fib(25) = %d, want 75025", v)
	}
}

func TestQuicksort(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 10, 1000, 100_000} {
		for _, cutoff := range []int{2, 16, 4096} {
			a := RandomInts(n, uint64(n))
			b := slices.Clone(a)
			c := slices.Clone(a)
			want := slices.Clone(a)
			slices.Sort(want)
			if _, err := Quicksort(newInline, a, cutoff); err != nil {
				t.Fatal(err)
			}
			QuicksortSerial(b, cutoff)
			if !slices.Equal(a, want) || !slices.Equal(b, want) {
				t.Fatalf("n=%d cutoff=%d: not sorted", n, cutoff)
			}
			if n > 1000 {
				continue // Lomuto is quadratic on few distinct values
			}
			// Duplicates and sorted input.
			for i := range c {
				c[i] %= 7
			}
			QuicksortSerial(c, cutoff)
			if !slices.IsSorted(c) {
				t.Fatalf("n=%d cutoff=%d: duplicates not sorted", n, cutoff)
			}
			QuicksortSerial(c, cutoff)
			if !slices.IsSorted(c) {
				t.Fatalf("n=%d cutoff=%d: sorted input not sorted", n, cutoff)
			}
		}
	}
}

func TestCosts(t *testing.T) {
	c := Costs(100_000)
	lo, hi, cheap := 1000, 0, 0
	for _, v := range c {
		lo, hi = min(lo, v), max(hi, v)
		if v < 13 {
			cheap++
		}
	}
	if lo != 1 || hi != 100 {
		t.Errorf("costs range over [%d, %d], want [1, 100]", lo, hi)
	}
	if cheap < 40_000 || cheap > 60_000 {
		t.Errorf("%d of 100000 costs below 13, want about half", cheap)
	}
}

func TestRounds(t *testing.T) {
	out := make([]uint64, 1000)
	r := Rounds(2*time.Microsecond, len(out), func(i, rounds int) { out[i] = Spin(uint64(i), rounds) })
	if r < 1 {
		t.Fatalf("Rounds = %d", r)
	}
	small := Rounds(200*time.Nanosecond, len(out), func(i, rounds int) { out[i] = Spin(uint64(i), rounds) })
	// Never a timing assertion: only that a longer target needs more work.
	if r <= small {
		t.Errorf("Rounds(2µs) = %d, not above Rounds(200ns) = %d", r, small)
	}
}

// TestStaticSplits: both static splits run every index once, at any
// number of goroutines; StaticSplitFor passes its context on and returns
// a body's error.
func TestStaticSplits(t *testing.T) {
	for _, p := range []int{1, 2, 3, 8} {
		l := newLoop("test", 1000, func(int) int { return 1 })
		StaticSplit(l.N, p, l.Body)
		type key struct{}
		ctx := context.WithValue(context.Background(), key{}, p)
		failAt := 777
		err := StaticSplitFor(ctx, l.N, p, func(ctx context.Context, i int) error {
			if ctx.Value(key{}) != p {
				return fmt.Errorf("index %d: not the caller's context", i)
			}
			l.Body(i)
			if i == failAt {
				return errors.New("failed")
			}
			return nil
		})
		if err == nil || err.Error() != "failed" {
			t.Errorf("p=%d: StaticSplitFor returned %v, want the body's error", p, err)
		}
		if err := l.Check(2); err != nil {
			t.Errorf("p=%d: %v", p, err)
		}
	}
}
