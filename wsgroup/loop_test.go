package wsgroup_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-steal/steal/internal/testkit"
	"github.com/go-steal/steal/wsgroup"
)

// loopSizes are the lengths the exactly-once tests run: the edges around
// the number of ranges (P-1, P, P+1), primes, and a long one.
func loopSizes() []int {
	p := runtime.GOMAXPROCS(0)
	sizes := []int{0, 1, 2, 3, p - 1, p, p + 1, 7, 13, 97, 1009, 10007}
	return append(sizes, testkit.Scale(1_000_003, 100_003))
}

func TestForRunsEveryIndexOnce(t *testing.T) {
	testkit.ForProcs(t, func(t *testing.T) {
		testkit.Guard(t, func() {
			for _, n := range loopSizes() {
				h := make(loopHits, n)
				wantNil(t, fmt.Sprintf("For(%d)", n), wsgroup.For(context.Background(), n, h.body))
				h.check(t, fmt.Sprintf("For(%d)", n))
			}
		})
		testkit.VerifyNone(t)
	})
}

// Many loops at once, from outside the pool and from tasks, share the
// workers; each still runs each of its indices once.
func TestForConcurrentLoops(t *testing.T) {
	testkit.ForProcs(t, func(t *testing.T) {
		testkit.Guard(t, func() {
			const loops = 16
			n := testkit.Scale(20_000, 2_000)
			hits := make([]loopHits, 2*loops)
			var wg sync.WaitGroup
			var g wsgroup.Group
			for j := range hits {
				hits[j] = make(loopHits, n)
				run := func() error { return wsgroup.For(context.Background(), n, hits[j].body) }
				if j%2 == 0 {
					wg.Go(func() {
						if err := run(); err != nil {
							t.Errorf("For from outside = %v", err)
						}
					})
				} else {
					g.Go(run)
				}
			}
			wg.Wait()
			if err := g.Wait(); err != nil {
				t.Errorf("For in a task = %v", err)
			}
			for j := range hits {
				hits[j].check(t, fmt.Sprintf("loop %d", j))
			}
		})
	})
}

func TestForNested(t *testing.T) {
	testkit.ForProcs(t, func(t *testing.T) {
		testkit.Guard(t, func() {
			outer, inner := testkit.Scale(200, 50), testkit.Scale(2_000, 300)
			h := make(loopHits, outer*inner)
			err := wsgroup.For(context.Background(), outer, func(ctx context.Context, i int) error {
				return wsgroup.For(ctx, inner, func(ctx context.Context, j int) error {
					return h.body(ctx, i*inner+j)
				})
			})
			if err != nil {
				t.Errorf("nested For = %v", err)
			}
			h.check(t, "nested For")
		})
	})
}

// A loop in each of several concurrent requests of a fork-join, each
// request a group with a nested group per task, as a service runs it.
func TestForInsideForkJoin(t *testing.T) {
	testkit.ForProcs(t, func(t *testing.T) {
		testkit.Guard(t, func() {
			requests, fanout, n := 8, 4, testkit.Scale(5_000, 500)
			hits := make([]loopHits, requests*fanout)
			var wg sync.WaitGroup
			for r := range requests {
				wg.Go(func() {
					var g wsgroup.Group
					for k := range fanout {
						h := make(loopHits, n)
						hits[r*fanout+k] = h
						g.Go(func() error {
							var inner wsgroup.Group
							inner.Go(func() error { return wsgroup.For(context.Background(), n, h.body) })
							return inner.Wait()
						})
					}
					if err := g.Wait(); err != nil {
						t.Errorf("request %d: %v", r, err)
					}
				})
			}
			wg.Wait()
			for j, h := range hits {
				h.check(t, fmt.Sprintf("loop %d", j))
			}
		})
	})
}

func TestForEachAndMap(t *testing.T) {
	testkit.Guard(t, func() {
		s := make([]int, testkit.Scale(100_000, 10_000))
		for i := range s {
			s[i] = i
		}
		if err := wsgroup.ForEach(context.Background(), s, func(_ context.Context, e *int) error {
			*e *= 2
			return nil
		}); err != nil {
			t.Fatalf("ForEach = %v", err)
		}
		got, err := wsgroup.Map(context.Background(), s, func(_ context.Context, e *int) (string, error) {
			return fmt.Sprint(*e + 1), nil
		})
		if err != nil {
			t.Fatalf("Map = %v", err)
		}
		if len(got) != len(s) {
			t.Fatalf("Map returned %d results for %d elements", len(got), len(s))
		}
		for i := range s {
			if s[i] != 2*i || got[i] != fmt.Sprint(2*i+1) {
				t.Fatalf("element %d: ForEach left %d (want %d), Map gave %q (want %q)", i, s[i], 2*i, got[i], fmt.Sprint(2*i+1))
			}
		}
		// Map on a failing loop: the failed element's result is the zero value.
		errOdd := errors.New("odd")
		nums, err := wsgroup.Map(context.Background(), []int{2, 3}, func(_ context.Context, e *int) (int, error) {
			if *e%2 == 1 {
				return -1, errOdd
			}
			return *e, nil
		})
		if err != errOdd || len(nums) != 2 || nums[1] != 0 || nums[0] != 0 && nums[0] != 2 {
			t.Fatalf("Map with a failing element = %v, %v; want errOdd, and no result for the failed element", nums, err)
		}
	})
}

func TestForMisuse(t *testing.T) {
	for _, c := range []struct {
		name string
		call func()
		want string
	}{
		{"For nil body", func() { wsgroup.For(context.Background(), 0, nil) }, "wsgroup: For called with a nil body"},
		{"ForEach nil", func() { wsgroup.ForEach[int](context.Background(), nil, nil) }, "wsgroup: ForEach called with a nil function"},
		{"Map nil", func() { wsgroup.Map[int, int](context.Background(), nil, nil) }, "wsgroup: Map called with a nil function"},
		{"bad mode", func() {
			wsgroup.For(context.Background(), 1, loopHits(make([]atomic.Int32, 1)).body, wsgroup.PanicMode(7))
		}, "wsgroup: For called with unknown panic mode 7"},
	} {
		v, panicked := testkit.Recover(c.call)
		if !panicked || fmt.Sprint(v) != c.want {
			t.Errorf("%s: panicked=%v with %v, want a panic %q", c.name, panicked, v, c.want)
		}
	}
	// n <= 0 calls nothing and returns nil, whatever the context.
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, n := range []int{0, -1} {
		if err := wsgroup.For(canceled, n, func(context.Context, int) error {
			t.Error("body called for n <= 0")
			return nil
		}); err != nil {
			t.Errorf("For(%d) = %v, want nil", n, err)
		}
	}
}

// failAtZero is a loop whose index 0 fails with err while every other body
// that starts waits for the loop's context to be canceled: each range's
// first body blocks until the failure, so the loop only finishes if the
// index 0 runs although every other task of the loop is blocked (the pool
// adds a worker for it), and afterwards no other index may start.
func failAtZero(t *testing.T, fail func(ctx context.Context) error, opts ...wsgroup.LoopOption) (started int64, causes []error, err error) {
	t.Helper()
	n := 1000 * runtime.GOMAXPROCS(0)
	var mu sync.Mutex
	var count atomic.Int64
	err = wsgroup.For(context.Background(), n, func(ctx context.Context, i int) error {
		count.Add(1)
		if i == 0 {
			return fail(ctx)
		}
		<-ctx.Done()
		mu.Lock()
		causes = append(causes, context.Cause(ctx))
		mu.Unlock()
		return nil
	}, opts...)
	return count.Load(), causes, err
}

func TestForFirstErrorCancels(t *testing.T) {
	testkit.ForProcs(t, func(t *testing.T) {
		testkit.Guard(t, func() {
			errZero := errors.New("index 0 failed")
			started, causes, err := failAtZero(t, func(context.Context) error { return errZero })
			if err != errZero {
				t.Errorf("For = %v, want the body's error", err)
			}
			// Every range's first body blocks until index 0 fails, and no
			// index starts after: at most one body per range.
			if p := int64(runtime.GOMAXPROCS(0)); started > p {
				t.Errorf("%d bodies started, want at most %d (one per range): indices started after the failure", started, p)
			}
			for _, c := range causes {
				if c != errZero {
					t.Errorf("a body saw its context canceled with cause %v, want the failure", c)
				}
			}
		})
	})
}

func TestForParentCancel(t *testing.T) {
	testkit.ForProcs(t, func(t *testing.T) {
		testkit.Guard(t, func() {
			parent, cancel := context.WithCancelCause(context.Background())
			errStop := errors.New("stop")
			n := 1000 * runtime.GOMAXPROCS(0)
			var started atomic.Int64
			err := wsgroup.For(parent, n, func(ctx context.Context, i int) error {
				started.Add(1)
				if i == 0 {
					cancel(errStop)
				}
				<-ctx.Done()
				return nil
			})
			if err != errStop {
				t.Errorf("For with its context canceled = %v, want the context's cause", err)
			}
			if s, p := started.Load(), int64(runtime.GOMAXPROCS(0)); s > p {
				t.Errorf("%d bodies started, want at most %d: indices started after the cancellation", s, p)
			}
			// Canceled before it starts: no body runs.
			started.Store(0)
			err = wsgroup.For(parent, n, func(context.Context, int) error { started.Add(1); return nil })
			if err != errStop || started.Load() != 0 {
				t.Errorf("For on a canceled context = %v after %d bodies, want its cause and none", err, started.Load())
			}
		})
	})
}

func TestForPanicInWait(t *testing.T) {
	testkit.ForProcs(t, func(t *testing.T) {
		testkit.Guard(t, func() {
			var err error
			var started int64
			v, panicked := testkit.Recover(func() {
				started, _, err = failAtZero(t, func(context.Context) error { panic(errPanicValue) }, wsgroup.PanicInWait)
			})
			pe, ok := v.(*wsgroup.PanicError)
			if !panicked || !ok || pe.Value != errPanicValue || !errors.Is(pe, errPanicValue) {
				t.Fatalf("For with a panicking body in PanicInWait mode panicked=%v with %v (returned %v), want a *PanicError of the value", panicked, v, err)
			}
			if !strings.Contains(string(pe.Stack), "wsgroup_test.TestForPanicInWait") {
				t.Errorf("the PanicError's stack does not show the body:\n%s", pe.Stack)
			}
			if p := int64(runtime.GOMAXPROCS(0)); started > p {
				t.Errorf("%d bodies started, want at most %d: indices started after the panic", started, p)
			}
		})
	})
}

const loopPanicChildEnv = "WSGROUP_LOOP_PANIC_CHILD"

func TestForPanicChild(t *testing.T) {
	if os.Getenv(loopPanicChildEnv) == "" {
		return // only ever runs as a child
	}
	wsgroup.For(context.Background(), 1000, func(_ context.Context, i int) error {
		if i == 500 {
			panicInTask()
		}
		return nil
	})
	os.Stdout.WriteString("NO CRASH\n")
	os.Exit(0)
}

// By default a body's panic crashes the program with the body's stack, as
// a task's panic does.
func TestForPanicCrashes(t *testing.T) {
	s := testkit.CrashChild(t, "TestForPanicChild", loopPanicChildEnv+"=1")
	for _, want := range []string{"panic: " + errPanicValue.Error(), "wsgroup_test.panicInTask", "wsgroup_test.TestForPanicChild"} {
		if !strings.Contains(s, want) {
			t.Errorf("crash output lacks %q; output:\n%s", want, s)
		}
	}
	if strings.Contains(s, "NO CRASH") {
		t.Errorf("the child went on after the panic; output:\n%s", s)
	}
}

// A body that calls runtime.Goexit (t.FailNow does) ends as if it returned
// nil: the loop runs every other index, including the rest of the run of
// indices the exiting body's task had taken. A body that ran on the
// goroutine of For ends that goroutine too, once the loop has finished, as
// a task run by Wait does; so For runs on a goroutine of its own here, and
// the check does not depend on whether For returned.
func TestForGoexit(t *testing.T) {
	testkit.ForProcs(t, func(t *testing.T) {
		n := testkit.Scale(100_000, 10_000)
		h := make(loopHits, n)
		var exits atomic.Int32
		// A Goexit in a body run by For's caller ends that goroutine once
		// the loop is done; the counts below hold either way.
		guardOnOwnGoroutine(t, func() {
			wantNil(t, "For", wsgroup.For(context.Background(), n, func(ctx context.Context, i int) error {
				h.body(ctx, i)
				if i%1000 == 999 {
					exits.Add(1)
					runtime.Goexit()
				}
				return nil
			}))
		})
		if got, want := exits.Load(), int32(n/1000); got != want {
			t.Errorf("%d bodies called Goexit, want %d", got, want)
		}
		h.check(t, "For with Goexits")
	})
}

// Bodies that block (sleep, or wait for a nested group whose task sleeps)
// leave their CPUs idle; the loop still finishes, and every index runs.
func TestForBlockingBodies(t *testing.T) {
	testkit.ForProcs(t, func(t *testing.T) {
		testkit.Guard(t, func() {
			n := 8 * runtime.GOMAXPROCS(0)
			h := make(loopHits, n)
			err := wsgroup.For(context.Background(), n, func(ctx context.Context, i int) error {
				if i%2 == 0 {
					time.Sleep(time.Millisecond)
				} else {
					var g wsgroup.Group
					g.Go(func() error { time.Sleep(time.Millisecond); return nil })
					if err := g.Wait(); err != nil {
						return err
					}
				}
				return h.body(ctx, i)
			})
			if err != nil {
				t.Errorf("For = %v", err)
			}
			h.check(t, "For with blocking bodies")
		})
	})
}
