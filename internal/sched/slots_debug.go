//go:build stealdebug

package sched

import "fmt"

// checkSlotsLocked panics unless the slots' counts, scan set and free
// list agree with the slots themselves (see slots.go); the caller holds
// mu. O(slots): a build with the stealdebug tag only
// (go test -tags stealdebug ./internal/sched).
// slotsChecked reports whether checkSlotsLocked checks: in this build,
// every transition costs O(slots), so that tests that start thousands of
// workers size themselves down.
const slotsChecked = true

func checkSlotsLocked(p *Pool) {
	var live, detached int32
	free := map[*worker]int{}
	for _, w := range p.freeSlots {
		free[w]++
	}
	active := map[*worker]int{}
	scan := p.active.Load()
	for i, w := range scan.list {
		active[w]++
		if i >= len(scan.recs) || scan.recs[i] != &w.rec {
			panic(fmt.Sprintf("sched: the scan set's record %d is not its worker's (slot %d)", i, w.index))
		}
	}
	if len(scan.recs) != len(scan.list) {
		panic(fmt.Sprintf("sched: the scan set lists %d workers and %d records", len(scan.list), len(scan.recs)))
	}
	for _, w := range *p.slots.Load() {
		d := w.detachedBy.Load() != 0
		switch {
		case !w.occupied && (free[w] != 1 || active[w] != 0 || d):
			panic(fmt.Sprintf("sched: free slot %d: listed free %d times, scanned %d times, detachedBy %#x", w.index, free[w], active[w], w.detachedBy.Load()))
		case w.occupied && free[w] != 0:
			panic(fmt.Sprintf("sched: occupied slot %d is on the free list", w.index))
		case w.occupied && d && active[w] != 0:
			panic(fmt.Sprintf("sched: detached slot %d is scanned", w.index))
		case w.occupied && !d && active[w] != 1:
			panic(fmt.Sprintf("sched: attached slot %d is scanned %d times", w.index, active[w]))
		}
		if w.occupied {
			live++
			if d {
				detached++
			}
		}
	}
	if live != p.live.Load() || detached != p.detached.Load() || len(free) != len(p.freeSlots) {
		panic(fmt.Sprintf("sched: %d occupied slots, %d detached, %d free listed; counts say live %d, detached %d, free %d",
			live, detached, len(free), p.live.Load(), p.detached.Load(), len(p.freeSlots)))
	}
}
