//go:build explore

package explore

import (
	"bytes"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-steal/steal/internal/gid"
)

// active is the schedule being run, or nil. One exploration runs at a time.
var active atomic.Pointer[run]

// Controlled reports whether the calling goroutine is a thread of the
// schedule being explored (and not running one of its quiescence checks).
func Controlled() bool {
	r := active.Load()
	return r != nil && r.self() != nil
}

// Point is an exploration point: a controlled goroutine stops here, before
// the operation what on addr, and the strategy picks the thread that takes
// the next step (perhaps this one). Any other goroutine returns at once.
func Point(what string, addr any) {
	r := active.Load()
	if r == nil {
		return
	}
	if t := r.self(); t != nil {
		r.step(t, what, addr, false)
	}
}

// Yield is a point at which the calling thread gives way: the next step
// goes to another thread if any can run (runtime.Gosched in a spin loop).
func Yield() {
	r := active.Load()
	if r == nil {
		return
	}
	if t := r.self(); t != nil {
		r.step(t, "Gosched", nil, true)
	}
}

// Block stops the calling thread until Release(on) is called by another
// thread; the caller re-checks its condition after Block returns.
func Block(what string, on any) {
	r := active.Load()
	if t := r.self(); t != nil {
		r.block(t, what, on, false)
	}
}

// BlockTimed is Block for a wait with a time limit. It reports false when
// the explorer let the time limit pass instead: that happens only when no
// thread can run (a quiescent state), after the quiescence checks.
func BlockTimed(what string, on any) bool {
	r := active.Load()
	if t := r.self(); t != nil {
		return r.block(t, what, on, true)
	}
	return true
}

// Release makes every thread blocked on on runnable again.
func Release(on any) {
	r := active.Load()
	if r == nil || r.self() == nil {
		return
	}
	for _, u := range r.threads {
		if (u.state == blocked || u.state == timedBlocked) && u.on == on {
			u.state, u.on = runnable, nil
		}
	}
}

// Go starts f as a new thread of the schedule, named name, and returns it.
// Called from a thread of the schedule only.
func Go(name string, f func()) *Thread {
	r := active.Load()
	t := r.self()
	if t == nil {
		panic("explore: Go called outside a schedule")
	}
	u := r.spawn(name, f)
	r.step(t, "go "+name, nil, false)
	return u
}

// A Thread is one logical thread of a schedule: a goroutine that runs only
// when the explorer lets it.
type Thread struct {
	id     int
	name   string
	resume chan struct{} // the baton: receiving it means "run"
	state  threadState
	on     any  // what a blocked thread waits for
	expire bool // the explorer timed it out
	yield  bool // it yielded and no other thread has taken a step since
	what   string
}

type threadState int

const (
	runnable threadState = iota
	blocked
	timedBlocked
	done
)

func (s threadState) String() string {
	return [...]string{"runnable", "blocked", "blocked (timed)", "done"}[s]
}

// Join blocks the calling thread until u has returned.
func (u *Thread) Join() {
	r := active.Load()
	t := r.self()
	r.step(t, "join "+u.name, u, false)
	for u.state != done {
		r.block(t, "join "+u.name, u, false)
	}
}

// run is one schedule being run. Exactly one of its threads holds the baton
// at any moment (running); every other thread is parked on its resume
// channel. The holder reads and writes the fields below; handing the baton
// on (a channel send and receive) orders its writes before the next
// holder's reads. Two fields are read by any goroutine that reaches an
// exploration point (self), so they are atomic: byGID, written by each
// thread as it starts, before it first holds the baton (spawn waits for
// that, so writes never overlap), and checking, written by the holder.
type run struct {
	// byGID lists the threads by goroutine id, copied on write: a
	// schedule has a few threads, and self runs at every point.
	byGID atomic.Pointer[[]gidThread]

	threads  []*Thread
	running  *Thread
	strat    Strategy
	steps    int
	maxSteps int
	trace    []traceEntry   // the last traceLen steps, a ring
	checks   []func() error // at quiescence
	always   []func() error // at every step
	checking atomic.Bool    // the checks run: points are not steps
	failure  string
	carriers *carriers // the exploration's (see carriers)
	cands    []*Thread // pick's scratch
	ids      []int     // choose's scratch
	finished chan struct{}
	// abort is closed after a failed schedule, to unwind its threads'
	// goroutines (runtime.Goexit) so that none is left behind.
	abort chan struct{}
}

const traceLen = 80

// traceEntry is one step of the trace, formatted only for a report: a
// schedule takes hundreds of steps, and almost every schedule passes.
type traceEntry struct {
	step   int
	thread *Thread
	prefix string // before what, such as "block: "
	what   string
}

func (e traceEntry) String() string {
	return fmt.Sprintf("%5d %-12s %s%s", e.step, e.thread.name, e.prefix, e.what)
}

// gidThread is an entry of run.byGID.
type gidThread struct {
	id int64
	t  *Thread
}

// self returns the thread of the calling goroutine, or nil if it is none,
// or if the checks run (check).
func (r *run) self() *Thread {
	if r.checking.Load() {
		return nil
	}
	id := gid.Current()
	for _, e := range *r.byGID.Load() {
		if e.id == id {
			return e.t
		}
	}
	return nil
}

func (r *run) spawn(name string, f func()) *Thread {
	u := &Thread{id: len(r.threads), name: fmt.Sprintf("%s#%d", name, len(r.threads)), resume: make(chan struct{}, 1)}
	r.threads = append(r.threads, u)
	registered := make(chan struct{})
	r.carriers.start(func() {
		// The carrier may have run a thread of this schedule that has
		// returned: u replaces it.
		id := gid.Current()
		list := []gidThread{{id, u}}
		for _, e := range *r.byGID.Load() {
			if e.id != id {
				list = append(list, e)
			}
		}
		r.byGID.Store(&list)
		close(registered)
		r.wait(u)
		r.body(u, f)
	})
	<-registered
	return u
}

// carriers are the goroutines that run the threads of an exploration's
// schedules, each thread after thread: a schedule starts a few threads,
// and growing the stack of a new goroutine for each took a fifth of the
// time of an exploration. A carrier whose thread has returned waits in
// idle for the next one; one whose schedule was aborted exits (wait).
// stop, at the end of the exploration, ends the others.
type carriers struct {
	mu     sync.Mutex
	idle   []chan func()
	closed bool
	live   sync.WaitGroup
}

// start runs f on an idle carrier, or on a new one.
func (cs *carriers) start(f func()) {
	cs.mu.Lock()
	if n := len(cs.idle); n > 0 {
		c := cs.idle[n-1]
		cs.idle = cs.idle[:n-1]
		cs.mu.Unlock()
		c <- f
		return
	}
	cs.mu.Unlock()
	c := make(chan func(), 1)
	c <- f
	cs.live.Add(1)
	go cs.carry(c)
}

// carry runs what comes on c until stop closes it.
func (cs *carriers) carry(c chan func()) {
	defer cs.live.Done()
	for f := range c {
		f()
		cs.mu.Lock()
		if cs.closed {
			cs.mu.Unlock()
			return
		}
		cs.idle = append(cs.idle, c)
		cs.mu.Unlock()
	}
}

// stop ends every carrier: the idle ones now, the others as they come
// back (or unwind). It may be called again.
func (cs *carriers) stop() {
	cs.mu.Lock()
	cs.closed = true
	for _, c := range cs.idle {
		close(c)
	}
	cs.idle = nil
	cs.mu.Unlock()
}

// body runs f as thread u and ends the thread.
func (r *run) body(u *Thread, f func()) {
	normal := false
	defer func() {
		if !normal {
			if v := recover(); v != nil {
				r.fail(fmt.Sprintf("thread %s panicked: %v\n%s", u.name, v, stack()))
			}
			r.wait(u) // the schedule has failed, or is being aborted: unwind
			return
		}
		u.state = done
		r.record(u, "", "return")
		Release(u)
		next := r.pick(u, false)
		if next != nil {
			r.running = next
			next.resume <- struct{}{}
		}
	}()
	f()
	normal = true
}

// wait parks thread t until it gets the baton. If the schedule is aborted
// instead, the goroutine unwinds.
func (r *run) wait(t *Thread) {
	select {
	case <-t.resume:
	case <-r.abort:
		runtime.Goexit()
	}
}

func (r *run) record(t *Thread, prefix, what string) {
	e := traceEntry{r.steps, t, prefix, what}
	if len(r.trace) < traceLen {
		r.trace = append(r.trace, e)
	} else {
		r.trace[r.steps%traceLen] = e
	}
}

// step is an exploration point of thread t.
func (r *run) step(t *Thread, what string, addr any, yield bool) {
	r.steps++
	if r.steps > r.maxSteps {
		r.fail(fmt.Sprintf("more than %d steps in one schedule: a livelock, or a configuration too large", r.maxSteps))
		r.wait(t)
	}
	for _, u := range r.threads {
		if u != t {
			u.yield = false // t takes a step: those that yielded to it may go again
		}
	}
	t.yield = yield
	t.what = what
	r.record(t, "", what)
	if msg := r.check(r.always); msg != "" {
		r.fail("at step " + fmt.Sprint(r.steps) + ": " + msg)
		r.wait(t)
	}
	r.switchTo(t, r.pick(t, false))
}

// block parks t until it is released (or, if timed, timed out) and reports
// false if it was timed out.
func (r *run) block(t *Thread, what string, on any, timed bool) bool {
	t.state, t.on, t.what = blocked, on, what
	if timed {
		t.state = timedBlocked
	}
	r.record(t, "block: ", what)
	r.switchTo(t, r.pick(t, true))
	if t.expire {
		t.expire = false
		return false
	}
	return true
}

// switchTo hands the baton from t to next and waits for it to come back.
// next == nil means the schedule ended (failed): t stays parked.
func (r *run) switchTo(t, next *Thread) {
	if next == t {
		return
	}
	if next != nil {
		r.running = next
		next.resume <- struct{}{}
	}
	r.wait(t)
}

// pick returns the thread that takes the next step after t's, or nil when
// the schedule has ended. blockedNow: t has just blocked.
func (r *run) pick(t *Thread, blockedNow bool) *Thread {
	for {
		cands := r.cands[:0]
		for _, u := range r.threads {
			if u.state == runnable {
				cands = append(cands, u)
			}
		}
		if len(cands) > 0 {
			if len(cands) == 1 {
				return cands[0]
			}
			// cur: t may go on, at no cost. yielder: t has just yielded,
			// so going on is the exception (see Strategy.choose).
			cur, yielder := -1, -1
			for i, u := range cands {
				if u == t {
					if u.yield {
						yielder = i
					} else {
						cur = i
					}
				}
			}
			r.cands = cands
			return cands[r.choose(cands, cur, yielder)]
		}
		r.cands = cands
		// Quiescent: no thread can run. Check the properties that must
		// hold here, then let a time limit pass, if any thread has one.
		if msg := r.check(r.always, r.checks); msg != "" {
			r.fail("at a quiescent state: " + msg)
			return nil
		}
		var timed []*Thread
		live := 0
		for _, u := range r.threads {
			if u.state == timedBlocked {
				timed = append(timed, u)
			}
			if u.state != done {
				live++
			}
		}
		if len(timed) > 0 {
			u := timed[0]
			if len(timed) > 1 {
				u = timed[r.choose(timed, -1, -1)]
			}
			u.state, u.on, u.expire = runnable, nil, true
			r.record(u, "", "time limit passes")
			continue
		}
		if live == 0 {
			r.end()
			return nil
		}
		r.fail("deadlock: no thread can run and none has a time limit")
		return nil
	}
}

func (r *run) choose(cands []*Thread, cur, yielder int) int {
	ids := r.ids[:0]
	for _, u := range cands {
		ids = append(ids, u.id)
	}
	r.ids = ids
	c := r.strat.choose(ids, cur, yielder, r.steps)
	if c < 0 || c >= len(ids) {
		r.fail(fmt.Sprintf("replay diverged: the strategy chose %d of %d threads (is the program deterministic?)", c, len(ids)))
		r.wait(r.running)
	}
	return c
}

// check runs the given checks with exploration points off and returns the
// first failure.
func (r *run) check(lists ...[]func() error) string {
	r.checking.Store(true)
	defer r.checking.Store(false)
	for _, l := range lists {
		for _, c := range l {
			if err := c(); err != nil {
				return err.Error()
			}
		}
	}
	return ""
}

func (r *run) fail(msg string) {
	if r.failure == "" {
		r.failure = msg + "\n" + r.report()
	}
	r.end()
}

func (r *run) end() {
	select {
	case <-r.finished:
	default:
		close(r.finished)
	}
}

// report describes the threads and the last steps.
func (r *run) report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "after %d steps; threads:\n", r.steps)
	for _, u := range r.threads {
		fmt.Fprintf(&b, "  %-12s %s (last: %s)\n", u.name, u.state, u.what)
	}
	fmt.Fprintf(&b, "last steps:\n")
	entries := append([]traceEntry(nil), r.trace...)
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].step < entries[j].step })
	for _, e := range entries {
		b.WriteString("  " + e.String() + "\n")
	}
	return b.String()
}

func stack() []byte {
	buf := make([]byte, 64<<10)
	return buf[:runtime.Stack(buf, false)]
}

// A Schedule is what a program under exploration sees of the schedule that
// runs it: it starts threads and states the properties to check.
type Schedule struct {
	r *run
}

// Yield gives the next step to another thread, if any can run: a loop
// that waits for another thread must call it on each turn.
func (s *Schedule) Yield() { Yield() }

// Go starts f as a new thread named name.
func (s *Schedule) Go(name string, f func()) *Thread { return Go(name, f) }

// AtQuiescence adds a property that must hold whenever no thread can run,
// before the explorer lets any time limit pass. check runs on a thread's
// goroutine with exploration points off; it must only read (atomic loads),
// never lock or block.
func (s *Schedule) AtQuiescence(check func() error) { s.r.checks = append(s.r.checks, check) }

// Always adds a property that must hold in every state of the schedule: it
// is checked before every step (so after every operation) and at
// quiescence. The same restrictions as for AtQuiescence apply.
func (s *Schedule) Always(check func() error) { s.r.always = append(s.r.always, check) }

// Errorf fails the schedule (and the exploration) with a message; the
// schedule runs on to its end.
func (s *Schedule) Errorf(format string, args ...any) {
	if s.r.failure == "" {
		s.r.failure = fmt.Sprintf(format, args...) + "\n" + s.r.report()
	}
}

// Options configure an exploration.
type Options struct {
	// Strategy chooses the schedules: Exhaustive, PCT or Random.
	Strategy Strategy
	// MaxSchedules stops the exploration after that many schedules
	// (0: until the strategy is exhausted; required for PCT and Random).
	MaxSchedules int
	// MaxSteps bounds one schedule (0: 100000); a schedule that takes
	// more steps fails as a livelock.
	MaxSteps int
	// Budget stops the exploration, without failing, after that much time
	// (0: no limit). A schedule that runs for a minute fails as a hang.
	Budget time.Duration
}

// Result summarizes an exploration.
type Result struct {
	Schedules int  // schedules run
	MaxSteps  int  // steps of the longest schedule
	Exhausted bool // the strategy ran out of schedules (an exhaustive search finished)
}

func (res Result) String() string {
	s := fmt.Sprintf("%d schedules, at most %d steps each", res.Schedules, res.MaxSteps)
	if res.Exhausted {
		s += ", every schedule within the bound"
	}
	return s
}

// Explore runs prog under one schedule after another, as the strategy
// chooses them, and fails t at the first schedule that breaks a property:
// a thread panics, Errorf is called, a quiescence check fails, no thread
// can run while some are blocked without a time limit (deadlock), or a
// schedule exceeds MaxSteps. prog runs as the schedule's first thread; it
// must build all the state it uses, since it runs again for every schedule,
// and its outcome must depend only on the schedule (no other randomness).
func Explore(t testing.TB, opts Options, prog func(s *Schedule)) Result {
	t.Helper()
	if opts.MaxSteps == 0 {
		opts.MaxSteps = 100000
	}
	var res Result
	start := time.Now()
	cs := new(carriers)
	defer cs.stop()
	for opts.MaxSchedules == 0 || res.Schedules < opts.MaxSchedules {
		if opts.Budget > 0 && time.Since(start) > opts.Budget {
			break
		}
		if !opts.Strategy.begin() {
			res.Exhausted = true
			break
		}
		r := &run{carriers: cs, strat: opts.Strategy, maxSteps: opts.MaxSteps,
			finished: make(chan struct{}), abort: make(chan struct{}), trace: make([]traceEntry, 0, traceLen)}
		r.byGID.Store(new([]gidThread))
		if !active.CompareAndSwap(nil, r) {
			t.Fatal("explore: explorations must not run concurrently")
		}
		s := &Schedule{r: r}
		main := r.spawn("main", func() { prog(s) })
		r.running = main
		main.resume <- struct{}{}
		timer := time.NewTimer(time.Minute)
		select {
		case <-r.finished:
			timer.Stop()
		case <-timer.C:
			active.Store(nil)
			close(r.abort)
			t.Fatalf("explore: a schedule ran for a minute (%s)\n%s", opts.Strategy, allStacks())
		}
		active.Store(nil)
		res.Schedules++
		res.MaxSteps = max(res.MaxSteps, r.steps)
		if r.failure != "" {
			close(r.abort)
			t.Fatalf("explore: schedule %d (%s) failed: %s", res.Schedules, opts.Strategy, r.failure)
		}
		opts.Strategy.end(r.steps)
	}
	// Every schedule has ended, each thread returned: its carrier is idle
	// or about to be. (After a failure, the deferred stop does not wait: a
	// thread of a schedule that hung may never come back.)
	cs.stop()
	cs.live.Wait()
	return res
}

func allStacks() []byte {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= 64<<20 {
			return bytes.TrimSpace(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}
