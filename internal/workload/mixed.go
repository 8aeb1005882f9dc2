package workload

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The mixed service: a process that serves many I/O-bound requests and a
// few CPU-bound ones at once, on one scheduler. What matters there is that
// neither kind starves the other: the I/O requests' throughput, and the
// CPU requests' throughput and latency.

// MixedIO and MixedCPU are the two kinds of request of the mixed service:
// 64 clients of the I/O shape (8 subtasks that sleep 1 ms under
// SetLimit(4)) and 4 clients of the CPU shape (4 subtasks of one unit).
var (
	MixedIO  = ServiceShape{Name: "io-c64-k8-limit4", Clients: 64, Tasks: 8, Limit: 4, Sleep: time.Millisecond}
	MixedCPU = ServiceShape{Name: "cpu-c4-k4", Clients: 4, Tasks: 4}
)

// BenchServiceMixed runs b.N requests of MixedCPU, ioReq each, from its
// clients, while the clients of MixedIO issue ioReq back to back, and
// reports:
//
//   - io-req/s and cpu-req/s: each kind's requests completed per second of
//     the timed interval (the I/O clients stop once the CPU requests are
//     done; their requests still running then are not counted);
//   - cpu-p50-ns and cpu-p99-ns: the median and 99th percentile of a CPU
//     request's latency (from its first Go to its Wait's return).
//
// Each client checks the units of work of its requests, as BenchService
// does: a lost or repeated subtask fails the benchmark.
func BenchServiceMixed(b *testing.B, ioReq, cpuReq func(*ServiceClient)) {
	r, err := runMixed(b.N, ioReq, cpuReq, b.ResetTimer, b.StopTimer)
	if err != nil {
		b.Fatal(err)
	}
	secs := r.elapsed.Seconds()
	b.ReportMetric(float64(r.ioDone)/secs, "io-req/s")
	b.ReportMetric(float64(b.N)/secs, "cpu-req/s")
	b.ReportMetric(float64(r.p50.Nanoseconds()), "cpu-p50-ns")
	b.ReportMetric(float64(r.p99.Nanoseconds()), "cpu-p99-ns")
	ReportCrossCPU(b)
}

// mixedRun is what runMixed measured.
type mixedRun struct {
	elapsed  time.Duration
	ioDone   int64 // I/O requests completed within elapsed
	p50, p99 time.Duration
}

// mixedClient is a client of the mixed service and the requests it ran.
type mixedClient struct {
	ServiceClient
	requests  int64
	latencies []time.Duration // CPU clients only
}

// check reports whether the client's units of work are those of its
// requests of shape s.
func (c *mixedClient) check(s ServiceShape, rounds int) error {
	if c.err != nil {
		return fmt.Errorf("shape %s: Wait: %w", s.Name, c.err)
	}
	return checkUnits(s, rounds, c.requests, c.ran.Load(), c.sum.Load())
}

func runMixed(n int, ioReq, cpuReq func(*ServiceClient), resetTimer, stopTimer func()) (mixedRun, error) {
	rounds := ServiceUnitRounds()
	ios := make([]mixedClient, MixedIO.Clients)
	cpus := make([]mixedClient, MixedCPU.Clients)
	var next atomic.Int64 // CPU requests claimed
	var cpuDone, ioDone atomic.Int64
	var stop atomic.Bool // the CPU requests are done: the I/O clients stop
	var ioWG, cpuWG sync.WaitGroup
	gate := make(chan struct{})
	for i := range ios {
		c := &ios[i]
		c.rounds = rounds
		ioWG.Go(func() {
			<-gate
			for !stop.Load() {
				ioReq(&c.ServiceClient)
				c.requests++
				if !stop.Load() {
					ioDone.Add(1)
				}
			}
		})
	}
	for i := range cpus {
		c := &cpus[i]
		c.rounds = rounds
		c.latencies = make([]time.Duration, 0, n/len(cpus)+1)
		cpuWG.Go(func() {
			<-gate
			for next.Add(1) <= int64(n) {
				t0 := time.Now()
				cpuReq(&c.ServiceClient)
				c.latencies = append(c.latencies, time.Since(t0))
				c.requests++
				cpuDone.Add(1)
			}
		})
	}
	var r mixedRun
	resetTimer()
	start := time.Now()
	close(gate)
	cpuWG.Wait()
	r.elapsed = time.Since(start)
	r.ioDone = ioDone.Load()
	stop.Store(true)
	stopTimer()
	ioWG.Wait()

	var all []time.Duration
	for i := range cpus {
		if err := cpus[i].check(MixedCPU, rounds); err != nil {
			return r, err
		}
		all = append(all, cpus[i].latencies...)
	}
	for i := range ios {
		if err := ios[i].check(MixedIO, rounds); err != nil {
			return r, err
		}
	}
	if int64(len(all)) != int64(n) || cpuDone.Load() != int64(n) {
		return r, fmt.Errorf("mixed service: %d CPU requests ran, want %d", len(all), n)
	}
	slices.Sort(all)
	r.p50, r.p99 = all[len(all)/2], all[len(all)*99/100]
	return r, nil
}
