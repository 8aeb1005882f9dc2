package sched

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-steal/steal/internal/testkit"
)

// A wave of blocking tasks: more tasks blocked at once than any table the
// scheduler sizes at compile time holds (the runners' table, the buckets
// of the workers' table), beside clients
// that fan out CPU-bound tasks, under every setting the scheduler reads.

// waveSettings are the environments a wave runs in, by name: each value
// of the one setting the scheduler reads (the status reader, whose
// fallback reads the runtime's counts instead). Each runs in a process of
// its own, since the setting is read once per process.
var waveSettings = []waveSetting{
	{"defaults", false},
	{"gstatus=off", true},
}

// waveSetting is one of waveSettings.
type waveSetting struct {
	name      string
	statusOff bool
}

// env is the setting's environment for a child process.
func (s waveSetting) env() []string {
	if s.statusOff {
		return []string{"STEAL_GSTATUS=off"}
	}
	return []string{"STEAL_GSTATUS="}
}

// waveSettingsRun are the settings TestBlockingWave runs: all of them, or
// under -short only the one this process was started with (CI runs the
// short suite once in each setting, and go test ./... runs them all).
func waveSettingsRun() []waveSetting {
	if !testing.Short() {
		return waveSettings
	}
	own := os.Getenv("STEAL_GSTATUS") == "off"
	for _, s := range waveSettings {
		if s.statusOff == own {
			return []waveSetting{s}
		}
	}
	panic("waveSettings lacks a setting")
}

// waveTasks is how many tasks of a wave block at once: 10,000, or 6,000
// under the race detector, which ends a program with more than 8,128
// goroutines alive; either is more than runnerSlots. In a
// build that checks the slots' invariant at every transition (O(slots)
// each: slotsChecked) a wave costs the square of its size, and has 1,000.
var waveTasks = 10_000

func init() {
	switch {
	case slotsChecked:
		waveTasks = 1_000
	case testkit.Race:
		waveTasks = 6_000
	}
}

// waveRun is one wave of a child: its GOMAXPROCS, and where its tasks are
// queued from (goFrom).
type waveRun struct {
	procs int
	from  string
}

// waveRuns are the waves each child runs: each GOMAXPROCS from outside and
// from inside tasks, or under -short one wave per GOMAXPROCS, from outside
// and inside in turn.
func waveRuns() []waveRun {
	if testing.Short() {
		return []waveRun{{1, "outside"}, {2, "inside"}, {4, "outside"}}
	}
	var runs []waveRun
	for _, procs := range []int{1, 2, 4} {
		for _, from := range []string{"outside", "inside"} {
			runs = append(runs, waveRun{procs, from})
		}
	}
	return runs
}

// TestBlockingWave runs, in a child process per setting (waveSettingsRun),
// waves of waveTasks tasks that each block until all of them have
// started, queued from outside and from inside tasks, while four clients
// fan out CPU-bound tasks, at GOMAXPROCS 1, 2 and 4 (waveRuns); each wave
// must end with every task run once and the pool retired (checkRetired).
// A wave that cannot get all its tasks started at once hangs, and the
// hang guard fails the child with a goroutine dump. So does one whose
// blocked workers are handed on one at a time: the clients keep every CPU
// busy, so that on the fallback the runtime's counts cannot prove the
// attached workers blocked (see package handoff: monitor.rampOnEvidence), and a hand-off
// per unprovenWait would take minutes.
func TestBlockingWave(t *testing.T) {
	if os.Getenv(childVar) == "wave" {
		blockingWaves(t)
		return
	}
	for _, s := range waveSettingsRun() {
		t.Run(s.name, func(t *testing.T) {
			out := testkit.Child(t, "TestBlockingWave", append([]string{childVar + "=wave"}, s.env()...)...)
			if testing.Verbose() {
				t.Log(out)
			}
		})
	}
}

// blockingWaves is TestBlockingWave's body in the child process.
func blockingWaves(t *testing.T) {
	for _, r := range waveRuns() {
		t.Run(fmt.Sprintf("procs=%d/%s", r.procs, r.from), func(t *testing.T) {
			testkit.SetProcs(t, r.procs)
			guardPool(t, func() { blockingWave(t, r.from) })
		})
	}
}

// blockingWave runs one wave beside the CPU-bound clients.
func blockingWave(t *testing.T, from string) {
	var stop atomic.Bool
	var fanOuts atomic.Int64
	var clients sync.WaitGroup
	for range 4 {
		clients.Go(func() {
			for !stop.Load() {
				var g Group
				for range 8 {
					g.Go(func() error { sink.Add(int64(fibPlain(15))); return nil })
				}
				wantNil(t, "a client's Wait()", g.Wait())
				fanOuts.Add(1)
			}
		})
	}
	var g Group
	var started, ran atomic.Int64
	all := make(chan struct{})
	goFrom(&g, from, waveTasks, func() error {
		if started.Add(1) == int64(waveTasks) {
			close(all)
		}
		<-all
		ran.Add(1)
		return nil
	})
	wantNil(t, "the wave's Wait()", g.Wait())
	stop.Store(true)
	clients.Wait()
	if got := ran.Load(); got != int64(waveTasks) {
		t.Errorf("%d of the wave's %d tasks ran", got, waveTasks)
	}
	t.Logf("GOMAXPROCS %d: %d tasks blocked at once beside %d CPU fan-outs; %d goroutines at the end",
		runtime.GOMAXPROCS(0), waveTasks, fanOuts.Load(), runtime.NumGoroutine())
}
