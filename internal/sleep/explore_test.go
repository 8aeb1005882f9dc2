//go:build explore

package sleep

import (
	"fmt"
	stdatomic "sync/atomic"
	"testing"
	"time"

	"github.com/go-steal/steal/internal/explore"
	"github.com/go-steal/steal/internal/explore/atomic"
)

// The idle protocol under the interleaving explorer (package explore):
// workers run the real NoWorkFound, sleep and wake code over queues that
// are counters of jobs, posters push jobs and announce them, and every
// schedule with at most a few preemptions is run. The protocol is cut to
// one search round before sleepiness (Rounds = 1, no spinning): the rounds
// only repeat the same search.
//
// Properties, checked on every schedule:
//
//   - no lost wake-up, in every state: a job is queued, some worker is
//     registered as asleep, no worker is searching (awake and idle), and
//     nobody is in the middle of an operation that owes a wake-up (a post,
//     from its push to the return of NewInjectedJobs or NewInternalJobs,
//     or a WorkFound). Checked at every step, this fails as soon as a
//     wake-up is lost, even where a linger timeout would later end the
//     sleep and hide the loss;
//   - every job runs exactly once (taken with a compare-and-swap, counted);
//   - a worker told to stop (done, then WakeWorker) stops: a worker that
//     sleeps through it leaves the schedule deadlocked.
//
// Run with: go test -tags explore -run Explore ./internal/sleep

// mini is a pool in miniature around a real Sleep.
type mini struct {
	s     *Sleep
	inj   atomic.Int64   // jobs in the injector
	deq   []atomic.Int64 // jobs in each worker's deque
	ran   stdatomic.Int64
	owing stdatomic.Int32 // operations in progress that owe a wake-up
	done  atomic.Bool
	// children: each injected job pushes this many jobs onto the deque
	// of the worker that runs it, as a task that forks would.
	children int
	linger   time.Duration
}

func takeJob(q *atomic.Int64) bool {
	for {
		n := q.Load()
		if n == 0 {
			return false
		}
		if q.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

// find takes a job: own deque, injector, other deques. It reports whether
// the job came from the injector.
func (m *mini) find(i int) (found, injected bool) {
	if takeJob(&m.deq[i]) {
		return true, false
	}
	if takeJob(&m.inj) {
		return true, true
	}
	for v := range m.deq {
		if v != i && takeJob(&m.deq[v]) {
			return true, false
		}
	}
	return false, false
}

func (m *mini) queued() int64 {
	n := m.inj.Load()
	for i := range m.deq {
		n += m.deq[i].Load()
	}
	return n
}

// worker is the run loop of a pool's worker, cut to the idle protocol.
func (m *mini) worker(i int) {
	idle := m.s.StartLooking(i)
	doneFn := m.done.Load
	injectedFn := func() bool { return m.inj.Load() > 0 }
	for {
		if found, injected := m.find(i); found {
			m.owing.Add(1)
			m.s.WorkFound(&idle, func() bool { return m.queued() > 0 })
			m.owing.Add(-1)
			for found {
				m.ran.Add(1)
				if injected {
					for range m.children {
						m.post(&m.deq[i], false)
					}
				}
				found, injected = m.find(i)
			}
			idle = m.s.StartLooking(i)
			continue
		}
		switch m.s.NoWorkFound(&idle, doneFn, injectedFn, m.linger) {
		case Done, Lingered:
			m.s.StopLooking(&idle)
			return
		}
	}
}

// post pushes one job onto q and announces it.
func (m *mini) post(q *atomic.Int64, injected bool) {
	m.owing.Add(1)
	wasEmpty := q.Add(1) == 1
	if injected {
		m.s.NewInjectedJobs(1, wasEmpty)
	} else {
		m.s.NewInternalJobs(1, wasEmpty)
	}
	m.owing.Add(-1)
}

// lostWakeUp is the JEC property; see above.
func (m *mini) lostWakeUp() error {
	c := m.s.Load()
	if q := m.queued(); q > 0 && c.Sleeping() > 0 && c.AwakeIdle() == 0 && m.owing.Load() == 0 {
		return fmt.Errorf("lost wake-up: %d job(s) queued, %d worker(s) asleep, none searching, no wake-up owed", q, c.Sleeping())
	}
	return nil
}

// sleepConfig is one configuration of workers and posts.
type sleepConfig struct {
	name     string
	workers  int
	posts    int // injected jobs, posted by one poster thread
	children int
	shutdown bool // linger 0 (sleep until woken); main stops the workers at the end
	// foreign: the poster stands for a busy worker that pushes onto its
	// own deque (an extra deque that no idle worker owns) and announces
	// internal jobs, instead of injecting.
	foreign bool
	bound   int // preemption bound (one more under -explore.long)
}

func (cfg sleepConfig) run(s *explore.Schedule) {
	deques := cfg.workers
	if cfg.foreign {
		deques++
	}
	m := &mini{s: New(cfg.workers), deq: make([]atomic.Int64, deques), children: cfg.children, linger: time.Millisecond}
	m.s.SetSpin(false)
	if cfg.shutdown {
		m.linger = 0
	}
	s.Always(m.lostWakeUp)
	var workers []*explore.Thread
	for i := range cfg.workers {
		workers = append(workers, s.Go(fmt.Sprintf("worker%d", i), func() { m.worker(i) }))
	}
	poster := s.Go("poster", func() {
		for range cfg.posts {
			if cfg.foreign {
				m.post(&m.deq[cfg.workers], false)
			} else {
				m.post(&m.inj, true)
			}
		}
	})
	poster.Join()
	want := int64(cfg.posts * (1 + cfg.children))
	if cfg.shutdown {
		// Stop the workers once every job has run, as a pool shuts down:
		// make done true, then wake each worker.
		for m.ran.Load() < want {
			s.Yield()
		}
		m.done.Store(true)
		for i := range cfg.workers {
			m.s.WakeWorker(i)
		}
	}
	for _, w := range workers {
		w.Join()
	}
	if got := m.ran.Load(); got != want {
		s.Errorf("%d jobs ran, want %d", got, want)
	}
	if c := m.s.Load(); c.Inactive() != 0 || c.Sleeping() != 0 {
		s.Errorf("counters after every worker left: %d inactive, %d sleeping", c.Inactive(), c.Sleeping())
	}
}

func sleepConfigs() []sleepConfig {
	return []sleepConfig{
		// A job injected while the only worker gets sleepy.
		{name: "inject-1w", bound: 3, workers: 1, posts: 1},
		// A busy worker pushes a job onto its deque while the only idle
		// worker gets sleepy: the idle one must steal it.
		{name: "internal-1w", bound: 3, workers: 1, posts: 1, foreign: true},
		// Two workers and two injected jobs.
		{name: "inject-2w", bound: 1, workers: 2, posts: 2},
		// A running worker pushes a job onto its own deque, which an
		// idle worker must be woken to steal (an internal job).
		{name: "internal-2w", bound: 1, workers: 2, posts: 1, children: 1},
		// Workers that sleep until woken are stopped by done and
		// WakeWorker.
		{name: "shutdown-2w", bound: 1, workers: 2, posts: 1, shutdown: true},
	}
}

func TestExploreSleep(t *testing.T) {
	defer func(r, s int) { Rounds, SpinRounds = r, s }(Rounds, SpinRounds)
	Rounds, SpinRounds = 1, 0
	for _, cfg := range sleepConfigs() {
		t.Run(cfg.name, func(t *testing.T) {
			bound := explore.Bound(cfg.bound, cfg.bound)
			res := explore.Explore(t, explore.Options{Strategy: explore.Exhaustive(bound), Budget: explore.Budget()}, cfg.run)
			if !res.Exhausted && !explore.Long() {
				t.Fatalf("search not exhausted: %v", res)
			}
			t.Log(res)
		})
	}
}

// TestExploreSleepPCT runs random schedules of the same configurations
// (probabilistic concurrency testing, three priority change points). It
// reaches bugs that need more preemptions than the exhaustive bound allows:
// a post that wakes before it moves the jobs event counter loses a wake-up
// only in a schedule with four (the idle protocol's yields between the
// searches cost one each).
func TestExploreSleepPCT(t *testing.T) {
	defer func(r, s int) { Rounds, SpinRounds = r, s }(Rounds, SpinRounds)
	Rounds, SpinRounds = 1, 0
	for _, cfg := range sleepConfigs() {
		t.Run(cfg.name, func(t *testing.T) {
			opts := explore.Options{Strategy: explore.PCT(1, 3), MaxSchedules: explore.Schedules(2000, 10000), Budget: explore.Budget()}
			t.Log(explore.Explore(t, opts, cfg.run))
		})
	}
}
