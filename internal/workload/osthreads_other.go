//go:build !linux

package workload

import "time"

// threadStats reports that the threads' run-queue wait and wake-ups are
// not available here (they are read from Linux's /proc), so
// BenchHTTPService reports neither.
func threadStats() (runWait time.Duration, wakeups int64, ok bool) { return 0, 0, false }
