//go:build go1.26 && !go1.27 && linux && (amd64 || arm64)

package gstatus

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/petermattis/goid"
)

// The start-up check proves a layout before the reader trusts it. It runs
// once, synchronously, during package initialization (prove, read.go),
// takes a few milliseconds, and leaves no goroutine behind: every probe it
// starts has exited when it returns, so neither goleak nor a program's
// runtime.NumGoroutine ever sees one. Its steps:
//
//  1. The calling goroutine, then a new one, reads its own id through the
//     layout and compares it with the id from github.com/petermattis/goid
//     and the one runtime.Stack prints, and reads its own status, which
//     must be "running".
//  2. Probe goroutines block in each of the kinds (probes.go), two of each.
//     The check polls each probe until it reads parked in the expected
//     state the same way on two polls in a row.
//  3. One runtime.Stack of every goroutine gives the words the runtime
//     prints for each probe. They must be the expected ones, each probe
//     must still read as it did, the two probes of a kind must have read
//     the same wait reason, and probes of different kinds different ones.
//     The wait reasons read are what Read will call Blocked.
//  4. Every probe is released, and the check waits until each has exited
//     and reads as dead.
//
// Anything else (a wrong id or status, a probe that never parks, a header
// that does not parse, the deadline) fails the check, and the reader
// stays off.

const (
	// checkTimeout bounds steps 1 to 3. The check normally needs a few
	// milliseconds; missing the bound means the reader stays off for the
	// process, so the bound is generous: a machine busy with other
	// processes may not run the probes' threads for a while. A layout
	// that is wrong fails long before it (at the first probe it misreads).
	checkTimeout = 500 * time.Millisecond
	// settleTimeout bounds step 4. Released probes exit at once (the
	// sleeper within sleepStep), so this is only reached if something is
	// badly wrong; the check then fails.
	settleTimeout = time.Second
	// instances is how many probes of each kind run. Two probes blocked
	// the same way must read the same wait reason, which a layout that
	// points at some other byte of the g is unlikely to satisfy.
	instances = 2
)

// check proves l against the running program and returns the wait
// reasons it learned.
func check(l layout) (reasons, error) {
	if err := l.valid(); err != nil {
		return reasons{}, err
	}
	start := time.Now()
	if err := checkSelf(l); err != nil {
		return reasons{}, fmt.Errorf("gstatus: the calling goroutine: %w", err)
	}
	c := &checker{l: l, deadline: start.Add(checkTimeout), baseline: runtime.NumGoroutine()}
	rs, err := c.run()
	if serr := c.settle(err == nil); err == nil {
		err = serr
	}
	if err != nil {
		return reasons{}, err
	}
	return rs, nil
}

// checkSelf is step 1, on the calling goroutine.
func checkSelf(l layout) error {
	h := l.self()
	fast := uint64(goid.Get())
	slow, err := stackID()
	if err != nil {
		return err
	}
	if h.id != fast || h.id != slow {
		return fmt.Errorf("id at offset %d reads %d; goid.Get says %d, runtime.Stack %d", l.goid, h.id, fast, slow)
	}
	status, _, ok := l.load(h)
	if !ok || status != gRunning {
		return fmt.Errorf("status at offset %d reads %#x, want %d (running)", l.status, status, gRunning)
	}
	return nil
}

// A checker runs steps 1 (for a new goroutine) to 4.
type checker struct {
	l        layout
	deadline time.Time
	// baseline is runtime.NumGoroutine before the check started any
	// goroutine.
	baseline int
	// live counts the goroutines the check started that have not returned.
	live   atomic.Int32
	probes []*probe
}

// A probe is one goroutine parked in one kind of way.
type probe struct {
	kind    *kind
	release func()
	handle  chan Handle // the probe sends its Handle, then parks
	h       Handle
	// What the last polls read: the state and wait reason, and how many
	// polls in a row read the probe parked that same way.
	status uint32
	reason uint8
	polls  int
}

// same reports whether status and reason are what p's polls read. The
// wait reason of a goroutine in a system call is left over from its last
// park, so it does not count there.
func (p *probe) same(status uint32, reason uint8) bool {
	return status == p.status && (status != gWaiting || reason == p.reason)
}

// spawn runs f on a new goroutine that live counts until f returns.
func (c *checker) spawn(f func()) {
	c.live.Add(1)
	go func() {
		defer c.live.Add(-1)
		f()
	}()
}

func (c *checker) run() (reasons, error) {
	res := make(chan error, 1)
	c.spawn(func() { res <- checkSelf(c.l) })
	if err := <-res; err != nil {
		return reasons{}, fmt.Errorf("gstatus: a new goroutine: %w", err)
	}

	for i := range kinds {
		for range instances {
			if err := c.start(&kinds[i]); err != nil {
				return reasons{}, fmt.Errorf("gstatus: starting a %q probe: %w", kinds[i].words, err)
			}
		}
	}
	for _, p := range c.probes {
		p.h = <-p.handle
	}
	for {
		if err := c.waitParked(); err != nil {
			return reasons{}, err
		}
		retry, err := c.compare()
		if err != nil {
			return reasons{}, err
		}
		if !retry {
			return c.learn()
		}
		if time.Now().After(c.deadline) {
			return reasons{}, fmt.Errorf("gstatus: a probe was never seen parked by runtime.Stack within %v", checkTimeout)
		}
	}
}

// start arms a probe of kind k and starts its goroutine.
func (c *checker) start(k *kind) error {
	park, release, err := k.arm()
	if err != nil {
		return err
	}
	p := &probe{kind: k, release: release, handle: make(chan Handle, 1)}
	c.probes = append(c.probes, p)
	c.spawn(func() {
		p.handle <- c.l.self()
		park()
	})
	return nil
}

// waitParked polls every probe until each reads parked in its kind's
// state, the same way on two polls in a row.
func (c *checker) waitParked() error {
	for {
		pending := 0
		for _, p := range c.probes {
			status, reason, ok := c.l.load(p.h)
			if !ok {
				return fmt.Errorf("gstatus: the g of a %q probe no longer holds its id", p.kind.words)
			}
			switch {
			case status != p.kind.status:
				p.polls = 0
			case p.polls > 0 && p.same(status, reason):
				p.polls++
			default:
				p.status, p.reason, p.polls = status, reason, 1
			}
			if p.polls < 2 {
				pending++
			}
		}
		if pending == 0 {
			return nil
		}
		if time.Now().After(c.deadline) {
			return fmt.Errorf("gstatus: %d of %d probes not seen parked within %v", pending, len(c.probes), checkTimeout)
		}
		runtime.Gosched()
	}
}

// compare takes one runtime.Stack of every goroutine and compares each
// probe's header with its kind, and its state after the dump with what the
// polls read. retry is true if a wandering probe was caught awake.
func (c *checker) compare() (retry bool, err error) {
	ids := make(map[uint64]bool, len(c.probes))
	for _, p := range c.probes {
		ids[p.h.id] = true
	}
	words := headerWords(stacks(), ids)
	for _, p := range c.probes {
		w, found := words[p.h.id]
		if !found {
			return false, fmt.Errorf("gstatus: a %q probe (goroutine %d) is missing from runtime.Stack", p.kind.words, p.h.id)
		}
		status, reason, ok := c.l.load(p.h)
		switch {
		case w == p.kind.words && ok && p.same(status, reason):
		case p.kind.wanders:
			p.polls = 0
			retry = true
		default:
			return false, fmt.Errorf("gstatus: a %q probe (goroutine %d) reads state %d, wait reason %d; runtime.Stack says %q",
				p.kind.words, p.h.id, status, reason, w)
		}
	}
	return retry, nil
}

// learn maps the wait reasons the probes read to their kinds' words, and
// fails if two probes of one kind read different reasons or probes of two
// kinds the same one.
func (c *checker) learn() (reasons, error) {
	rs := reasons{words: make(map[uint8]string)}
	byWords := make(map[string]uint8)
	for _, p := range c.probes {
		if p.kind.status != gWaiting {
			continue
		}
		w := p.kind.words
		if r, seen := byWords[w]; seen && r != p.reason {
			return reasons{}, fmt.Errorf("gstatus: two %q probes read wait reasons %d and %d", w, r, p.reason)
		}
		if other, seen := rs.words[p.reason]; seen && other != w {
			return reasons{}, fmt.Errorf("gstatus: %q and %q probes both read wait reason %d", other, w, p.reason)
		}
		byWords[w] = p.reason
		rs.words[p.reason] = w
		rs.blocking[p.reason] = true
	}
	return rs, nil
}

// settle is step 4: it releases every probe and waits until all the
// goroutines the check started have exited. If the layout has held so far
// (proven), each probe must then read as dead (or its g as reused), which
// proves the dead state too.
func (c *checker) settle(proven bool) error {
	for _, p := range c.probes {
		p.release()
	}
	deadline := time.Now().Add(settleTimeout)
	var err error
	if !c.waitUntil(deadline, func() bool { return c.live.Load() == 0 }) {
		err = errors.New("gstatus: released probes did not return")
	} else if proven && !c.waitUntil(deadline, c.allGone) {
		err = errors.New("gstatus: exited probes do not read as dead")
	}
	// Between returning and being counted out of runtime.NumGoroutine, a
	// goroutine runs a little runtime code; when the layout failed, the
	// count is the only way to see that it has finished. (If a goroutine
	// started by someone else during the check is still running, this
	// gives up at the deadline.)
	c.waitUntil(deadline, func() bool { return runtime.NumGoroutine() <= c.baseline })
	return err
}

// allGone reports whether every probe's goroutine has exited: its g reads
// dead, or holds another goroutine's id.
func (c *checker) allGone() bool {
	for _, p := range c.probes {
		if status, _, ok := c.l.load(p.h); ok && status != gDead {
			return false
		}
	}
	return true
}

// waitUntil polls cond until it is true (true) or the deadline passes
// (false). Between polls it yields the processor, so that the goroutines
// it waits for can run even with GOMAXPROCS=1. (Sleeping would not do:
// during package initialization the checking goroutine is locked to the
// main thread, and a short sleep hands the processor to another thread
// that only wakes the sleeper and hands it back, again and again, while
// the probes wait in the run queue.) Past the time a released sleeper
// takes to wake, it also sleeps a little, so that a wait that goes wrong
// does not spin for a whole second.
func (c *checker) waitUntil(deadline time.Time, cond func() bool) bool {
	patient := time.Now().Add(4 * sleepStep)
	for !cond() {
		now := time.Now()
		if now.After(deadline) {
			return false
		}
		runtime.Gosched()
		if now.After(patient) {
			time.Sleep(50 * time.Microsecond)
		}
	}
	return true
}
