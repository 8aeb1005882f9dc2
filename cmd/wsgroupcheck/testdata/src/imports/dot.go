package imports

import . "golang.org/x/sync/errgroup" // want `changing this import to . "github.com/go-steal/steal/wsgroup"; it is not changed by -fix`

func Dot() error {
	var g Group
	return g.Wait()
}
