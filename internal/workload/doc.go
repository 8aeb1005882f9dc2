// Package workload holds the CPU work and the reference workloads that the
// benchmarks, the peer suite (examples/peers) and the examples share, so that
// every runtime is measured on the same code: a unit of CPU work and its
// calibration, fib with a group per call, a recursive quicksort with a group
// per split, per-task costs for an imbalanced batch, and the service
// benchmarks (a new group per request, many requests in flight): their
// shapes, their request and their driver, BenchService.
//
// The fork-join workloads take the group as a constructor of the Group
// interface, the part of the errgroup API they use, which errgroup's and
// wsgroup's groups both satisfy. The service request is generic in its
// group type instead, so that each implementation's group is used as it
// is, without an adapter.
package workload
