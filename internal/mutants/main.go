// Command mutants shows that the checks of the scheduler's concurrency core
// can fail: it breaks the code on purpose, one known bug at a time, and
// runs the check that must catch that bug. A mutant that the check does not
// catch (the tests pass with the bug in) is a blind spot, and the command
// exits with status 1.
//
// Each mutant is applied to a copy of the module in a temporary directory
// (the files git knows, tracked or not ignored), so the working tree is
// never touched. Run it from the module root:
//
//	go run ./internal/mutants             # every mutant
//	go run ./internal/mutants -run steal  # those whose name matches
//	go run ./internal/mutants -list       # the table, without running it
//
// Before the mutants it runs every distinct check on the unbroken copy: a
// check that fails there proves nothing about the mutants.
//
// The table is mutants below: the bug, where it is made, and the check
// that catches it. The checks are the interleaving explorations (go test
// -tags explore, package explore), the linearizability checks of the deque
// and of the range partitioner, the property tests of wsgroup against
// errgroup, and the stress tests.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// edit replaces old, which must occur exactly once in the file, with new.
type edit struct{ old, new string }

// mutant is one deliberately broken variant and the check that catches it.
type mutant struct {
	name  string
	bug   string // what the mutant breaks, for the table
	file  string
	edits []edit
	check check
}

// check is a go test invocation that must fail on the mutant.
type check struct {
	what string   // for the table
	args []string // after "go test"
	env  []string // added to the environment
}

// The checks.
var (
	idleRounds = check{"idle rounds (sleep: one spinner, its time bound, a woken worker)",
		[]string{"-run", "TestOneSpinner|TestSpinnerTimeBound|TestWokenWorkerSleepsAtOnce", "./internal/sleep"}, nil}
	idlePool = check{"sched: an idle pool sleeps, quietly, woken once per task (no monitor, no linger)",
		[]string{"-run", "TestIdle", "./internal/sched"}, []string{"STEAL_HANG_TIMEOUT=20s"}}
	exploreSleep = check{"explorer: idle protocol (sleep)",
		[]string{"-tags", "explore", "-run", "TestExploreSleep", "./internal/sleep"}, nil}
	exploreSched = check{"explorer: scheduler (sched)",
		[]string{"-tags", "explore", "-run", "TestExploreSched", "./internal/sched"}, nil}
	// The restart race needs tens of thousands of random schedules: more
	// than the normal run's, so the larger exploration, for a minute.
	exploreRestart = check{"explorer: a group started again from two goroutines while a Wait helps (sched, -explore.long)",
		[]string{"-tags", "explore", "-run", "TestExploreSchedPCT/restart-two", "./internal/sched", "-args", "-explore.long", "-explore.budget=60s"}, nil}
	exploreDeque = check{"explorer: deque",
		[]string{"-tags", "explore", "-run", "TestExploreDeque", "./internal/deque"}, nil}
	exploreStealIf = check{"explorer and linearizability: StealIf",
		[]string{"-tags", "explore", "-run", "TestExploreStealIfLinearizable", "./internal/deque"}, nil}
	stressDeque = check{"stress: deque on the hardware's memory order (no race detector, which makes every store atomic)",
		[]string{"-run", "TestStress", "-count=3", "./internal/deque"}, nil}
	ownPops = check{"sched: a Wait pops from its deque only its group's tasks, whether another group's lies under them or on top",
		[]string{"-run", "TestWaitPopsOnlyItsGroupsTasks", "./internal/sched"}, nil}
	findTurns = check{"sched: an idle worker's search serves its deque, the injector and the other deques, none starved by another",
		[]string{"-run", "TestFind", "./internal/sched"}, nil}
	modelDeque = check{"deque: one goroutine's pushes, pops and steals against a slice model, with taken items pushed again",
		[]string{"-run", "FuzzDeque", "./internal/deque"}, nil}
	freeList = check{"sched: the free list hands back each task record it kept, once, newest first",
		[]string{"-run", "TestFreeListReturnsWhatWasFreed", "./internal/sched"}, nil}
	shrinkDeque = check{"deque: a ring grows with its items and shrinks back to its floor",
		[]string{"-run", "TestGrowShrink|TestShrinkAfterSteals|FuzzDeque", "./internal/deque"}, nil}
	linearDeque = check{"linearizability: deque (porcupine)",
		[]string{"-run", "TestLinearizab", "./internal/deque"}, nil}
	exploreRanges = check{"explorer: range partitioner (ranges)",
		[]string{"-tags", "explore", "-run", "TestExploreRanges", "./internal/ranges"}, nil}
	linearRanges = check{"linearizability: range partitioner (porcupine)",
		[]string{"-run", "TestLinearizab", "./internal/ranges"}, nil}
	propertyGroup = check{"property: wsgroup against errgroup (rapid)",
		[]string{"-run", "TestProperty", "./wsgroup"}, nil}
	labels = check{"sched and wsgroup: tasks wear their submitter's profiler labels (internal reads, CPU profiles)",
		[]string{"-run", "TestLabels|TestProfileLabels", "./internal/sched", "./wsgroup"}, nil}
	labelsWord = check{"gstatus and sched: the labels word follows the labels; tasks wear their submitter's labels",
		[]string{"-run", "TestLabels", "./internal/gstatus", "./internal/sched"}, nil}
	traceRegions = check{"wsgroup: while the tracer runs, each task is a region named after its Go site",
		[]string{"-run", "TestTraceRegions", "./wsgroup"}, nil}
	retireScan = check{"sched: extra workers retire, and the deque scans shrink back",
		[]string{"-run", "TestWatchdogExtraWorkersRetire", "./internal/sched"}, nil}
	// The soak stops at its first failure: a mutant is caught as soon as
	// the randomized mix hits the bug.
	soak = check{"soak: a randomized mix of every scenario, each result checked",
		[]string{"-run", "TestSoak$", "./internal/soak"}, []string{"STEAL_SOAK_DURATION=30s"}}
	// With the monitor and the linger switched off, a lost wake-up or a
	// task left behind by a retiring worker is a hang: the hang guard's
	// timeout is cut short, and so are the next two checks'.
	noRescue = check{"sched: the idle, wake and retire protocols with no monitor and no linger",
		[]string{"-run", "TestNoRescue", "./internal/sched"}, []string{"STEAL_HANG_TIMEOUT=20s"}}
	// A task that neither the retiring worker nor the poster takes on is
	// a hang, with the monitor off.
	retirePost = check{"sched: a worker retiring while a Go from outside posts, in every order of their steps (no monitor)",
		[]string{"-run", "TestNoRescueRetireAgainstPost", "./internal/sched"}, []string{"STEAL_HANG_TIMEOUT=20s"}}
	handOff = check{"sched: a blocked worker's slot is handed on",
		[]string{"-run", "TestHandOffBlocked", "./internal/sched"}, []string{"STEAL_HANG_TIMEOUT=20s"}}
	sparesReused = check{"sched: spares are reused, and gone once the pool is idle",
		[]string{"-run", "TestSparesReused", "./internal/sched"}, []string{"STEAL_HANG_TIMEOUT=20s"}}
	goexitOwn = check{"sched: a Goexit in a task that a helping Wait runs after another of its group's tasks",
		[]string{"-run", "TestGoexitInNestedWaitEndsWaiter", "./internal/sched"}, []string{"STEAL_HANG_TIMEOUT=10s"}}
	// The stopper makes done true while the sleeper reads it; a lost
	// wake-up is reported as soon as the sleeper blocks.
	doneWhileReading = check{"sleep: done made true while a sleeper reads it, with no linger",
		[]string{"-run", "TestDoneWhileWorkerReadsDone", "./internal/sleep"}, []string{"STEAL_HANG_TIMEOUT=20s"}}
	// The slots' invariant, checked after every transition in a build
	// with the stealdebug tag (slots_debug.go).
	slotsDebug = check{"sched: the slots' invariant (stealdebug build)",
		[]string{"-tags", "stealdebug", "-run", "TestPoolRetiresAfterWait", "./internal/sched"}, nil}
	// The status reads (package gstatus, and the hand-off's status.go). With
	// the monitor switched off, a hand-off that no poster makes is a hang.
	statusPoster = check{"sched: posters alone hand blocked workers on (monitor off)",
		[]string{"-run", "TestStatusPosterHandsOff", "./internal/sched"}, []string{"STEAL_HANG_TIMEOUT=20s"}}
	statusLocalPoster = check{"sched: posts inside a task alone hand blocked workers on (monitor off)",
		[]string{"-run", "TestStatusLocalPosterHandsOff", "./internal/sched"}, []string{"STEAL_HANG_TIMEOUT=20s"}}
	statusPosterStalled = check{"sched: posters alone hand blocked workers on (a monitor runs, but never ticks)",
		[]string{"-run", "TestStatusPosterChecksBesideStalledMonitor", "./internal/sched"}, []string{"STEAL_HANG_TIMEOUT=20s"}}
	// A poster that takes its own tasks back: with a count that it lowers
	// again, its check may never come, and with the monitor off that is a
	// hang.
	statusTakesBack = check{"sched: a poster that runs its own tasks in its Wait still hands blocked workers on (monitor off)",
		[]string{"-run", "TestStatusPosterTakesBack", "./internal/sched"}, []string{"STEAL_HANG_TIMEOUT=20s"}}
	statusCPU = check{"sched: CPU-bound workers beside busy goroutines never count as blocked",
		[]string{"-run", "TestStatusCPUBoundNotBlocked", "./internal/sched"}, nil}
	// Each run is a few hundred milliseconds, and one in three or so
	// misses a worker between tasks that reads as in one.
	gcStorm = check{"sched: beside a GC storm the pool stays small, and no worker waiting for the collector is handed on",
		[]string{"-run", "TestHandOffGCStorm", "-count=4", "./internal/sched"}, nil}
	statusBound = check{"sched: a worker that stands still in a wait that never reads blocked is handed on after a bound",
		[]string{"-run", "TestStatusRuntimeWaitHandedOnAfterBound", "./internal/sched"}, []string{"STEAL_HANG_TIMEOUT=15s"}}
	statusRamp = check{"sched: a fan-out of blocking tasks starts after a few hand-offs, not one each",
		[]string{"-run", "TestStatusRampsBlockingFanOut", "./internal/sched"}, nil}
	gstatusWaits = check{"gstatus: the collector's and the runtime's own waits never read Blocked",
		[]string{"-run", "TestCollectorWaitIsNotBlocked|TestRuntimeSemaphoreIsNotBlocked", "./internal/gstatus"}, nil}
	// At GOMAXPROCS 1 beside goroutines that never block. A sleeping probe
	// queued behind every poll fails most checks, not every one: each run
	// tries several, and the check runs the test six times.
	gstatusBusy = check{"gstatus: the check passes at GOMAXPROCS 1 beside goroutines that never block",
		[]string{"-run", "TestCheckPassesBesideBusyGoroutines", "-count=6", "./internal/gstatus"}, nil}
	gstatusSettle = check{"gstatus: goroutines started during the check do not hold its end",
		[]string{"-run", "TestCheckEndsBesideNewGoroutines", "./internal/gstatus"}, []string{"STEAL_HANG_TIMEOUT=10s"}}
	gstatusLeaves = check{"gstatus: a check leaves no goroutine behind",
		[]string{"-run", "TestCheckPasses$", "./internal/gstatus"}, nil}
	unwinders = check{"sched: a panic whose recover returns nil is not taken for runtime.Goexit",
		[]string{"-run", "TestPanicInWaitPanicNilGODEBUG|TestUnwoundBy", "./wsgroup", "./internal/sched"}, []string{"STEAL_HANG_TIMEOUT=10s"}}
	goexitPastPanic = check{"sched: a task whose panic is recorded while a runtime.Goexit unwinds it is finished once, and its slot gets a new goroutine",
		[]string{"-run", "TestPanicDuringGoexitOnWorker|TestGoexitInHelpedTaskKeepsRecoveredPanic", "./wsgroup"}, []string{"STEAL_HANG_TIMEOUT=10s"}}
	gstatusReuse = check{"gstatus: a handle whose goroutine has exited reads Unknown",
		[]string{"-run", "TestReusedGReadsUnknown", "./internal/gstatus"}, nil}
	offCPUProof = check{"handoff: the fallback's proof that workers are off the CPU, rule by rule",
		[]string{"-run", "TestOffCPUProof", "./internal/sched/handoff"}, nil}
	exploreWatch = check{"explorer: the monitor's flag given up against posters (handoff)",
		[]string{"-tags", "explore", "-run", "TestExploreWatch", "./internal/sched/handoff"}, nil}
	handOnRules = check{"handoff: the fallback's check and the hand-off's order, on a pool of its own",
		[]string{"-run", "TestFallbackHandsOnProvenWorkers|TestFallbackNeedsProof|TestHandOnOldestFirst", "./internal/sched/handoff"}, nil}
	statusFirstUse = check{"sched: the status check starts with the pool's first worker, in a process of its own",
		[]string{"-run", "TestStatusStartsWithFirstWorker", "./internal/sched"}, nil}
	gstatusSearch = check{"gstatus: the search finds each field once, and fails on none or several",
		[]string{"-run", "TestSearch|TestShiftedLayoutsRejected", "./internal/gstatus"}, nil}
	blockingWave = check{"sched: waves of 10,000 tasks blocked at once beside CPU fan-outs, in a process per setting",
		[]string{"-run", "TestBlockingWave$", "./internal/sched"}, []string{"STEAL_HANG_TIMEOUT=20s"}}
	joinRules = check{"sched: a Wait runs the tasks two joins down the chain, none that its group does not wait for, and the records",
		[]string{"-run", "TestWaitRunsNoTaskItDoesNotWaitFor|TestWaitHelpsAlongTheChain|TestJoinRecords", "./internal/sched"}, nil}
	helpBlocks = check{"sched: a Wait that ran one of its group's tasks, then blocks while another runs elsewhere, returns",
		[]string{"-run", "TestWaitRanOwnThenBlocks", "./internal/sched"}, []string{"STEAL_HANG_TIMEOUT=20s"}}
	gidUntrusted = check{"gid: an untrusted fast id registers nothing",
		[]string{"-run", "TestUntrustedTableStaysEmpty", "./internal/gid"}, nil}
	ownRuns = check{"sched: a Wait runs its group's tasks from its deque in runs, each under its own labels and group, and the waiting task's back after",
		[]string{"-run", "TestWaitRunsOwnTasksInRuns", "./internal/sched"}, nil}
	patienceWake = check{"sched: a Wait waiting in its worker's place is woken by its group's last task, with the patience an hour long",
		[]string{"-run", "TestPatientWaitWokenByLastTask", "./internal/sched"}, nil}
	patientSpared = check{"sched: the status checks leave the place of a Wait waiting in it alone",
		[]string{"-run", "TestStatusSparesPatientWait", "./internal/sched"}, nil}
	// The child looks at its group while the crash ends it, at the
	// moment the runtime prints the panic (after every deferred call):
	// one run decides.
	crashFirst = check{"wsgroup: a task's unrecovered panic ends the program before anything sees the task finished",
		[]string{"-run", "TestTaskPanicCrashesWithTaskStack", "./wsgroup"}, nil}
	// With the outside Go's poll switched off, a slot that a finishing
	// task does not pass on (to a parked Go, or to a task set aside) is a
	// hang; the hang guard's timeout is cut short, and so is the next
	// check's.
	limitWake = check{"sched: a finishing task hands its slot to a parked Go or wakes the parked Gos (outside Go's poll off)",
		[]string{"-run", "TestLimitHandOver(BatchedDone|ParkWhileSlotFrees)", "./internal/sched"}, []string{"STEAL_HANG_TIMEOUT=5s"}}
	limitSetAside = check{"sched: a task set aside while its slot frees is started",
		[]string{"-run", "TestLimitHandOverSetAside", "./internal/sched"}, []string{"STEAL_HANG_TIMEOUT=5s"}}
	quickPark = check{"sched: a short park for a slot marks its group for longer yields, a long one clears the mark",
		[]string{"-run", "TestLimitQuickParkHint", "./internal/sched"}, nil}
	plainLimit = check{"sched: every task of a limited group holds a running slot while it executes",
		[]string{"-run", "TestLimitedTasksTakeRunningSlots", "./internal/sched"}, nil}
	plainSkip = check{"wsgroup: a skip-queued group drops its queued tasks once canceled",
		[]string{"-run", "TestSkipQueuedAfterError", "./wsgroup"}, nil}
	// A deadlock shows as a hang; the hang guard's timeout is cut short.
	limitOrder = check{"wsgroup: a later task of a limited group waits for an earlier one",
		[]string{"-run", "TestLimitInTaskKeepsOrder", "./wsgroup"}, []string{"STEAL_HANG_TIMEOUT=10s"}}
)

// mutants is the table.
var mutants = []mutant{
	{
		name:  "labels-lost-inside-task",
		bug:   "a Go inside a task, on a worker that has the labels word, does not keep its caller's labels",
		file:  "internal/sched/group.go",
		edits: []edit{{"\t\t\tt.labels = *w.labels\n", ""}},
		check: labels,
	},
	{
		name:  "trace-regions-lost-inside-task",
		bug:   "a Go inside a task takes the labels' fast path while the tracer runs, and its task gets no region",
		file:  "internal/sched/group.go",
		edits: []edit{{"if w.labels != nil && !trace.IsEnabled() {", "if w.labels != nil {\n\t\t\t_ = trace.IsEnabled"}},
		check: traceRegions,
	},
	{
		name:  "labels-not-restored",
		bug:   "after a task, the goroutine that ran it keeps the task's profiler labels",
		file:  "internal/sched/panic.go",
		edits: []edit{{"home unsafe.Pointer) {\n\tif w.wears() != home {\n\t\tgstatus.SetLabels(home)\n\t}\n", "home unsafe.Pointer) {\n"}},
		check: labels,
	},
	{
		name:  "labels-word-misplaced",
		bug:   "a goroutine loads its labels from the word after the one the check found",
		file:  "internal/gstatus/labels_read.go",
		edits: []edit{{"return (*unsafe.Pointer)(unsafe.Add(getg(), found.labels))", "return (*unsafe.Pointer)(unsafe.Add(getg(), found.labels+8))"}},
		check: labelsWord,
	},
	{
		name:  "labels-worker-inherits",
		bug:   "a worker keeps the labels of the goroutine that started it",
		file:  "internal/sched/worker.go",
		edits: []edit{{"\tclearLabels()\n\tp := w.pool\n", "\tp := w.pool\n"}},
		check: labels,
	},
	{
		name:  "labels-first-of-batch",
		bug:   "of a batch taken from the injector, only the first task keeps its submitter's labels",
		file:  "internal/sched/worker.go",
		edits: []edit{{"w.dq.Push(w.newTask(w.batch[i].fn, w.batch[i].g, true, w.batch[i].plain))", "w.dq.Push(w.newTask(fn{f: w.batch[i].f}, w.batch[i].g, true, w.batch[i].plain))"}},
		check: labels,
	},
	{
		name:  "sleep-no-recheck",
		bug:   "a worker that announced sleepiness sleeps without re-checking the jobs event counter",
		file:  "internal/sleep/sleep.go",
		edits: []edit{{"if c.JEC() != idle.jec {", "if c.JEC() != idle.jec && idle.worker < 0 {"}},
		check: exploreSleep,
	},
	{
		name: "sleep-wake-before-post",
		bug:  "a post reads the sleepers and wakes them before it moves the jobs event counter",
		file: "internal/sleep/sleep.go",
		edits: []edit{{
			"\tc := s.c.load()\n\tif c.sleepy() {\n\t\tc = s.postSleepy()\n\t}\n\ts.Wake(c, n, queueWasEmpty)\n\treturn c",
			"\tc := s.c.load()\n\ts.Wake(c, n, queueWasEmpty)\n\tif c.sleepy() {\n\t\tc = s.postSleepy()\n\t}\n\treturn c",
		}},
		check: exploreSleep,
	},
	{
		name: "sleep-asleep-after-done",
		bug:  "a sleeper publishes its asleep flag only after it has checked for shutdown",
		file: "internal/sleep/sleep.go",
		edits: []edit{
			{"\tsl.asleep.Store(true)\n\t// Under the lock", "\t// Under the lock"},
			{"\t\treturn Done\n\t}\n\tif testHookRegister != nil {", "\t\treturn Done\n\t}\n\tsl.asleep.Store(true)\n\tif testHookRegister != nil {"},
		},
		check: exploreSleep,
	},
	{
		name: "sleep-asleep-after-done/plain",
		bug:  "the same late asleep flag, in a plain test",
		file: "internal/sleep/sleep.go",
		edits: []edit{
			{"\tsl.asleep.Store(true)\n\t// Under the lock", "\t// Under the lock"},
			{"\t\treturn Done\n\t}\n\tif testHookRegister != nil {", "\t\treturn Done\n\t}\n\tsl.asleep.Store(true)\n\tif testHookRegister != nil {"},
		},
		check: doneWhileReading,
	},
	{
		name:  "sleep-every-worker-spins",
		bug:   "every idle worker makes the search rounds, not one at a time",
		file:  "internal/sleep/sleep.go",
		edits: []edit{{"\tif s.spinner.Load() != 0 || !s.spinner.CompareAndSwap(0, 1) {\n\t\treturn false\n\t}", "\ts.spinner.Store(1)"}},
		check: idleRounds,
	},
	{
		name:  "sleep-woken-searches-rounds",
		bug:   "a worker woken with nothing to find makes the search rounds again before it sleeps",
		file:  "internal/sleep/sleep.go",
		edits: []edit{{"if idle.rounds == 0 && (idle.woken || !s.startSpinning(idle)) {", "if idle.rounds == 0 && !s.startSpinning(idle) {"}},
		check: idleRounds,
	},
	{
		name:  "sleep-spin-unbounded-in-time",
		bug:   "the spinner's rounds are bounded by number only: on an idle processor each yield returns at once",
		file:  "internal/sleep/sleep.go",
		edits: []edit{{"return s.spinFor > 0 && nanotime()-idle.since >= int64(s.spinFor)", "return false"}},
		check: idleRounds,
	},
	{
		name:  "sleep-spins-forever",
		bug:   "the spinner never stops searching: it neither announces sleepiness nor sleeps",
		file:  "internal/sleep/sleep.go",
		edits: []edit{{"\tcase idle.rounds < Rounds:\n\t\tidle.rounds++\n\t\tidle.yield()", "\tcase idle.rounds < Rounds || idle.spinner:\n\t\tidle.rounds++\n\t\tidle.yield()"}},
		check: idlePool,
	},
	{
		name:  "sleep-workfound-wakes-for-nothing",
		bug:   "a worker that finds work wakes a sleeper even when nothing else is queued",
		file:  "internal/sleep/sleep.go",
		edits: []edit{{"if old.Sleeping() > 0 && more() {", "if old.Sleeping() > 0 {"}},
		check: idlePool,
	},
	{
		name:  "sched-local-push-no-wake",
		bug:   "a Go inside a task pushes onto the worker's deque and moves the counter, but wakes no sleeper",
		file:  "internal/sched/worker.go",
		edits: []edit{{"c := w.pool.sleep.NewInternalJobs(1, wasEmpty)", "c := w.pool.sleep.Post()\n\t_ = wasEmpty"}},
		check: exploreSched,
	},
	{
		name:  "sched-inject-no-wake",
		bug:   "a Go from outside queues its task in the injector and wakes no sleeper",
		file:  "internal/sched/pool.go",
		edits: []edit{{"\tif c.Sleeping() > 0 {\n\t\t// Only now", "\tif c.Sleeping() < 0 {\n\t\t// Only now"}},
		check: exploreSched,
	},
	{
		name:  "sched-local-push-no-wake/no-rescue",
		bug:   "the same local push that wakes no sleeper, in a plain test",
		file:  "internal/sched/worker.go",
		edits: []edit{{"c := w.pool.sleep.NewInternalJobs(1, wasEmpty)", "c := w.pool.sleep.Post()\n\t_ = wasEmpty"}},
		check: noRescue,
	},
	{
		name:  "sched-push-calm-ignores-sleepers",
		bug:   "a Go inside a task takes the post's fast path while workers sleep, and wakes none",
		file:  "internal/sleep/counters.go",
		edits: []edit{{"return c&(oneJEC|threadMask<<sleepingShift) == oneJEC", "return c&oneJEC == oneJEC"}},
		check: exploreSched,
	},
	{
		name:  "sched-push-calm-ignores-sleepy",
		bug:   "a Go inside a task takes the post's fast path while a worker is sleepy, and leaves the jobs event counter even",
		file:  "internal/sleep/counters.go",
		edits: []edit{{"return c&(oneJEC|threadMask<<sleepingShift) == oneJEC", "return c&(threadMask<<sleepingShift) == 0"}},
		check: exploreSched,
	},
	{
		name:  "sched-push-fast-path-never-spawns",
		bug:   "a Go inside a task with no worker idle neither starts one nor tells the hand-off",
		file:  "internal/sched/worker.go",
		edits: []edit{{"if !c.Calm() || c.Inactive() == 0 && !(p.full() && p.ho.Quiet(w.posts)) {", "if !c.Calm() {"}},
		check: exploreSched,
	},
	{
		name:  "sched-push-fast-path-never-saturated",
		bug:   "a Go inside a task on a full pool never has the hand-off check the workers",
		file:  "internal/sched/worker.go",
		edits: []edit{{"c.Inactive() == 0 && !(p.full() && p.ho.Quiet(w.posts))", "c.Inactive() == 0 && !p.full()"}},
		check: statusLocalPoster,
	},
	{
		name:  "sched-inject-no-wake/no-rescue",
		bug:   "the same injection that wakes no sleeper, in a plain test",
		file:  "internal/sched/pool.go",
		edits: []edit{{"\tif c.Sleeping() > 0 {\n\t\t// Only now", "\tif c.Sleeping() < 0 {\n\t\t// Only now"}},
		check: noRescue,
	},
	{
		name:  "sched-retire-no-last-look",
		bug:   "a retiring worker gives up its slot and stops counting as idle without a last look at the queues",
		file:  "internal/sched/pool.go",
		edits: []edit{{"hook.at(retireLook, w, live)\n\tif p.queued() == 0 {", "hook.at(retireLook, w, live)\n\tif true {"}},
		check: noRescue,
	},
	{
		name:  "sched-retire-no-last-look/explore",
		bug:   "the same retirement without a last look, under every interleaving of a worker retiring while a task comes",
		file:  "internal/sched/pool.go",
		edits: []edit{{"hook.at(retireLook, w, live)\n\tif p.queued() == 0 {", "hook.at(retireLook, w, live)\n\tif true {"}},
		check: exploreSched,
	},
	{
		name: "sched-retire-look-first",
		bug:  "a retiring worker takes its last look at the queues before it stops counting as idle",
		file: "internal/sched/pool.go",
		edits: []edit{
			{"\thook.at(retireStop, w, live)\n", "\tempty := p.queued() == 0\n\thook.at(retireStop, w, live)\n"},
			{"hook.at(retireLook, w, live)\n\tif p.queued() == 0 {", "hook.at(retireLook, w, live)\n\tif empty {"},
		},
		check: noRescue,
	},
	{
		name: "sched-retire-look-before-vacate",
		bug:  "a retiring worker takes its last look at the queues before it gives its slot up: a poster that no longer counts it idle finds the pool full and starts no worker",
		file: "internal/sched/pool.go",
		edits: []edit{
			{"\thook.at(retireVacate, w, -1)\n\tp.mu.Lock()\n\tp.vacateLocked(w)\n\tlive := p.live.Load()\n\tp.mu.Unlock()\n", "\tlive := int32(-1)\n"},
			{"\thook.at(retireLook, w, live)\n\tif p.queued() == 0 {\n\t\treturn true\n\t}\n", "\thook.at(retireLook, w, live)\n\tempty := p.queued() == 0\n\thook.at(retireVacate, w, -1)\n\tp.mu.Lock()\n\tp.vacateLocked(w)\n\tp.mu.Unlock()\n\tif empty {\n\t\treturn true\n\t}\n"},
		},
		check: retirePost,
	},
	{
		name: "sched-post-room-before-push",
		bug:  "a Go from outside reads the pool's room before it pushes its task: a worker that retires in between neither finds the task nor leaves the poster room to start one",
		file: "internal/sched/pool.go",
		edits: []edit{
			{"\tpostBegin()\n\thook := testHookPair.Load()\n", "\tpostBegin()\n\tfull := p.full()\n\thook := testHookPair.Load()\n"},
			{"\tp.maybeSpawn(c, uint32(n))\n\tpostEnd()\n}", "\tif c.Inactive() == 0 && (full || !p.spawn()) {\n\t\tp.ho.Saturated(uint32(n), nil)\n\t}\n\tpostEnd()\n}"},
		},
		check: retirePost,
	},
	{
		name:  "sched-retire-look-injector-only",
		bug:   "a retiring worker's last look reads only the injector, not the deques of the workers that stay",
		file:  "internal/sched/pool.go",
		edits: []edit{{"hook.at(retireLook, w, live)\n\tif p.queued() == 0 {", "hook.at(retireLook, w, live)\n\tif p.inj.len() == 0 {"}},
		check: noRescue,
	},
	{
		name:  "sched-spare-not-woken",
		bug:   "a slot is handed to a parked spare that is not woken, so the hand-off is lost",
		file:  "internal/sched/handoff/spares.go",
		edits: []edit{{"\tsp.slot, sp.given = v, true\n\ts.wakeLocked(sp)\n", "\tsp.slot, sp.given = v, true\n"}},
		check: sparesReused,
	},
	{
		name:  "sched-spare-not-woken/explore",
		bug:   "the same lost hand-off to a parked spare, under every interleaving of a retired worker's goroutine being reused",
		file:  "internal/sched/handoff/spares.go",
		edits: []edit{{"\tsp.slot, sp.given = v, true\n\ts.wakeLocked(sp)\n", "\tsp.slot, sp.given = v, true\n"}},
		check: exploreSched,
	},
	{
		name:  "sched-slot-owned-twice",
		bug:   "a worker started in a free slot leaves the slot on the free list, so the next one starts in it too",
		file:  "internal/sched/slots.go",
		edits: []edit{{"\t\tp.freeSlots = p.freeSlots[:n-1]\n", ""}},
		check: handOff,
	},
	{
		name:  "sched-spare-never-parked",
		bug:   "a goroutine that left its slot waits out its linger without joining the spares, so none is ever reused",
		file:  "internal/sched/handoff/spares.go",
		edits: []edit{{"\ts.list = append(s.list, sp)\n", ""}},
		check: sparesReused,
	},
	{
		name:  "sched-count-twice",
		bug:   "a finished task is subtracted from its group's count twice",
		file:  "internal/sched/group.go",
		edits: []edit{{"s := g.state.Add(^uint64(k*oneTask - 1))", "s := g.state.Add(^uint64(2*k*oneTask - 1))"}},
		check: exploreSched,
	},
	{
		name:  "sched-wait-early",
		bug:   "an outside Wait stops waiting while one task is still unfinished",
		file:  "internal/sched/wait.go",
		edits: []edit{{"\tfor g.count() != 0 {\n\t\tg.park(bitDone", "\tfor g.count() > 1 {\n\t\tg.park(bitDone"}},
		check: exploreSched,
	},
	{
		name:  "sched-no-slot-wake",
		bug:   "a task that frees a slot of a limited group does not wake the Go that waits for it",
		file:  "internal/sched/group.go",
		edits: []edit{{"if s&bitSlot != 0 && countOf(s) < limit {", "if s&bitSlot != 0 && countOf(s) < limit-1 {"}},
		check: exploreSched,
	},
	{
		name:  "sched-set-aside-no-recheck",
		bug:   "a Go inside a task sets its task aside for a slot without looking again whether the slot holders have ended meanwhile",
		file:  "internal/sched/group.go",
		edits: []edit{{"\tsl.mu.Unlock()\n\tg.unpark(w)\n}", "\tsl.mu.Unlock()\n}"}},
		check: exploreSched,
	},
	{
		name:  "sched-first-error-no-cas",
		bug:   "the first error is claimed by a load and a store instead of a compare-and-swap, so two failing tasks can both record theirs",
		file:  "internal/sched/failure.go",
		edits: []edit{{"\tif sl.errSet.CompareAndSwap(false, true) {\n", "\tif !sl.errSet.Load() {\n\t\tsl.errSet.Store(true)\n"}},
		check: exploreSched,
	},
	{
		name:  "sched-scan-every-slot",
		bug:   "a worker that leaves its slot stays in the scan set, so after a burst every steal scans thousands of empty deques",
		file:  "internal/sched/slots.go",
		edits: []edit{{"\t} else {\n\t\tp.setActive(w, false)\n\t}\n\tcheckSlotsLocked(p)\n}\n\n// retakeLocked", "\t}\n\tcheckSlotsLocked(p)\n}\n\n// retakeLocked"}},
		check: retireScan,
	},
	{
		name:  "sched-scan-every-slot/debug",
		bug:   "a worker that leaves its slot stays in the scan set, so after a burst every steal scans thousands of empty deques",
		file:  "internal/sched/slots.go",
		edits: []edit{{"\t} else {\n\t\tp.setActive(w, false)\n\t}\n\tcheckSlotsLocked(p)\n}\n\n// retakeLocked", "\t}\n\tcheckSlotsLocked(p)\n}\n\n// retakeLocked"}},
		check: slotsDebug,
	},
	{
		name:  "deque-steal-no-cas",
		bug:   "a thief takes the top item with a plain store of top instead of a compare-and-swap",
		file:  "internal/deque/deque.go",
		edits: []edit{{"\tif !d.top.CompareAndSwap(t, t+1) {\n\t\treturn nil, true\n\t}", "\td.top.Store(t + 1)"}},
		check: exploreDeque,
	},
	{
		name:  "deque-steal-no-cas/linearizability",
		bug:   "the same broken steal, against the sequential specification",
		file:  "internal/deque/deque.go",
		edits: []edit{{"\tif !d.top.CompareAndSwap(t, t+1) {\n\t\treturn nil, true\n\t}", "\td.top.Store(t + 1)"}},
		check: linearDeque,
	},
	{
		name:  "find-no-steal-turn",
		bug:   "an idle worker tries the other deques only once the injector is empty, so a stream of tasks from outside starves a task on a stuck worker's deque",
		file:  "internal/sched/worker.go",
		edits: []edit{{"\tif w.finds%stealEvery == 0 {", "\tif false && w.finds%stealEvery == 0 {"}},
		check: findTurns,
	},
	{
		name:  "find-no-inject-turn",
		bug:   "a worker looks at the injector only once its own deque is empty, so a deque that never empties starves the tasks from outside",
		file:  "internal/sched/worker.go",
		edits: []edit{{"\tif w.finds++; w.finds%injectEvery == 0 {", "\tif w.finds++; false && w.finds%injectEvery == 0 {"}},
		check: findTurns,
	},
	{
		name:  "deque-push-skips-stale-slot",
		bug:   "a push in Retain mode stores its item only into an empty slot, leaving a slot that holds another taken item as it was",
		file:  "internal/deque/deque.go",
		edits: []edit{{"if s := r.slot(b); s.Load() != x {", "if s := r.slot(b); s.Load() == nil {"}},
		check: modelDeque,
	},
	{
		name:  "free-list-stale-slot",
		bug:   "a freed task record goes back onto the free list without its store, so the list hands out the record its slot held before, which may be in use",
		file:  "internal/sched/task.go",
		edits: []edit{{"\t\tif w.free[n] != t {\n\t\t\tw.free[n] = t\n\t\t}\n", ""}},
		check: freeList,
	},
	{
		name:  "deque-grown-unset",
		bug:   "a ring that grew is never marked larger than its floor, so Pop never shrinks it back",
		file:  "internal/deque/deque.go",
		edits: []edit{{"\td.grown = n > d.minCap()\n", "\td.grown = false\n"}},
		check: shrinkDeque,
	},
	{
		name:  "deque-stealif-stale",
		bug:   "a StealIf reports \"not wanted\" after its keep saw an item from a reused slot, not the oldest item",
		file:  "internal/deque/deque.go",
		edits: []edit{{"\t\tif d.top.Load() != t {\n\t\t\treturn nil, true\n\t\t}\n", ""}},
		check: exploreStealIf,
	},
	{
		name:  "group-limit-order",
		bug:   "a Go inside a task on a full limited group queues its task on the deque, where it starts before the tasks that hold the slots",
		file:  "internal/sched/group.go",
		edits: []edit{{"\t\tg.setAside(g.submitted(f, w), w) // inside a task\n\t\treturn\n", "\t\tg.state.Add(oneTask)\n"}},
		check: limitOrder,
	},
	{
		name: "sched-drop-one-in-a-million",
		bug:  "a worker drops one task in a million: counted finished, never run",
		file: "internal/sched/worker.go",
		edits: []edit{
			{"// worker is one slot of the pool", "var executed atomic.Int64\n\n// worker is one slot of the pool"},
			{"\tif !plain && g.skips() {\n\t\tg.drop(w, injected)", "\tif executed.Add(1)%1_000_000 == 0 {\n\t\tw.afterTask(g, false, injected, nil)\n\t\treturn\n\t}\n\tif !plain && g.skips() {\n\t\tg.drop(w, injected)"},
		},
		check: soak,
	},
	{
		name:  "join-any-task",
		bug:   "a helping Wait runs any queued task, as work-stealing runtimes' joins do",
		file:  "internal/sched/join.go",
		edits: []edit{{"\t\tif h == g {\n\t\t\treturn true", "\t\tif true {\n\t\t\treturn true"}},
		check: joinRules,
	},
	{
		name:  "join-any-task/explore",
		bug:   "the same joins that run any queued task, under interleavings of two Waits for one group in tasks of two others",
		file:  "internal/sched/join.go",
		edits: []edit{{"\t\tif h == g {\n\t\t\treturn true", "\t\tif true {\n\t\t\treturn true"}},
		check: exploreSched,
	},
	{
		name:  "join-one-link",
		bug:   "a helping Wait follows one join only, not the chain: the thief's own thieves are not helped",
		file:  "internal/sched/join.go",
		edits: []edit{{"if h == nil || links == joinHops {", "if h == nil || links == 1 {"}},
		check: joinRules,
	},
	{
		name:  "join-record-kept",
		bug:   "the record of a group's last Wait outlives the group's start from no active task",
		file:  "internal/sched/join.go",
		edits: []edit{{"\tif s&countMask == 0 && g.awaitedIn.Load() != nil {\n\t\tg.restarted()", "\tif false {\n\t\tg.restarted()"}},
		check: joinRules,
	},
	{
		name:  "join-record-cleared-after-add",
		bug:   "a Go that starts a group again clears the last use's join record after it adds its task, so a second Go at the same time can queue a task while the record is still there",
		file:  "internal/sched/group.go",
		edits: []edit{{"\tdefault:\n\t\tg.starting(g.state.Load())\n\t\tg.state.Add(oneTask)\n\t}\n\tif w != nil {", "\tdefault:\n\t\tg.starting(g.state.Add(oneTask) - oneTask)\n\t}\n\tif w != nil {"}},
		check: exploreRestart,
	},
	{
		name:  "gid-register-untrusted",
		bug:   "Register records a goroutine under a fast id that disagrees with runtime.Stack, which Lookup then trusts",
		file:  "internal/gid/gid.go",
		edits: []edit{{"func (t *Table[V]) Register(v *V) {\n\tif !trusted() {", "func (t *Table[V]) Register(v *V) {\n\tif false && !trusted() {"}},
		check: gidUntrusted,
	},
	{
		name:  "run-pops-any-task",
		bug:   "a Wait's run of its own tasks goes on with whatever task is newest in the deque, of any group",
		file:  "internal/sched/panic.go",
		edits: []edit{{"\t\tif x := w.dq.Newest(); x != nil && x.g.Load() == g {", "\t\tif x := w.dq.Newest(); x != nil {"}},
		check: ownPops,
	},
	{
		name:  "help-pops-any-task",
		bug:   "a helping Wait pops whatever task is newest in its deque, of any group",
		file:  "internal/sched/wait.go",
		edits: []edit{{"\t\tif x := w.dq.Newest(); x != nil && x.g.Load() == g {", "\t\tif x := w.dq.Newest(); x != nil {"}},
		check: ownPops,
	},
	{
		name:  "run-labels-kept",
		bug:   "a task of a Wait's run leaves its labels on the goroutine for the next task of the run",
		file:  "internal/sched/panic.go",
		edits: []edit{{"\t\tended = true\n\t\tif w.wears() != home {", "\t\tended = true\n\t\tif false && w.wears() != home {"}},
		check: ownRuns,
	},
	{
		name:  "run-running-kept",
		bug:   "after a run of a Wait's tasks, the waited group stays the worker's running group",
		file:  "internal/sched/panic.go",
		edits: []edit{{"\tw.running = outer\n\tw.depth--\n\treturn t, false", "\tw.depth--\n\treturn t, false"}},
		check: ownRuns,
	},
	{
		name:  "patience-wake-lost",
		bug:   "a Wait waiting in its worker's place is not registered for the wake-up: only its patience ends the wait",
		file:  "internal/sched/waiters.go",
		edits: []edit{{"\tregistered := countOf(g.state.Or(bitDone)|bitDone) != 0\n\tif registered {\n\t\tb.list = append(b.list, waiter{g: g, bit: bitDone, pk: pk})", "\tregistered := countOf(g.state.Or(bitDone)|bitDone) != 0\n\tif registered && false {\n\t\tb.list = append(b.list, waiter{g: g, bit: bitDone, pk: pk})"}},
		check: patienceWake,
	},
	{
		name:  "patient-handed-on",
		bug:   "the status checks take a Wait waiting in its worker's place for a worker blocked in its task, and hand its place on",
		file:  "internal/sched/handoff/status.go",
		edits: []edit{{"if seq&1 == 0 || s.patient.Load() {", "if seq&1 == 0 {"}},
		check: patientSpared,
	},
	{
		name: "crash-finishes-task",
		bug:  "a task whose panic is ending the program counts as finished while the panic unwinds: a Wait may return, or a TryGo succeed, before the crash",
		file: "internal/sched/panic.go",
		edits: []edit{{"\tg.taskPanicked(r, w)\n\tw.leaveTask(outer, home)\n\tw.endTask()\n\tw.afterTask(g, admitted, false, nil)\n",
			"\tw.afterTask(g, admitted, false, nil)\n\tg.taskPanicked(r, w)\n\tw.leaveTask(outer, home)\n\tw.endTask()\n"}},
		check: crashFirst,
	},
	{
		name: "sched-outside-error-lost",
		bug:  "the error of a task run by a Wait outside the pool is not recorded, so that Wait returns nil",
		file: "internal/sched/panic.go",
		edits: []edit{{"\tif err := f.f(); err != nil {\n\t\tg.fail(err)\n\t}\n\tended = true\n\tif gstatus.Labels() != home {",
			"\tif err := f.f(); err != nil && false {\n\t\tg.fail(err)\n\t}\n\tended = true\n\tif gstatus.Labels() != home {"}},
		check: soak,
	},
	{
		name:  "sched-idle-never-retires",
		bug:   "an idle worker whose linger ends sleeps again instead of retiring, so workers outlive the last task",
		file:  "internal/sched/worker.go",
		edits: []edit{{"case sleep.Done, sleep.Lingered:", "case sleep.Done:"}},
		check: soak,
	},
	{
		name:  "deque-pop-last-no-cas",
		bug:   "the owner takes the last item without racing the thieves for it",
		file:  "internal/deque/deque.go",
		edits: []edit{{"won := d.top.CompareAndSwap(t, t+1)", "won := true\n\td.top.Store(t + 1)"}},
		check: exploreDeque,
	},
	{
		name:  "deque-pop-no-final-store",
		bug:   "a pop of the last item skips its final store of bottom",
		file:  "internal/deque/deque.go",
		edits: []edit{{"\td.restoreBottom(b + 1)\n\tif !won {", "\tif !won {"}},
		check: exploreDeque,
	},
	{
		name:  "deque-pop-reserve-owned",
		bug:   "a pop reserves its index with the owner's plain store, which the load of top that follows may pass: owner and thief both take the last item",
		file:  "internal/deque/deque.go",
		edits: []edit{{"\td.bottom.Store(b)\n\tt := d.top.Load()", "\tatomic.StoreOwned64(&d.bottom, b)\n\tt := d.top.Load()"}},
		check: stressDeque,
	},
	{
		name: "deque-push-publish-first",
		bug:  "a push publishes the new bottom before it writes the slot",
		file: "internal/deque/deque.go",
		edits: []edit{
			{"\tif d.retain {\n\t\tif s := r.slot(b); s.Load() != x {\n\t\t\tatomic.StoreOwnedPointer(s, x)\n\t\t}\n\t} else {\n\t\tr.slot(b).Store(x)\n\t}\n\t// Publish x", "\td.bottom.Store(b + 1)\n\t// Publish x"},
			{"\td.bottom.Store(b + 1)\n\treturn b <= t\n}\n\n// Pop removes", "\tif d.retain {\n\t\tif s := r.slot(b); s.Load() != x {\n\t\t\tatomic.StoreOwnedPointer(s, x)\n\t\t}\n\t} else {\n\t\tr.slot(b).Store(x)\n\t}\n\treturn b <= t\n}\n\n// Pop removes"},
		},
		check: exploreDeque,
	},
	{
		name:  "help-keeps-own",
		bug:   "a helping Wait returns without subtracting the tasks it ran itself, so the group's count never reaches zero",
		file:  "internal/sched/wait.go",
		edits: []edit{{"\t\t\tif c != 0 {\n\t\t\t\t*own = 0\n\t\t\t\tg.done(c)\n\t\t\t}\n\t\t\treturn", "\t\t\treturn"}},
		check: exploreSched,
	},
	{
		name:  "help-blocks-holding-own",
		bug:   "a helping Wait blocks before it subtracts the tasks it ran itself, so the task that ends last elsewhere never sees zero and never wakes it",
		file:  "internal/sched/wait.go",
		edits: []edit{{"\t\tif k := *own; k != 0 {\n\t\t\t*own = 0\n\t\t\tg.done(k)\n\t\t\tcontinue // the count may be zero now\n\t\t}\n", ""}},
		check: helpBlocks,
	},
	{
		name:  "help-goexit-drops-own",
		bug:   "a helping Wait unwound by a task's Goexit forgets the tasks it had run itself, so it waits for ever for its group",
		file:  "internal/sched/wait.go",
		edits: []edit{{"\t\tif own != 0 {\n\t\t\tg.done(own)\n\t\t}\n\t\tw.block()", "\t\tw.block()"}},
		check: goexitOwn,
	},
	{
		name:  "group-go-lost-update",
		bug:   "Go adds its task to the count with a load and a store, so a Go or a completion at the same moment is lost",
		file:  "internal/sched/group.go",
		edits: []edit{{"\tdefault:\n\t\tg.starting(g.state.Load())\n\t\tg.state.Add(oneTask)\n\t}\n\tif w != nil {", "\tdefault:\n\t\tg.starting(g.state.Load())\n\t\tg.state.Store(g.state.Load() + oneTask)\n\t}\n\tif w != nil {"}},
		check: exploreSched,
	},
	{
		name:  "limit-fastpath-done-bit-only",
		bug:   "a finisher whose subtraction returns the slot bit set wakes the Gos parked for a slot only when a Wait is parked too",
		file:  "internal/sched/group.go",
		edits: []edit{{"\tif s&flagBits != 0 {\n", "\tif s&bitDone != 0 {\n"}},
		check: limitWake,
	},
	{
		name: "limit-parked-read-before-free",
		bug:  "a finisher reads whether tasks are set aside for a slot before it frees its own, so a task set aside meanwhile is never started",
		file: "internal/sched/group.go",
		edits: []edit{
			{"\tlimit := g.limit\n\tif limit > 0 && g.state.Load()&bitSlot != 0 && g.handSlot() {", "\tlimit := g.limit\n\tsl := g.slow.Load()\n\tparked := limit > 0 && sl != nil && sl.nParked.Load() > 0\n\tif limit > 0 && g.state.Load()&bitSlot != 0 && g.handSlot() {"},
			{"\t\tif sl := g.slow.Load(); sl != nil && sl.nParked.Load() > 0 {\n\t\t\tw := current()", "\t\tif parked {\n\t\t\tw := current()"},
		},
		check: limitSetAside,
	},
	{
		name:  "group-trygo-ignores-limit",
		bug:   "TryGo on a full limited group queues the task anyway",
		file:  "internal/sched/group.go",
		edits: []edit{{"\t\t\treturn false // full\n", "\t\t\tg.state.Add(oneTask)\n"}},
		check: propertyGroup,
	},
	{
		name:  "ranges-take-add",
		bug:   "a Take moves lo up with an unconditional Add instead of a compare-and-swap, so it also takes indices a thief has just cut off",
		file:  "internal/ranges/ranges.go",
		edits: []edit{{"\t\tif s.CompareAndSwap(w, pack(end, hi)) {\n\t\t\t// After the CAS", "\t\tif s.Add(uint64(end - lo)); true {\n\t\t\t// After the CAS"}},
		check: exploreRanges,
	},
	{
		name:  "ranges-take-add/linearizability",
		bug:   "the same broken Take, against the sequential specification of a slot",
		file:  "internal/ranges/ranges.go",
		edits: []edit{{"\t\tif s.CompareAndSwap(w, pack(end, hi)) {\n\t\t\t// After the CAS", "\t\tif s.Add(uint64(end - lo)); true {\n\t\t\t// After the CAS"}},
		check: linearRanges,
	},
	{
		name: "ranges-take-subtract-first",
		bug:  "a Take subtracts what it takes from left before its compare-and-swap, so a thief may see left at zero while the indices are still stealable",
		file: "internal/ranges/ranges.go",
		edits: []edit{
			{"\t\tif s.CompareAndSwap(w, pack(end, hi)) {\n\t\t\t// After the CAS", "\t\tp.left.Add(-int64(end - lo))\n\t\tif s.CompareAndSwap(w, pack(end, hi)) {\n\t\t\t// After the CAS"},
			{"\t\t\tp.left.Add(-int64(end - lo))\n\t\t\treturn lo, end", "\t\t\treturn lo, end"},
		},
		check: exploreRanges,
	},
	{
		name:  "ranges-take-lost-race-empty",
		bug:   "a Take whose compare-and-swap loses to a thief reports the slot empty instead of looking again",
		file:  "internal/ranges/ranges.go",
		edits: []edit{{"\t\t\treturn lo, end\n\t\t}\n\t}\n}", "\t\t\treturn lo, end\n\t\t}\n\t\treturn lo, lo\n\t}\n}"}},
		check: exploreRanges,
	},
	{
		name: "ranges-untake-add-after",
		bug:  "an Untake adds the indices it gives back to left after its compare-and-swap, when thieves may already have stolen and taken them",
		file: "internal/ranges/ranges.go",
		edits: []edit{
			{"\tp.left.Add(int64(hi - lo))\n\ts := &p.slots[own].word", "\ts := &p.slots[own].word"},
			{"\t\tif s.CompareAndSwap(w, pack(lo, shi)) {\n\t\t\treturn", "\t\tif s.CompareAndSwap(w, pack(lo, shi)) {\n\t\t\tp.left.Add(int64(hi - lo))\n\t\t\treturn"},
		},
		check: exploreRanges,
	},
	{
		name:  "ranges-steal-store-first",
		bug:   "a Steal stores the range it cuts into its own slot before the compare-and-swap on the victim's word",
		file:  "internal/ranges/ranges.go",
		edits: []edit{{"\tif !p.slots[victim].word.CompareAndSwap(w, pack(lo, mid)) {", "\tp.slots[own].word.Store(pack(mid, hi))\n\tif !p.slots[victim].word.CompareAndSwap(w, pack(lo, mid)) {"}},
		check: exploreRanges,
	},
	{
		name:  "ranges-steal-no-cas",
		bug:   "a Steal cuts the victim's range with a plain store instead of a compare-and-swap",
		file:  "internal/ranges/ranges.go",
		edits: []edit{{"\tif !p.slots[victim].word.CompareAndSwap(w, pack(lo, mid)) {\n\t\treturn victim, mid, mid\n\t}", "\tp.slots[victim].word.Store(pack(lo, mid))"}},
		check: exploreRanges,
	},
	{
		name:  "ranges-steal-no-left-check",
		bug:   "a Steal that finds every other range empty reports that nothing is left without looking at left, while indices are in transit",
		file:  "internal/ranges/ranges.go",
		edits: []edit{{"\t\t\tif p.left.Load() == 0 {\n\t\t\t\treturn false", "\t\t\tif true {\n\t\t\t\treturn false"}},
		check: exploreRanges,
	},
	{
		name:  "status-always-blocked",
		bug:   "a worker's status is ignored: every worker in a task counts as blocked",
		file:  "internal/sched/handoff/status.go",
		edits: []edit{{"\tst = h.Read()\n", "\tst = gstatus.Blocked\n"}},
		check: statusCPU,
	},
	{
		name:  "status-never-blocked",
		bug:   "a worker's status is ignored: no worker ever counts as blocked",
		file:  "internal/sched/handoff/status.go",
		edits: []edit{{"\tst = h.Read()\n", "\tst = gstatus.Running\n"}},
		check: statusPoster,
	},
	{
		name:  "status-poster-never-checks",
		bug:   "a Go that finds every worker busy never reads the workers' statuses: only the monitor hands blocked workers on",
		file:  "internal/sched/handoff/handoff.go",
		edits: []edit{{"\tif n%checkEvery == 0 {\n\t\th.check(self)\n\t}\n", ""}},
		check: statusPoster,
	},
	{
		name:  "status-poster-quiet-on-checking-post",
		bug:   "a saturated post skips the hand-off whenever the monitor runs, its checking posts too: only the monitor hands blocked workers on",
		file:  "internal/sched/handoff/handoff.go",
		edits: []edit{{"return n%checkEvery != 0 && h.watched()", "return h.watched()"}},
		check: statusPosterStalled,
	},
	{
		name:  "status-poster-count-taken-back",
		bug:   "a post returns the shard's published count, which a Wait that takes its tasks back lowers again: a client that posts and takes back a few tasks at a time never reaches its check",
		file:  "internal/sched/injector.go",
		edits: []edit{{"\tq.pushes++\n\tn := q.pushes // read under the lock\n", "\tq.pushes++\n\tn := p + 1\n"}},
		check: statusTakesBack,
	},
	{
		name:  "status-no-ramp",
		bug:   "once every worker reads blocked, the hand-off starts one replacement, not a worker per queued task",
		file:  "internal/sched/handoff/status.go",
		edits: []edit{{"if n > 0 && blocked == others {", "if false {"}},
		check: statusRamp,
	},
	{
		name:  "status-no-long-bound",
		bug:   "with statuses read, a worker that stands still without reading blocked (a runtime semaphore) is never handed on",
		file:  "internal/sched/handoff/bounds.go",
		edits: []edit{{"\tlong := m.stoodStill(runWait, buf[:0])\n", "\tlong := m.stoodStill(runWait, buf[:0])[:0]\n"}},
		check: statusBound,
	},
	{
		name:  "fallback-no-evidence",
		bug:   "on the fallback, the workers handed on without a proof are never taken as evidence: a blocking wave beside busy CPUs is handed on one worker per unprovenWait",
		file:  "internal/sched/handoff/bounds.go",
		edits: []edit{{"	if len(kept) == 0 || m.h.signals.offCPU(", "	if len(kept) >= 0 || m.h.signals.offCPU("}},
		check: blockingWave,
	},
	{
		name:  "gstatus-collector-wait-blocked",
		bug:   "every wait reason counts as user-level blocking, the collector's and the runtime's semaphores included",
		file:  "internal/gstatus/read.go",
		edits: []edit{{"\t\tif rs.blocking[reason] {", "\t\tif true {"}},
		check: gstatusWaits,
	},
	{
		name: "gstatus-reuse-unchecked",
		bug:  "a read does not check the goroutine id, so a handle whose goroutine exited reads the goroutine that reuses its g",
		file: "internal/gstatus/read.go",
		edits: []edit{
			{"\tif load64(g, l.goid) != h.id {\n\t\treturn 0, 0, false\n\t}\n\tstatus =", "\tstatus ="},
			{"\tif load64(g, l.goid) != h.id {\n\t\treturn 0, 0, false\n\t}\n\treturn status", "\treturn status"},
		},
		check: gstatusReuse,
	},
	{
		name:  "counts-ignore-runnable",
		bug:   "the fallback counts only running goroutines: a worker waiting for a CPU looks off it",
		file:  "internal/sched/handoff/counts.go",
		edits: []edit{{"return stuck - (running - 1) - runnable + min(a, idle())", "return stuck - (running - 1) + min(a, idle())"}},
		check: statusCPU,
	},
	{
		name:  "counts-never-prove",
		bug:   "the fallback's counts never prove a worker off the CPU: only the monitor's long bound hands blocked workers on",
		file:  "internal/sched/handoff/counts.go",
		edits: []edit{{"\treturn k\n}\n", "\treturn 0 * k\n}\n"}},
		check: statusPoster,
	},
	{
		name:  "monitor-exit-look-first",
		bug:   "the exiting monitor looks at the queues before it gives its flag up: a task queued in between is left with no monitor",
		file:  "internal/sched/handoff/monitor.go",
		edits: []edit{{"\th.watching.Store(false)\n\tif h.pool.Queued() == 0 ||", "\tempty := h.pool.Queued() == 0\n\th.watching.Store(false)\n\tif empty ||"}},
		check: exploreWatch,
	},
	{
		name:  "plain-ignores-limit",
		bug:   "a task of a limited group is queued as plain: its worker runs it without taking a running slot",
		file:  "internal/sched/group.go",
		edits: []edit{{"\tif g.limit > 0 {\n\t\treturn false\n\t}\n\tsl := g.slow.Load()", "\tsl := g.slow.Load()"}},
		check: plainLimit,
	},
	{
		name:  "plain-ignores-skip-queued",
		bug:   "a task of a skip-queued group is queued as plain: its worker runs it after the group is canceled",
		file:  "internal/sched/group.go",
		edits: []edit{{"\treturn sl == nil || !sl.skipQueued\n", "\treturn sl == nil || true\n"}},
		check: plainSkip,
	},
	{
		name:  "quick-park-inverted",
		bug:   "a long park for a slot marks the group for long yields and a short one clears it: groups whose tasks hold their slots for long spin, and tiny tasks under a limit park",
		file:  "internal/sched/group.go",
		edits: []edit{{"case d < quickPark && !quick:", "case d >= quickPark && !quick:"}, {"case d >= quickPark && quick:", "case d < quickPark && quick:"}},
		check: quickPark,
	},
	{
		name:  "leave-publishes-nothing",
		bug:   "a task's end is never published: a worker between tasks, or idle, still reads as in its last task, and a wait of the scheduler's own counts as the task blocked",
		file:  "internal/sched/handoff/slot.go",
		edits: []edit{{"\tif !inTask {\n", "\tif false && !inTask {\n"}},
		check: gcStorm,
	},
	{
		name:  "fallback-no-still-gap",
		bug:   "the fallback takes a worker seen in its task once before for stuck, however short ago: a task that waits often and briefly is handed on",
		file:  "internal/sched/handoff/counts.go",
		edits: []edit{{"} else if since.age(now) >= stillGap {", "} else {"}},
		check: handOnRules,
	},
	{
		name:  "handon-newest-first",
		bug:   "the hand-off detaches the workers that stood still least long first, leaving the longest stuck in place",
		file:  "internal/sched/handoff/handoff.go",
		edits: []edit{{"j > 0 && stuck[j].since.before(stuck[j-1].since)", "j > 0 && stuck[j-1].since.before(stuck[j].since)"}},
		check: handOnRules,
	},
	{
		name:  "fallback-ramp-unproven",
		bug:   "the fallback ramps the pool up after any hand-off, with workers not proven off the CPU still attached",
		file:  "internal/sched/handoff/counts.go",
		edits: []edit{{"n > 0 && k >= others {", "n > 0 {"}},
		check: handOnRules,
	},
	{
		name:  "counts-while-marking",
		bug:   "the fallback counts while the collector marks: a worker parked in an assist looks off the CPU",
		file:  "internal/sched/handoff/counts.go",
		edits: []edit{{"\tif c.Marking || k <= 0 {\n", "\tif k <= 0 {\n"}},
		check: offCPUProof,
	},
	{
		name:  "counts-proof-at-once",
		bug:   "the fallback acts on a proof at once right after the collector stopped the world: a worker waiting for the collector to start a cycle looks off the CPU",
		file:  "internal/sched/handoff/counts.go",
		edits: []edit{{"\tif s.proofAt == 0 || s.proofAt < s.stopsAt {\n", "\tif false {\n"}},
		check: offCPUProof,
	},
	{
		name:  "status-check-at-saturation",
		bug:   "the pool starts the status check only once it is saturated, when its probes wait for processors the work holds",
		file:  "internal/sched/pool.go",
		edits: []edit{{"\thandoff.StartStatus()\n", ""}},
		check: statusFirstUse,
	},
	{
		name:  "gstatus-ambiguous-status",
		bug:   "the search takes the first of several words that read every probe's state for the status word",
		file:  "internal/gstatus/check.go",
		edits: []edit{{"		case len(settled) == 1:\n", "		case len(settled) >= 1:\n"}},
		check: gstatusSearch,
	},
	{
		name:  "gstatus-sleeper-short-steps",
		bug:   "the sleeping probe sleeps 250 µs at a time however long the check has run: beside busy goroutines it is runnable at every poll, and the check runs out of time",
		file:  "internal/gstatus/probes.go",
		edits: []edit{{"time.Sleep(min(max(time.Since(start), sleepStep), sleepMax))", "time.Sleep(sleepStep + 0*time.Since(start))"}},
		check: gstatusBusy,
	},
	{
		name:  "gstatus-settle-waits-count",
		bug:   "a check that proved its layout still waits for the goroutine count to fall back to where it was, up to a second with a pool ramping up meanwhile, and the reader stays off that long",
		file:  "internal/gstatus/check.go",
		edits: []edit{{"\tif !proven || err != nil {\n", "\tif true {\n"}},
		check: gstatusSettle,
	},
	{
		name: "gstatus-settle-leaves-probes",
		bug:  "the check returns once it has released its probes, before they have exited",
		file: "internal/gstatus/check.go",
		edits: []edit{{"\tif !ch.waitGone(deadline) {\n", "\tif false && !ch.waitGone(deadline) {\n"},
			{"\t} else if proven && !ch.waitUntil(", "\t} else if false && proven && !ch.waitUntil("}},
		check: gstatusLeaves,
	},
	{
		name:  "panic-nil-taken-for-goexit",
		bug:   "under GODEBUG=panicnil=1 a task's panic(nil) counts as a runtime.Goexit: the task is finished twice on a worker, and outside the pool Wait returns with the panic lost",
		file:  "internal/sched/panic.go",
		edits: []edit{{"if f.Function == \"runtime.gopanic\" {", "if f.Function == \"runtime.gopanic\" && false {"}},
		check: unwinders,
	},
	{
		name:  "recorded-panic-left-to-execute",
		bug:   "a task whose panic the group recorded is left for execute to finish, which a runtime.Goexit going on past the recovery never reaches: the task never finishes",
		file:  "internal/sched/panic.go",
		edits: []edit{{"\tw.leaveTask(outer, home)\n\tw.endTask()\n\tw.afterTask(g, admitted, false, nil)\n\tw.goexit = true\n\treturn true\n", "\tw.leaveTask(outer, home)\n\treturn false\n"}},
		check: goexitPastPanic,
	},
	{
		name:  "recorded-panic-goexit-unmarked",
		bug:   "a task whose panic the group recorded does not mark the goroutine as exiting: when a runtime.Goexit goes on past the recovery, its slot is left without a goroutine",
		file:  "internal/sched/panic.go",
		edits: []edit{{"\tw.afterTask(g, admitted, false, nil)\n\tw.goexit = true\n\treturn true\n", "\tw.afterTask(g, admitted, false, nil)\n\treturn true\n"}},
		check: goexitPastPanic,
	},
	{
		name:  "gstatus-reason-kinds-alike",
		bug:   "the search takes a byte that probes of different kinds read alike for the wait reason",
		file:  "internal/gstatus/check.go",
		edits: []edit{{"			if other, seen := kindOf[b]; seen && other != w {", "			if other, seen := kindOf[b]; seen && other != w && false {"}},
		check: gstatusSearch,
	},
}

func main() {
	run := flag.String("run", "", "run only the mutants whose name matches this regular expression")
	list := flag.Bool("list", false, "print the table and exit")
	timeout := flag.Duration("timeout", 5*time.Minute, "time limit of one check")
	flag.Parse()
	re, err := regexp.Compile(*run)
	if err != nil {
		fatalf("-run: %v", err)
	}
	var chosen []mutant
	for _, m := range mutants {
		if re.MatchString(m.name) {
			chosen = append(chosen, m)
		}
	}
	if *list {
		printTable(chosen, nil)
		return
	}
	root, err := os.Getwd()
	if err != nil {
		fatalf("%v", err)
	}
	tmp, err := os.MkdirTemp("", "mutants")
	if err != nil {
		fatalf("%v", err)
	}
	defer os.RemoveAll(tmp)
	clean := filepath.Join(tmp, "clean")
	if err := copyModule(root, clean); err != nil {
		fatalf("copying the module: %v", err)
	}

	// The checks must pass on the unbroken code.
	seen := map[string]bool{}
	for _, m := range chosen {
		key := strings.Join(m.check.args, " ")
		if seen[key] {
			continue
		}
		seen[key] = true
		fmt.Printf("baseline: go test %s ... ", key)
		if out, err := goTest(clean, m.check, *timeout); err != nil {
			fmt.Println("FAILS")
			fatalf("the check fails on the unbroken code:\n%s", out)
		}
		fmt.Println("passes")
	}

	results := make([]string, len(chosen))
	survived := 0
	for i, m := range chosen {
		dir := filepath.Join(tmp, fmt.Sprintf("m%d", i))
		if err := copyModule(root, dir); err != nil {
			fatalf("copying the module: %v", err)
		}
		if err := apply(dir, m); err != nil {
			fatalf("%s: %v", m.name, err)
		}
		start := time.Now()
		out, err := goTest(dir, m.check, *timeout)
		took := time.Since(start).Round(100 * time.Millisecond)
		if bytes.Contains(out, []byte("[build failed]")) || bytes.Contains(out, []byte("[setup failed]")) {
			fatalf("%s: the mutant does not build, so it proves nothing; fix its edits:\n%s", m.name, out)
		}
		if err != nil {
			results[i] = fmt.Sprintf("caught (%v)", took)
			fmt.Printf("%-36s caught in %v: %s\n", m.name, took, firstFailure(out))
		} else {
			results[i] = "NOT CAUGHT"
			survived++
			fmt.Printf("%-36s NOT CAUGHT: the check passed with the bug in\n", m.name)
		}
		os.RemoveAll(dir)
	}
	fmt.Println()
	printTable(chosen, results)
	if survived > 0 {
		fmt.Printf("\n%d of %d mutants not caught\n", survived, len(chosen))
		os.Exit(1)
	}
	fmt.Printf("\nall %d mutants caught\n", len(chosen))
}

func printTable(ms []mutant, results []string) {
	fmt.Println("| mutant | bug | check | result |")
	fmt.Println("|---|---|---|---|")
	for i, m := range ms {
		r := ""
		if results != nil {
			r = results[i]
		}
		env := strings.Join(m.check.env, " ")
		if env != "" {
			env += " "
		}
		fmt.Printf("| %s | %s | %s: `%sgo test %s` | %s |\n", m.name, m.bug, m.check.what, env, strings.Join(m.check.args, " "), r)
	}
}

// copyModule copies the files git knows (tracked, or untracked and not
// ignored) from root to dir.
func copyModule(root, dir string) error {
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %v", err)
	}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		data, err := os.ReadFile(filepath.Join(root, name))
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// apply makes m's edits in the copy at dir.
func apply(dir string, m mutant) error {
	path := filepath.Join(dir, m.file)
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(data)
	for _, e := range m.edits {
		if n := strings.Count(s, e.old); n != 1 {
			return fmt.Errorf("%s: the text to replace occurs %d times, want once (has the code changed? update the table):\n%s", m.file, n, e.old)
		}
		s = strings.Replace(s, e.old, e.new, 1)
	}
	return os.WriteFile(path, []byte(s), 0o644)
}

// goTest runs c in dir, uncached, with a time limit.
func goTest(dir string, c check, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout+30*time.Second)
	defer cancel()
	full := append([]string{"test", "-count=1", "-timeout", timeout.String()}, c.args...)
	cmd := exec.CommandContext(ctx, "go", full...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), c.env...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	return buf.Bytes(), err
}

// firstFailure returns the first line of out that says what failed.
func firstFailure(out []byte) string {
	for _, line := range strings.Split(string(out), "\n") {
		for _, key := range []string{"lost wake-up", "stall", "deadlock", "failed:", "panic:", "Error", "error", "want", "--- FAIL"} {
			if strings.Contains(line, key) {
				line = strings.TrimSpace(line)
				if len(line) > 160 {
					line = line[:160] + "…"
				}
				return line
			}
		}
	}
	return "(see go test's output)"
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "mutants: "+format+"\n", args...)
	os.Exit(2)
}
