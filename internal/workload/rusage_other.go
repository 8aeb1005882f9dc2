//go:build !unix

package workload

import "time"

// processCPU reports that the process's CPU time is not available here
// (no getrusage), so BenchService reports no cpu-ns/req.
func processCPU() (time.Duration, bool) { return 0, false }
