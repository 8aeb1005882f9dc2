package gstatus

import (
	"testing"
)

// BenchmarkRead reads a goroutine parked on a channel.
func BenchmarkRead(b *testing.B) {
	handle, release, done := make(chan Handle), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		handle <- Self()
		<-release
	}()
	h := <-handle
	defer func() { close(release); <-done }()
	var s Status
	for b.Loop() {
		s = h.Read()
	}
	if On() && s != Blocked {
		b.Fatalf("the parked goroutine reads %v", s)
	}
}

// BenchmarkReadSelf reads the calling goroutine.
func BenchmarkReadSelf(b *testing.B) {
	h := Self()
	for b.Loop() {
		h.Read()
	}
}

// BenchmarkSelf takes the calling goroutine's Handle.
func BenchmarkSelf(b *testing.B) {
	for b.Loop() {
		Self()
	}
}
