package wsgroup_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-steal/steal/wsgroup"
)

// For in place of a Group with one task per index: each body writes its
// own element, so no lock is needed, and For returns once all have run.
func ExampleFor() {
	squares := make([]int, 10)
	err := wsgroup.For(context.Background(), len(squares), func(ctx context.Context, i int) error {
		squares[i] = i * i
		return nil
	})
	fmt.Println(squares, err)
	// Output: [0 1 4 9 16 25 36 49 64 81] <nil>
}

// The first error cancels the loop's context and is returned; no index
// starts after it, and the bodies that are running see ctx.Done().
func ExampleFor_error() {
	errTooBig := errors.New("too big")
	err := wsgroup.For(context.Background(), 1_000_000, func(ctx context.Context, i int) error {
		if i == 12_345 {
			return fmt.Errorf("index %d: %w", i, errTooBig)
		}
		return nil
	})
	fmt.Println(err, errors.Is(err, errTooBig))
	// Output: index 12345: too big true
}

// Map keeps each result at its element's index.
func ExampleMap() {
	words := []string{"work", "stealing", "loops"}
	upper, err := wsgroup.Map(context.Background(), words, func(ctx context.Context, w *string) (string, error) {
		return strings.ToUpper(*w), nil
	})
	fmt.Println(upper, err)
	// Output: [WORK STEALING LOOPS] <nil>
}

// ForEach may update the elements in place.
func ExampleForEach() {
	prices := []float64{10, 20, 30}
	err := wsgroup.ForEach(context.Background(), prices, func(ctx context.Context, p *float64) error {
		*p *= 1.5
		return nil
	})
	fmt.Println(prices, err)
	// Output: [15 30 45] <nil>
}

// With PanicInWait, For recovers a body's panic and raises it again on the
// caller's goroutine, as a *PanicError, once the running bodies returned.
func ExampleFor_panicInWait() {
	defer func() {
		var pe *wsgroup.PanicError
		if errors.As(recover().(error), &pe) {
			fmt.Println("recovered:", pe.Value)
		}
	}()
	wsgroup.For(context.Background(), 100, func(ctx context.Context, i int) error {
		if i == 42 {
			panic("no answer")
		}
		return nil
	}, wsgroup.PanicInWait)
	// Output: recovered: no answer
}
