//go:build explore

package xsync

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/go-steal/steal/internal/explore"
)

// Mutex is a sync.Mutex whose Lock, for a goroutine the explorer controls,
// is an exploration point and blocks through the explorer. The zero value
// is an unlocked mutex.
type Mutex struct{ mu sync.Mutex }

// Lock locks m.
func (m *Mutex) Lock() {
	if !explore.Controlled() {
		m.mu.Lock()
		return
	}
	explore.Point("Mutex.Lock", m)
	for !m.mu.TryLock() {
		explore.Block("Mutex.Lock", m)
	}
}

// TryLock tries to lock m and reports whether it did.
func (m *Mutex) TryLock() bool {
	explore.Point("Mutex.TryLock", m)
	return m.mu.TryLock()
}

// Unlock unlocks m and lets the goroutines blocked on it try again.
func (m *Mutex) Unlock() {
	explore.Point("Mutex.Unlock", m)
	m.mu.Unlock()
	explore.Release(m)
}

// Gosched yields the processor. For a controlled goroutine it is a yield
// point: the explorer runs another goroutine first if any can run, which
// is what lets a spin loop that waits for another goroutine end.
func Gosched() {
	if explore.Controlled() {
		explore.Yield()
		return
	}
	runtime.Gosched()
}

// Yield is Gosched under the explorer: for a controlled goroutine, a
// yield point (see Gosched); for the others, runtime.Gosched.
func Yield() { Gosched() }

// Go runs f on a new goroutine; called by a controlled goroutine, the new
// goroutine is controlled too.
func Go(f func()) {
	if explore.Controlled() {
		explore.Go("go", f)
		return
	}
	go f()
}

// Rand returns a pseudo-random number; 0 for a controlled goroutine, whose
// choices must replay the same way in every run of a schedule.
func Rand() uint64 {
	if explore.Controlled() {
		return 0
	}
	return rand.Uint64()
}

// Parker: see the normal build. A controlled owner parks through the
// explorer; the time limit of ParkFor never passes by itself: the explorer
// lets it pass only when no goroutine can run (see package explore), so
// that a test can tell a sleep that a wake-up ends from one that only a
// timeout would end.
type Parker struct {
	ch     chan struct{}
	timer  parkTimer
	tokens int // controlled mode only; guarded by the explorer's hand-offs
}

// NewParker returns a Parker with no token.
func NewParker() *Parker { return &Parker{ch: make(chan struct{}, 1)} }

// Unpark leaves a token.
func (p *Parker) Unpark() {
	if !explore.Controlled() {
		p.ch <- struct{}{}
		return
	}
	explore.Point("Parker.Unpark", p)
	if p.tokens != 0 {
		panic("xsync: Unpark with a token already in flight")
	}
	p.tokens = 1
	explore.Release(p)
}

// Park blocks until there is a token and takes it.
func (p *Parker) Park() {
	if !explore.Controlled() {
		<-p.ch
		return
	}
	explore.Point("Parker.Park", p)
	for p.tokens == 0 {
		explore.Block("Parker.Park", p)
	}
	p.tokens = 0
}

// ParkFor is Park with a time limit; see the normal build.
func (p *Parker) ParkFor(d time.Duration) bool {
	if !explore.Controlled() {
		return parkFor(p.ch, &p.timer, d)
	}
	explore.Point("Parker.ParkFor", p)
	for p.tokens == 0 {
		if !explore.BlockTimed("Parker.ParkFor", p) {
			return false
		}
	}
	p.tokens = 0
	return true
}

// Tokens reports whether a token waits (1) or not (0).
func (p *Parker) Tokens() int { return len(p.ch) + p.tokens }

// TryUnpark leaves a token unless one is there already; see the normal build.
func (p *Parker) TryUnpark() bool {
	if explore.Controlled() {
		if p.tokens != 0 {
			return false
		}
		p.Unpark()
		return true
	}
	select {
	case p.ch <- struct{}{}:
		return true
	default:
		return false
	}
}
