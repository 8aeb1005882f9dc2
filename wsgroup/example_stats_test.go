package wsgroup_test

import (
	"encoding/json"
	"expvar"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/go-steal/steal/wsgroup"
)

// A service exports the scheduler's counts with expvar, which serves them
// as JSON at /debug/vars (under "wsgroup" here), one number per field of
// Stats, read afresh at each request.
func ExampleReadStats() {
	// A service publishes once, at start-up; Publish panics if the name is
	// taken, and an example may run more than once.
	if expvar.Get("wsgroup") == nil {
		expvar.Publish("wsgroup", expvar.Func(func() any { return wsgroup.ReadStats() }))
	}

	var shown map[string]uint64
	if err := json.Unmarshal([]byte(expvar.Get("wsgroup").String()), &shown); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(slices.Sorted(maps.Keys(shown)))

	// The difference of two readings counts what happened in between: here
	// 100 tasks, each with a nested group of two more. The counts are
	// exact once the scheduler is quiet (see ReadStats); settle waits for
	// that, so that the example prints exact numbers.
	before := settle()
	var g wsgroup.Group
	for range 100 {
		g.Go(func() error {
			var inner wsgroup.Group
			inner.Go(func() error { return nil })
			inner.Go(func() error { return nil })
			return inner.Wait()
		})
	}
	if err := g.Wait(); err != nil {
		fmt.Println(err)
		return
	}
	d := settle().Sub(before)
	fmt.Println("tasks:", d.Tasks)

	// Output:
	// [Compensations FailedSteals InjectorPops LocalPops Sleeps Steals Tasks Wakes Workers WorkersRetired WorkersStarted]
	// tasks: 300
}

// settle waits until no worker is left (a few milliseconds after the last
// task) and returns the reading that showed it.
func settle() wsgroup.Stats {
	for {
		if s := wsgroup.ReadStats(); s.Workers == 0 {
			return s
		}
		time.Sleep(time.Millisecond)
	}
}
