package sched

import (
	"runtime"
	"testing"
)

// unwindOf runs f on a goroutine of its own in a frame shaped like
// worker.call's, and returns what the frame's deferred call recovered and
// what unwoundBy answered there, called as worker.unwound calls it.
func unwindOf(f func()) (r any, by int, returned bool) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		ended := false
		defer func() {
			if !ended {
				r, by = recover(), unwoundByFromCallee()
			}
		}()
		f()
		ended = true
		returned = true
	}()
	<-done
	return r, by, returned
}

//go:noinline
func unwoundByFromCallee() int { return unwoundBy() }

// elementAt is s[i], for a runtime error (an index out of range).
func elementAt(s []int, i int) int { return s[i] }

// TestUnwoundBy: unwoundBy tells a panic from runtime.Goexit by the
// runtime's function that runs the deferred call, at the Go release the
// test runs on, however the two nest. (A recover that returns nil for a
// panic, under GODEBUG=panicnil=1, is what it is for:
// TestPanicInWaitPanicNilGODEBUG in package wsgroup runs one on a worker
// and outside the pool.)
func TestUnwoundBy(t *testing.T) {
	cases := []struct {
		name string
		f    func()
		want int
	}{
		{"goexit", runtime.Goexit, byGoexit},
		{"panic", func() { panic("p") }, byPanic},
		{"runtime error", func() { _ = elementAt(nil, 0) }, byPanic},
		{"goexit in a deferred call of a panic", func() {
			defer runtime.Goexit()
			panic("p")
		}, byGoexit},
		{"panic in a deferred call of a goexit", func() {
			defer func() { panic("p") }()
			runtime.Goexit()
		}, byPanic},
	}
	for _, c := range cases {
		r, by, returned := unwindOf(c.f)
		if returned {
			t.Fatalf("%s: f returned", c.name)
		}
		if by != c.want {
			t.Errorf("%s: unwoundBy() = %d (recovered %v), want %d", c.name, by, r, c.want)
		}
	}
}
