// Package peers is the peer benchmark suite: the same workloads run on
// golang.org/x/sync/errgroup (with and without SetLimit),
// github.com/sourcegraph/conc/pool, github.com/alitto/pond/v2,
// github.com/panjf2000/ants/v2 and wsgroup, side by side in one go test
// -bench run, and the data-parallel loops (BenchmarkLoop) on wsgroup.For
// and ForEach, github.com/sourcegraph/conc/iter, a static split and one
// errgroup task per index. It is a module of its own so that the library's
// go.mod keeps only the dependencies it needs; see BENCHMARKS.md at the
// repository root for how to run it and for the results.
package peers
