package handoff

import (
	"time"

	"github.com/go-steal/steal/internal/explore/xsync"
)

// Spares are the worker goroutines that have left their slots (retired,
// or came back from a task after being handed on) and wait to be given
// another. Starting a worker takes the spare that parked last (a LIFO
// stack: its stack and caches are the warmest, and the ones at the bottom
// are left to reach their linger and exit), and starts a goroutine only
// when there is none. So a service whose requests block now and then
// reuses the same goroutines wave after wave, and once the process has no
// task, none is left after about spareLinger. T is what a spare is given:
// the scheduler's slot and whatever goes with it.
//
// Only the spare at the bottom of the stack, the oldest, waits with a
// timer: a wave of thousands of blocking tasks leaves thousands of spares,
// and a timer each would cost every park and wake-up a trip through the
// runtime's timer heap. When the bottom spare's linger ends, it leaves,
// sends off every other spare whose linger has ended too, and tells the
// new bottom spare to wait with a timer for the rest of its own linger.
//
// Roles: a spare pushes itself (Wait); an assigner (Assign) pops the top
// record and gives it a slot; a leaving bottom spare sends spares off or
// retimes one. Every field of a record in the stack is guarded by
// Spares.mu. Each record gets at most one token per park: whoever wants to
// wake a spare sets woken and unparks it only if woken was not set already
// (a pending retime token wakes it as well, and it then finds its slot, or
// its dismissal, under the lock).
//
// The zero value is an empty stack, ready to use.
type Spares[T any] struct {
	mu   xsync.Mutex
	list []*Spare[T] // the stack; the top is the end
}

// Spare is the parking place of one goroutine between slots, made once
// per goroutine (NewSpare) and used for every wait.
type Spare[T any] struct {
	park  *xsync.Parker
	at    int64 // nanotime when it parked: its linger ends spareLinger later
	timed bool  // it waits with a timer (it is, or was, the bottom one)
	woken bool  // a token is on its way
	given bool  // slot holds what it was given
	slot  T
	gone  bool // sent off: exit
}

// NewSpare returns a parking place for the calling goroutine.
func NewSpare[T any]() *Spare[T] { return &Spare[T]{park: xsync.NewParker()} }

// Assign gives v to the spare that parked last, and reports false when
// there is none.
func (s *Spares[T]) Assign(v T) bool {
	s.mu.Lock()
	n := len(s.list)
	if n == 0 {
		s.mu.Unlock()
		return false
	}
	sp := s.list[n-1]
	s.list[n-1] = nil
	s.list = s.list[:n-1]
	sp.slot, sp.given = v, true
	s.wakeLocked(sp)
	s.mu.Unlock()
	return true
}

// wakeLocked sends sp a token unless one is on its way; s.mu is held.
func (s *Spares[T]) wakeLocked(sp *Spare[T]) {
	if !sp.woken {
		sp.woken = true
		sp.park.Unpark()
	}
}

// Wait parks the calling goroutine as spare sp until it is given a slot,
// which it returns with true, or until its linger has passed, when it
// returns false: the goroutine must then exit.
func (s *Spares[T]) Wait(sp *Spare[T]) (T, bool) {
	var none T
	s.mu.Lock()
	sp.at, sp.timed, sp.woken, sp.gone = nanotime(), len(s.list) == 0, false, false
	s.list = append(s.list, sp)
	for {
		timed, left := sp.timed, time.Duration(sp.at+int64(spareLinger)-nanotime())
		s.mu.Unlock()
		tokened := true
		if !timed {
			sp.park.Park()
		} else if left <= 0 || !sp.park.ParkFor(left) {
			tokened = false
		}
		s.mu.Lock()
		if !tokened && sp.woken {
			// Timed out, but a token is on its way: take it, so that
			// the next park starts without one.
			s.mu.Unlock()
			sp.park.Park()
			s.mu.Lock()
			tokened = true
		}
		if tokened {
			sp.woken = false
		}
		switch {
		case sp.given:
			v := sp.slot
			sp.slot, sp.given = none, false
			s.mu.Unlock()
			return v, true
		case sp.gone:
			s.mu.Unlock()
			return none, false
		case !tokened:
			// Our linger is over: leave, with every spare whose linger
			// is over too, and hand the timer on.
			s.leaveLocked(sp)
			s.mu.Unlock()
			return none, false
		}
		// A retime: we are the bottom spare now; wait with a timer.
	}
}

// leaveLocked removes sp, whose linger has ended, from the stack, sends off
// the spares at the bottom whose lingers have ended too, and makes the new
// bottom spare wait with a timer. s.mu is held.
func (s *Spares[T]) leaveLocked(sp *Spare[T]) {
	for i, v := range s.list {
		if v == sp {
			copy(s.list[i:], s.list[i+1:])
			s.list[len(s.list)-1] = nil
			s.list = s.list[:len(s.list)-1]
			break
		}
	}
	now := nanotime()
	k := 0
	for k < len(s.list) && now-s.list[k].at >= int64(spareLinger) {
		s.list[k].gone = true
		s.wakeLocked(s.list[k])
		k++
	}
	s.list = append(s.list[:0], s.list[k:]...)
	clear(s.list[len(s.list):cap(s.list)])
	if len(s.list) > 0 && !s.list[0].timed {
		s.list[0].timed = true
		s.wakeLocked(s.list[0])
	}
}

// Len reports how many spares wait.
func (s *Spares[T]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.list)
}
