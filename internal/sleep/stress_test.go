package sleep

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-steal/steal/internal/testkit"
)

// padded keeps each queue and counter of the stress test on its own cache
// line, as a real pool's would be.
type padded struct {
	atomic.Int64
	_ [56]byte
}

const (
	stressWorkers = 4
	stressPosters = 2
)

// stress is a pool in miniature: stressWorkers workers running the real idle
// loop over per-worker deques and one injector queue per poster, and
// stressPosters posters. Queues are counts of pending jobs, taken with a
// compare-and-swap, so a job is consumed exactly once by construction; the
// test checks that every posted job is consumed and that nothing hangs.
// A job taken from the injector sometimes pushes children onto the running
// worker's deque (internal jobs), which other workers may steal.
type stress struct {
	s       *Sleep
	nw      atomic.Int32 // workers started (the slots grow while the test runs)
	deq     [stressWorkers]padded
	inj     [stressPosters]padded
	injRan  [stressPosters]padded
	target  [stressPosters]padded // injRan at which poster p wants its signal
	signal  [stressPosters]chan struct{}
	intPost padded
	intRan  padded
	stop    atomic.Bool
	quit    chan struct{}
	sleeps  atomic.Int64 // blocks, counted at testHookBlock
	lingers atomic.Int64
	wg      sync.WaitGroup
}

func (st *stress) injected() bool {
	for p := range st.inj {
		if st.inj[p].Load() > 0 {
			return true
		}
	}
	return false
}

// queued reports whether any job waits, in an injector queue or a deque.
func (st *stress) queued() bool {
	if st.injected() {
		return true
	}
	for i := range int(st.nw.Load()) {
		if st.deq[i].Load() > 0 {
			return true
		}
	}
	return false
}

const (
	fromNone = -1
	fromDeq  = -2 // own deque or stolen: an internal job
)

// find looks for a job: own deque, the injector queues from a random one,
// then the other workers' deques from a random one. It returns the poster
// whose job it took, fromDeq, or fromNone.
func (st *stress) find(i int, rng *rand.Rand) int {
	if take(&st.deq[i].Int64) {
		return fromDeq
	}
	p0 := rng.IntN(stressPosters)
	for k := range stressPosters {
		if p := (p0 + k) % stressPosters; take(&st.inj[p].Int64) {
			return p
		}
	}
	nw := int(st.nw.Load())
	v0 := rng.IntN(nw)
	for k := range nw {
		if v := (v0 + k) % nw; v != i && take(&st.deq[v].Int64) {
			return fromDeq
		}
	}
	return fromNone
}

func (st *stress) run(i, from int, rng *rand.Rand) {
	if from == fromDeq {
		st.intRan.Add(1)
		return
	}
	if rng.IntN(8) == 0 {
		k := int64(1 + rng.IntN(2))
		st.intPost.Add(k) // before the push: intRan never passes intPost
		st.s.NewInternalJobs(int(k), st.deq[i].Add(k) == k)
	}
	if st.injRan[from].Add(1) >= st.target[from].Load() {
		select {
		case st.signal[from] <- struct{}{}:
		default:
		}
	}
}

// worker is the real loop of a pool's worker.
func (st *stress) worker(i int, linger time.Duration, seed uint64) {
	defer st.wg.Done()
	rng := rand.New(rand.NewPCG(seed, uint64(i)))
	idle := st.s.StartLooking(i)
	for {
		if from := st.find(i, rng); from != fromNone {
			st.s.WorkFound(&idle, st.queued)
			for ; from != fromNone; from = st.find(i, rng) {
				st.run(i, from, rng)
			}
			idle = st.s.StartLooking(i)
			continue
		}
		switch st.s.NoWorkFound(&idle, st.stop.Load, st.injected, linger) {
		case Done:
			st.s.StopLooking(&idle)
			return
		case Lingered:
			st.lingers.Add(1) // still inactive: search again
		}
	}
}

// poster posts quota jobs in batches of 1 to 4 (poster 0 with
// NewInjectedJobs, poster 1 with Post and Wake). After most batches it waits
// until they have been consumed (so that the workers run out of work and go
// to sleep), and sometimes further until a worker sleeps, so that the next
// post races with sleeping; after the others it posts again at once.
func (st *stress) poster(p, quota int, seed uint64) {
	defer st.wg.Done()
	rng := rand.New(rand.NewPCG(seed, uint64(100+p)))
	posted := 0
	waitConsumed := func() bool {
		for st.injRan[p].Load() < int64(posted) {
			select {
			case <-st.signal[p]:
			case <-st.quit:
				return false
			}
		}
		return true
	}
	for posted < quota {
		k := min(1+rng.IntN(4), quota-posted)
		posted += k
		st.target[p].Store(int64(posted))
		if p == 0 {
			st.s.NewInjectedJobs(k, st.inj[p].Add(int64(k)) == int64(k))
		} else {
			// As Pool.inject does: Post, then Wake if anyone sleeps.
			st.inj[p].Add(int64(k))
			if c := st.s.Post(); c.Sleeping() > 0 {
				st.s.Wake(c, k, st.inj[p].Load() <= int64(k))
			}
		}
		switch rng.IntN(4) {
		case 0: // burst
		case 1:
			if !waitConsumed() {
				return
			}
		default:
			if !waitConsumed() {
				return
			}
			for i := 0; i < 1000 && st.s.Load().Sleeping() == 0; i++ {
				runtime.Gosched()
			}
		}
	}
	waitConsumed()
}

// TestStress runs the real worker loop against posters for a million posts
// (100k under -short and the race detector) under each of GOMAXPROCS 1, 2,
// 4 and 8. Two of the four worker slots are added with
// Grow while the others already work and sleep; one worker lingers and
// searches again when nobody wakes it. It checks that nothing hangs (a
// hang is reported with the counters and all the goroutines' stacks), that every job
// is consumed, that shutting down (done, then WakeWorker) ends every
// worker, and that the counters come back to zero.
func TestStress(t *testing.T) {
	total := testkit.ScaleDown(1_000_000, 100_000)
	testkit.ForProcs(t, func(t *testing.T) {
		runStress(t, total, uint64(runtime.GOMAXPROCS(0)))
	})
}

func runStress(t *testing.T, posts int, seed uint64) {
	hung := hangBound(t)
	st := &stress{s: New(2), quit: make(chan struct{})}
	for p := range st.signal {
		st.signal[p] = make(chan struct{}, 1)
	}
	setHooks(t, func(w window) {
		if w == atBlock {
			st.sleeps.Add(1)
		}
	})
	lingers := [stressWorkers]time.Duration{0, 0, 0, 20 * time.Microsecond}
	startWorker := func(i int) {
		st.nw.Add(1)
		st.wg.Add(1)
		go st.worker(i, lingers[i], seed)
	}
	hang := func(what string) {
		dump := testkit.Stacks()
		close(st.quit)
		st.stop.Store(true)
		ended := make(chan struct{})
		go func() { st.wg.Wait(); close(ended) }()
		for range 50 {
			st.s.WakeAll()
			st.s.forceRelease()
			select {
			case <-ended:
			case <-time.After(100 * time.Millisecond):
				continue
			}
			break
		}
		t.Fatalf("hang: %s within %v\ncounters %v, workers %d, injector %d %d, injected ran %d %d, internal %d/%d\n%s",
			what, testkit.Timeout(t)*9/10, st.s.Load(), st.nw.Load(), st.inj[0].Load(), st.inj[1].Load(),
			st.injRan[0].Load(), st.injRan[1].Load(), st.intRan.Load(), st.intPost.Load(), dump)
	}
	// poll waits for cond, yielding; past hangBound it reports a hang.
	poll := func(cond func() bool, what string) {
		for !cond() {
			if time.Now().After(hung) {
				hang(what)
			}
			runtime.Gosched()
		}
	}
	// waitFor waits for ch to be closed; past hangBound it reports a hang.
	waitFor := func(ch chan struct{}, what string) {
		select {
		case <-ch:
		case <-time.After(time.Until(hung)):
			hang(what)
		}
	}

	startWorker(0)
	startWorker(1)
	quota := (posts + stressPosters - 1) / stressPosters
	var posters sync.WaitGroup
	for p := range stressPosters {
		st.wg.Add(1)
		posters.Add(1)
		go func() {
			defer posters.Done()
			st.poster(p, quota, seed)
		}()
	}
	// Add the other two slots while the first workers run and sleep.
	poll(func() bool { return st.injRan[0].Load()+st.injRan[1].Load() >= int64(min(1000, quota)) }, "first jobs not consumed")
	st.s.Grow(3)
	startWorker(2)
	st.s.Grow(stressWorkers)
	startWorker(3)

	postersDone := make(chan struct{})
	go func() { posters.Wait(); close(postersDone) }()
	waitFor(postersDone, "posters did not see all their jobs consumed")
	poll(func() bool { return st.intRan.Load() == st.intPost.Load() }, "internal jobs not consumed")
	// Everyone asleep (the lingering worker now and then), then shut down
	// as a pool does: done, then WakeWorker for each worker.
	poll(func() bool { return st.s.Load().Sleeping() >= stressWorkers-1 }, "workers did not fall asleep")
	st.stop.Store(true)
	for i := range stressWorkers {
		st.s.WakeWorker(i)
	}
	ended := make(chan struct{})
	go func() { st.wg.Wait(); close(ended) }()
	waitFor(ended, "workers did not end after done and WakeWorker")

	for p := range stressPosters {
		if got := st.injRan[p].Load(); got != int64(quota) || st.inj[p].Load() != 0 {
			t.Errorf("poster %d: posted %d, consumed %d, %d left", p, quota, got, st.inj[p].Load())
		}
	}
	for i := range st.deq {
		if n := st.deq[i].Load(); n != 0 {
			t.Errorf("worker %d's deque holds %d jobs", i, n)
		}
	}
	if st.intRan.Load() != st.intPost.Load() {
		t.Errorf("internal jobs: posted %d, consumed %d", st.intPost.Load(), st.intRan.Load())
	}
	if c := st.s.Load(); c.Sleeping() != 0 || c.Inactive() != 0 {
		t.Errorf("final counters %v, want no inactive or sleeping worker", c)
	}
	for i := range stressWorkers {
		if st.s.tokens(i) != 0 {
			t.Errorf("worker %d: a wake-up token left in its channel", i)
		}
	}
	t.Logf("%d injected + %d internal jobs, %d sleeps, %d lingers", stressPosters*quota, st.intPost.Load(), st.sleeps.Load(), st.lingers.Load())
}
