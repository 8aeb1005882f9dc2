package sched

import (
	"context"
	"errors"
	"math"
	"slices"
	stdatomic "sync/atomic"
	"testing"

	"github.com/go-steal/steal/internal/testkit"
)

// segments covers [0, n) in order with segments of at most the given
// length, and ends after the last, even where the next base would be past
// math.MaxInt.
func TestSegments(t *testing.T) {
	type seg struct{ base, n int }
	half := math.MaxInt/2 + 1
	for _, c := range []struct {
		n, most int
		want    []seg
	}{
		{1, 1000, []seg{{0, 1}}},
		{1000, 1000, []seg{{0, 1000}}},
		{3500, 1000, []seg{{0, 1000}, {1000, 1000}, {2000, 1000}, {3000, 500}}},
		{math.MaxInt, half, []seg{{0, half}, {half, math.MaxInt - half}}},
		{math.MaxInt, math.MaxInt, []seg{{0, math.MaxInt}}},
	} {
		var got []seg
		for base, n := range segments(c.n, c.most) {
			got = append(got, seg{base, n})
			if len(got) > len(c.want) {
				break
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("segments(%d, %d) = %v, want %v", c.n, c.most, got, c.want)
		}
	}
}

// A loop longer than a segment runs segment after segment, each index once,
// and a failure in a later segment stops the loop there.
func TestForSegments(t *testing.T) {
	defer func(n int) { segmentLen = n }(segmentLen)
	segmentLen = 1000
	testkit.Guard(t, func() {
		const n = 3500
		hits := make([]stdatomic.Int32, n)
		body := func(_ context.Context, i int) error { hits[i].Add(1); return nil }
		if err := For(context.Background(), n, body, nil); err != nil {
			t.Errorf("For = %v", err)
		}
		for i := range hits {
			if c := hits[i].Load(); c != 1 {
				t.Fatalf("index %d ran %d times, want 1", i, c)
			}
		}
		errAt := errors.New("failed in the third segment")
		var after stdatomic.Int32
		err := For(context.Background(), n, func(_ context.Context, i int) error {
			switch {
			case i == 2500:
				return errAt
			case i >= 3000:
				after.Add(1)
			}
			return nil
		}, nil)
		if err != errAt || after.Load() != 0 {
			t.Errorf("For = %v with %d indices of the next segment run; want the error, and none", err, after.Load())
		}
	})
}
