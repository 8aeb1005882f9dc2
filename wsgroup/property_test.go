package wsgroup_test

// Property-based differential test: random programs over the Group API,
// each run on golang.org/x/sync/errgroup and on wsgroup (several times
// each, in turn), with the observable outcomes compared wherever the
// documented semantics say they must agree. The programs use only the
// default modes (RunQueued, PanicCrash), in which wsgroup promises
// errgroup's behaviour.
//
// A program is a small tree (see propGroup and propTask): a top-level
// group, the zero Group or WithContext on a parent context that one of the
// program's steps may cancel, then rounds of steps, each ending in a Wait
// (so the group is reused after Wait when there are several rounds). A
// round may start with SetLimit(n), n in {-1, 1, 2, 3}, and with a gated
// block: Go/TryGo of tasks that block on a gate channel, which the round
// opens right after the block. Then come Go, TryGo and, at the top level,
// "cancel the parent" steps. A task returns nil, returns its own error,
// waits for ctx.Done() and then returns nil or its own error, or runs a
// nested group (WithContext on the task's context, or a zero Group) with
// its own random steps and returns that group's last Wait result. Groups
// are at most two deep and have at most 8 tasks.
//
// The generator (propAnalyze in repair mode) turns every ctx.Done() waiter
// whose wake-up is not guaranteed under errgroup's semantics into a plain
// task, so that no program deadlocks with errgroup: the context must be
// canceled by an error task, the parent cancel step or an earlier Wait of
// the same group, issued before the round's Wait, or, in a limited group
// (where errgroup's Go may block until earlier tasks end), before the
// waiter itself; a nested group may also rely on its parent task's context
// when a waiter at the spawning task's place would be valid.
//
// What is checked, for every run against the static expectations of the
// program (propAnalyze), and between the runs on every outcome that the
// program determines (propCheckRun's list, compared with the first errgroup
// run's):
//
//   - every task whose Go returned, or whose TryGo reported true, ran exactly
//     once, and no other task ran; so the set of tasks that ran is the same
//     wherever the program determines it (in the default mode every queued
//     task runs, even after the context is canceled);
//   - TryGo results where they are determined: true while fewer tasks than
//     the limit can be active in the round (after Wait none is), and, in a
//     gated block, where the earlier tasks are known to be blocked, true
//     exactly for the first n - active calls and false after;
//   - each Wait's error: nil if and only if no task of the group (in this
//     round or an earlier one) returned an error, otherwise one of the
//     errors that its tasks actually returned, and the same error at every
//     later Wait (the first error sticks). Which error is first is
//     timing-dependent when several tasks can fail concurrently, so only
//     the set of candidates is checked then, and the runs are compared on
//     the exact error only when one task alone can fail;
//   - for WithContext groups, after each Wait: the context is done, and
//     context.Cause is the first error, or context.Canceled when Wait
//     returned nil, unless the parent context was canceled first (then the
//     parent's cause), and it does not change at later Waits.
//
// What may differ, and so is not observed: which goroutine runs a task (a
// shared worker, or the goroutine of a Wait of its own group: see the
// package documentation on waiting), the order in which tasks run, which of
// several concurrent errors comes first, the results of TryGo where timing
// decides them, and whether a Go inside a task blocks at the limit
// (errgroup's does; wsgroup's sets the task aside and goes on: see the
// package documentation on limits; the task still starts only after a
// task of the group has ended, so outcomes do not depend on it). Panics,
// Goexit and the opt-in modes (SetPanicMode, SetCancelMode) are out of
// scope: they differ from errgroup by design.
//
// Every run is under testkit.Guard (a hang ends the test binary with every
// goroutine's stack and the program), and each GOMAXPROCS subtest (1, 2, 4)
// ends with testkit.VerifyNone.
//
// rapid runs 100 programs per GOMAXPROCS setting (20 with -short); each
// program runs 10 times on each implementation (3 with -short). More
// programs:
//
//	go test -run Property ./wsgroup -rapid.checks=10000
//
// A failure prints the shrunk program and the -rapid.seed (or fail file)
// that reproduces it; -rapid.nofailfile keeps rapid from writing one under
// testdata/rapid.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	"pgregory.net/rapid"

	"github.com/go-steal/steal/internal/testkit"
	"github.com/go-steal/steal/wsgroup"
)

// ---- The program model ----

type propTaskKind uint8

const (
	propNil   propTaskKind = iota // return nil
	propErr                       // return the task's error
	propCtx                       // wait for ctx.Done(), then return nil or the task's error
	propGated                     // wait for the round's gate, then return nil or the task's error
	propSpawn                     // run a nested group, return its last Wait's error
)

type propTask struct {
	id   int // 1..program.nTasks
	kind propTaskKind
	fail bool       // propCtx, propGated: return the task's error once woken
	sub  *propGroup // propSpawn
}

type propOpKind uint8

const (
	propGo propOpKind = iota
	propTryGo
	propCancel // cancel the parent context (top-level group only)
)

type propOp struct {
	kind propOpKind
	task *propTask // nil for propCancel
}

type propRound struct {
	setLimit bool
	limit    int
	gated    []propOp // Go/TryGo of propGated tasks; the gate opens after them
	ops      []propOp
	// then Wait
}

type propGroup struct {
	withCtx bool
	rounds  []propRound
}

type propProgram struct {
	top    *propGroup
	nTasks int
}

// propTaskErrs[id] is the error that task id returns; errPropParentCancel is the
// cause with which the parent context is canceled.
var (
	propTaskErrs        [256]error
	errPropParentCancel = errors.New("parent canceled")
)

func init() {
	for i := range propTaskErrs {
		propTaskErrs[i] = fmt.Errorf("task t%d failed", i)
	}
}

// propErrName names an error for the reports: nil, t3, parent, Canceled.
func propErrName(err error) string {
	switch {
	case err == nil:
		return "nil"
	case err == errPropParentCancel:
		return "parent"
	case err == context.Canceled:
		return "Canceled"
	}
	if id := propErrID(err); id > 0 {
		return fmt.Sprintf("t%d", id)
	}
	return fmt.Sprintf("foreign error %q", err)
}

func propErrID(err error) int {
	for i, e := range propTaskErrs {
		if err == e {
			return i
		}
	}
	return -1
}

// ---- Generation ----

const propMaxTasksPerGroup = 8

var propLimits = []int{-1, 1, 2, 3}

func propProgramGen() *rapid.Generator[*propProgram] {
	return rapid.Custom(func(t *rapid.T) *propProgram {
		p := &propProgram{}
		p.top = propGenGroup(t, p, 1)
		propAnalyze(p, true)
		return p
	})
}

func propGenGroup(t *rapid.T, p *propProgram, depth int) *propGroup {
	g := &propGroup{withCtx: rapid.Bool().Draw(t, "withCtx")}
	newTask := func(kind propTaskKind) *propTask {
		p.nTasks++
		return &propTask{id: p.nTasks, kind: kind}
	}
	budget := propMaxTasksPerGroup
	nRounds := rapid.IntRange(1, 3).Draw(t, "rounds")
	for r := 0; r < nRounds; r++ {
		var rd propRound
		if r == 0 {
			rd.setLimit = rapid.Bool().Draw(t, "setLimit")
		} else {
			rd.setLimit = rapid.IntRange(0, 3).Draw(t, "setLimit") == 3
		}
		if rd.setLimit {
			rd.limit = rapid.SampledFrom(propLimits).Draw(t, "limit")
		}
		nGated := 0
		if budget > 0 && rapid.IntRange(0, 2).Draw(t, "gatedBlock") == 2 {
			nGated = rapid.IntRange(1, min(4, budget)).Draw(t, "gated")
		}
		budget -= nGated
		for i := 0; i < nGated; i++ {
			o := propOp{kind: propTryGo, task: newTask(propGated)}
			if rapid.Bool().Draw(t, "gatedGo") {
				o.kind = propGo // turned into TryGo where it would block (propAnalyze)
			}
			o.task.fail = rapid.Bool().Draw(t, "fail")
			rd.gated = append(rd.gated, o)
		}
		nOps := rapid.IntRange(0, budget).Draw(t, "ops")
		for i := 0; i < nOps; i++ {
			var o propOp
			switch k := rapid.IntRange(0, 9).Draw(t, "op"); {
			case k <= 5:
				o.kind = propGo
			case k <= 8:
				o.kind = propTryGo
			default:
				if depth == 1 {
					o.kind = propCancel
				}
			}
			if o.kind != propCancel {
				budget--
				kind := []propTaskKind{propNil, propErr, propCtx, propSpawn}[rapid.IntRange(0, 3).Draw(t, "task")]
				if kind == propSpawn && depth >= 2 {
					kind = propNil // at most two levels of groups
				}
				o.task = newTask(kind)
				switch kind {
				case propCtx:
					o.task.fail = rapid.Bool().Draw(t, "fail")
				case propSpawn:
					o.task.sub = propGenGroup(t, p, depth+1)
				}
			}
			rd.ops = append(rd.ops, o)
		}
		g.rounds = append(g.rounds, rd)
	}
	return g
}

// ---- Static analysis: validity (repair) and expectations ----

// A propSource is a step that certainly cancels the context a group's tasks
// wait on: at tick, in round; task: a task's error (else the parent's
// cancellation or a Wait).
type propSource struct {
	tick, round int
	task        bool
}

type propTri int8

const (
	propUnknown propTri = iota
	propYes
	propNo
)

func propTriOf(b bool) propTri {
	if b {
		return propYes
	}
	return propNo
}

type propTaskInfo struct {
	task     *propTask
	gi       int // group instance: 0 for the top-level group, else the id of the spawning task
	round    int
	viaTryGo bool
	try      propTri // TryGo's result, given that the group instance runs
	sub      propTri // submitted (and so run), given that the group instance runs
	abs      propTri // submitted in every run (yes), in none (no), or it depends on timing
	mustErr  bool    // returns an error whenever it runs
	mayErr   bool
	poss     []int // ids of the errors it may return
}

type propWaitInfo struct {
	gi, round    int
	group        *propGroup
	isTop        bool
	inst         propTri // the group instance runs in every run (yes) or it depends
	mustFail     bool
	mayFail      bool
	poss         []int // ids of the errors this Wait may return
	cancelBefore bool  // top level: the parent was canceled before this Wait
}

type propAnalysis struct {
	tasks []propTaskInfo // by id
	waits []propWaitInfo
}

// propAnalyze computes what the program determines. With repair, it first
// makes the program valid: a gated Go that could block becomes a TryGo, and
// a ctx.Done() waiter whose cancellation is not guaranteed becomes a plain
// task (returning nil or its error). Without repair, an invalid program
// panics (a bug of the generator).
func propAnalyze(p *propProgram, repair bool) *propAnalysis {
	a := &propAnalysis{tasks: make([]propTaskInfo, p.nTasks+1)}
	a.group(p.top, 0, true, false, propYes, repair)
	return a
}

func propUnion(a, b []int) []int {
	for _, x := range b {
		if !slices.Contains(a, x) {
			a = append(a, x)
		}
	}
	sort.Ints(a)
	return a
}

// group analyzes one group instance. outerOK reports whether the context
// the group's tasks get from their parent task is certain to be canceled
// (without anything this group does). It returns what the group's last
// Wait may return.
func (a *propAnalysis) group(g *propGroup, gi int, isTop, outerOK bool, inst propTri, repair bool) (must, may bool, poss []int) {
	// Pass 1: a tick per step, the limit of each round, submissions,
	// determined TryGo results, and the ticks at which something certainly
	// cancels the context that the group's tasks wait on.
	type step struct {
		op    *propOp
		round int
		tick  int
	}
	var (
		steps     []step
		waitTick  []int
		limitOf   []int
		sources   []propSource
		tick      int
		limit     = -1
		ownErrors = g.withCtx // errors and Wait cancel the context the tasks see
	)
	for r := range g.rounds {
		rd := &g.rounds[r]
		if rd.setLimit {
			limit = rd.limit
		}
		limitOf = append(limitOf, limit)
		// Gated block: at the round's start nothing is active, and every
		// task of the block stays active until the gate opens.
		active := 0
		for i := range rd.gated {
			o := &rd.gated[i]
			free := limit < 0 || active < limit
			if o.kind == propGo && !free {
				if !repair {
					panic("propAnalyze: a gated Go at the limit would block")
				}
				o.kind = propTryGo
			}
			ti := &a.tasks[o.task.id]
			*ti = propTaskInfo{task: o.task, gi: gi, round: r, viaTryGo: o.kind == propTryGo}
			ti.sub = propTriOf(free)
			if ti.viaTryGo {
				ti.try = ti.sub
			}
			if free {
				active++
			}
			steps = append(steps, step{o, r, tick})
			tick++
		}
		gateTick := tick
		tick++
		for i := range rd.gated {
			o := &rd.gated[i]
			if ownErrors && o.task.fail && a.tasks[o.task.id].sub == propYes {
				sources = append(sources, propSource{gateTick, r, true})
			}
		}
		// Then the ordinary steps: ub bounds the number of active tasks.
		ub := active
		for i := range rd.ops {
			o := &rd.ops[i]
			switch o.kind {
			case propCancel:
				sources = append(sources, propSource{tick, r, false}) // the parent's cancellation reaches every context of the program
			case propGo, propTryGo:
				ti := &a.tasks[o.task.id]
				*ti = propTaskInfo{task: o.task, gi: gi, round: r, viaTryGo: o.kind == propTryGo}
				ti.sub = propYes
				if ti.viaTryGo {
					if limit >= 0 && ub >= limit {
						ti.sub = propUnknown
					}
					ti.try = ti.sub
				}
				ub++
				if ownErrors && o.task.kind == propErr && ti.sub == propYes {
					sources = append(sources, propSource{tick, r, true})
				}
			}
			steps = append(steps, step{o, r, tick})
			tick++
		}
		waitTick = append(waitTick, tick)
		if g.withCtx {
			sources = append(sources, propSource{tick, r, false}) // Wait cancels the context
		}
		tick++
	}
	// valid reports whether a task at tick x of round r that waits for the
	// group's context to be canceled certainly wakes up under errgroup.
	valid := func(x, r int) bool {
		if outerOK {
			return true
		}
		before := waitTick[r]
		if limitOf[r] >= 0 {
			before = x
		}
		for _, s := range sources {
			if s.tick >= before {
				continue
			}
			return true
		}
		return false
	}

	// Pass 2: validity of waiters, nested groups, and what each task may return.
	for _, s := range steps {
		if s.op.kind == propCancel {
			continue
		}
		t := s.op.task
		ti := &a.tasks[t.id]
		switch t.kind {
		case propCtx:
			if !valid(s.tick, s.round) {
				if !repair {
					panic(fmt.Sprintf("propAnalyze: t%d may wait for ctx.Done() forever", t.id))
				}
				t.kind = propNil
				if t.fail {
					t.kind = propErr
				}
				t.fail = false
			}
		case propSpawn:
			childInst := propUnknown
			switch {
			case inst == propNo || ti.sub == propNo:
				childInst = propNo
			case inst == propYes && ti.sub == propYes:
				childInst = propYes
			}
			ti.mustErr, ti.mayErr, ti.poss = a.group(t.sub, t.id, false, valid(s.tick, s.round), childInst, repair)
		}
		switch t.kind {
		case propErr:
			ti.mustErr, ti.mayErr, ti.poss = true, true, []int{t.id}
		case propCtx, propGated:
			if t.fail {
				ti.mustErr, ti.mayErr, ti.poss = true, true, []int{t.id}
			}
		}
		switch {
		case inst == propYes && ti.sub != propUnknown:
			ti.abs = ti.sub
		case inst == propNo:
			ti.abs = propNo
		}
	}

	// Pass 3: what each Wait may return.
	cancelSeen := false
	for r := range g.rounds {
		for _, s := range steps {
			if s.round != r {
				continue
			}
			if s.op.kind == propCancel {
				cancelSeen = true
				continue
			}
			ti := &a.tasks[s.op.task.id]
			if ti.sub == propYes && ti.mustErr {
				must = true
			}
			if ti.sub != propNo && ti.mayErr {
				may = true
				poss = propUnion(poss, ti.poss)
			}
		}
		a.waits = append(a.waits, propWaitInfo{
			gi: gi, round: r, group: g, isTop: isTop, inst: inst,
			mustFail: must, mayFail: may, poss: slices.Clone(poss),
			cancelBefore: isTop && cancelSeen,
		})
	}
	return must, may, poss
}

// ---- Rendering (rapid prints drawn values with %#v) ----

func (p *propProgram) GoString() string {
	var b strings.Builder
	b.WriteString("\n")
	propRender(&b, p.top, "parent", "")
	return b.String()
}

func propRender(b *strings.Builder, g *propGroup, parent, indent string) {
	if g.withCtx {
		fmt.Fprintf(b, "%sg, ctx := WithContext(%s)\n", indent, parent)
	} else {
		fmt.Fprintf(b, "%svar g Group // tasks see %s\n", indent, parent)
	}
	ctx := parent
	if g.withCtx {
		ctx = "ctx"
	}
	for _, rd := range g.rounds {
		if rd.setLimit {
			fmt.Fprintf(b, "%sg.SetLimit(%d)\n", indent, rd.limit)
		}
		if len(rd.gated) > 0 {
			for _, o := range rd.gated {
				propRenderOp(b, o, ctx, indent)
			}
			fmt.Fprintf(b, "%sclose(gate)\n", indent)
		}
		for _, o := range rd.ops {
			propRenderOp(b, o, ctx, indent)
		}
		fmt.Fprintf(b, "%sg.Wait()\n", indent)
	}
}

func propRenderOp(b *strings.Builder, o propOp, ctx, indent string) {
	if o.kind == propCancel {
		fmt.Fprintf(b, "%scancel(parent)\n", indent)
		return
	}
	call := "Go"
	if o.kind == propTryGo {
		call = "TryGo"
	}
	t := o.task
	ret := "nil"
	if t.fail {
		ret = fmt.Sprintf("errT%d", t.id)
	}
	switch t.kind {
	case propNil:
		fmt.Fprintf(b, "%sg.%s(t%d: return nil)\n", indent, call, t.id)
	case propErr:
		fmt.Fprintf(b, "%sg.%s(t%d: return errT%d)\n", indent, call, t.id, t.id)
	case propCtx:
		fmt.Fprintf(b, "%sg.%s(t%d: <-%s.Done(); return %s)\n", indent, call, t.id, ctx, ret)
	case propGated:
		fmt.Fprintf(b, "%sg.%s(t%d: <-gate; return %s)\n", indent, call, t.id, ret)
	case propSpawn:
		fmt.Fprintf(b, "%sg.%s(t%d: {\n", indent, call, t.id)
		propRender(b, t.sub, ctx, indent+"    ")
		fmt.Fprintf(b, "%s    return last Wait's error\n%s})\n", indent, indent)
	}
}

// ---- The interpreter ----

// propAPI is the part of the Group API that programs use; *errgroup.Group
// and *wsgroup.Group both have it.
type propAPI interface {
	Go(f func() error)
	TryGo(f func() error) bool
	SetLimit(n int)
	Wait() error
}

type propImpl struct {
	name        string
	zero        func() propAPI
	withContext func(context.Context) (propAPI, context.Context)
}

var propImpls = [2]propImpl{
	{
		name: "errgroup",
		zero: func() propAPI { return new(errgroup.Group) },
		withContext: func(ctx context.Context) (propAPI, context.Context) {
			return errgroup.WithContext(ctx)
		},
	},
	{
		name: "wsgroup",
		zero: func() propAPI { return new(wsgroup.Group) },
		withContext: func(ctx context.Context) (propAPI, context.Context) {
			return wsgroup.WithContext(ctx)
		},
	},
}

type propWaitRec struct {
	done        bool
	err         error
	hasCtx      bool
	ctxErr      error
	cause       error
	parentCause error
}

// propOutcome is what one run observed. Each slot is written by one
// goroutine and read after the top-level Wait (counters are atomic so that
// a task run twice is counted, not a data race).
type propOutcome struct {
	ran       []atomic.Int32
	submitted []atomic.Int32
	try       []int8  // 1 true, 2 false, by task id
	ret       []error // what each task returned (first run)
	waits     [][]propWaitRec
}

type propRun struct {
	im     propImpl
	out    *propOutcome
	cancel context.CancelCauseFunc
}

func propRunProgram(p *propProgram, im propImpl) *propOutcome {
	n := p.nTasks + 1
	out := &propOutcome{
		ran:       make([]atomic.Int32, n),
		submitted: make([]atomic.Int32, n),
		try:       make([]int8, n),
		ret:       make([]error, n),
		waits:     make([][]propWaitRec, n),
	}
	out.waits[0] = make([]propWaitRec, len(p.top.rounds))
	var alloc func(g *propGroup)
	alloc = func(g *propGroup) {
		for _, rd := range g.rounds {
			for _, o := range rd.ops {
				if o.task != nil && o.task.kind == propSpawn {
					out.waits[o.task.id] = make([]propWaitRec, len(o.task.sub.rounds))
					alloc(o.task.sub)
				}
			}
		}
	}
	alloc(p.top)
	parent, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	x := &propRun{im: im, out: out, cancel: cancel}
	x.group(p.top, 0, parent)
	return out
}

func (x *propRun) group(g *propGroup, gi int, outer context.Context) error {
	var grp propAPI
	ctx := outer
	if g.withCtx {
		grp, ctx = x.im.withContext(outer)
	} else {
		grp = x.im.zero()
	}
	var err error
	for r := range g.rounds {
		rd := &g.rounds[r]
		if rd.setLimit {
			grp.SetLimit(rd.limit)
		}
		if len(rd.gated) > 0 {
			gate := make(chan struct{})
			for i := range rd.gated {
				x.submit(grp, &rd.gated[i], ctx, gate)
			}
			close(gate)
		}
		for i := range rd.ops {
			o := &rd.ops[i]
			if o.kind == propCancel {
				x.cancel(errPropParentCancel)
				continue
			}
			x.submit(grp, o, ctx, nil)
		}
		err = grp.Wait()
		w := &x.out.waits[gi][r]
		w.done, w.err = true, err
		if g.withCtx {
			w.hasCtx = true
			w.ctxErr = ctx.Err()
			w.cause = context.Cause(ctx)
			w.parentCause = context.Cause(outer) // read after: set if the parent was canceled first
		}
	}
	return err
}

func (x *propRun) submit(grp propAPI, o *propOp, ctx context.Context, gate chan struct{}) {
	t := o.task
	f := func() error {
		if x.out.ran[t.id].Add(1) != 1 {
			return nil // ran twice: counted, reported by the checks
		}
		var err error
		switch t.kind {
		case propErr:
			err = propTaskErrs[t.id]
		case propCtx:
			<-ctx.Done()
			if t.fail {
				err = propTaskErrs[t.id]
			}
		case propGated:
			<-gate
			if t.fail {
				err = propTaskErrs[t.id]
			}
		case propSpawn:
			err = x.group(t.sub, t.id, ctx)
		}
		x.out.ret[t.id] = err
		return err
	}
	if o.kind == propGo {
		grp.Go(f)
		x.out.submitted[t.id].Add(1)
		return
	}
	if grp.TryGo(f) {
		x.out.try[t.id] = 1
		x.out.submitted[t.id].Add(1)
	} else {
		x.out.try[t.id] = 2
	}
}

// ---- Checks ----

// propCheckRun checks one run against the program's expectations; it
// returns the outcomes that the program determines, one per line, for the
// comparison between the runs.
func propCheckRun(t *rapid.T, a *propAnalysis, o *propOutcome, name string) []string {
	var det []string
	instRan := func(gi int) bool { return gi == 0 || o.ran[gi].Load() > 0 }
	for id := 1; id < len(a.tasks); id++ {
		ti := &a.tasks[id]
		ran, sub := o.ran[id].Load(), o.submitted[id].Load()
		if ran != sub {
			t.Errorf("%s: t%d ran %d times, submitted %d times", name, id, ran, sub)
		}
		if !instRan(ti.gi) {
			continue
		}
		if ti.sub != propUnknown && (sub == 1) != (ti.sub == propYes) {
			t.Errorf("%s: t%d submitted %d times, want %d", name, id, sub, map[propTri]int{propYes: 1, propNo: 0}[ti.sub])
		}
		if ti.viaTryGo && ti.try != propUnknown && (o.try[id] == 1) != (ti.try == propYes) {
			t.Errorf("%s: TryGo(t%d) = %v, want %v", name, id, o.try[id] == 1, ti.try == propYes)
		}
		if ti.abs != propUnknown {
			det = append(det, fmt.Sprintf("t%d: submitted %d, ran %d", id, sub, ran))
			if ti.viaTryGo {
				det = append(det, fmt.Sprintf("t%d: TryGo = %v", id, o.try[id] == 1))
			}
		}
	}
	firstCause := map[int]error{}
	firstErr := map[int]error{}
	for _, w := range a.waits {
		if !instRan(w.gi) {
			continue
		}
		rec := o.waits[w.gi][w.round]
		where := fmt.Sprintf("%s: group g%d, Wait #%d", name, w.gi, w.round+1)
		if !rec.done {
			t.Errorf("%s did not return although its group ran", where)
			continue
		}
		// The errors that the group's tasks of this round and earlier
		// ones actually returned.
		var actual []int
		for id := 1; id < len(a.tasks); id++ {
			ti := &a.tasks[id]
			if ti.gi == w.gi && ti.round <= w.round && o.ran[id].Load() > 0 && o.ret[id] != nil {
				actual = propUnion(actual, []int{propErrID(o.ret[id])})
			}
		}
		err, id := rec.err, propErrID(rec.err)
		switch {
		case err == nil && len(actual) > 0:
			t.Errorf("%s = nil, but tasks returned errors %v", where, propNames(actual))
		case err != nil && !slices.Contains(actual, id):
			t.Errorf("%s = %s, not one of the errors the tasks returned %v", where, propErrName(err), propNames(actual))
		case err != nil && !slices.Contains(w.poss, id):
			t.Errorf("%s = %s, not one of the errors the program can return %v", where, propErrName(err), propNames(w.poss))
		case err == nil && w.mustFail:
			t.Errorf("%s = nil, want one of %v", where, propNames(w.poss))
		case err != nil && !w.mayFail:
			t.Errorf("%s = %s, want nil", where, propErrName(err))
		}
		if prev, ok := firstErr[w.gi]; ok && prev != nil && err != prev {
			t.Errorf("%s = %s, but an earlier Wait returned %s (the first error sticks)", where, propErrName(err), propErrName(prev))
		}
		if _, ok := firstErr[w.gi]; !ok || firstErr[w.gi] == nil {
			firstErr[w.gi] = err
		}
		errDet := w.mustFail == w.mayFail && (!w.mustFail || len(w.poss) == 1)
		if w.inst == propYes && errDet {
			det = append(det, fmt.Sprintf("g%d Wait #%d = %s", w.gi, w.round+1, propErrName(err)))
		}
		if !rec.hasCtx {
			continue
		}
		if rec.ctxErr == nil {
			t.Errorf("%s: the group's context is not done after Wait", where)
		}
		if w.round > 0 {
			if rec.cause != firstCause[w.gi] {
				t.Errorf("%s: context.Cause(ctx) = %s, but it was %s after the first Wait", where, propErrName(rec.cause), propErrName(firstCause[w.gi]))
			}
			continue
		}
		firstCause[w.gi] = rec.cause
		want := err
		if want == nil {
			want = context.Canceled
		}
		if w.isTop && w.cancelBefore && err == nil {
			want = errPropParentCancel // the parent was canceled before Wait
		}
		if rec.cause != want && (rec.parentCause == nil || rec.cause != rec.parentCause) {
			t.Errorf("%s = %s: context.Cause(ctx) = %s, want %s (or the parent's cause %s)",
				where, propErrName(err), propErrName(rec.cause), propErrName(want), propErrName(rec.parentCause))
		}
		if w.isTop && errDet && (err == nil || !w.cancelBefore) {
			det = append(det, fmt.Sprintf("g%d Wait #%d: context.Cause(ctx) = %s", w.gi, w.round+1, propErrName(rec.cause)))
		}
	}
	return det
}

func propNames(ids []int) []string {
	var s []string
	for _, id := range ids {
		s = append(s, fmt.Sprintf("t%d", id))
	}
	return s
}

// ---- The property ----

func TestPropertyMatchesErrgroup(t *testing.T) {
	for _, procs := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("GOMAXPROCS=%d", procs), func(t *testing.T) {
			testkit.SetProcs(t, procs)
			gen := propProgramGen()
			reps := testkit.Scale(10, 3)
			rapid.Check(t, func(rt *rapid.T) {
				p := gen.Draw(rt, "program")
				a := propAnalyze(p, false)
				// Each implementation runs the program reps times, in turn,
				// to meet more interleavings. Every run is checked against
				// the program, and its determined outcomes against those of
				// the first errgroup run.
				var ref []string
				haveRef := false
				for rep := 0; rep < reps && !rt.Failed(); rep++ {
					for _, im := range propImpls {
						// On a hang the guard ends the test binary before
						// rapid could shrink the program: show it first.
						show := time.AfterFunc(testkit.Timeout(t)*9/10, func() {
							fmt.Fprintf(os.Stderr, "the program still running on %s:%#v\n", im.name, p)
						})
						var out *propOutcome
						testkit.Guard(t, func() { out = propRunProgram(p, im) })
						show.Stop()
						det := propCheckRun(rt, a, out, im.name)
						if !haveRef {
							ref, haveRef = det, true
							continue
						}
						if !slices.Equal(ref, det) {
							rt.Errorf("errgroup and %s (run %d) disagree on determined outcomes (errgroup | %s):\n%s",
								im.name, rep+1, im.name, propDiff(ref, det))
						}
					}
				}
			})
			testkit.VerifyNone(t)
		})
	}
}

// propDiff shows two lists of outcomes side by side, marking the lines that
// differ.
func propDiff(a, b []string) string {
	var s strings.Builder
	for i := 0; i < max(len(a), len(b)); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		mark := "  "
		if x != y {
			mark = "≠ "
		}
		fmt.Fprintf(&s, "%s%-36s | %s\n", mark, x, y)
	}
	return s.String()
}
