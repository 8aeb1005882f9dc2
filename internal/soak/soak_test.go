package main

import (
	"bytes"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/go-steal/steal/adapter"
	"github.com/go-steal/steal/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(testkit.Settled(m)) }

// TestSoak runs the soak for a few seconds (one under -short), or for
// STEAL_SOAK_DURATION.
func TestSoak(t *testing.T) {
	cfg := defaultConfig()
	cfg.d = time.Duration(testkit.Scale(4, 1)) * time.Second
	if s := os.Getenv("STEAL_SOAK_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("STEAL_SOAK_DURATION=%q: %v", s, err)
		}
		cfg.d = d
	}
	cfg.clients = 8
	var out bytes.Buffer
	err := run(cfg, &out)
	t.Logf("\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	last := lastLine(out.String())
	if !strings.HasPrefix(last, "soak: PASS") {
		t.Errorf("the report's last line is %q, want the figures of a pass", last)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// quickConfig runs mix on wsgroup only, briefly, with bounds short enough
// for a test that expects them to be hit.
func quickConfig(mix ...scenario) config {
	cfg := defaultConfig()
	cfg.d = 200 * time.Millisecond
	cfg.clients = 2
	cfg.mix = mix
	cfg.soloRuns = 1
	cfg.stall = 300 * time.Millisecond
	cfg.leak = 100 * time.Millisecond
	return cfg
}

// TestSoakReportsFailedCheck: a scenario whose check fails on its third run
// fails the soak, and the report names the run in a form -replay accepts.
func TestSoakReportsFailedCheck(t *testing.T) {
	n := 0
	cfg := quickConfig(scenario{"third-fails", false, func(e *env) error {
		if n++; n == 3 {
			return errors.New("planted failure")
		}
		return nil
	}})
	cfg.clients = 1
	var out bytes.Buffer
	if err := run(cfg, &out); err == nil {
		t.Fatalf("run() = nil with a failing check; output:\n%s", out.String())
	}
	m := regexp.MustCompile(`planted failure\nreplay: go run \./internal/soak -replay (\S+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("the report does not name the failing run for -replay; output:\n%s", out.String())
	}
	s := &soak{cfg: cfg}
	sc, kind, _, err := s.parseReplay(m[1])
	if err != nil || sc != 0 || kind != adapter.Wsgroup {
		t.Errorf("parseReplay(%q) = %d, %v, %v; want scenario 0 on wsgroup", m[1], sc, kind, err)
	}
	if last := lastLine(out.String()); !strings.HasPrefix(last, "soak: FAIL") && !strings.HasPrefix(last, "replay:") {
		t.Errorf("last line %q says nothing of the failure", last)
	}
}

// TestSoakReportsStall: a run that never ends fails the soak once the
// stall bound has passed, with the stack of the stuck goroutine.
func TestSoakReportsStall(t *testing.T) {
	release := make(chan struct{})
	stuck := func(e *env) error { <-release; return nil }
	cfg := quickConfig(scenario{"stuck", false, stuck})
	var out bytes.Buffer
	var err error
	testkit.Guard(t, func() { err = run(cfg, &out) })
	close(release) // the stuck client ends; goleak checks it did
	if err == nil {
		t.Fatalf("run() = nil with a run that never ends; output:\n%s", out.String())
	}
	for _, want := range []string{"STALL: client 0 made no progress", "stuck/wsgroup/", "TestSoakReportsStall.func"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q; output:\n%s", want, out.String())
		}
	}
}

// TestSoakReportsLeftovers: a goroutine of the soak's that outlives the
// load fails the soak once the leak bound has passed, with its stack.
func TestSoakReportsLeftovers(t *testing.T) {
	release := make(chan struct{})
	left := func(e *env) error {
		go leftBehind(release)
		return nil
	}
	cfg := quickConfig(scenario{"leaves-a-goroutine", false, left})
	var out bytes.Buffer
	var err error
	testkit.Guard(t, func() { err = run(cfg, &out) })
	close(release)
	if err == nil {
		t.Fatalf("run() = nil with goroutines left behind; output:\n%s", out.String())
	}
	for _, want := range []string{"goroutines are left", "leftBehind"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q; output:\n%s", want, out.String())
		}
	}
}

func leftBehind(release <-chan struct{}) { <-release }

// TestOursFindsOnlyOurs: of a dump, ours keeps the goroutines running
// code of the library, of errgroup or of the soak, but those it is told
// were there before.
func TestOursFindsOnlyOurs(t *testing.T) {
	dump := strings.Join([]string{
		"goroutine 1 [running]:\nmain.run()\n\t/src/internal/soak/run.go:10",
		"goroutine 2 [chan receive]:\ngithub.com/go-steal/steal/internal/sched.(*worker).run()",
		"goroutine 3 [select]:\ntesting.(*T).Run()",
		"goroutine 4 [semacquire]:\ngolang.org/x/sync/errgroup.(*Group).Wait()",
		"goroutine 5 [chan receive]:\nmain.leftBehind()\n\t/src/internal/soak/soak_test.go:1",
		"goroutine 6 [chan receive]:\ngithub.com/go-steal/steal/internal/soak.TestMain()",
	}, "\n\n")
	var ids []string
	for _, b := range ours([]byte(dump), map[string]bool{"6": true}) {
		ids = append(ids, goroutineID(b))
	}
	if got, want := strings.Join(ids, ","), "1,2,4,5"; got != want {
		t.Errorf("ours kept goroutines %s, want %s", got, want)
	}
}

// TestReplayKeys: -replay accepts what a failure prints and refuses the
// rest with a reason.
func TestReplayKeys(t *testing.T) {
	s := &soak{cfg: defaultConfig()}
	for _, tc := range []struct {
		key, err string
	}{
		{"fan-out/errgroup/0x2a", ""},
		{"loops/wsgroup/42", ""},
		{"loops/errgroup/0x2a", "errgroup cannot run"},
		{"nope/wsgroup/1", "no scenario"},
		{"fan-out/conc/1", "unknown group kind"},
		{"fan-out/wsgroup/x", "seed"},
		{"fan-out/wsgroup", "want scenario/kind/seed"},
	} {
		_, _, _, err := s.parseReplay(tc.key)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("parseReplay(%q) = %v, want an error containing %q", tc.key, err, tc.err)
		}
	}
}
