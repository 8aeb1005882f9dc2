package workload

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// goGroup runs each task on a goroutine of its own, as errgroup does, so
// that the service request runs concurrently in these tests. It has no
// limit.
type goGroup struct {
	wg  sync.WaitGroup
	mu  sync.Mutex
	err error
}

func (g *goGroup) Go(f func() error) {
	g.wg.Go(func() {
		if err := f(); err != nil {
			g.mu.Lock()
			if g.err == nil {
				g.err = err
			}
			g.mu.Unlock()
		}
	})
}
func (g *goGroup) SetLimit(int) {}
func (g *goGroup) Wait() error  { g.wg.Wait(); return g.err }

// limitGroup records its SetLimit call.
type limitGroup struct {
	InlineGroup
	limit int
	set   bool
}

func (g *limitGroup) SetLimit(n int) { g.limit, g.set = n, true }

var errWait = errors.New("workload_test: Wait failed")

// failGroup runs its tasks inline and fails in Wait.
type failGroup struct{ InlineGroup }

func (g *failGroup) Wait() error { return errWait }

// serviceRequests is how many requests the tests run per shape.
const serviceRequests = 200

func nop() {}

// TestServiceRequest runs every shape's request, inline and on goroutines,
// through the driver: every unit of work must run once.
func TestServiceRequest(t *testing.T) {
	for _, s := range ServiceShapes {
		for name, request := range map[string]func(*ServiceClient){
			"inline": ServiceRequest(s, NewGroup[InlineGroup]),
			"go":     ServiceRequest(s, NewGroup[goGroup]),
		} {
			if _, err := runService(serviceRequests, s, request, nop, nop); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
}

// TestServiceChecks checks that the driver notices lost, repeated and
// misplaced units of work and a failed Wait.
func TestServiceChecks(t *testing.T) {
	s := ServiceShape{Name: "nested", Clients: 4, Tasks: 3, Nested: 2}
	good := ServiceRequest(s, NewGroup[goGroup])
	var first atomic.Bool
	cases := []struct {
		name    string
		request func(*ServiceClient)
		want    string
	}{
		{"nothing", func(*ServiceClient) {}, "units of work ran"},
		{"one-lost", func(c *ServiceClient) {
			if first.CompareAndSwap(false, true) {
				for k := 1; k < s.Units(); k++ {
					c.unit(k)
				}
				return
			}
			good(c)
		}, "units of work ran"},
		{"one-repeated", func(c *ServiceClient) { good(c); c.unit(0) }, "units of work ran"},
		{"misplaced", func(c *ServiceClient) {
			for range s.Units() {
				c.unit(0)
			}
		}, "checksum"},
		{"wait-error", ServiceRequest(s, func(int) *failGroup { return new(failGroup) }), errWait.Error()},
	}
	for _, tc := range cases {
		if _, err := runService(serviceRequests, s, tc.request, nop, nop); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: runService error = %v, want one with %q", tc.name, err, tc.want)
		}
	}
	if _, err := runService(serviceRequests, s, good, nop, nop); err != nil {
		t.Errorf("good: %v", err)
	}
}

// TestServiceLimit checks that the request's group gets the shape's limit
// and nested groups none.
func TestServiceLimit(t *testing.T) {
	if g := NewGroup[limitGroup](0); g.set {
		t.Errorf("NewGroup(0) called SetLimit(%d)", g.limit)
	}
	if g := NewGroup[limitGroup](5); !g.set || g.limit != 5 {
		t.Errorf("NewGroup(5): SetLimit called %v, with %d", g.set, g.limit)
	}
	var mu sync.Mutex
	limits := map[int]int{} // limit: groups made with it
	newGroup := func(limit int) *limitGroup {
		mu.Lock()
		limits[limit]++
		mu.Unlock()
		return NewGroup[limitGroup](limit)
	}
	s := ServiceShape{Name: "nested-limit", Clients: 2, Tasks: 3, Limit: 5, Nested: 2}
	if _, err := runService(10, s, ServiceRequest(s, newGroup), nop, nop); err != nil {
		t.Fatal(err)
	}
	if limits[5] != 10 || limits[0] != 30 || len(limits) != 2 {
		t.Errorf("groups made per limit: %v, want map[0:30 5:10]", limits)
	}
}

// TestServiceMixed runs the mixed service on goroutines: every unit of
// work of both kinds must run once, and a CPU or an I/O request that loses
// a unit fails the run.
func TestServiceMixed(t *testing.T) {
	io := ServiceRequest(MixedIO, NewGroup[goGroup])
	cpu := ServiceRequest(MixedCPU, NewGroup[goGroup])
	r, err := runMixed(serviceRequests, io, cpu, nop, nop)
	if err != nil {
		t.Fatal(err)
	}
	if r.p50 <= 0 || r.p50 > r.p99 {
		t.Errorf("CPU request latency p50 %v, p99 %v: want 0 < p50 <= p99", r.p50, r.p99)
	}
	lossy := func(good func(*ServiceClient)) func(*ServiceClient) {
		var first atomic.Bool
		return func(c *ServiceClient) {
			if first.CompareAndSwap(false, true) {
				return // a request whose units never run
			}
			good(c)
		}
	}
	if _, err := runMixed(serviceRequests, io, lossy(cpu), nop, nop); err == nil || !strings.Contains(err.Error(), MixedCPU.Name) {
		t.Errorf("a lost CPU request: runMixed error = %v, want one naming %s", err, MixedCPU.Name)
	}
	if _, err := runMixed(serviceRequests, lossy(io), cpu, nop, nop); err == nil || !strings.Contains(err.Error(), MixedIO.Name) {
		t.Errorf("a lost I/O request: runMixed error = %v, want one naming %s", err, MixedIO.Name)
	}
}
