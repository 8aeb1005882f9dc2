package sched

import (
	"context"
	"iter"
	stdatomic "sync/atomic"
	"time"

	"github.com/go-steal/steal/internal/explore/atomic"
	"github.com/go-steal/steal/internal/ranges"
)

// A loop is one data-parallel loop (wsgroup.For) over a segment of its
// index space: a range partition of the segment (package ranges), and a
// group whose tasks, the participants, each own one range of it. A
// participant runs the indices of its own range from the low end, then
// steals the upper half of the longest range left and runs that, until
// every index is taken. The caller waits for the group, and so helps with
// the participants no worker has started, as any Wait does; the
// participants' tasks carry the loop's panics, Goexits and failures the
// way any group's tasks do.
type loop struct {
	g    Group
	part *ranges.Partition
	base int // the segment's first index
	ctx  context.Context
	body func(context.Context, int) error

	// joined hands out the slots: a participant takes slot joined.Add(1)-1
	// when it starts. Exactly Parts() participants are queued, so each
	// gets a slot of its own.
	joined atomic.Int32

	// stop is set, before the loop's context is canceled, by the first
	// failure of a body (an error, or a panic its group recovers), and
	// by a participant that sees the context canceled; a participant
	// looks at it before each index. It is one load of a word that only
	// changes once, where the context's Err would be a call and a load.
	stop atomic.Bool

	// ran counts the indices whose bodies ran, summed once per
	// participant, to tell a complete loop from a canceled one. Not part
	// of the protocol: a plain counter.
	ran stdatomic.Int64
}

// For implements wsgroup.For for n > 0: it runs body(ctx, i) for every i
// in [0, n), the loop's tasks in a group whose panics are wrapped by wrap
// (nil: they crash the program, as a Group's do). It returns the first
// error of a body, or, when indices were left unrun because ctx was
// canceled, ctx's cause, or nil. Each segment of at most segmentLen
// indices is split into GOMAXPROCS ranges and run to the end before the
// next.
func For(ctx context.Context, n int, body func(context.Context, int) error,
	wrap func(v any, stack []byte, later *stdatomic.Int64) error) error {
	parts := int(global.refreshSize())
	for base, seg := range segments(n, segmentLen) {
		if err := runSegment(ctx, base, seg, min(parts, seg), body, wrap); err != nil {
			return err
		}
	}
	return nil
}

// segmentLen is the most indices a partition holds (ranges.MaxLen: where
// int is 32 bits, every loop is one segment); a variable so that a test
// can run several segments.
var segmentLen = ranges.MaxLen

// segments yields the segments of [0, n) in order, each as its first index
// and its length, at most most > 0 indices each. The next segment starts
// at base+seg, which is at most n, so it never overflows an int, where
// base+most could for an n near math.MaxInt.
func segments(n, most int) iter.Seq2[int, int] {
	return func(yield func(base, seg int) bool) {
		for base := 0; base < n; {
			seg := min(n-base, most)
			if !yield(base, seg) {
				return
			}
			base += seg
		}
	}
}

// runSegment runs the indices [base, base+n) of a loop as one partition,
// with a context of its own for the bodies, derived from parent, the
// caller's: the group's Wait cancels it, as WithContext's Wait does.
func runSegment(parent context.Context, base, n, parts int,
	body func(context.Context, int) error, wrap func(v any, stack []byte, later *stdatomic.Int64) error) error {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	l := &loop{part: ranges.New(n, parts), base: base, ctx: ctx, body: body}
	l.g.SetContext(ctx, func(err error) {
		l.stop.Store(true) // before the cancel: see stop
		cancel(err)
	})
	if wrap != nil {
		l.g.SetRecoverPanics(wrap)
	}
	run := l.participate
	for range parts {
		l.g.Go(run)
	}
	err := l.g.Wait()
	if err == nil && l.ran.Load() != int64(n) {
		// Indices were skipped: the only cause without a failed body is
		// the caller's context, canceled. (Not ctx's cause: Wait has
		// canceled ctx, the loop's own context.)
		err = context.Cause(parent)
	}
	return err
}

// participate is a participant's task: it takes a slot of its own and runs
// its range, then stolen ranges, until no index is left or the loop stops.
func (l *loop) participate() error { return l.runSlot(int(l.joined.Add(1) - 1)) }

// runSlot runs slot own's range, then stolen ranges, until no index is
// left or the loop stops.
//
// A body that calls runtime.Goexit ends the participant the way it ends
// any task: as finished, with the rest of its run of indices unrun. They
// must not be lost: that body returned, as far as the loop is concerned,
// and the others still have to run. So the deferred function gives them
// back to the slot (Partition.Untake) and queues a new participant for
// the slot, before the group counts this one finished. A body's panic
// passes through it too; a recovered panic has stopped the loop, so the
// new participant returns at once, and an unrecovered one ends the
// program anyway.
func (l *loop) runSlot(own int) error {
	var next, end uint32 // the run of indices taken and not yet run
	ran := int64(0)
	returned := false
	defer func() {
		l.ran.Add(ran)
		if returned {
			return
		}
		if next < end {
			// next is the body that did not return: it ran, as far as
			// the loop is concerned.
			l.ran.Add(1)
			if next+1 < end {
				l.part.Untake(own, next+1, end)
			}
		}
		l.g.Go(func() error { return l.runSlot(own) })
	}()
	k := uint32(1)
	// Read once, not for every index: the body call could, as far as the
	// compiler knows, change the loop's fields.
	body, ctx, base, stop := l.body, l.ctx, l.base, &l.stop
	for {
		for {
			if stop.Load() || ctx.Err() != nil {
				// The context is looked at once a run: the caller's may
				// have been canceled.
				stop.Store(true)
				returned = true
				return nil
			}
			next, end = l.part.Take(own, k)
			if next == end {
				break
			}
			start := time.Now()
			for ; next < end; next++ {
				if stop.Load() {
					returned = true
					return nil
				}
				err := body(ctx, base+int(next))
				ran++
				if err != nil {
					stop.Store(true)
					returned = true
					return err
				}
			}
			k = nextChunk(k, time.Since(start))
		}
		stole := l.part.Steal(own)
		countRangeSteal(stole)
		if !stole {
			returned = true
			return nil
		}
	}
}

// nextChunk sizes the next run of indices from how long the last run of k
// took (see chunkTarget).
func nextChunk(k uint32, took time.Duration) uint32 {
	switch {
	case took < chunkTarget/2 && k < maxChunk:
		return 2 * k
	case took > 2*chunkTarget && k > 1:
		return k / 2
	}
	return k
}
