// Package rtcount reads the few of the runtime's metrics that the
// scheduler's fallback needs (package sched, fallback.go): how many
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
	"unsafe"
)

// The metrics' names, as runtime/metrics lists them.
const (
	nameRunning   = "/sched/goroutines/running:goroutines"
	nameRunnable  = "/sched/goroutines/runnable:goroutines"
	nameCycles    = "/gc/cycles/total:gc-cycles"
	namePauses    = "/sched/pauses/total/gc:seconds"
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
	// Marking reports that the collector may be marking: it has stopped
	// the world an odd number of times, or more than twice, beyond twice
	// its completed cycles (a cycle stops it once before marking and
	// once after, and a mark that the runtime restarts once more). Right
	// after a mark ends, until the runtime counts that stop, the count is
	// one short, which reads as not marking, which is so.
	Marking bool
}

// A Reader reads Counts. Its zero value is ready to use. A Reader is not
// safe for concurrent use: its samples are reused.
type Reader struct {
	samples []sample
}

// verified is the outcome of the check of the layout, made by the first
// Read in the process.
var verified = sync.OnceValue(check)

// check reads metrics whose values are known by other means and reports
// whether the runtime wrote them where and as this package reads them.
func check() bool {
	s := []sample{{name: nameProcs}, {name: nameNoSuchOne}, {name: namePauses}, {name: nameRunning}}
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
	if !verified() {
		return Counts{}, false
	}
	if r.samples == nil {
		r.samples = []sample{{name: nameRunning}, {name: nameRunnable}, {name: nameCycles}, {name: namePauses}}
	}
	read(r.samples)
	c := Counts{Running: int(r.samples[0].value.scalar), Runnable: int(r.samples[1].value.scalar)}
	var stops uint64
	if h := (*histogram)(r.samples[3].value.pointer); h != nil {
		for _, n := range h.counts {
			stops += n
		}
	}
	c.Marking = int64(stops)-2*int64(r.samples[2].value.scalar) > 0
	return c, true
}

// Running returns only the number of processors running Go code and of
// goroutines waiting for one (see Counts), which is cheaper than Read: the
// collector's counts are not read. ok is false as for Read.
func (r *Reader) Running() (running, runnable int, ok bool) {
	if !verified() {
		return 0, 0, false
	}
	if r.samples == nil {
		r.samples = []sample{{name: nameRunning}, {name: nameRunnable}, {name: nameCycles}, {name: namePauses}}
	}
	read(r.samples[:2])
	return int(r.samples[0].value.scalar), int(r.samples[1].value.scalar), true
}
