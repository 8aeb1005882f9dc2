package peers

// The service benchmarks: a new group per request, a few subtasks, Wait,
// with many requests in flight (the shapes are workload.ServiceShapes; the
// library's own copy in wsgroup runs them without conc).
//
//	go test -run=NONE -bench=Service -benchtime=20000x -count=10 . > svc.txt
//	benchstat -col /impl svc.txt

import (
	"testing"

	"github.com/sourcegraph/conc/pool"
	"golang.org/x/sync/errgroup"

	"github.com/go-steal/steal/internal/workload"
	"github.com/go-steal/steal/wsgroup"
)

// BenchmarkService: one op is one request of the shape: a new group,
// its Go calls (each subtask ~300 ns of CPU work, after a 1 ms sleep in
// the io shape, with a nested group of 2 more in the nested shape) and
// Wait, issued by one of the shape's clients. See workload.BenchService
// for the metrics (ns/req, cpu-ns/req, B/req, allocs/req,
// peak-goroutines). conc's group is an ErrorPool (pool.New().WithErrors(),
// after WithMaxGoroutines in the limited shapes); impl=inline runs every
// subtask at once on the client's goroutine: the request's own cost, the
// floor (in the io shape it sleeps 8 ms per request, one sleep after
// another, so there only its CPU and allocation figures are a floor).
func BenchmarkService(b *testing.B) {
	workload.BenchServiceShapes(b,
		workload.ServiceImplOf("errgroup", workload.NewGroup[errgroup.Group]),
		workload.ServiceImplOf("conc", newConcPool),
		workload.ServiceImplOf("wsgroup", workload.NewGroup[wsgroup.Group]),
		workload.ServiceImplOf("inline", workload.NewGroup[workload.InlineGroup]))
}

// newConcPool is conc's group with errgroup's shape, limited to limit
// goroutines when limit > 0.
func newConcPool(limit int) *pool.ErrorPool {
	p := pool.New()
	if limit > 0 {
		p = p.WithMaxGoroutines(limit)
	}
	return p.WithErrors()
}
