// Package workload holds the CPU work and the reference workloads that the
// benchmarks, the peer suite (examples/peers) and the examples share, so that
// every runtime is measured on the same code: a unit of CPU work and its
// calibration, fib with a group per call, a recursive quicksort with a group
// per split, and per-task costs for an imbalanced batch.
//
// The fork-join workloads take the group as a constructor of the Group
// interface, the part of the errgroup API they use, which errgroup's and
// wsgroup's groups both satisfy.
package workload
