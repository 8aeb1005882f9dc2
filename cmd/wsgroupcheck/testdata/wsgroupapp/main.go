// Command wsgroupapp uses the real wsgroup in the ways wsgroupcheck reports,
// so that the end-to-end test checks the analyzer against the real package's
// types, not only against the stubs.
package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/pprof"

	"github.com/go-steal/steal/wsgroup"
)

func main() {
	ctx := context.Background()
	g, ctx := wsgroup.WithContext(ctx)
	g.Go(func() error {
		runtime.LockOSThread()
		return nil
	})
	g.SetLimit(2)
	g.Go(func() error {
		runtime.Goexit()
		return nil
	})
	ch := make(chan int)
	err := wsgroup.For(ctx, 4, func(ctx context.Context, i int) error {
		if i > 0 {
			<-ch
		}
		return nil
	})
	// Not reported: a task carries its caller's labels, and its goroutine
	// gets its own back after the task.
	g.Go(func() error {
		pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("k", "v")))
		return nil
	})
	fmt.Println(err, g.Wait())
}
