package peers

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/alitto/pond/v2"
	"github.com/panjf2000/ants/v2"
	"github.com/sourcegraph/conc/pool"
	"golang.org/x/sync/errgroup"

	"github.com/go-steal/steal/internal/workload"
	"github.com/go-steal/steal/wsgroup"
)

// A batcher runs body(0), ..., body(n-1) as n separate tasks and waits for
// them. Each implementation makes one closure per task, in its own
// submission call's shape, so that no runtime pays for an adapter.
type batcher interface {
	batch(n int, body func(i int))
	close()
}

// flatImpl names an implementation of flat (non-nested) batches; open makes
// it with workers as its size where it has one (pools, limits).
type flatImpl struct {
	name string
	open func(workers int) batcher
}

// flatImpls are the runtimes under comparison for batches submitted from
// outside. Names have the key=value form so that benchstat -col /impl puts
// them side by side. Limited variants use SetLimit(workers) (errgroup,
// wsgroup) or WithMaxGoroutines(workers) (conc); pond and ants are pools of
// workers goroutines by construction, long-lived across iterations (their
// intended use), with a group (pond) or a WaitGroup (ants) per batch.
func flatImpls(limited bool) []flatImpl {
	impls := []flatImpl{
		{"impl=errgroup", func(int) batcher { return errgroupB{} }},
		{"impl=conc", func(int) batcher { return concB{} }},
		{"impl=wsgroup", func(int) batcher { return wsgroupB{} }},
	}
	if limited {
		impls = append(impls,
			flatImpl{"impl=errgroup-limit", func(w int) batcher { return errgroupB{limit: w} }},
			flatImpl{"impl=conc-limit", func(w int) batcher { return concB{limit: w} }},
			flatImpl{"impl=wsgroup-limit", func(w int) batcher { return wsgroupB{limit: w} }},
		)
	}
	return append(impls,
		flatImpl{"impl=pond", newPondB},
		flatImpl{"impl=ants", newAntsB},
	)
}

type errgroupB struct{ limit int }

func (e errgroupB) batch(n int, body func(int)) {
	g := new(errgroup.Group)
	if e.limit > 0 {
		g.SetLimit(e.limit)
	}
	for i := range n {
		g.Go(func() error { body(i); return nil })
	}
	g.Wait()
}
func (errgroupB) close() {}

type wsgroupB struct{ limit int }

func (e wsgroupB) batch(n int, body func(int)) {
	g := new(wsgroup.Group)
	if e.limit > 0 {
		g.SetLimit(e.limit)
	}
	for i := range n {
		g.Go(func() error { body(i); return nil })
	}
	g.Wait()
}
func (wsgroupB) close() {}

type concB struct{ limit int }

func (c concB) batch(n int, body func(int)) {
	p := pool.New()
	if c.limit > 0 {
		p = p.WithMaxGoroutines(c.limit)
	}
	for i := range n {
		p.Go(func() { body(i) })
	}
	p.Wait()
}
func (concB) close() {}

type pondB struct{ p pond.Pool }

func newPondB(workers int) batcher { return pondB{pond.NewPool(workers)} }

func (p pondB) batch(n int, body func(int)) {
	g := p.p.NewGroup()
	for i := range n {
		g.Submit(func() { body(i) })
	}
	g.Wait()
}
func (p pondB) close() { p.p.StopAndWait() }

type antsB struct{ p *ants.Pool }

func newAntsB(workers int) batcher {
	p, err := ants.NewPool(workers)
	if err != nil {
		panic(err)
	}
	return antsB{p}
}

func (a antsB) batch(n int, body func(int)) {
	var wg sync.WaitGroup
	wg.Add(n)
	for i := range n {
		if err := a.p.Submit(func() { body(i); wg.Done() }); err != nil {
			panic(err)
		}
	}
	wg.Wait()
}
func (a antsB) close() {
	if err := a.p.ReleaseTimeout(10 * time.Second); err != nil {
		panic(err)
	}
}

// nestedImpl makes a group for the fork-join workloads (a group per call).
// pond and ants are not among them: a task that waits for its subtasks in
// a bounded pool deadlocks once every worker waits, which is what they are
// built to be.
type nestedImpl struct {
	name     string
	newGroup func() workload.Group
}

// concGroup is conc's error pool, the conc type with errgroup's shape.
type concGroup struct{ p *pool.ErrorPool }

func (c concGroup) Go(f func() error) { c.p.Go(f) }
func (c concGroup) Wait() error       { return c.p.Wait() }

var nestedImpls = []nestedImpl{
	{"impl=errgroup", func() workload.Group { return new(errgroup.Group) }},
	{"impl=conc", func() workload.Group { return concGroup{pool.New().WithErrors()} }},
	{"impl=wsgroup", func() workload.Group { return new(wsgroup.Group) }},
}

// procs is the worker count for limits and pools: GOMAXPROCS.
func procs() int { return runtime.GOMAXPROCS(0) }

// report adds the ns/task metric and the machine's cross-CPU round trip
// (workload.ReportCrossCPU); call it after the timed loop.
func report(b *testing.B, tasksPerOp int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tasksPerOp), "ns/task")
	workload.ReportCrossCPU(b)
}
