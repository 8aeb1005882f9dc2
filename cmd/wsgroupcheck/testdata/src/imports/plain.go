package imports

import (
	"context"

	"golang.org/x/sync/errgroup" // want `errgroup can be replaced by wsgroup by changing this import to errgroup "github.com/go-steal/steal/wsgroup": .*#the-one-line-change$`
)

func Plain(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return ctx.Err() })
	return g.Wait()
}
