package wsgroup_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"runtime/trace"
	"testing"

	xtrace "golang.org/x/exp/trace"

	"github.com/go-steal/steal/internal/testkit"
	"github.com/go-steal/steal/wsgroup"
)

// Traces see tasks: while the execution tracer runs, each task runs in a
// trace region named after the function that called Go (or For). The test
// takes a real trace and reads it back.

// fanOutSite gives n tasks from its own body, each of which gives k
// subtasks from its closure (fanOutSite.func1), and waits.
//
//go:noinline
func fanOutSite(n, k int) error {
	var g wsgroup.Group
	for range n {
		g.Go(func() error {
			var sub wsgroup.Group
			for range k {
				sub.Go(func() error { return nil })
			}
			return sub.Wait()
		})
	}
	return g.Wait()
}

// loopSite runs a loop of n bodies.
//
//go:noinline
func loopSite(n int) error {
	return wsgroup.For(context.Background(), n, func(context.Context, int) error { return nil })
}

// TestTraceRegions: a trace taken during a fan-out holds one region per
// task, begun and ended, named after its Go site: the outer tasks after
// fanOutSite, their subtasks after fanOutSite's closure; a loop's tasks
// are named after the function that called For. Outside the trace, no
// region is made.
func TestTraceRegions(t *testing.T) {
	testkit.Guard(t, func() {
		const n, k, loopN = 20, 5, 1000
		// Before the trace: these tasks must leave nothing in it.
		wantNil(t, "fanOutSite before the trace", fanOutSite(n, k))
		var buf bytes.Buffer
		if err := trace.Start(&buf); err != nil {
			t.Fatalf("trace.Start: %v", err)
		}
		err := fanOutSite(n, k)
		errLoop := loopSite(loopN)
		trace.Stop()
		wantNil(t, "fanOutSite", err)
		wantNil(t, "loopSite", errLoop)
		wantNil(t, "fanOutSite after the trace", fanOutSite(n, k))

		begun, ended := readRegions(t, buf.Bytes())
		const site = "github.com/go-steal/steal/wsgroup_test.fanOutSite"
		for typ, want := range map[string]int{site: n, site + ".func1": n * k} {
			if begun[typ] != want || ended[typ] != want {
				t.Errorf("regions %q: %d begun and %d ended, want %d of each", typ, begun[typ], ended[typ], want)
			}
		}
		loop := "github.com/go-steal/steal/wsgroup_test.loopSite"
		if begun[loop] == 0 || begun[loop] != ended[loop] {
			t.Errorf("regions %q: %d begun and %d ended, want as many, at least one", loop, begun[loop], ended[loop])
		}
		for typ, c := range begun {
			if typ != site && typ != site+".func1" && typ != loop {
				t.Errorf("%d regions %q: named after no Go site of the test", c, typ)
			}
		}
	})
}

// readRegions counts the regions begun and ended in a trace, by type.
func readRegions(t *testing.T, data []byte) (begun, ended map[string]int) {
	t.Helper()
	r, err := xtrace.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("reading the trace: %v", err)
	}
	begun, ended = map[string]int{}, map[string]int{}
	for {
		ev, err := r.ReadEvent()
		if errors.Is(err, io.EOF) {
			return begun, ended
		}
		if err != nil {
			t.Fatalf("reading the trace: %v", err)
		}
		switch ev.Kind() {
		case xtrace.EventRegionBegin:
			begun[ev.Region().Type]++
		case xtrace.EventRegionEnd:
			ended[ev.Region().Type]++
		}
	}
}
