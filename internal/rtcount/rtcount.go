// Package rtcount reads the few of the runtime's metrics that the
// scheduler's fallback needs (package handoff, counts.go): how many
// goroutines run on a processor and how many wait for one, and whether the
// garbage collector marks. It reads them as package runtime/metrics does,
// through the same function of the runtime, but without importing
// runtime/metrics, whose initialization (it builds its table of
// descriptions) costs every program that links it a few tenths of a
// millisecond at start-up, whether or not it ever reads a metric; wsgroup
// promises that importing it costs a program nothing.
//
// The function is the runtime's implementation of runtime/metrics.Read,
// which takes a slice of samples laid out as runtime/metrics.Sample is
// (the runtime keeps the two identical: see metricSample in the runtime's
// metrics.go). That layout is not taken on trust either: the first Read
// checks it against values known by other means (GOMAXPROCS, a name that
// does not exist, a histogram's shape) and, if anything disagrees, the
// Reader reports nothing from then on, and the scheduler does without the
// counts. TestReadMatchesRuntimeMetrics compares the values with
// runtime/metrics.Read's on each release CI runs.
package rtcount

import (
	"runtime"
	"sync"
	"time"
	"unsafe"
)

// The metrics' names, as runtime/metrics lists them.
const (
	nameRunning   = "/sched/goroutines/running:goroutines"
	nameRunnable  = "/sched/goroutines/runnable:goroutines"
	nameCycles    = "/gc/cycles/total:gc-cycles"
	nameStops     = "/sched/pauses/stopping/gc:seconds"
	nameProcs     = "/sched/gomaxprocs:threads"
	nameNoSuchOne = "/rtcount/no-such-metric:events"
)

// The kinds of value (runtime/metrics.ValueKind).
const (
	kindBad       = 0
	kindUint64    = 1
	kindHistogram = 3
)

// sample is runtime/metrics.Sample: a name and a value.
type sample struct {
	name  string
	value value
}

// value is runtime/metrics.Value.
type value struct {
	kind    int
	scalar  uint64
	pointer unsafe.Pointer
}

// histogram is runtime/metrics.Float64Histogram.
type histogram struct {
	counts  []uint64
	buckets []float64
}

//go:linkname readMetrics runtime/metrics.runtime_readMetrics
func readMetrics(samples unsafe.Pointer, len, cap int)

// read fills in s.
func read(s []sample) { readMetrics(unsafe.Pointer(unsafe.SliceData(s)), len(s), cap(s)) }

// Counts is what one Read found.
type Counts struct {
	// Running is the number of processors running Go code: a goroutine,
	// or the scheduler looking for one (a processor in a system call is
	// not counted). The goroutine that calls Read is one of them.
	Running int
	// Runnable is the number of goroutines ready to run and waiting for a
	// processor, in every run queue.
	Runnable int
	// Marking reports that the collector may be marking. A cycle stops
	// the world once before it marks and once after; the runtime counts
	// each stop while the world is stopped, and the cycle as completed
	// during the stop after marking, so no goroutine runs between a count
	// and the state it counts: outside marking, the stops are twice the
	// completed cycles. A mark the runtime restarts (it may, when work
	// turns up at the stop that was to end it) stops the world once more
	// for good. The Reader learns of such an excess when every Read for
	// at least two completed cycles and markLimit has found more stops
	// than it knew of (it reads as marking until then), and unlearns it
	// when a Read finds fewer.
	Marking bool
	// Stops is the number of times the collector has stopped the world:
	// it changes at every transition into and out of marking.
	Stops uint64
}

// A Reader reads Counts. Its zero value is ready to use. A Reader is not
// safe for concurrent use: its samples are reused.
type Reader struct {
	samples []sample
	// excess is the stops the Reader knows of beyond twice the cycles
	// outside marking: the marks the runtime restarted (see
	// Counts.Marking).
	excess int64
	// Since every Read found more stops than that: the time and the
	// cycles of the first such Read (zero time: the last Read did not),
	// and the least excess found since.
	moreSince  time.Time
	moreCycles uint64
	moreLeast  int64
}

// markLimit: how long every Read must find stops beyond what the Reader
// knows of (and two cycles complete meanwhile) for it to take them as
// marks the runtime restarted. A mark longer than that, with two cycles
// completed meanwhile, is not a mark: cycles complete only after marking.
const markLimit = 100 * time.Millisecond

// verified is the outcome of the check of the layout, made by the first
// Read in the process.
var verified = sync.OnceValue(check)

// check reads metrics whose values are known by other means and reports
// whether the runtime wrote them where and as this package reads them.
func check() bool {
	s := []sample{{name: nameProcs}, {name: nameNoSuchOne}, {name: nameStops}, {name: nameRunning}}
	// Sentinels: the runtime must overwrite each kind.
	for i := range s {
		s[i].value.kind = -1
	}
	procs := runtime.GOMAXPROCS(0)
	read(s)
	h := (*histogram)(s[2].value.pointer)
	return s[0].value.kind == kindUint64 && s[0].value.scalar == uint64(procs) &&
		s[1].value.kind == kindBad &&
		s[2].value.kind == kindHistogram && h != nil && len(h.buckets) == len(h.counts)+1 &&
		s[3].value.kind == kindUint64 && s[3].value.scalar >= 1 && s[3].value.scalar <= uint64(procs)
}

// Read reads the counts, and reports false when they cannot be read: the
// first Read in the process found that the runtime does not lay its
// metrics out as this package reads them. It costs about as much as
// runtime/metrics.Read of the same four metrics (a few hundred
// nanoseconds, under the runtime's scheduler lock).
func (r *Reader) Read() (Counts, bool) {
	if !r.ready() {
		return Counts{}, false
	}
	read(r.samples)
	c := Counts{Running: int(r.samples[0].value.scalar), Runnable: int(r.samples[1].value.scalar)}
	var stops uint64
	if h := (*histogram)(r.samples[3].value.pointer); h != nil {
		for _, n := range h.counts {
			stops += n
		}
	}
	c.Stops = stops
	c.Marking = r.marking(int64(stops)-2*int64(r.samples[2].value.scalar), r.samples[2].value.scalar)
	return c, true
}

// marking tells from excess, the stops beyond twice the completed cycles,
// whether the collector may be marking, and learns or unlearns the marks
// the runtime restarted (see Counts.Marking).
func (r *Reader) marking(excess int64, cycles uint64) bool {
	switch {
	case excess <= r.excess:
		// Fewer stops than the Reader knew of can only be an excess it
		// learned wrongly: it took for restarted marks the stops of
		// marks it happened to read during, every time.
		r.excess = excess
		r.moreSince = time.Time{}
	case r.moreSince.IsZero():
		r.moreSince, r.moreCycles, r.moreLeast = time.Now(), cycles, excess
	default:
		r.moreLeast = min(r.moreLeast, excess)
		if cycles-r.moreCycles >= 2 && time.Since(r.moreSince) >= markLimit {
			r.excess = r.moreLeast
			r.moreSince = time.Time{}
		}
	}
	return excess > r.excess
}

// Running returns only the number of processors running Go code and of
// goroutines waiting for one (see Counts), which is cheaper than Read: the
// collector's counts are not read. ok is false as for Read.
func (r *Reader) Running() (running, runnable int, ok bool) {
	if !r.ready() {
		return 0, 0, false
	}
	read(r.samples[:2])
	return int(r.samples[0].value.scalar), int(r.samples[1].value.scalar), true
}

// ready reports whether the counts can be read (see Read), and makes r's
// samples at its first call: running and runnable first, which Running
// reads alone.
func (r *Reader) ready() bool {
	if !verified() {
		return false
	}
	if r.samples == nil {
		r.samples = []sample{{name: nameRunning}, {name: nameRunnable}, {name: nameCycles}, {name: nameStops}}
	}
	return true
}
