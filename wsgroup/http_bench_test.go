package wsgroup_test

// The HTTP service benchmark: a net/http front end and back end on
// loopback in the benchmark's process, the front end's handlers making a
// new group per request, on errgroup and on wsgroup side by side:
//
//	go test -run=NONE -bench=HTTPService -benchtime=2s -count=10 ./wsgroup > http.txt
//	benchstat -col /impl http.txt

import (
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/go-steal/steal/internal/workload"
	"github.com/go-steal/steal/wsgroup"
)

// BenchmarkHTTPService: in mode=io, 16 clients call /io back to back, and
// each /io request fans out 8 keep-alive GETs to the back end (which
// sleeps 5 ms per GET) in a new group with SetLimit(4); in mode=cpu, 4
// clients call /cpu, and each /cpu request runs 8 subtasks of ~20 µs of
// CPU work in a new group with no limit; mode=mixed runs both sets of
// clients at once. One op is one /io request (one /cpu request in
// mode=cpu). Reported per kind: io-req/s and cpu-req/s (requests
// completed per second), io-p50-µs, io-p99-µs, cpu-p50-µs and cpu-p99-µs
// (a request's latency as its client sees it), and cpu-ns/req (the
// process's CPU time per request of either kind, both servers and the
// clients included). Every response is checked, and so is the back end's
// count of GETs: see workload.BenchHTTPService.
func BenchmarkHTTPService(b *testing.B) {
	workload.BenchHTTPService(b,
		workload.HTTPImplOf("errgroup", workload.NewGroup[errgroup.Group]),
		workload.HTTPImplOf("wsgroup", workload.NewGroup[wsgroup.Group]))
}
