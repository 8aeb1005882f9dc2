// Package gid identifies the current goroutine and maps worker goroutines to
// the values registered for them.
//
// Go has no goroutine-local storage. Workers register themselves under their
// goroutine id; Lookup finds the value registered for the calling goroutine,
// if any, in a few nanoseconds: one id read (github.com/petermattis/goid,
// which reads the runtime's g structure) and one atomic load.
//
// At the first registration (not when the package is initialized:
// importing it costs a program nothing), the fast id is checked against
// the id parsed from runtime.Stack. If they disagree (a Go release that
// moved the field the fast path reads), the package never reports a
// registration: every caller then counts as an outsider, which is slower
// but still correct.
package gid

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/petermattis/goid"
)

// Table maps goroutine ids to values of type *V.
//
// Readers (Lookup) never lock: each bucket holds an immutable list that
// writers replace as a whole. Writers (Register, Unregister) serialize on
// mu, copy the bucket's list with the change, and publish the copy with one
// atomic store, so a reader sees either the old list or the new one, never a
// list being built.
//
// The zero value is an empty table.
type Table[V any] struct {
	mu      sync.Mutex
	buckets [nBuckets]atomic.Pointer[entry[V]]
}

const nBuckets = 1 << 10

type entry[V any] struct {
	id   int64
	v    *V
	next *entry[V] // immutable once published
}

// trust is what the check of goid.Get against runtime.Stack found: one of
// the constants below. The first caller of trusted runs the check;
// callers that race with it run it too and agree on the first outcome
// stored (the outcome cannot differ: it is the same toolchain).
var trust atomic.Uint32

const (
	trustUnchecked uint32 = iota
	trustYes
	trustNo
)

// trusted reports whether goid.Get agrees with runtime.Stack here: one
// atomic load once the check has run.
func trusted() bool {
	if t := trust.Load(); t != trustUnchecked {
		return t == trustYes
	}
	return checkTrust()
}

// checkTrust runs the check and records its outcome.
func checkTrust() bool {
	t := trustNo
	if checkFastID() {
		t = trustYes
	}
	trust.CompareAndSwap(trustUnchecked, t)
	return trust.Load() == trustYes
}

func checkFastID() bool {
	// Buffered, so the checking goroutine exits even when the first
	// comparison fails and nobody receives.
	ch := make(chan bool, 1)
	go func() { ch <- goid.Get() == slowID() }()
	return goid.Get() == slowID() && <-ch
}

// slowID parses "goroutine 123 [running]:" from runtime.Stack.
func slowID() int64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return -1
	}
	return id
}

// Trusted reports whether the fast goroutine id agrees with runtime.Stack
// (checked at the first call of Trusted, Register or Unregister).
// When false, Lookup always reports nil.
func Trusted() bool { return trusted() }

// Current returns the calling goroutine's id.
func Current() int64 { return goid.Get() }

func bucket(id int64) int { return int(uint64(id) * 0x9E3779B97F4A7C15 >> (64 - 10)) }

// Lookup returns the value registered for the calling goroutine, or nil.
//
// It does not ask whether the fast id is trusted: Register refuses when it
// is not, so then the table is empty and every id misses. (A wrong fast id
// reads some other word of the runtime's g, which is harmless to read.)
// The first entry of the bucket is checked before the loop over the rest
// (lookupRest), where the ids that share the bucket go.
func (t *Table[V]) Lookup() *V {
	id := goid.Get()
	e := t.buckets[bucket(id)].Load()
	if e != nil && e.id == id {
		return e.v
	}
	return lookupRest(e, id)
}

// lookupRest is Lookup past the first entry e of the bucket of id.
func lookupRest[V any](e *entry[V], id int64) *V {
	for ; e != nil; e = e.next {
		if e.id == id {
			return e.v
		}
	}
	return nil
}

// Register records v for the calling goroutine until Unregister.
func (t *Table[V]) Register(v *V) {
	if !trusted() {
		return
	}
	id := goid.Get()
	b := &t.buckets[bucket(id)]
	t.mu.Lock()
	b.Store(&entry[V]{id: id, v: v, next: b.Load()})
	t.mu.Unlock()
}

// Unregister removes the calling goroutine's registration.
func (t *Table[V]) Unregister() {
	if !trusted() {
		return
	}
	id := goid.Get()
	b := &t.buckets[bucket(id)]
	t.mu.Lock()
	defer t.mu.Unlock()
	// Rebuild the list without id; entries before it are copied, the tail
	// after it is shared (it is immutable).
	var head, tail *entry[V]
	for e := b.Load(); e != nil; e = e.next {
		if e.id == id {
			if tail == nil {
				b.Store(e.next)
			} else {
				tail.next = e.next
				b.Store(head)
			}
			return
		}
		c := &entry[V]{id: e.id, v: e.v}
		if tail == nil {
			head = c
		} else {
			tail.next = c
		}
		tail = c
	}
}
