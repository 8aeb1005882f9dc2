package xsync

import "time"

// parkTimer is a Parker's timer for ParkFor, owned by the parking
// goroutine: made on first use, and left running when a token ends a
// park, so that a goroutine that parks and is woken over and over (an idle
// worker) does not re-arm and stop a timer each time. Re-arming one is
// what costs: it may have to wake the thread that sleeps in the runtime's
// network poller. A timer that nobody waits on costs nothing (since Go
// 1.23 the runtime keeps a channel timer in its heap only while a
// goroutine is blocked on its channel), and its expiry left unreceived
// is received at once by the next park, which then re-arms it for what is
// left of its own time limit.
type parkTimer struct {
	t     *time.Timer
	at    time.Time // when t fires; meaningful while armed
	armed bool      // t runs and its expiry has not been received
}

// parkFor is ParkFor on a Parker's channel and timer, in both builds: it
// takes a token from ch, waiting at most d, and reports whether it took one.
// It returns false only once d has passed.
func parkFor(ch chan struct{}, pt *parkTimer, d time.Duration) bool {
	end := time.Now().Add(d)
	for {
		switch {
		case pt.t == nil:
			pt.t = time.NewTimer(d)
			pt.at, pt.armed = end, true
		case !pt.armed || pt.at.After(end):
			// Not running, or due after our limit (an earlier park had a
			// longer one): re-arm. Since Go 1.23, Reset leaves no stale
			// expiry in the channel.
			pt.t.Reset(time.Until(end))
			pt.at, pt.armed = end, true
		}
		select {
		case <-ch:
			return true // the timer keeps running, for the next park
		case <-pt.t.C:
			pt.armed = false
			if !time.Now().Before(end) {
				return false
			}
			// An earlier park's expiry, before our limit: wait on.
		}
	}
}
