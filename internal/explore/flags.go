//go:build explore

package explore

import (
	"flag"
	"testing"
	"time"
)

// The sizes of the explorations in the project's tests. By default they
// are small enough for CI (all of them in well under 30 s on two cores);
// -short makes them smaller still. -explore.long runs larger ones, each for
// up to -explore.budget:
//
//	go test -tags explore -run Explore ./internal/... -explore.long -explore.budget=10m
var (
	long   = flag.Bool("explore.long", false, "run the larger explorations (see -explore.budget)")
	budget = flag.Duration("explore.budget", time.Minute, "with -explore.long: the time each exploration may take")
)

// Long reports whether -explore.long was given.
func Long() bool { return *long }

// Bound returns the preemption bound for an exhaustive exploration: short
// under -short, normal by default, and normal+1 under -explore.long.
func Bound(short, normal int) int {
	switch {
	case *long:
		return normal + 1
	case testing.Short():
		return short
	}
	return normal
}

// Schedules returns how many schedules a random exploration (PCT, Random)
// runs: short under -short, normal by default, and as many as the budget
// allows (0) under -explore.long.
func Schedules(short, normal int) int {
	switch {
	case *long:
		return 0
	case testing.Short():
		return short
	}
	return normal
}

// Budget returns the time limit for one exploration: -explore.budget under
// -explore.long, none otherwise (the default sizes end by themselves).
func Budget() time.Duration {
	if *long {
		return *budget
	}
	return 0
}
