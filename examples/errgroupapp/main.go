// Command errgroupapp is a program written for errgroup, as it is before a
// migration: the migration checker's end-to-end test (cmd/wsgroupcheck)
// copies it, migrates it with wsgroupcheck -fix, and checks that it builds
// and prints the same after. To see the checker's report on it, from the
// repository root (the checker is a module of its own, so it is built
// first):
//
//	(cd cmd/wsgroupcheck && go build -o /tmp/wsgroupcheck .)
//	/tmp/wsgroupcheck ./examples/errgroupapp
//	go vet -vettool=/tmp/wsgroupcheck ./examples/errgroupapp
//
// It prints:
//
//	sum of squares: 328350
//	check: item 7: bad item true
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sync/errgroup"
)

// squares returns i*i for i in [0, n), each computed by a task of its own.
func squares(ctx context.Context, n int) ([]int, error) {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	out := make([]int, n)
	for i := range n {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			out[i] = i * i
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// check fails for one item, so Wait returns that error.
func check(ctx context.Context, items []int) error {
	g, _ := errgroup.WithContext(ctx)
	for _, it := range items {
		g.Go(func() error {
			if it == 7 {
				return fmt.Errorf("item %d: %w", it, errBad)
			}
			return nil
		})
	}
	return g.Wait()
}

var errBad = errors.New("bad item")

func main() {
	ctx := context.Background()
	sq, err := squares(ctx, 100)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sum := 0
	for _, v := range sq {
		sum += v
	}
	fmt.Println("sum of squares:", sum)
	err = check(ctx, []int{1, 3, 7, 9})
	fmt.Println("check:", err, errors.Is(err, errBad))
}
