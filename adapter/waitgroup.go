package adapter

import (
	"fmt"
	"sync"

	"github.com/go-steal/steal/wsgroup"
)

// WaitGroup is sync.WaitGroup's Go and Wait: *sync.WaitGroup satisfies it.
type WaitGroup interface {
	// Go calls f in a new task; see sync.WaitGroup.Go.
	Go(f func())
	// Wait waits until every function passed to Go has returned.
	Wait()
}

var (
	_ WaitGroup = (*sync.WaitGroup)(nil)
	_ WaitGroup = (*wsWaitGroup)(nil)
)

// NewWaitGroup returns a new WaitGroup of kind k: a *sync.WaitGroup for
// Errgroup (one goroutine per task), or one that runs the functions on
// wsgroup's workers for Wsgroup. It panics if k is unknown, like New.
//
// The return of each function synchronizes before the return of the Wait
// that waits for it, in both. As with sync.WaitGroup, Go must not be called
// after a Wait has started, unless the WaitGroup is reused for a new batch.
func NewWaitGroup(k Kind) WaitGroup {
	switch k {
	case Errgroup:
		return new(sync.WaitGroup)
	case Wsgroup:
		return new(wsWaitGroup)
	}
	panic(fmt.Sprintf("adapter: NewWaitGroup called with unknown kind %q (want %q or %q)", string(k), Errgroup, Wsgroup))
}

// WaitGroupFromEnv is NewWaitGroup with the kind from STEAL_GROUP
// (KindFromEnv).
func WaitGroupFromEnv(def Kind) (WaitGroup, error) {
	k, err := envKind(def)
	if err != nil {
		return nil, err
	}
	return NewWaitGroup(k), nil
}

// wsWaitGroup runs WaitGroup tasks on a wsgroup.Group. The zero value is
// ready to use.
type wsWaitGroup struct {
	g wsgroup.Group
}

func (w *wsWaitGroup) Go(f func()) {
	if f == nil {
		panic("adapter: WaitGroup.Go called with a nil function")
	}
	w.g.Go(func() error { f(); return nil })
}

func (w *wsWaitGroup) Wait() { _ = w.g.Wait() }
