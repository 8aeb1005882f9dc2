package peers

// The HTTP service benchmark (see wsgroup's BenchmarkHTTPService and
// workload.BenchHTTPService) with a row for conc as well.
//
//	go test -run=NONE -bench=HTTPService -benchtime=2s -count=10 . > http.txt
//	benchstat -col /impl http.txt

import (
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/go-steal/steal/internal/workload"
	"github.com/go-steal/steal/wsgroup"
)

// BenchmarkHTTPService is wsgroup's BenchmarkHTTPService with conc's
// ErrorPool (newConcPool) beside errgroup and wsgroup.
func BenchmarkHTTPService(b *testing.B) {
	workload.BenchHTTPService(b,
		workload.HTTPImplOf("errgroup", workload.NewGroup[errgroup.Group]),
		workload.HTTPImplOf("conc", newConcPool),
		workload.HTTPImplOf("wsgroup", workload.NewGroup[wsgroup.Group]))
}
