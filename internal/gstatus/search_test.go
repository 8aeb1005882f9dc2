//go:build linux && (amd64 || arm64 || 386 || arm)

package gstatus

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// The search's own logic, on records this test writes itself: what the
// check must conclude when a field is found once, twice or never. (The
// real g records of the running program have each field once, so only
// records made up can show that an ambiguous or missing field fails.)

// fakeG is a made-up g record: searchBound bytes the test writes.
type fakeG [searchWords]uintptr

func (f *fakeG) ptr() unsafe.Pointer { return unsafe.Pointer(f) }

func (f *fakeG) put32(off uintptr, v uint32) { *(*uint32)(unsafe.Add(f.ptr(), off)) = v }

func (f *fakeG) put64(off uintptr, v uint64) { *(*uint64)(unsafe.Add(f.ptr(), off)) = v }

func (f *fakeG) putByte(off uintptr, v uint8) { *(*uint8)(unsafe.Add(f.ptr(), off)) = v }

// fakeChecker returns a checker over one fake probe per kind (two for the
// first kind), each with its id at goid, its kind's state at every offset
// of status, and, for a waiting kind, a reason byte of its own kind's at
// every offset of reason; every other byte is zero. The candidates are
// every offset, as in a real search.
func fakeChecker(goid uintptr, status, reason []uintptr) *checker {
	ch := &checker{c: everywhere(), deadline: time.Now().Add(checkTimeout)}
	add := func(i int, k *kind) {
		f := new(fakeG)
		id := uint64(1000 + len(ch.probes))
		f.put64(goid, id)
		for _, off := range status {
			f.put32(off, k.status)
		}
		if k.status == gWaiting {
			for _, off := range reason {
				f.putByte(off, uint8(10+i))
			}
		}
		ch.probes = append(ch.probes, &probe{kind: k, h: Handle{g: f.ptr(), id: id}, polls: make(map[uintptr]int)})
	}
	for i := range kinds {
		add(i, &kinds[i])
	}
	add(0, &kinds[0])
	return ch
}

func TestSearchFindsTheOneField(t *testing.T) {
	ch := fakeChecker(16, []uintptr{8}, []uintptr{33})
	status, err := ch.waitParked(16)
	if err != nil || status != 8 {
		t.Fatalf("waitParked = %d, %v; want 8", status, err)
	}
	l := layout{status: status, goid: 16}
	rs, err := ch.learn(&l)
	if err != nil || l.reason != 33 {
		t.Fatalf("learn = %+v, %v; want the reason at 33", l, err)
	}
	if got := learnedWords(rs); len(got) != len(kinds)-1 { // every kind but the system call
		t.Fatalf("learned %q, one word per waiting kind wanted", got)
	}
}

func TestSearchRejectsTwoStatusWords(t *testing.T) {
	ch := fakeChecker(16, []uintptr{8, 40}, []uintptr{33})
	if _, err := ch.waitParked(16); err == nil || !strings.Contains(err.Error(), "2 words") {
		t.Fatalf("waitParked with two words reading every probe's state = %v, want an error naming 2 words", err)
	}
}

func TestSearchTimesOutWithoutStatusWord(t *testing.T) {
	ch := fakeChecker(16, nil, []uintptr{33})
	ch.deadline = time.Now()
	if _, err := ch.waitParked(16); !errors.Is(err, errTimeout) {
		t.Fatalf("waitParked with no word reading the probes' states = %v, want errTimeout", err)
	}
}

func TestSearchRejectsTwoReasonBytes(t *testing.T) {
	ch := fakeChecker(16, []uintptr{8}, []uintptr{33, 50})
	l := layout{status: 8, goid: 16}
	if _, err := ch.learn(&l); err == nil || !strings.Contains(err.Error(), "2 bytes") {
		t.Fatalf("learn with two reason bytes = %v, want an error naming 2 bytes", err)
	}
}

// TestSearchRejectsReasonSharedByKinds: a byte that two kinds read alike
// does not tell them apart, and one that two probes of a kind read
// differently is no wait reason either.
func TestSearchRejectsReasonSharedByKinds(t *testing.T) {
	ch := fakeChecker(16, []uintptr{8}, []uintptr{33})
	(*fakeG)(ch.probes[1].h.g).putByte(33, 10) // the second kind reads as the first
	l := layout{status: 8, goid: 16}
	if _, err := ch.learn(&l); err == nil {
		t.Fatal("learn accepted a byte that two kinds read alike")
	}
	ch = fakeChecker(16, []uintptr{8}, []uintptr{33})
	(*fakeG)(ch.probes[len(ch.probes)-1].h.g).putByte(33, 99) // two probes of the first kind differ
	if _, err := ch.learn(&l); err == nil {
		t.Fatal("learn accepted a byte that two probes of one kind read differently")
	}
}

// TestSearchRejectsLostID: a probe whose g no longer holds its id (it was
// reused) stops the check.
func TestSearchRejectsLostID(t *testing.T) {
	ch := fakeChecker(16, []uintptr{8}, []uintptr{33})
	(*fakeG)(ch.probes[3].h.g).put64(16, 7)
	if _, err := ch.waitParked(16); err == nil || !strings.Contains(err.Error(), "no longer holds its id") {
		t.Fatalf("waitParked = %v, want an error about the id", err)
	}
}
