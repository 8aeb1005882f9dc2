//go:build linux && (amd64 || arm64 || 386 || arm)

package gstatus

import (
	"context"
	"runtime/pprof"
	"testing"
	"unsafe"
)

// TestLabelsWord: the check found the labels word; a load from it follows
// the goroutine's labels as Labels reports them; the search rejects every
// other word it might be confused with, alone or beside the right one;
// the word is not given while the reader is off.
func TestLabelsWord(t *testing.T) {
	requireOn(t)
	off, l := found.labels, found.layout
	if off == 0 {
		t.Fatal("the check did not find the labels word")
	}
	if got := findLabels([]uintptr{off}); got != off {
		t.Errorf("findLabels([%d]) = %d on a second run", off, got)
	}
	ptr := unsafe.Sizeof(uintptr(0))
	for _, w := range []uintptr{off - ptr, off + ptr, l.status, l.goid, ptr, searchBound - ptr} {
		if got := findLabels([]uintptr{w}); got != 0 {
			t.Errorf("findLabels([%d]) = %d: it finds a word that is not the labels", w, got)
		}
		if got := findLabels([]uintptr{w, off}); got != off {
			t.Errorf("findLabels([%d %d]) = %d, want %d", w, off, got, off)
		}
	}
	word := LabelsWord()
	if word == nil {
		t.Fatal("LabelsWord() = nil with the reader on")
	}
	if *word != nil || Labels() != nil {
		t.Fatalf("the test goroutine wears labels before the test: word %p, Labels %p", *word, Labels())
	}
	pprof.Do(context.Background(), pprof.Labels("k", "v"), func(context.Context) {
		if l := Labels(); l == nil || *word != l {
			t.Errorf("under pprof.Do: word %p, Labels %p", *word, l)
		}
		SetLabels(nil)
		if *word != nil || Labels() != nil {
			t.Errorf("after SetLabels(nil): word %p, Labels %p", *word, Labels())
		}
	})
	if *word != nil {
		t.Errorf("after pprof.Do: word %p, want nil", *word)
	}
	restore := SetOff(true)
	if w := LabelsWord(); w != nil {
		t.Error("LabelsWord() != nil with the reader off")
	}
	restore()
}
