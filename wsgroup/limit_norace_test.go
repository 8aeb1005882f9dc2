//go:build !race

package wsgroup_test

// Changing the limit while tasks are active is a data race by errgroup's own
// rules (SetLimit writes what every Go and every finishing task reads), so
// the race detector reports it however the library behaves; this file is
// left out of race builds.

import (
	"testing"

	"github.com/go-steal/steal/internal/testkit"
	"github.com/go-steal/steal/wsgroup"
)

// SetLimit(-1), which errgroup allows while tasks are active, starts the
// tasks that a Go inside a task set aside for a slot: with no limit they
// wait for nothing.
func TestNegativeLimitStartsSetAsideTasks(t *testing.T) {
	testkit.Guard(t, func() {
		var outer wsgroup.Group
		outer.Go(func() error {
			var g wsgroup.Group
			g.SetLimit(1)
			release, started := make(chan struct{}), make(chan struct{})
			g.Go(func() error { <-release; return nil }) // holds the slot
			g.Go(func() error { close(started); return nil })
			g.SetLimit(-1)
			<-started // would wait for ever if the task stayed set aside
			close(release)
			return g.Wait()
		})
		if err := outer.Wait(); err != nil {
			t.Errorf("Wait() = %v", err)
		}
	})
}
