package adapter_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/go-steal/steal/adapter"
	"github.com/go-steal/steal/internal/testkit"
	"github.com/go-steal/steal/wsgroup"
)

var kinds = []adapter.Kind{adapter.Errgroup, adapter.Wsgroup}

func TestNewPicksTheImplementation(t *testing.T) {
	if _, ok := adapter.New(adapter.Errgroup).(*errgroup.Group); !ok {
		t.Errorf("New(Errgroup) is not an *errgroup.Group")
	}
	if _, ok := adapter.New(adapter.Wsgroup).(*wsgroup.Group); !ok {
		t.Errorf("New(Wsgroup) is not a *wsgroup.Group")
	}
	g, _ := adapter.WithContext(adapter.Wsgroup, context.Background())
	if _, ok := g.(*wsgroup.Group); !ok {
		t.Errorf("WithContext(Wsgroup) is not a *wsgroup.Group")
	}
	g, _ = adapter.WithContext(adapter.Errgroup, context.Background())
	if _, ok := g.(*errgroup.Group); !ok {
		t.Errorf("WithContext(Errgroup) is not an *errgroup.Group")
	}
}

// The same behaviour checks, through the interface, against both.
func TestBehaviourBothKinds(t *testing.T) {
	errBoom := errors.New("boom")
	checks := []struct {
		name string
		run  func(t *testing.T, k adapter.Kind)
	}{
		{"all tasks run", func(t *testing.T, k adapter.Kind) {
			g := adapter.New(k)
			var n atomic.Int32
			for range 1000 {
				g.Go(func() error { n.Add(1); return nil })
			}
			if err := g.Wait(); err != nil || n.Load() != 1000 {
				t.Errorf("Wait() = %v with %d of 1000 tasks run", err, n.Load())
			}
		}},
		{"first error, context canceled with it", func(t *testing.T, k adapter.Kind) {
			g, ctx := adapter.WithContext(k, context.Background())
			g.Go(func() error { return errBoom })
			g.Go(func() error { <-ctx.Done(); return ctx.Err() })
			if err := g.Wait(); err != errBoom {
				t.Errorf("Wait() = %v, want %v", err, errBoom)
			}
			if c := context.Cause(ctx); c != errBoom {
				t.Errorf("context.Cause = %v, want %v", c, errBoom)
			}
		}},
		{"context canceled by Wait", func(t *testing.T, k adapter.Kind) {
			g, ctx := adapter.WithContext(k, context.Background())
			g.Go(func() error { return nil })
			if err := g.Wait(); err != nil {
				t.Errorf("Wait() = %v", err)
			}
			if ctx.Err() == nil {
				t.Errorf("context not canceled after Wait")
			}
		}},
		{"limit and TryGo", func(t *testing.T, k adapter.Kind) {
			g := adapter.New(k)
			g.SetLimit(2)
			release := make(chan struct{})
			var active, peak atomic.Int32
			task := func() error {
				v := active.Add(1)
				for p := peak.Load(); v > p && !peak.CompareAndSwap(p, v); p = peak.Load() {
				}
				<-release
				active.Add(-1)
				return nil
			}
			for i := range 2 {
				if !g.TryGo(task) {
					t.Errorf("TryGo #%d below the limit = false", i+1)
				}
			}
			if g.TryGo(task) {
				t.Errorf("TryGo at the limit = true")
			}
			close(release)
			for range 20 {
				g.Go(task)
			}
			if err := g.Wait(); err != nil {
				t.Errorf("Wait() = %v", err)
			}
			if p := peak.Load(); p > 2 {
				t.Errorf("%d tasks active at once under SetLimit(2)", p)
			}
		}},
		{"zero limit", func(t *testing.T, k adapter.Kind) {
			g := adapter.New(k)
			g.SetLimit(0)
			if g.TryGo(func() error { return nil }) {
				t.Errorf("TryGo under SetLimit(0) = true")
			}
		}},
		{"wait without tasks", func(t *testing.T, k adapter.Kind) {
			if err := adapter.New(k).Wait(); err != nil {
				t.Errorf("Wait() = %v", err)
			}
		}},
		{"nested groups", func(t *testing.T, k adapter.Kind) {
			var fib func(n int) int
			fib = func(n int) int {
				if n < 2 {
					return n
				}
				g := adapter.New(k)
				var a, b int
				g.Go(func() error { a = fib(n - 1); return nil })
				g.Go(func() error { b = fib(n - 2); return nil })
				if err := g.Wait(); err != nil {
					t.Error(err)
				}
				return a + b
			}
			if got := fib(15); got != 610 {
				t.Errorf("fib(15) = %d, want 610", got)
			}
		}},
		{"wait group", func(t *testing.T, k adapter.Kind) {
			wg := adapter.NewWaitGroup(k)
			var n atomic.Int32
			for range 1000 {
				wg.Go(func() { n.Add(1) })
			}
			wg.Wait()
			if n.Load() != 1000 {
				t.Errorf("%d of 1000 functions ran before Wait returned", n.Load())
			}
		}},
	}
	for _, c := range checks {
		for _, k := range kinds {
			t.Run(c.name+"/"+string(k), func(t *testing.T) {
				testkit.Guard(t, func() { c.run(t, k) })
				testkit.VerifyNone(t)
			})
		}
	}
}

func TestParseKind(t *testing.T) {
	for _, s := range []string{"errgroup", "wsgroup"} {
		if k, err := adapter.ParseKind(s); err != nil || string(k) != s {
			t.Errorf("ParseKind(%q) = %q, %v", s, k, err)
		}
	}
	for _, s := range []string{"", "WSGROUP", "ws", "errgroup "} {
		_, err := adapter.ParseKind(s)
		if err == nil || !strings.Contains(err.Error(), `"errgroup"`) || !strings.Contains(err.Error(), `"wsgroup"`) {
			t.Errorf("ParseKind(%q) error = %v, want one naming both valid kinds", s, err)
		}
	}
}

func TestFromEnv(t *testing.T) {
	t.Run("unset", func(t *testing.T) {
		t.Setenv(adapter.EnvVar, "")
		for _, def := range kinds {
			if k, err := adapter.KindFromEnv(def); err != nil || k != def {
				t.Errorf("KindFromEnv(%q) with %s empty = %q, %v", def, adapter.EnvVar, k, err)
			}
		}
	})
	for _, k := range kinds {
		t.Run(string(k), func(t *testing.T) {
			t.Setenv(adapter.EnvVar, string(k))
			got, err := adapter.KindFromEnv(adapter.Errgroup)
			if err != nil || got != k {
				t.Errorf("KindFromEnv = %q, %v, want %q", got, err, k)
			}
			g, err := adapter.NewFromEnv(adapter.Errgroup)
			if err != nil || fmt.Sprintf("%T", g) != fmt.Sprintf("%T", adapter.New(k)) {
				t.Errorf("NewFromEnv = %T, %v", g, err)
			}
			g, ctx, err := adapter.WithContextFromEnv(adapter.Errgroup, context.Background())
			if err != nil || ctx == nil || fmt.Sprintf("%T", g) != fmt.Sprintf("%T", adapter.New(k)) {
				t.Errorf("WithContextFromEnv = %T, %v, %v", g, ctx, err)
			}
			wg, err := adapter.WaitGroupFromEnv(adapter.Errgroup)
			if err != nil || fmt.Sprintf("%T", wg) != fmt.Sprintf("%T", adapter.NewWaitGroup(k)) {
				t.Errorf("WaitGroupFromEnv = %T, %v", wg, err)
			}
		})
	}
	t.Run("unknown", func(t *testing.T) {
		t.Setenv(adapter.EnvVar, "wsgroupp")
		if _, err := adapter.KindFromEnv(adapter.Wsgroup); err == nil || !strings.Contains(err.Error(), adapter.EnvVar) || !strings.Contains(err.Error(), `"wsgroup"`) {
			t.Errorf("KindFromEnv error = %v, want one naming %s and the valid kinds", err, adapter.EnvVar)
		}
		if g, err := adapter.NewFromEnv(adapter.Wsgroup); err == nil || g != nil {
			t.Errorf("NewFromEnv = %v, %v, want an error and no group", g, err)
		}
		if g, ctx, err := adapter.WithContextFromEnv(adapter.Wsgroup, context.Background()); err == nil || g != nil || ctx != nil {
			t.Errorf("WithContextFromEnv = %v, %v, %v, want an error", g, ctx, err)
		}
		if wg, err := adapter.WaitGroupFromEnv(adapter.Wsgroup); err == nil || wg != nil {
			t.Errorf("WaitGroupFromEnv = %v, %v, want an error", wg, err)
		}
	})
	t.Run("unknown default", func(t *testing.T) {
		t.Setenv(adapter.EnvVar, "")
		if _, err := adapter.NewFromEnv("bogus"); err == nil {
			t.Errorf("NewFromEnv with an unknown default: no error")
		}
	})
}

func TestUnknownKindPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"New":          func() { adapter.New("bogus") },
		"WithContext":  func() { adapter.WithContext("bogus", context.Background()) },
		"NewWaitGroup": func() { adapter.NewWaitGroup("bogus") },
	} {
		func() {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.HasPrefix(s, "adapter: ") || !strings.Contains(s, "bogus") {
					t.Errorf("%s with an unknown kind panicked with %v, want an adapter: message naming it", name, r)
				}
			}()
			f()
		}()
	}
}
