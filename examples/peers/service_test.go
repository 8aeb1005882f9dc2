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

// BenchmarkService is wsgroup's BenchmarkService (see there for what one
// op is, and workload.BenchService for the metrics) with a row for conc
// as well: its group is an ErrorPool (pool.New().WithErrors(), after
// WithMaxGoroutines in the limited shapes).
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
