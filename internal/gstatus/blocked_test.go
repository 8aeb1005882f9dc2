//go:build linux && (amd64 || arm64 || 386 || arm)

package gstatus

import (
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-steal/steal/internal/testkit"
)

// A blocker blocks a goroutine in one way: block runs on the goroutine and
// returns once release has run. setup runs on the test goroutine and may
// call t.Fatal or t.Skip.
type blocker struct {
	name  string
	want  Status
	setup func(t *testing.T) (block, release func())
}

var blockers = []blocker{
	{"chan receive", Blocked, func(*testing.T) (func(), func()) {
		ch := make(chan int)
		return func() { <-ch }, func() { close(ch) }
	}},
	{"chan send", Blocked, func(*testing.T) (func(), func()) {
		ch := make(chan int)
		return func() { ch <- 1 }, func() { <-ch }
	}},
	{"select", Blocked, func(*testing.T) (func(), func()) {
		a, b := make(chan int), make(chan int)
		return func() {
			select {
			case <-a:
			case b <- 1:
			}
		}, func() { close(a) }
	}},
	{"time.Sleep", Blocked, func(*testing.T) (func(), func()) {
		// A sleep cannot be woken: sleep 50ms at a time until released.
		var stop atomic.Bool
		return func() {
			for !stop.Load() {
				time.Sleep(50 * time.Millisecond)
			}
		}, func() { stop.Store(true) }
	}},
	{"time.Timer", Blocked, func(*testing.T) (func(), func()) {
		tm := time.NewTimer(time.Hour)
		return func() { <-tm.C }, func() { tm.Reset(0) }
	}},
	{"sync.Mutex", Blocked, func(*testing.T) (func(), func()) {
		// The goroutine keeps the lock it gets: nothing else uses it.
		var mu sync.Mutex
		mu.Lock()
		return mu.Lock, mu.Unlock
	}},
	{"sync.RWMutex.RLock", Blocked, func(*testing.T) (func(), func()) {
		var rw sync.RWMutex
		rw.Lock()
		return rw.RLock, rw.Unlock
	}},
	{"sync.RWMutex.Lock", Blocked, func(*testing.T) (func(), func()) {
		var rw sync.RWMutex
		rw.RLock()
		return rw.Lock, rw.RUnlock
	}},
	{"sync.WaitGroup", Blocked, func(*testing.T) (func(), func()) {
		var wg sync.WaitGroup
		wg.Add(1)
		return wg.Wait, wg.Done
	}},
	{"sync.Cond", Blocked, func(*testing.T) (func(), func()) {
		var mu sync.Mutex
		c := sync.NewCond(&mu)
		done := false
		return func() {
				mu.Lock()
				for !done {
					c.Wait()
				}
				mu.Unlock()
			}, func() {
				mu.Lock()
				done = true
				mu.Unlock()
				c.Signal()
			}
	}},
	{"os.Pipe read", Blocked, func(t *testing.T) (func(), func()) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return func() {
			var b [1]byte
			_, _ = r.Read(b[:])
		}, func() { w.Close() }
	}},
	{"net.Pipe read", Blocked, func(t *testing.T) (func(), func()) {
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close() })
		return func() {
			var buf [1]byte
			_, _ = a.Read(buf[:])
		}, func() { b.Close() }
	}},
	{"TCP loopback read", Blocked, func(t *testing.T) (func(), func()) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Skipf("no TCP loopback: %v", err)
		}
		defer ln.Close()
		client, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		server, err := ln.Accept()
		if err != nil {
			client.Close()
			t.Fatal(err)
		}
		t.Cleanup(func() { server.Close() })
		return func() {
			var buf [1]byte
			_, _ = server.Read(buf[:])
		}, func() { client.Close() }
	}},
	{"read(2) system call", Syscall, func(t *testing.T) (func(), func()) {
		var fds [2]int
		if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Close(fds[0]) })
		return func() {
			var b [1]byte
			for {
				if _, err := syscall.Read(fds[0], b[:]); err != syscall.EINTR {
					return
				}
			}
		}, func() { syscall.Close(fds[1]) }
	}},
}

// TestBlockedReads blocks a goroutine in each way and reads its Handle
// until it reads as blocked (or in a system call), then releases it and
// reads it until it reads Unknown.
func TestBlockedReads(t *testing.T) {
	requireOn(t)
	for _, bl := range blockers {
		t.Run(bl.name, func(t *testing.T) {
			testkit.Guard(t, func() {
				block, release := bl.setup(t)
				var once sync.Once
				free := func() { once.Do(release) }
				handle, exited := make(chan Handle, 1), make(chan struct{})
				go func() {
					defer close(exited)
					handle <- Self()
					block()
				}()
				// A failing WaitUntil ends the test with runtime.Goexit: free
				// the goroutine all the same, so that it does not leak.
				t.Cleanup(func() { free(); <-exited })
				h := <-handle
				seen := map[Status]int{}
				testkit.WaitUntil(t, "the goroutine reads "+bl.want.String(), func() bool {
					s := h.Read()
					seen[s]++
					return s == bl.want
				})
				free()
				<-exited
				testkit.WaitUntil(t, "the exited goroutine reads Unknown", func() bool { return h.Read() == Unknown })
				t.Logf("reads before %v: %v", bl.want, seen)
			})
		})
	}
}

// TestRuntimeSemaphoreIsNotBlocked: the second of two goroutines reading
// one *os.File waits for the file's read lock, on one of the runtime's
// own semaphores, which the collector parks goroutines on too. It must
// read Waiting, never Blocked: no wait reason is learned unless a probe of
// user-level blocking parks with it.
func TestRuntimeSemaphoreIsNotBlocked(t *testing.T) {
	requireOn(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	var wg sync.WaitGroup
	defer wg.Wait()
	read := func(hs chan<- Handle) {
		hs <- Self()
		var b [1]byte
		if _, err := r.Read(b[:]); err != nil {
			t.Errorf("read: %v", err)
		}
	}
	first, second := make(chan Handle, 1), make(chan Handle, 1)
	wg.Go(func() { read(first) })
	h1 := <-first
	testkit.WaitUntil(t, "the first reader parks in the poller", func() bool { return h1.Read() == Blocked })
	wg.Go(func() { read(second) })
	h2 := <-second
	defer func() {
		if _, err := w.Write([]byte{1, 2}); err != nil {
			t.Errorf("write: %v", err)
		}
	}()
	seen := map[Status]int{}
	testkit.WaitUntil(t, "the second reader reads Waiting", func() bool {
		s := h2.Read()
		seen[s]++
		if s == Blocked {
			t.Fatalf("a goroutine waiting for a file's read lock read Blocked; reads so far: %v", seen)
		}
		return seen[Waiting] >= 100
	})
}
