package xsync

import "time"

// parkFor is ParkFor on a Parker's channel and timer, in both builds: it
// takes a token from ch, waiting at most d, and reports whether it took one.
// *timer is made on first use and reused after.
func parkFor(ch chan struct{}, timer **time.Timer, d time.Duration) bool {
	if *timer == nil {
		*timer = time.NewTimer(d)
	} else {
		(*timer).Reset(d)
	}
	select {
	case <-ch:
		(*timer).Stop()
		return true
	case <-(*timer).C:
		return false
	}
}
