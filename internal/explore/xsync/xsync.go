//go:build !explore

// Package xsync holds the blocking operations of the scheduler's
// concurrency core (a mutex, a goroutine's parking place, yielding the
// processor, starting a goroutine) in a form that the interleaving explorer
// can control. In a normal build each is the plain Go construct (a
// sync.Mutex, a buffered channel and a timer, runtime.Gosched or the
// runtime's goyield, a go statement), and costs what that construct costs.
//
// Built with -tags explore, a goroutine that the explorer controls (see
// package explore) blocks in them through the explorer: it tells the
// explorer what it waits for, and the explorer runs other goroutines until
// that happens. Any other goroutine gets the plain behaviour.
package xsync

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"time"
	_ "unsafe" // for go:linkname
)

// Mutex is a sync.Mutex. The zero value is an unlocked mutex.
type Mutex = sync.Mutex

// Gosched yields the processor (runtime.Gosched). Each call puts the
// goroutine on the runtime's global run queue and, with a P idle, wakes
// an OS thread: each caller says why it needs that.
func Gosched() { runtime.Gosched() }

// Yield lets the goroutines waiting in the caller's P's local run queue
// run first, and puts the caller at that queue's tail: the runtime's
// goyield, which it exports for this use. It wakes no thread, where
// Gosched, with a P idle, wakes one: on a machine with as many CPUs as
// Ps, the woken thread is often placed beside its waker and waits for
// the kernel's tick.
//
//go:linkname Yield runtime.goyield
func Yield()

// Go runs f on a new goroutine.
func Go(f func()) { go f() }

// Rand returns a pseudo-random number (math/rand/v2's Uint64). Under the
// interleaving explorer a controlled goroutine gets 0 instead, so that a
// schedule replays the same way every time.
func Rand() uint64 { return rand.Uint64() }

// Parker is the place where one goroutine, its owner, blocks until another
// wakes it. It holds at most one wake-up token: Unpark leaves one, Park
// takes it, blocking until there is one. The callers guarantee that at most
// one token is ever in flight (an Unpark for each Park at most). Make one
// with NewParker; the zero Parker is not usable.
type Parker struct {
	ch    chan struct{}
	timer parkTimer // ParkFor's, owned by the parking goroutine
}

// NewParker returns a Parker with no token.
func NewParker() *Parker { return &Parker{ch: make(chan struct{}, 1)} }

// Unpark leaves a token; it never blocks (at most one token is in flight).
func (p *Parker) Unpark() { p.ch <- struct{}{} }

// Park blocks until there is a token and takes it. Owner only.
func (p *Parker) Park() { <-p.ch }

// ParkFor is Park with a time limit d > 0: it reports true if it took a
// token, false if d passed first (taking none). Owner only.
func (p *Parker) ParkFor(d time.Duration) bool { return parkFor(p.ch, &p.timer, d) }

// Tokens reports whether a token waits (1) or not (0).
func (p *Parker) Tokens() int { return len(p.ch) }

// TryUnpark leaves a token unless one is there already, and reports
// whether it did; never blocks. For tests that must unstick a goroutine
// after a failure.
func (p *Parker) TryUnpark() bool {
	select {
	case p.ch <- struct{}{}:
		return true
	default:
		return false
	}
}
