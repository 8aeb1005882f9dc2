// Package wsgroup is a stub of github.com/go-steal/steal/wsgroup with the
// API the analyzer looks at, for its tests.
package wsgroup

import "context"

type Group struct{}

func WithContext(ctx context.Context) (*Group, context.Context) { return &Group{}, ctx }

func (g *Group) Wait() error               { return nil }
func (g *Group) Go(f func() error)         {}
func (g *Group) TryGo(f func() error) bool { return true }
func (g *Group) SetLimit(n int)            {}

type PanicMode int

const (
	PanicCrash PanicMode = iota
	PanicInWait
)

func (g *Group) SetPanicMode(m PanicMode) {}

type LoopOption interface{ loopOption() }

func (PanicMode) loopOption() {}

func For(ctx context.Context, n int, body func(ctx context.Context, i int) error, opts ...LoopOption) error {
	return nil
}

func ForEach[E any](ctx context.Context, s []E, f func(ctx context.Context, e *E) error, opts ...LoopOption) error {
	return nil
}

func Map[E, R any](ctx context.Context, s []E, f func(ctx context.Context, e *E) (R, error), opts ...LoopOption) ([]R, error) {
	return nil, nil
}
