package workload

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// ServiceUnit is the CPU work of one subtask of a service request.
const ServiceUnit = 300 * time.Nanosecond

// A ServiceShape describes a service-shaped benchmark: Clients goroutines
// each issue requests back to back, and a request is a new group, Tasks Go
// calls and a Wait. Each subtask sleeps Sleep first (when it is not zero),
// then does a unit of CPU work (ServiceUnit). When Nested is not zero, each
// subtask also opens a group of its own with Nested subtasks of one unit
// each, does its own unit meanwhile, and waits for that group. When Every
// is not zero, each client paces its requests instead: it issues one, then
// sleeps until Every has passed since the last one began (a service whose
// requests come less often than it serves them, mostly idle).
type ServiceShape struct {
	Name    string        // the value of the shape= part of the benchmark's name
	Clients int           // client goroutines
	Tasks   int           // Go calls per request
	Limit   int           // SetLimit of the request's group; 0 for none
	Sleep   time.Duration // each subtask's sleep before its unit
	Nested  int           // subtasks of each subtask's own group; 0 for none
	Every   time.Duration // each client's pace; 0: back to back
}

// ServiceShapes are the shapes of the service benchmarks, in the order
// they run. A name says the kind of subtask (cpu: the unit alone; io: a
// 1 ms sleep, then the unit; nested: the unit and a nested group of two
// units; latency: the unit, with one client, so that ns/req is a
// request's latency), then cN for N clients, kN for N Go calls per
// request and limitN for SetLimit(N); idle-every1ms is the latency shape
// paced at one request per millisecond, so that cpu-ns/req is what a mostly
// idle service pays per request.
var ServiceShapes = []ServiceShape{
	{Name: "cpu-c32-k4", Clients: 32, Tasks: 4},
	{Name: "cpu-c64-k4", Clients: 64, Tasks: 4},
	{Name: "cpu-c64-k4-limit2", Clients: 64, Tasks: 4, Limit: 2},
	{Name: "cpu-c1000-k8-limit4", Clients: 1000, Tasks: 8, Limit: 4},
	{Name: "io-c1000-k8-limit4", Clients: 1000, Tasks: 8, Limit: 4, Sleep: time.Millisecond},
	{Name: "nested-c32-k4", Clients: 32, Tasks: 4, Nested: 2},
	{Name: "latency-c1-k4", Clients: 1, Tasks: 4},
	{Name: "idle-every1ms-c1-k4", Clients: 1, Tasks: 4, Every: time.Millisecond},
}

// Units returns the number of units of CPU work (and of subtasks) in one
// request of shape s.
func (s ServiceShape) Units() int { return s.Tasks * (1 + s.Nested) }

// ServiceUnitRounds returns the Spin rounds of ServiceUnit, calibrated on
// first use with the subtask's whole body (the Spin and its bookkeeping).
var ServiceUnitRounds = sync.OnceValue(func() int {
	var c ServiceClient
	return Rounds(ServiceUnit, 1000, func(i, rounds int) { c.unitRounds(i, rounds) })
})

// A ServiceClient is one client of a service benchmark: it counts the
// units of work done for its requests and sums their results, which
// BenchService checks against what b.N requests must produce. Each
// client's counters sit on cache lines of their own, so that clients do
// not contend with each other.
type ServiceClient struct {
	ran    atomic.Int64
	sum    atomic.Uint64
	rounds int
	err    error          // the first error a request's Wait returned
	_      [128 - 40]byte // to two cache lines on 64-bit systems
}

// unit does unit number k of a request (0 <= k < Units) and records it.
func (c *ServiceClient) unit(k int) { c.unitRounds(k, c.rounds) }

func (c *ServiceClient) unitRounds(k, rounds int) {
	c.sum.Add(serviceSpin(k, rounds))
	c.ran.Add(1)
}

// serviceSpin is the work of unit k: each unit of a request has its own
// seed, so that a lost task and a repeated one do not cancel out in the
// checksum.
func serviceSpin(k, rounds int) uint64 { return Spin(uint64(2*k+1), rounds) }

// NewGroup returns a new *T with SetLimit(limit) applied when limit > 0:
// the group constructor ServiceRequest takes, for errgroup.Group,
// wsgroup.Group and InlineGroup (NewGroup[errgroup.Group]).
func NewGroup[T any, G interface {
	*T
	SetLimit(n int)
}](limit int) G {
	g := G(new(T))
	if limit > 0 {
		g.SetLimit(limit)
	}
	return g
}

// ServiceRequest returns the request of shape s on the groups newGroup
// makes: newGroup(s.Limit) for the request's group, newGroup(0) for the
// nested groups. The groups are used as they are, with no adapter: their
// methods are called through the type parameter (an indirect call of a
// few nanoseconds, against 300 ns of work per subtask). Each Go gets a new
// closure, as in a service's own code; a request allocates what such code
// allocates (the group, a closure per Go call) plus what the group itself
// allocates.
func ServiceRequest[G Group](s ServiceShape, newGroup func(limit int) G) func(*ServiceClient) {
	r := &serviceRequest[G]{tasks: s.Tasks, limit: s.Limit, nested: s.Nested, sleep: s.Sleep, newGroup: newGroup}
	return r.run
}

// A ServiceImpl is a row of the service benchmarks: its name (the
// sub-benchmark is "impl=Name") and its request of a shape.
type ServiceImpl struct {
	Name    string
	Request func(s ServiceShape) func(*ServiceClient)
}

// ServiceImplOf is the row named name whose requests run on the groups
// newGroup makes (NewGroup[errgroup.Group], say): see ServiceRequest.
func ServiceImplOf[G Group](name string, newGroup func(limit int) G) ServiceImpl {
	return ServiceImpl{name, func(s ServiceShape) func(*ServiceClient) { return ServiceRequest(s, newGroup) }}
}

// BenchServiceShapes runs BenchService on every shape of ServiceShapes, as
// sub-benchmarks "shape=NAME", and within each on every row of impls, as
// sub-benchmarks "impl=NAME".
func BenchServiceShapes(b *testing.B, impls ...ServiceImpl) {
	for _, s := range ServiceShapes {
		b.Run("shape="+s.Name, func(b *testing.B) {
			for _, im := range impls {
				request := im.Request(s)
				b.Run("impl="+im.Name, func(b *testing.B) { BenchService(b, s, request) })
			}
		})
	}
}

// serviceRequest is a request's parameters, which every closure of the
// request reaches through one pointer.
type serviceRequest[G Group] struct {
	tasks, limit, nested int
	sleep                time.Duration
	newGroup             func(limit int) G
}

// run is one request: a new group, r.tasks Go calls, Wait.
func (r *serviceRequest[G]) run(c *ServiceClient) {
	g := r.newGroup(r.limit)
	for i := range r.tasks {
		g.Go(func() error { return r.subtask(c, i) })
	}
	if err := g.Wait(); err != nil && c.err == nil {
		c.err = err
	}
}

// subtask is the request's subtask i: the sleep, the unit, and the nested
// group when the shape has one.
func (r *serviceRequest[G]) subtask(c *ServiceClient, i int) error {
	if r.sleep > 0 {
		time.Sleep(r.sleep)
	}
	if r.nested == 0 {
		c.unit(i)
		return nil
	}
	g := r.newGroup(0)
	for j := range r.nested {
		k := r.tasks + i*r.nested + j
		g.Go(func() error { c.unit(k); return nil })
	}
	c.unit(i)
	return g.Wait()
}

// BenchService runs b.N requests of shape s, request(c) each, from
// s.Clients client goroutines that issue them back to back, and reports
// per request:
//
//   - ns/req: the wall time of the b.N requests divided by b.N (with one
//     client, a request's latency; with many, the inverse of throughput;
//     in a paced shape, about Every);
//   - cpu-ns/req: the process's CPU time (user and system, every thread,
//     the GC's included) over the same interval, divided by b.N; not
//     reported where getrusage is not available. It includes the
//     sampler's wake-ups (one every 100 µs), the same for every
//     implementation;
//   - B/req and allocs/req: the bytes and objects allocated meanwhile
//     (runtime.MemStats TotalAlloc and Mallocs), divided by b.N;
//   - peak-goroutines: the most goroutines seen at once above those that
//     existed before the requests began (the clients among them), sampled
//     by SampleGoroutines: what the implementation starts; not in a
//     paced shape (Every), where the sampler's own wake-ups would be most
//     of the CPU time measured.
//
// The clients start, and the sampler with them, before the timed part;
// ReadMemStats, which stops the world, is called outside it. Clients claim
// requests from a shared counter, so exactly b.N requests run. Afterwards
// BenchService fails the benchmark unless b.N*s.Units() units of work ran
// with the expected checksum and no Wait returned an error: a lost or
// repeated subtask fails it.
func BenchService(b *testing.B, s ServiceShape, request func(c *ServiceClient)) {
	r, err := runService(b.N, s, request, b.ResetTimer, b.StopTimer)
	if err != nil {
		b.Fatal(err)
	}
	perReq := func(v float64) float64 { return v / float64(b.N) }
	b.ReportMetric(perReq(float64(r.elapsed.Nanoseconds())), "ns/req")
	if r.cpuOK {
		b.ReportMetric(perReq(float64(r.cpu.Nanoseconds())), "cpu-ns/req")
	}
	b.ReportMetric(perReq(float64(r.bytes)), "B/req")
	b.ReportMetric(perReq(float64(r.allocs)), "allocs/req")
	if r.peak >= 0 {
		b.ReportMetric(float64(r.peak), "peak-goroutines")
	}
	ReportCrossCPU(b)
}

// serviceRun is what runService measured, for all its requests.
type serviceRun struct {
	elapsed, cpu  time.Duration
	cpuOK         bool // cpu was measured
	bytes, allocs uint64
	peak          int
}

// runService runs n requests of shape s as BenchService describes, with
// resetTimer and stopTimer (the benchmark's) called around the timed part,
// and returns what it measured, and the error a Wait returned or a
// mismatch in the units of work that ran.
func runService(n int, s ServiceShape, request func(*ServiceClient), resetTimer, stopTimer func()) (serviceRun, error) {
	rounds := ServiceUnitRounds()
	clients := make([]ServiceClient, s.Clients)
	var next atomic.Int64 // requests claimed
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range clients {
		c := &clients[i]
		c.rounds = rounds
		wg.Go(func() {
			<-gate
			for next.Add(1) <= int64(n) {
				began := time.Now()
				request(c)
				if s.Every > 0 {
					time.Sleep(s.Every - time.Since(began))
				}
			}
		})
	}
	// The sampler wakes every 100 µs: in a paced shape that would be most
	// of what the process does, so it does not run there.
	stopSampler := func() int { return -1 }
	if s.Every == 0 {
		stopSampler = SampleGoroutines()
	}

	var r serviceRun
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	resetTimer()
	cpu0, cpuOK := processCPU()
	start := time.Now()
	close(gate)
	wg.Wait()
	r.elapsed = time.Since(start)
	cpu1, _ := processCPU()
	stopTimer()
	runtime.ReadMemStats(&m1)
	r.peak = stopSampler()
	r.cpu, r.cpuOK = cpu1-cpu0, cpuOK
	r.bytes, r.allocs = m1.TotalAlloc-m0.TotalAlloc, m1.Mallocs-m0.Mallocs

	var ran int64
	var sum uint64
	for i := range clients {
		if err := clients[i].err; err != nil {
			return r, fmt.Errorf("shape %s: Wait: %w", s.Name, err)
		}
		ran += clients[i].ran.Load()
		sum += clients[i].sum.Load()
	}
	return r, checkUnits(s, rounds, int64(n), ran, sum)
}

// checkUnits reports an error unless ran units of work with checksum sum
// are exactly those of the given number of requests of shape s, whose
// units spin rounds each.
func checkUnits(s ServiceShape, rounds int, requests, ran int64, sum uint64) error {
	var want uint64 // the checksum of one request
	for k := range s.Units() {
		want += serviceSpin(k, rounds)
	}
	if wantRan := requests * int64(s.Units()); ran != wantRan || sum != uint64(requests)*want {
		return fmt.Errorf("shape %s, %d requests: %d units of work ran (checksum %#x), want %d (checksum %#x)",
			s.Name, requests, ran, sum, wantRan, uint64(requests)*want)
	}
	return nil
}
