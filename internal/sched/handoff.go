package sched

import (
	"github.com/go-steal/steal/internal/sched/handoff"
	"github.com/go-steal/steal/internal/sleep"
)

// poolView is the pool as the hand-off sees it (handoff.Pool): the
// mechanism the hand-off's policy acts through. The policy (who is stuck,
// when a slot goes on, the monitor) is package handoff's; the mechanism
// (the slots, detaching, starting workers) is this package's.
type poolView struct{ p *Pool }

// Attached returns the scan set's slot records.
func (v poolView) Attached() []*handoff.Slot { return v.p.active.Load().recs }

// HandOn detaches the worker in slot index for the monitor, if its task
// has not moved (Pool.detach drains its deque).
func (v poolView) HandOn(index int, seq uint32) bool {
	return v.p.detach((*v.p.slots.Load())[index], detachHandOff, seq)
}

func (v poolView) StartUpTo(n int)  { v.p.spawnUpTo(n) }
func (v poolView) StartExtra(n int) { v.p.spawnExtra(n) }
func (v poolView) Room() int        { return int(v.p.capacity() - v.p.live.Load()) }
func (v poolView) Queued() int      { return v.p.queued() }
func (v poolView) Procs() int       { return int(v.p.refreshSize()) }

func (v poolView) Idle() (inactive, awake int) {
	c := v.p.sleep.Load()
	return c.Inactive(), c.AwakeIdle()
}

// assignment is what a spare goroutine is given (Pool.spares): a slot,
// occupied for it, and its idle state in the sleep protocol.
type assignment struct {
	w    *worker
	idle sleep.Idle
}
