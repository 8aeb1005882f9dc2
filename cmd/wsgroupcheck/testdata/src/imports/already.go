package imports

// An import of wsgroup itself is not reported.
import (
	"github.com/go-steal/steal/wsgroup"
)

func Already() error {
	var g wsgroup.Group
	return g.Wait()
}
