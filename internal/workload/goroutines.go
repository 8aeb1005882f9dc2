package workload

import (
	"runtime"
	"time"
)

// SampleGoroutines starts a goroutine that samples runtime.NumGoroutine
// every 100 µs. The returned stop ends it, waits for it to exit, and
// returns the most goroutines it saw at once above the number when
// SampleGoroutines was called, itself not counted (0 if it took no
// sample). Call stop exactly once.
func SampleGoroutines() (stop func() (peak int)) {
	base := runtime.NumGoroutine()
	var peak int
	done, stopped := make(chan struct{}), make(chan struct{})
	tick := time.NewTicker(100 * time.Microsecond)
	go func() {
		defer close(stopped)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				peak = max(peak, runtime.NumGoroutine()-base-1)
			}
		}
	}()
	return func() int {
		close(done)
		<-stopped
		return peak
	}
}
