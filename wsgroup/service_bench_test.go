package wsgroup_test

// The service benchmarks: a service that replaces errgroup makes a new
// group per request, fans out a few subtasks and waits, with many requests
// in flight. The shapes are workload.ServiceShapes, each run on errgroup,
// wsgroup and the inline floor as sub-benchmarks named in key=value form:
//
//	go test -run=NONE -bench=Service -benchtime=20000x -count=10 ./wsgroup > svc.txt
//	benchstat -col /impl svc.txt
//
// The peer suite (examples/peers) runs the same shapes on conc as well.

import (
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/go-steal/steal/internal/workload"
	"github.com/go-steal/steal/wsgroup"
)

// BenchmarkService: one op is one request of the shape: a new group,
// its Go calls (each subtask ~300 ns of CPU work, after a 1 ms sleep in
// the io shape, with a nested group of 2 more in the nested shape) and
// Wait, issued by one of the shape's clients. See workload.BenchService
// for the metrics (ns/req, cpu-ns/req, B/req, allocs/req,
// peak-goroutines). impl=inline runs every subtask at once on the
// client's goroutine: the request's own cost, the floor (in the io shape
// it sleeps 8 ms per request, one sleep after another, so there only its
// CPU and allocation figures are a floor).
func BenchmarkService(b *testing.B) {
	workload.BenchServiceShapes(b,
		workload.ServiceImplOf("errgroup", workload.NewGroup[errgroup.Group]),
		workload.ServiceImplOf("wsgroup", workload.NewGroup[wsgroup.Group]),
		workload.ServiceImplOf("inline", workload.NewGroup[workload.InlineGroup]))
}

// BenchmarkServiceMixed: one op is one request of workload.MixedCPU (4
// clients, 4 subtasks of one unit), run while the 64 clients of
// workload.MixedIO (8 subtasks that sleep 1 ms, SetLimit(4)) keep issuing
// theirs, in the same process: see workload.BenchServiceMixed for the
// metrics (each kind's throughput, the CPU requests' p50 and p99 latency).
func BenchmarkServiceMixed(b *testing.B) {
	for _, im := range []workload.ServiceImpl{
		workload.ServiceImplOf("errgroup", workload.NewGroup[errgroup.Group]),
		workload.ServiceImplOf("wsgroup", workload.NewGroup[wsgroup.Group]),
	} {
		b.Run("impl="+im.Name, func(b *testing.B) {
			workload.BenchServiceMixed(b, im.Request(workload.MixedIO), im.Request(workload.MixedCPU))
		})
	}
}
