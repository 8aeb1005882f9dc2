//go:build linux && (amd64 || arm64 || 386 || arm)

package gstatus

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"time"
	"unsafe"
)

// The check finds the layout and proves it before the reader trusts it.
// It runs on the goroutine of Start or Prove (never during package
// initialization), takes a few milliseconds, stops no goroutine but its
// own probes, takes no dump of other goroutines, and leaves no goroutine
// behind: every probe it starts has exited when it returns, so goleak
// sees none afterwards. (runtime.NumGoroutine counts a goroutine out a
// moment after it exits; when the check passed, it does not wait for
// that moment, see settle.) Each
// field starts with a set of candidate offsets (every aligned offset below
// searchBound, or, in tests, just the one given) and each step keeps those
// that agree with what it knows:
//
//  1. Running goroutines: the checking goroutine and each probe, before
//     it parks, read their own g at every candidate. An id candidate must
//     hold the goroutine's id as runtime.Stack prints it in its header; a
//     status candidate must read gRunning. Ids are distinct, so one
//     offset is left for the id, or the check fails.
//  2. Parked probes: probes block in each of the kinds (probes.go), two of
//     each. The check polls them until, at some status candidates, every
//     probe reads its kind's state (gWaiting, or gSyscall for the probe in
//     read(2)) on two polls in a row. Exactly one such candidate must
//     remain: the status word.
//  3. Wait reasons: with every probe read parked at that status word, the
//     reason candidate is the byte that two probes of one kind read the
//     same and probes of different kinds read differently; exactly one
//     must remain. The values read are what Read calls Blocked.
//  4. Labels: the word of the checking goroutine's g that follows its
//     profiler labels through three changes (labels_read.go). None found
//     leaves the reader on, with LabelsWord nil.
//  5. Exit: every probe is released, and must then read as dead at the
//     status word (or its g must hold another goroutine's id).
//
// A layout that fails a step fails the check for good; steps 1 to 4 that
// run out of time (checkTimeout: the probes did not get a CPU) fail it
// with errTimeout, which Start may try again.

const (
	// checkTimeout bounds steps 1 to 4. The check normally needs a few
	// milliseconds, but its probes and its polls need a CPU: beside
	// goroutines that keep every processor busy, each of its yields may
	// wait for their time slices (10 ms each), and a machine busy with
	// other processes may not run the probes' threads for a while. So the
	// bound is generous; a layout that is wrong fails long before it (at
	// the first probe it misreads).
	checkTimeout = 5 * time.Second
	// settleTimeout bounds step 5. Released probes exit at once (the
	// sleeper within its last sleep, at most sleepMax), so this is only
	// reached if something is badly wrong; the check then fails.
	settleTimeout = time.Second
	// instances is how many probes of each kind run. Two probes blocked
	// the same way must read the same wait reason, which a byte that is
	// not the wait reason is unlikely to do for every kind.
	instances = 2
)

// candidates are the offsets a check tries for each field.
type candidates struct {
	status, goid, reason, labels []uintptr
}

// everywhere returns every offset each field can have below searchBound:
// the status 4-aligned, the id 8-aligned, the reason any byte, the labels
// pointer-aligned (but not the g's first word, its stack bound).
func everywhere() candidates {
	var c candidates
	ptr := unsafe.Sizeof(uintptr(0))
	for off := uintptr(0); off < searchBound; off++ {
		if off%4 == 0 {
			c.status = append(c.status, off)
		}
		if off%8 == 0 && off+8 <= searchBound {
			c.goid = append(c.goid, off)
		}
		if off%ptr == 0 && off > 0 {
			c.labels = append(c.labels, off)
		}
		c.reason = append(c.reason, off)
	}
	return c
}

// only returns the candidates of one layout and labels offset, for tests
// that show the check rejects a wrong one.
func only(l layout, labels uintptr) candidates {
	return candidates{status: []uintptr{l.status}, goid: []uintptr{l.goid}, reason: []uintptr{l.reason}, labels: []uintptr{labels}}
}

// prove runs the check over every candidate offset.
func prove() (findings, error) { return check(everywhere()) }

// check finds the layout among c and proves it (see the top of this file).
func check(c candidates) (findings, error) { return newChecker(c).check() }

// newChecker returns a checker of c whose steps 1 to 4 start now.
func newChecker(c candidates) *checker {
	return &checker{c: c, deadline: time.Now().Add(checkTimeout), settleFor: settleTimeout,
		baseline: runtime.NumGoroutine(), gone: make(chan struct{})}
}

// check runs the steps.
func (ch *checker) check() (findings, error) {
	f, err := ch.run()
	if serr := ch.settle(err == nil, f.layout); err == nil {
		err = serr
	}
	if err != nil {
		return findings{}, err
	}
	return f, nil
}

// A checker runs the steps.
type checker struct {
	c        candidates
	deadline time.Time
	// settleFor bounds step 5 (settleTimeout; longer in a test that must
	// not pass by running out of it).
	settleFor time.Duration
	// baseline is runtime.NumGoroutine before the check started any
	// goroutine.
	baseline int
	// live counts the goroutines the check started that have not returned;
	// the one that brings it to zero closes gone. Every goroutine starts
	// before any is released, so it reaches zero once, in settle.
	live   atomic.Int32
	gone   chan struct{}
	probes []*probe
}

// A probe is one goroutine parked in one kind of way.
type probe struct {
	kind    *kind
	release func()
	// The probe sends what it read on itself (step 1), then parks.
	ran chan running
	h   Handle
	// What the last polls read at each status candidate (step 2): the
	// state, and how many polls in a row read the kind's state there.
	polls map[uintptr]int
}

// running is what a running goroutine read on itself (step 1).
type running struct {
	h      Handle
	goid   []uintptr // the id candidates that hold its id
	status []uintptr // the status candidates that read gRunning
	err    error
}

// onSelf is step 1 for the calling goroutine, among c.
func onSelf(c *candidates) running {
	id, err := stackID()
	if err != nil {
		return running{err: err}
	}
	g := getg()
	r := running{h: Handle{g: g, id: id}}
	for _, off := range c.goid {
		if load64(g, off) == id {
			r.goid = append(r.goid, off)
		}
	}
	for _, off := range c.status {
		if load32(g, off)&^gScan == gRunning {
			r.status = append(r.status, off)
		}
	}
	return r
}

// keep narrows the candidates to what r found.
func (ch *checker) keep(r running) error {
	if r.err != nil {
		return r.err
	}
	ch.c.goid = intersect(ch.c.goid, r.goid)
	ch.c.status = intersect(ch.c.status, r.status)
	if len(ch.c.goid) == 0 {
		return errors.New("gstatus: no word of the g holds the goroutine's id")
	}
	if len(ch.c.status) == 0 {
		return errors.New("gstatus: no word of the g reads running on every running goroutine")
	}
	return nil
}

// intersect returns the offsets of a that are in b (both sorted).
func intersect(a, b []uintptr) []uintptr {
	var out []uintptr
	for _, off := range a {
		if _, ok := slices.BinarySearch(b, off); ok {
			out = append(out, off)
		}
	}
	return out
}

// spawn runs f on a new goroutine that live counts until f returns.
func (ch *checker) spawn(f func()) {
	ch.live.Add(1)
	go func() {
		defer func() {
			if ch.live.Add(-1) == 0 {
				close(ch.gone)
			}
		}()
		f()
	}()
}

func (ch *checker) run() (findings, error) {
	if err := ch.keep(onSelf(&ch.c)); err != nil {
		return findings{}, fmt.Errorf("gstatus: the checking goroutine: %w", err)
	}
	c := ch.c // what the probes test on themselves
	for i := range kinds {
		for range instances {
			if err := ch.start(&kinds[i], &c); err != nil {
				return findings{}, fmt.Errorf("gstatus: starting a %q probe: %w", kinds[i].words, err)
			}
		}
	}
	for _, p := range ch.probes {
		r := <-p.ran
		if err := ch.keep(r); err != nil {
			return findings{}, fmt.Errorf("gstatus: a %q probe: %w", p.kind.words, err)
		}
		p.h = r.h
	}
	if len(ch.c.goid) != 1 {
		return findings{}, fmt.Errorf("gstatus: %d words of the g hold every goroutine's id (at %v)", len(ch.c.goid), ch.c.goid)
	}
	goid := ch.c.goid[0]
	for _, p := range ch.probes {
		p.h.id = load64(p.h.g, goid)
	}

	status, err := ch.waitParked(goid)
	if err != nil {
		return findings{}, err
	}
	l := layout{status: status, goid: goid}
	rs, err := ch.learn(&l)
	if err != nil {
		return findings{}, err
	}
	if err := l.valid(); err != nil {
		return findings{}, fmt.Errorf("gstatus: %w", err)
	}
	return findings{layout: l, labels: findLabels(ch.c.labels), reasons: rs}, nil
}

// start arms a probe of kind k and starts its goroutine, which reads
// candidates c on itself (step 1) and parks.
func (ch *checker) start(k *kind, c *candidates) error {
	park, release, err := k.arm()
	if err != nil {
		return err
	}
	p := &probe{kind: k, release: release, ran: make(chan running, 1), polls: make(map[uintptr]int)}
	ch.probes = append(ch.probes, p)
	ch.spawn(func() {
		p.ran <- onSelf(c)
		park()
	})
	return nil
}

// waitParked is step 2: it polls every probe at every status candidate
// until, at one or more of them, each probe has read its kind's state on
// two polls in a row, and returns that candidate if it is the only one.
// A probe's g must hold its id throughout (goid).
func (ch *checker) waitParked(goid uintptr) (uintptr, error) {
	for {
		var settled []uintptr
		for _, off := range ch.c.status {
			all := true
			for _, p := range ch.probes {
				if load64(p.h.g, goid) != p.h.id {
					return 0, fmt.Errorf("gstatus: the g of a %q probe no longer holds its id", p.kind.words)
				}
				if load32(p.h.g, off)&^gScan == p.kind.status {
					p.polls[off]++
				} else {
					p.polls[off] = 0
				}
				all = all && p.polls[off] >= 2
			}
			if all {
				settled = append(settled, off)
			}
		}
		switch {
		case len(settled) == 1:
			return settled[0], nil
		case len(settled) > 1:
			return 0, fmt.Errorf("gstatus: %d words of the g read every probe's state (at %v)", len(settled), settled)
		case time.Now().After(ch.deadline):
			return 0, fmt.Errorf("%w: no word of the g read every probe parked within %v", errTimeout, checkTimeout)
		}
		runtime.Gosched() // see waitUntil
	}
}

// learn is step 3: it finds the wait reason's byte among the candidates,
// sets it in l, and returns the reasons the probes read there. It reads
// every probe of a waiting kind between two reads of its status that both
// find it parked (a probe that wanders, the sleeper, may be caught awake:
// then it reads again), so that each byte read is the reason it parked
// for.
func (ch *checker) learn(l *layout) (reasons, error) {
	var bytes [][]uint8 // per probe of a waiting kind, the byte at each candidate
	var parked []*probe
	for _, p := range ch.probes {
		if p.kind.status != gWaiting {
			continue
		}
		for {
			before := load32(p.h.g, l.status) &^ gScan
			bs := make([]uint8, len(ch.c.reason))
			for i, off := range ch.c.reason {
				bs[i] = loadByte(p.h.g, off)
			}
			after := load32(p.h.g, l.status) &^ gScan
			if before == gWaiting && after == gWaiting && load64(p.h.g, l.goid) == p.h.id {
				bytes, parked = append(bytes, bs), append(parked, p)
				break
			}
			if time.Now().After(ch.deadline) {
				return reasons{}, fmt.Errorf("%w: a %q probe was not seen parked again", errTimeout, p.kind.words)
			}
			runtime.Gosched() // see waitUntil
		}
	}
	var hits []int // candidates whose bytes tell the kinds apart
	for i := range ch.c.reason {
		byWords := make(map[string]uint8)
		kindOf := make(map[uint8]string)
		ok := true
		for j, p := range parked {
			b, w := bytes[j][i], p.kind.words
			if r, seen := byWords[w]; seen && r != b {
				ok = false // two probes of one kind differ
				break
			}
			if other, seen := kindOf[b]; seen && other != w {
				ok = false // probes of two kinds agree
				break
			}
			byWords[w], kindOf[b] = b, w
		}
		if ok {
			hits = append(hits, i)
		}
	}
	if len(hits) != 1 {
		offs := make([]uintptr, len(hits))
		for k, i := range hits {
			offs[k] = ch.c.reason[i]
		}
		return reasons{}, fmt.Errorf("gstatus: %d bytes of the g tell every kind of probe apart (at %v), want 1", len(hits), offs)
	}
	i := hits[0]
	l.reason = ch.c.reason[i]
	rs := reasons{words: make(map[uint8]string)}
	for j, p := range parked {
		rs.words[bytes[j][i]] = p.kind.words
		rs.blocking[bytes[j][i]] = true
	}
	return rs, nil
}

// settle is step 5: it releases every probe and waits until all the
// goroutines the check started have exited. If the layout has held so far
// (proven), each probe must then read as dead at l's status word (or its
// g must have been reused), which proves the dead state too.
func (ch *checker) settle(proven bool, l layout) error {
	for _, p := range ch.probes {
		p.release()
	}
	deadline := time.Now().Add(ch.settleFor)
	var err error
	if !ch.waitGone(deadline) {
		err = errors.New("gstatus: released probes did not return")
	} else if proven && !ch.waitUntil(deadline, func() bool { return ch.allGone(l) }) {
		err = errors.New("gstatus: exited probes do not read as dead")
	}
	// Between returning and being counted out of runtime.NumGoroutine, a
	// goroutine runs a little runtime code; when the layout failed, the
	// count is the only way to see that it has finished. (If a goroutine
	// started by someone else during the check is still running, this
	// gives up at the deadline.) When it held, every probe has read dead,
	// which the runtime stores on the way out, a moment before the count:
	// waiting for the count then would only wait, up to the deadline, for
	// the goroutines that the program (a pool ramping up, say) starts
	// meanwhile, with the reader proven and not yet on.
	if !proven || err != nil {
		ch.waitUntil(deadline, func() bool { return runtime.NumGoroutine() <= ch.baseline })
	}
	return err
}

// waitGone waits until every goroutine the check started has returned
// (true), or the deadline passes (false). It blocks rather than polls: the
// last of them to return wakes it, and the scheduler then runs it next,
// where a poll that yields waits behind every goroutine that holds a
// processor, each time (tens of milliseconds at GOMAXPROCS 1 beside busy
// goroutines). At GOMAXPROCS 1 that goroutine has exited by the time this
// one runs (it gives the processor up by exiting), so the polls after it
// find it dead at once; elsewhere they wait the moment it may take.
func (ch *checker) waitGone(deadline time.Time) bool {
	if ch.live.Load() == 0 {
		return true // none started
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-ch.gone:
		return true
	case <-t.C:
		return false
	}
}

// allGone reports whether every probe's goroutine has exited: its g reads
// dead at l's status word, or holds another goroutine's id.
func (ch *checker) allGone(l layout) bool {
	for _, p := range ch.probes {
		if load64(p.h.g, l.goid) == p.h.id && load32(p.h.g, l.status)&^gScan != gDead {
			return false
		}
	}
	return true
}

// waitUntil polls cond until it is true (true) or the deadline passes
// (false). Between polls it yields the processor, so that the goroutines
// it waits for can run even with GOMAXPROCS=1. Past the time a released
// sleeper takes to wake, it also sleeps a little, so that a wait that
// goes wrong does not spin for a whole second.
//
// The polls yield with runtime.Gosched, which wakes a thread when a P is
// idle, rather than the runtime's goyield, which stays on this P's local
// queue: a probe the scheduler preempted waits on the global run queue,
// and at GOMAXPROCS 1 only a Gosched lets it run. The check runs once per
// process, for a few milliseconds, so the threads it wakes cost little.
func (ch *checker) waitUntil(deadline time.Time, cond func() bool) bool {
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
