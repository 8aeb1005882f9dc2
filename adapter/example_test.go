package adapter_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/go-steal/steal/adapter"
)

func ExampleNew() {
	g := adapter.New(adapter.Wsgroup)
	g.SetLimit(4)
	var sum atomic.Int64
	for i := 1; i <= 100; i++ {
		g.Go(func() error { sum.Add(int64(i)); return nil })
	}
	fmt.Println(g.Wait(), sum.Load())
	// Output: <nil> 5050
}

func ExampleWithContext() {
	g, ctx := adapter.WithContext(adapter.Errgroup, context.Background())
	g.Go(func() error { return errors.New("disk full") })
	g.Go(func() error { <-ctx.Done(); return nil })
	fmt.Println(g.Wait())
	fmt.Println(context.Cause(ctx))
	// Output:
	// disk full
	// disk full
}

// A service reads the implementation from STEAL_GROUP, with errgroup as
// the default until the rollout is done; a typo is an error, not a silent
// fallback.
func ExampleNewFromEnv() {
	os.Setenv(adapter.EnvVar, "wsgroup")
	g, err := adapter.NewFromEnv(adapter.Errgroup)
	fmt.Printf("%T %v\n", g, err)

	os.Setenv(adapter.EnvVar, "ws-group")
	_, err = adapter.NewFromEnv(adapter.Errgroup)
	fmt.Println(err)
	os.Unsetenv(adapter.EnvVar)
	// Output:
	// *wsgroup.Group <nil>
	// STEAL_GROUP: adapter: unknown group kind "ws-group": want "errgroup" or "wsgroup"
}

func ExampleWithContextFromEnv() {
	os.Unsetenv(adapter.EnvVar)
	g, ctx, err := adapter.WithContextFromEnv(adapter.Wsgroup, context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	g.Go(func() error { return nil })
	fmt.Printf("%T %v %v\n", g, g.Wait(), ctx.Err())
	// Output: *wsgroup.Group <nil> context canceled
}

func ExampleNewWaitGroup() {
	wg := adapter.NewWaitGroup(adapter.Wsgroup)
	var n atomic.Int32
	for range 10 {
		wg.Go(func() { n.Add(1) })
	}
	wg.Wait()
	fmt.Println(n.Load())
	// Output: 10
}

func ExampleWaitGroupFromEnv() {
	os.Setenv(adapter.EnvVar, "errgroup")
	wg, err := adapter.WaitGroupFromEnv(adapter.Wsgroup)
	fmt.Printf("%T %v\n", wg, err)
	os.Unsetenv(adapter.EnvVar)
	// Output: *sync.WaitGroup <nil>
}
