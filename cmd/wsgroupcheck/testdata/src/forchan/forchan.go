package forchan

import (
	"context"

	"github.com/go-steal/steal/wsgroup"
)

var global = make(chan int)

type stage struct{ in, out chan int }

func Waits(ctx context.Context, n int, items []int) error {
	ch := make(chan int)
	done := make(chan struct{})
	st := stage{in: make(chan int), out: make(chan int)}
	chans := make([]chan int, n)
	_ = wsgroup.For(ctx, n, func(ctx context.Context, i int) error {
		if i > 0 {
			<-ch // want `^this For body receives from ch, a channel declared outside the body and so shared by its indices: at most GOMAXPROCS bodies of a loop run at once, so a body that waits for another index of the same loop can hang; run the stages as tasks of a Group \(Go\), or make sure no body waits for another.*; see https://github.com/go-steal/steal/blob/main/migrate.md#a-for-body-that-waits-for-another-index$`
		}
		ch <- i          // want `this For body sends on ch, a channel declared outside`
		v := <-st.in     // want `this For body receives from st.in`
		st.out <- v      // want `this For body sends on st.out`
		chans[i] <- v    // want `this For body sends on chans\[i\]`
		global <- v      // want `this For body sends on global`
		for range done { // want `this For body ranges over done`
		}
		select {
		case <-done: // want `this For body receives from done`
		case <-ctx.Done():
		}
		return nil
	})
	_ = wsgroup.ForEach(ctx, items, func(ctx context.Context, e *int) error {
		ch <- *e // want `this ForEach body sends on ch`
		return nil
	})
	_, _ = wsgroup.Map(ctx, items, func(ctx context.Context, e *int) (int, error) {
		return <-ch, nil // want `this Map body receives from ch`
	})
	results := make(chan int, len(items))
	_ = wsgroup.ForEach(ctx, items, func(ctx context.Context, e *int) error {
		for range 2 {
			results <- *e // want `this ForEach body sends on results`
		}
		return nil
	})
	small := make(chan int, 2)
	_ = wsgroup.For(ctx, n, func(ctx context.Context, i int) error {
		small <- i // want `this For body sends on small`
		return nil
	})
	twice := make(chan int, n)
	_ = wsgroup.For(ctx, n, func(ctx context.Context, i int) error {
		twice <- i // want `this For body sends on twice`
		twice <- i // want `this For body sends on twice`
		return nil
	})
	return nil
}

// Silent below.

func Silent(ctx context.Context, n int, items []int) error {
	done := make(chan struct{})
	shared := make(chan int)
	_ = wsgroup.For(ctx, n, func(ctx context.Context, i int) error {
		own := make(chan int, 1) // made inside the body
		own <- i
		<-own
		for range own {
		}
		var local chan int
		select {
		case local <- i:
		default:
		}
		select { // a select with a default does not wait
		case shared <- i:
		case <-done:
		default:
		}
		_ = len(shared)
		_ = cap(shared)
		<-ctx.Done() // not a variable
		go func() {
			shared <- i // a goroutine of its own
		}()
		return nil
	})
	close(done)
	_ = wsgroup.For(ctx, n, func(ctx context.Context, i int) error {
		close(shared)
		return nil
	})

	// Each body sends once on a channel with room for every index.
	results := make(chan int, len(items))
	_ = wsgroup.ForEach(ctx, items, func(ctx context.Context, e *int) error {
		results <- *e
		return nil
	})
	_, _ = wsgroup.Map(ctx, items, func(ctx context.Context, e *int) (int, error) {
		results <- *e
		return 0, nil
	})
	byIndex := make(chan int, n)
	_ = wsgroup.For(ctx, n, func(ctx context.Context, i int) error {
		byIndex <- i
		return nil
	})
	const size = 8
	fixed := make(chan int, 10)
	_ = wsgroup.For(ctx, size, func(ctx context.Context, i int) error {
		fixed <- i
		return nil
	})

	// Tasks of a Group may wait for each other: only loops are checked.
	var g wsgroup.Group
	g.Go(func() error {
		<-shared
		return nil
	})
	_ = wsgroup.For(ctx, n, func(ctx context.Context, i int) error {
		g.Go(func() error {
			shared <- i
			return nil
		})
		return nil
	})
	return g.Wait()
}
