package sched

import (
	"context"
	"errors"
	stdatomic "sync/atomic"
	"testing"

	"github.com/go-steal/steal/internal/testkit"
)

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
