//go:build explore

package handoff

import (
	"fmt"
	"testing"

	"github.com/go-steal/steal/internal/explore"
	"github.com/go-steal/steal/internal/explore/atomic"
)

// watchPool is a Pool whose only state is its count of queued tasks, an
// exploration point like every atomic here.
type watchPool struct {
	fakePool
	queued atomic.Int32
}

func (p *watchPool) Queued() int { return int(p.queued.Load()) }

// TestExploreWatch: under every interleaving of a monitor giving its flag
// up (stopWatching) with posters that queue a task and then make sure a
// monitor runs (watch), no task is left queued with no monitor: at the
// end, a task queued means the flag is held: by the monitor, which took
// it back, or by a poster, which would have started a new monitor.
func TestExploreWatch(t *testing.T) {
	for posters := 1; posters <= 2; posters++ {
		t.Run(fmt.Sprintf("posters=%d", posters), func(t *testing.T) {
			res := explore.Explore(t, explore.Options{Strategy: explore.Exhaustive(explore.Bound(3, 4)), Budget: explore.Budget()}, func(s *explore.Schedule) {
				p := &watchPool{}
				h := &Handoff{}
				h.Init(p)
				h.watching.Store(true) // a monitor runs
				var exited bool
				mon := s.Go("monitor", func() { exited = h.stopWatching() })
				var ps []*explore.Thread
				for i := range posters {
					ps = append(ps, s.Go(fmt.Sprintf("poster%d", i), func() {
						p.queued.Add(1)
						h.watch()
					}))
				}
				mon.Join()
				for _, th := range ps {
					th.Join()
				}
				if !h.watching.Load() {
					s.Errorf("%d tasks queued, and no monitor (the old one exited: %v)", p.queued.Load(), exited)
				}
			})
			if !res.Exhausted && !explore.Long() {
				t.Log(res)
			}
		})
	}
}
