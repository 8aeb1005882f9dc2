package handoff

import (
	"testing"
	"time"
)

// TestMarkAges: a mark holds for one task from its first look; its age is
// exact across the wrap of its 31-bit clock, negative for a later stamp,
// and a look at another task starts it again.
func TestMarkAges(t *testing.T) {
	const unit = 1 << 10   // a stamp's unit, in nanoseconds
	wrap := int64(1) << 41 // 2^31 units
	for _, base := range []int64{0, unit, wrap - 5*unit, wrap - 1, 3*wrap + 7*unit} {
		var m mark
		since, first := m.look(7, base)
		if !first {
			t.Fatalf("base %d: the first look at a task is not first", base)
		}
		for _, d := range []time.Duration{0, 50 * time.Microsecond, 100 * time.Millisecond, time.Minute} {
			now := base + int64(d)
			got, first := m.look(7, now)
			if first || got != since {
				t.Fatalf("base %d +%v: look = %d, %v; want %d, false", base, d, got, first, since)
			}
			if age := since.age(now); age > d+unit || age < d-unit {
				t.Errorf("base %d +%v: age %v", base, d, age)
			}
			if d > 0 && !since.before(stampOf(now+unit)) {
				t.Errorf("base %d +%v: the mark is not before a later stamp", base, d)
			}
		}
		if age := since.age(base - int64(time.Millisecond)); age >= 0 {
			t.Errorf("base %d: a stamp later than now has age %v, want negative", base, age)
		}
		if _, ok := m.of(9); ok {
			t.Errorf("base %d: the mark of task 7 holds for task 9", base)
		}
		if _, first := m.look(9, base+unit); !first {
			t.Errorf("base %d: a look at another task did not start the mark again", base)
		}
		m.forget()
		if _, ok := m.of(9); ok {
			t.Errorf("base %d: a forgotten mark still holds", base)
		}
	}
}

// TestSlotSeq: the occupant's task boundaries, as the detectors read them:
// odd in a task, even between tasks, odd again after a nested task's end.
func TestSlotSeq(t *testing.T) {
	s := NewSlot(3)
	if s.Index() != 3 || s.Seq() != 0 {
		t.Fatalf("a new slot: index %d, seq %d", s.Index(), s.Seq())
	}
	s.Enter(1)
	in := s.Seq()
	s.Enter(2) // a nested task, run by the first one's Wait
	nested := s.Seq()
	s.Leave(2, true)
	back := s.Seq()
	s.Leave(2, false)
	out := s.Seq()
	if in&1 != 1 || nested&1 != 1 || back&1 != 1 || out&1 != 0 || in == nested || back == out {
		t.Errorf("seq in a task %d, nested %d, back %d, between tasks %d", in, nested, back, out)
	}
}
