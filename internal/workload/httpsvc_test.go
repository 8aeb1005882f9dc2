package workload

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sync/errgroup"
)

// httpRequests is how many requests of the measured kind the HTTP service
// tests run per mode.
const httpRequests = 40

// TestHTTPService runs the HTTP service briefly in every mode, on plain
// goroutines and on errgroup: every response must be right, the measured
// kind must have done exactly its requests, and each /io request must
// have made one group with SetLimit(HTTPIOLimit), each /cpu request one
// group with no limit.
func TestHTTPService(t *testing.T) {
	for _, mode := range httpModes {
		for _, name := range []string{"go", "errgroup"} {
			var mu sync.Mutex
			made := map[int]int64{} // limit: groups made with it
			count := func(limit int) {
				mu.Lock()
				made[limit]++
				mu.Unlock()
			}
			im := HTTPImplOf(name, func(limit int) *goGroup { count(limit); return NewGroup[goGroup](limit) })
			if name == "errgroup" {
				im = HTTPImplOf(name, func(limit int) *errgroup.Group { count(limit); return NewGroup[errgroup.Group](limit) })
			}
			r, err := runHTTP(httpRequests, mode, im, nop, nop)
			if err != nil {
				t.Errorf("mode %s, %s: %v", mode, name, err)
				continue
			}
			measured := r.io
			if mode == "cpu" {
				measured = r.cpu
			}
			if measured.done != httpRequests || measured.p50 <= 0 || measured.p50 > measured.p99 {
				t.Errorf("mode %s, %s: %d measured requests, latency p50 %v, p99 %v: want %d and 0 < p50 <= p99",
					mode, name, measured.done, measured.p50, measured.p99, httpRequests)
			}
			if _, _, ok := threadStats(); ok && (!r.threadsOK || r.runWait < 0 || mode == "io" && r.wakeups <= 0) {
				// In mode io every request waits 5 ms on the back end with
				// nothing else to run: threads sleep and are woken.
				t.Errorf("mode %s, %s: threads' run-queue wait %v, wake-ups %d, measured %v: want both measured, and wake-ups in mode io",
					mode, name, r.runWait, r.wakeups, r.threadsOK)
			}
			if mode == "mixed" && r.cpu.done == 0 {
				t.Errorf("mode mixed, %s: no /cpu request completed alongside %d /io requests", name, r.io.done)
			}
			if made[HTTPIOLimit] != r.io.issued || made[0] != r.cpu.issued || len(made) > 2 {
				t.Errorf("mode %s, %s: groups made per limit %v for %d /io and %d /cpu requests", mode, name, made, r.io.issued, r.cpu.issued)
			}
		}
	}
}

// dropGroup is goGroup, except that the first Go call made on any of the
// groups that share dropped is dropped: its task never runs.
type dropGroup struct {
	goGroup
	dropped *atomic.Bool
}

func (g *dropGroup) Go(f func() error) {
	if g.dropped.CompareAndSwap(false, true) {
		return
	}
	g.goGroup.Go(f)
}

// repeatGroup is goGroup, except that the first task given to any of the
// groups that share repeated runs twice, one run after the other.
type repeatGroup struct {
	goGroup
	repeated *atomic.Bool
}

func (g *repeatGroup) Go(f func() error) {
	if g.repeated.CompareAndSwap(false, true) {
		g.goGroup.Go(func() error {
			if err := f(); err != nil {
				return err
			}
			return f()
		})
		return
	}
	g.goGroup.Go(f)
}

// TestHTTPServiceChecks checks that the HTTP service's accounting notices
// a request whose group drops a subtask (a lost back-end GET or a lost
// hash), repeats one (a GET too many, whose body is the same, so only the
// back end's count shows it; a hash too many), or fails in Wait.
func TestHTTPServiceChecks(t *testing.T) {
	drop := func() HTTPImpl {
		var dropped atomic.Bool
		return HTTPImplOf("drop", func(int) *dropGroup { return &dropGroup{dropped: &dropped} })
	}
	repeat := func() HTTPImpl {
		var repeated atomic.Bool
		return HTTPImplOf("repeat", func(int) *repeatGroup { return &repeatGroup{repeated: &repeated} })
	}
	fail := HTTPImplOf("fail", func(int) *failGroup { return new(failGroup) })
	cases := []struct {
		mode string
		im   HTTPImpl
		want []string // what the error must say
	}{
		{"io", drop(), []string{"/io responses wrong", "body", "the back end served"}},
		{"io", repeat(), []string{"the back end served"}},
		{"cpu", drop(), []string{"/cpu responses wrong", "body"}},
		{"cpu", repeat(), []string{"/cpu responses wrong", "body"}},
		{"mixed", drop(), []string{"responses wrong", "body"}},
		{"io", fail, []string{"502", errWait.Error()}},
		{"cpu", fail, []string{"500", errWait.Error()}},
	}
	for _, tc := range cases {
		_, err := runHTTP(httpRequests, tc.mode, tc.im, nop, nop)
		for _, want := range tc.want {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("mode %s, %s: runHTTP error = %v, want one with %q", tc.mode, tc.im.Name, err, want)
				break
			}
		}
	}
	if _, err := runHTTP(httpRequests, "nonsense", HTTPImplOf("go", NewGroup[goGroup]), nop, nop); err == nil {
		t.Error("mode nonsense: runHTTP did not fail")
	}
}
