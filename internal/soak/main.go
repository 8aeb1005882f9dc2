// Command soak hammers wsgroup with everything at once and checks every
// result exactly. Many client goroutines each pick a random scenario again
// and again (a fan-out, a limited group, errors, nested fork-join, chains
// of tasks that wait for later tasks, loops, recovered panics, Goexit,
// cancellation; scenarios.go lists them and what each checks) while a
// background goroutine changes GOMAXPROCS among 1, 2 and 4. Every run
// checks that each task ran exactly once (or was dropped exactly as the
// documentation allows), that no limit was exceeded, that results the tasks
// wrote without atomics are visible after Wait, and that Wait returned the
// right error or raised the right panic. A client that makes no progress for
// the stall bound (15 s) is reported with a dump of every goroutine, and
// once the load stops no goroutine of wsgroup, of errgroup or of the soak
// may be left after the leak bound (2 s).
//
// The same scenarios that errgroup can run are then run on errgroup, as a
// check of the checks and for comparison: the report gives per scenario the
// runs, the tasks, the peak number of goroutines of one run alone and the
// mean time of a run under the load, beside errgroup's, and its last line
// the totals. (The times compare only when -mix names scenarios that both
// run: otherwise wsgroup's phase carries the loops too.)
//
// Usage, from the module root:
//
//	go run ./internal/soak                 # 60 s
//	go run ./internal/soak -d 10m          # longer
//	go run -race ./internal/soak -d 30s    # under the race detector
//	go run ./internal/soak -seed 0x2a      # the clients' seeds of an earlier run
//	go run ./internal/soak -mix fan-out,chain-inside,io-limit
//	go run ./internal/soak -replay fork-join/wsgroup/0x9e3779b97f4a7c15
//
// Each run starts from a fresh seed, printed on the first line; a failure
// names the scenario, the implementation and the seed of that run, and
// -replay runs just that scenario with that seed (its sizes, limits and
// choices; the interleaving is new each time) from every client until the
// duration ends or it fails. The exit status is 1 on any failure.
//
// go test ./internal/soak runs the same soak for a few seconds
// (STEAL_SOAK_DURATION sets how long).
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
)

func main() {
	cfg := defaultConfig()
	flag.DurationVar(&cfg.d, "d", cfg.d, "how long to run the load, wsgroup and errgroup phases together")
	flag.IntVar(&cfg.clients, "clients", cfg.clients, "client goroutines running scenarios at once (up to 32: beyond, the tasks of chains blocked at once can pass the most workers the scheduler adds for blocked ones)")
	flag.Func("seed", "seed of the clients' random choices (default: a fresh one)", func(s string) error {
		var err error
		cfg.seed, err = parseSeed(s)
		return err
	})
	flag.Func("mix", "run only these comma-separated `scenarios` (default: all)", func(names string) error {
		var err error
		cfg.mix, err = selectMix(names)
		return err
	})
	flag.Func("procs", "comma-separated `values` GOMAXPROCS changes among (default 1,2,4)", func(list string) error {
		cfg.procs = nil
		for _, v := range strings.Split(list, ",") {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return fmt.Errorf("not a GOMAXPROCS: %q", v)
			}
			cfg.procs = append(cfg.procs, n)
		}
		return nil
	})
	flag.StringVar(&cfg.replay, "replay", "", "run only this `scenario/kind/seed`, as printed by a failure")
	flag.DurationVar(&cfg.stall, "stall", cfg.stall, "how long a client may make no progress before the soak fails")
	flag.DurationVar(&cfg.leak, "leak", cfg.leak, "how long goroutines may outlive the load")
	flag.BoolVar(&cfg.verbose, "v", false, "print every scenario run with its seed")
	flag.Parse()
	if flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "soak: unexpected arguments:", flag.Args())
		os.Exit(2)
	}
	if err := run(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}
