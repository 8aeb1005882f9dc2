package imports

import eg "golang.org/x/sync/errgroup" // want `changing this import to eg "github.com/go-steal/steal/wsgroup": the API is the same`

func Named() error {
	var g eg.Group
	g.Go(func() error { return nil })
	return g.Wait()
}
