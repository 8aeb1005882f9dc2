package handoff

import "time"

// epoch is the origin of nanotime.
var epoch = time.Now()

// nanotime returns monotonic nanoseconds since the package was loaded.
func nanotime() int64 { return int64(time.Since(epoch)) }
