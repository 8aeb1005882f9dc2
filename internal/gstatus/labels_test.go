//go:build go1.26 && !go1.27 && linux && (amd64 || arm64)

package gstatus

import (
	"context"
	"runtime/pprof"
	"testing"
)

// TestLabelsWord: the start-up check proved the labels word; a load from
// it follows the goroutine's labels as Labels reports them; the proof
// rejects every other word it might be confused with; the word is not
// given while the reader is off.
func TestLabelsWord(t *testing.T) {
	requireOn(t)
	if !labelsProven {
		t.Fatal("the start-up check did not prove the labels word")
	}
	if !proveLabels(labelsOffset) {
		t.Error("proveLabels(labelsOffset) = false on a second run")
	}
	for _, off := range []uintptr{labelsOffset - 8, labelsOffset + 8, labelsOffset + 4, statusOffset, goidOffset, 0, gSize - 8, gSize} {
		if proveLabels(off) {
			t.Errorf("proveLabels(%d) = true: it proves a word that is not the labels", off)
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
