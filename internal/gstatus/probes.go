//go:build linux && (amd64 || arm64 || 386 || arm)

package gstatus

import (
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// A kind is one way for a goroutine to block that the check
// parks a probe goroutine in, with what the runtime should report for it.
type kind struct {
	// words is what runtime.Stack prints for a goroutine blocked this way.
	words string
	// status is the state the probe is parked in: gWaiting, with a wait
	// reason the check learns, or gSyscall.
	status uint32
	// wanders is true for a probe that leaves its parked state by itself
	// now and then: the sleeper between two sleeps, the system call when a
	// signal interrupts it. The check retries when it catches one awake.
	wanders bool
	// arm prepares one probe, on the checking goroutine: park runs on the
	// probe goroutine and blocks until release, which the checking
	// goroutine calls exactly once, after starting the probe.
	arm func() (park, release func(), err error)
}

// The sleeping probe sleeps sleepStep first, then, each time, about as
// long as it has slept so far, up to sleepMax: short at first, so that a
// check that takes a few milliseconds does not wait long for it to exit
// after its release (a sleep cannot be woken), and longer once the check
// is slow, so that it is parked when the check looks. Beside goroutines
// that keep every processor busy, a sleeper woken every 250 µs waits for a
// processor most of the time: at GOMAXPROCS 1 the scheduler wakes it (its
// timer has expired) on the very pass that runs the checking goroutine's
// next poll, and queues it behind, so that every poll read it runnable
// and the check ran out of time. Exiting costs the check at most about
// its time so far again, and no more than sleepMax.
const (
	sleepStep = 250 * time.Microsecond
	sleepMax  = 64 * time.Millisecond
)

// kinds are the user-level ways to block. Their wait reasons, and only
// theirs, are what Read reports as Blocked.
var kinds = []kind{
	{words: "chan receive", status: gWaiting, arm: func() (park, release func(), err error) {
		ch := make(chan struct{})
		return func() { <-ch }, func() { close(ch) }, nil
	}},
	{words: "chan send", status: gWaiting, arm: func() (park, release func(), err error) {
		ch := make(chan struct{})
		return func() { ch <- struct{}{} }, func() { <-ch }, nil
	}},
	{words: "select", status: gWaiting, arm: func() (park, release func(), err error) {
		a, b := make(chan struct{}), make(chan struct{})
		return func() {
			select {
			case <-a:
			case <-b:
			}
		}, func() { close(a) }, nil
	}},
	{words: "sync.Mutex.Lock", status: gWaiting, arm: func() (park, release func(), err error) {
		// The probe keeps the lock it gets: nothing else uses it.
		var mu sync.Mutex
		mu.Lock()
		return mu.Lock, mu.Unlock, nil
	}},
	{words: "sync.RWMutex.RLock", status: gWaiting, arm: func() (park, release func(), err error) {
		// A reader waits while a writer holds the lock.
		var rw sync.RWMutex
		rw.Lock()
		return rw.RLock, rw.Unlock, nil
	}},
	{words: "sync.RWMutex.Lock", status: gWaiting, arm: func() (park, release func(), err error) {
		// A writer waits while a reader holds the lock.
		var rw sync.RWMutex
		rw.RLock()
		return rw.Lock, rw.RUnlock, nil
	}},
	{words: "sync.WaitGroup.Wait", status: gWaiting, arm: func() (park, release func(), err error) {
		var wg sync.WaitGroup
		wg.Add(1)
		return wg.Wait, wg.Done, nil
	}},
	{words: "sync.Cond.Wait", status: gWaiting, arm: func() (park, release func(), err error) {
		var mu sync.Mutex
		cond := sync.NewCond(&mu)
		done := false
		return func() {
				mu.Lock()
				for !done {
					cond.Wait()
				}
				mu.Unlock()
			}, func() {
				mu.Lock()
				done = true
				mu.Unlock()
				cond.Broadcast()
			}, nil
	}},
	{words: "sleep", status: gWaiting, wanders: true, arm: func() (park, release func(), err error) {
		var stop atomic.Bool
		return func() {
			start := time.Now()
			for !stop.Load() {
				time.Sleep(min(max(time.Since(start), sleepStep), sleepMax))
			}
		}, func() { stop.Store(true) }, nil
	}},
	{words: "IO wait", status: gWaiting, arm: func() (park, release func(), err error) {
		// os.Pipe registers the read end with the runtime's poller, so a
		// read from the empty pipe parks the goroutine. Closing the read
		// end wakes the reader at once (closing the write end would wake
		// it only when some processor next polls the network) and returns
		// once the reader has let go of the file.
		r, w, err := os.Pipe()
		if err != nil {
			return nil, nil, err
		}
		return func() {
				var b [1]byte
				_, _ = r.Read(b[:])
			}, func() {
				_ = r.Close()
				_ = w.Close()
			}, nil
	}},
	{words: "syscall", status: gSyscall, wanders: true, arm: func() (park, release func(), err error) {
		// A pipe the poller does not know (blocking descriptors), read
		// with read(2) directly: the goroutine stays in the system call
		// until the write end is closed.
		var fds [2]int
		if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
			return nil, nil, os.NewSyscallError("pipe2", err)
		}
		return func() {
			var b [1]byte
			for {
				if _, err := syscall.Read(fds[0], b[:]); err != syscall.EINTR {
					break
				}
			}
			_ = syscall.Close(fds[0])
		}, func() { _ = syscall.Close(fds[1]) }, nil
	}},
}
