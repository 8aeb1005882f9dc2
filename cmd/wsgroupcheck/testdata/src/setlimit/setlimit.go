package setlimit

import (
	"context"

	"github.com/go-steal/steal/wsgroup"
	"golang.org/x/sync/errgroup" // want `errgroup can be replaced by wsgroup`
)

func work() error { return nil }

func AfterGo(ctx context.Context) error {
	g, _ := wsgroup.WithContext(ctx)
	g.Go(work)
	g.SetLimit(2) // want `^SetLimit on g after a Go on it \(line 14\) with no Wait between: wsgroup panics when SetLimit is called while tasks of the group are active, whether or not a limit was set.*#setlimit-after-go$`
	return g.Wait()
}

func AfterTryGo() error {
	var g wsgroup.Group
	g.TryGo(work)
	g.SetLimit(2) // want `SetLimit on g after a TryGo on it`
	return g.Wait()
}

func Errgroup() error {
	g := new(errgroup.Group)
	g.Go(work)
	g.SetLimit(1) // want `SetLimit on g after a Go on it`
	return g.Wait()
}

func GoInLoop(n int) error {
	var g wsgroup.Group
	for range n {
		g.Go(work)
	}
	g.SetLimit(n) // want `SetLimit on g after a Go`
	return g.Wait()
}

func InLaterNestedBlock(ok bool) error {
	var g wsgroup.Group
	g.Go(work)
	if ok {
		g.SetLimit(1) // want `SetLimit on g after a Go`
	}
	return g.Wait()
}

func InCondition() error {
	var g wsgroup.Group
	if g.TryGo(work) {
		g.SetLimit(1) // want `SetLimit on g after a TryGo`
	}
	return g.Wait()
}

type server struct{ g wsgroup.Group }

func (s *server) Field() error {
	s.g.Go(work)
	s.g.SetLimit(4) // want `SetLimit on s.g after a Go`
	return s.g.Wait()
}

func WaitInGoroutine() error {
	var g wsgroup.Group
	g.Go(work)
	g.SetLimit(3) // want `SetLimit on g after a Go`
	errc := make(chan error)
	go func() { errc <- g.Wait() }()
	return <-errc
}

// Silent below.

func BeforeGo() error {
	var g wsgroup.Group
	g.SetLimit(2)
	g.Go(work)
	return g.Wait()
}

func WaitBetween() error {
	var g wsgroup.Group
	g.Go(work)
	if err := g.Wait(); err != nil {
		return err
	}
	g.SetLimit(2)
	g.Go(work)
	return g.Wait()
}

func WaitBetweenInGoroutine() error {
	var g wsgroup.Group
	g.Go(work)
	errc := make(chan error)
	go func() { errc <- g.Wait() }()
	if err := <-errc; err != nil {
		return err
	}
	g.SetLimit(2)
	return nil
}

func DifferentGroups() error {
	var g, h wsgroup.Group
	g.Go(work)
	h.SetLimit(2)
	h.Go(work)
	return g.Wait()
}

func GoInAnotherFunction() error {
	var g wsgroup.Group
	start := func() { g.Go(work) }
	g.SetLimit(2)
	start()
	return g.Wait()
}

func GoInGoroutine() error {
	var g wsgroup.Group
	go func() {
		g.Go(work)
	}()
	g.SetLimit(2)
	return g.Wait()
}

func DifferentBranches(ok bool) error {
	var g wsgroup.Group
	if ok {
		g.Go(work)
	} else {
		g.SetLimit(1)
	}
	return g.Wait()
}

func DifferentCases(ok bool) error {
	var g wsgroup.Group
	switch {
	case ok:
		g.Go(work)
	default:
		g.SetLimit(1)
	}
	return g.Wait()
}

func DifferentCommClauses() error {
	var g wsgroup.Group
	select {
	case <-make(chan int):
		g.Go(work)
	default:
		g.SetLimit(1)
	}
	return g.Wait()
}

func NewGroupBetween(ctx context.Context) error {
	g, ctx := wsgroup.WithContext(ctx)
	g.Go(work)
	errc := make(chan error, 1)
	go func(g *wsgroup.Group) { errc <- g.Wait() }(g)
	g, _ = wsgroup.WithContext(ctx)
	g.SetLimit(1)
	g.Go(work)
	return g.Wait()
}

func WaitInClosure() error {
	var g wsgroup.Group
	wait := func() {
		if err := g.Wait(); err != nil {
			panic(err)
		}
	}
	g.Go(work)
	wait()
	g.SetLimit(2)
	g.Go(work)
	wait()
	return nil
}

func waitFor(g *wsgroup.Group) error { return g.Wait() }

func GroupPassedBetween() error {
	var g wsgroup.Group
	g.Go(work)
	if err := waitFor(&g); err != nil {
		return err
	}
	g.SetLimit(2)
	return nil
}

func OtherClosureBetween() error {
	var g, h wsgroup.Group
	waitH := func() { _ = h.Wait() }
	g.Go(work)
	waitH()
	g.SetLimit(2) // want `SetLimit on g after a Go`
	return g.Wait()
}

func RemoveLimit() error {
	var g wsgroup.Group
	g.Go(work)
	g.SetLimit(-1) // removing the limit is allowed while tasks run
	return g.Wait()
}

func Deferred() error {
	var g wsgroup.Group
	defer g.SetLimit(1)
	g.Go(work)
	return g.Wait()
}

func PerIteration(n int) error {
	var g wsgroup.Group
	for range n {
		g.SetLimit(2)
		g.Go(work)
		if err := g.Wait(); err != nil {
			return err
		}
	}
	return nil
}

type other struct{}

func (other) Go(f func() error) {}
func (other) SetLimit(n int)    {}

func NotAGroup() {
	var o other
	o.Go(work)
	o.SetLimit(1)
}
