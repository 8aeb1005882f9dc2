package wsgroup_test

// Bad input gets a clear panic at the call site, prefixed "wsgroup: "
// errgroup does not do this (Go(nil) crashes inside the new
// goroutine), so these tests are wsgroup-only.

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/go-steal/steal/internal/testkit"
	"github.com/go-steal/steal/wsgroup"
)

func wantMisusePanic(t *testing.T, what string, f func()) {
	t.Helper()
	var v any
	var panicked bool
	testkit.Guard(t, func() { v, panicked = testkit.Recover(f) })
	if !panicked {
		t.Errorf("%s did not panic", what)
		return
	}
	msg := fmt.Sprint(v)
	if err, ok := v.(error); ok {
		msg = err.Error()
	}
	if !strings.HasPrefix(msg, panicPrefix) {
		t.Errorf("%s panicked with %q, want a message starting with %q", what, msg, panicPrefix)
	}
}

func TestGoNilPanics(t *testing.T) {
	for _, limit := range []int{-1, 1} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			var g wsgroup.Group
			g.SetLimit(limit)
			wantMisusePanic(t, "Go(nil)", func() { g.Go(nil) })
			wantMisusePanic(t, "TryGo(nil)", func() { g.TryGo(nil) })
			// The nil tasks were not counted: the group still works and
			// Wait returns.
			testkit.Guard(t, func() { runTasks(t, &g, 10, func() {}) })
		})
	}
}

func TestGoNilFromTaskPanics(t *testing.T) {
	// The panic happens at the call site, inside the task; the task recovers
	// it, and nothing is left behind.
	var g wsgroup.Group
	var inner any
	var innerPanicked bool
	testkit.Guard(t, func() {
		g.Go(func() error {
			inner, innerPanicked = testkit.Recover(func() { g.Go(nil) })
			return nil
		})
		wantNil(t, "Wait()", g.Wait())
	})
	if !innerPanicked {
		t.Fatalf("Go(nil) inside a task did not panic")
	}
	if msg := fmt.Sprint(inner); !strings.HasPrefix(msg, panicPrefix) {
		t.Errorf("Go(nil) inside a task panicked with %q, want a message starting with %q", msg, panicPrefix)
	}
}

func TestNilGroupPanics(t *testing.T) {
	var g *wsgroup.Group
	ok := func() error { return nil }
	wantMisusePanic(t, "(*Group)(nil).Go", func() { g.Go(ok) })
	wantMisusePanic(t, "(*Group)(nil).TryGo", func() { g.TryGo(ok) })
	wantMisusePanic(t, "(*Group)(nil).SetLimit", func() { g.SetLimit(1) })
	wantMisusePanic(t, "(*Group)(nil).Wait", func() { g.Wait() })
	wantMisusePanic(t, "(*Group)(nil).SetPanicMode", func() { g.SetPanicMode(wsgroup.PanicInWait) })
	wantMisusePanic(t, "(*Group)(nil).SetCancelMode", func() { g.SetCancelMode(wsgroup.SkipQueued) })
}

// TestModesWhileActivePanic: the modes, like the limit, are fixed while
// tasks are active; unknown modes are refused.
func TestModesWhileActivePanic(t *testing.T) {
	var g wsgroup.Group
	release := make(chan struct{})
	testkit.Guard(t, func() {
		g.Go(func() error { <-release; return nil })
		wantMisusePanic(t, "SetPanicMode while active", func() { g.SetPanicMode(wsgroup.PanicInWait) })
		wantMisusePanic(t, "SetCancelMode while active", func() { g.SetCancelMode(wsgroup.SkipQueued) })
		close(release)
		wantNil(t, "Wait()", g.Wait())
		// Between batches they may change again.
		g.SetPanicMode(wsgroup.PanicInWait)
		g.SetCancelMode(wsgroup.SkipQueued)
	})
	wantMisusePanic(t, "SetPanicMode(7)", func() { g.SetPanicMode(7) })
	wantMisusePanic(t, "SetCancelMode(-1)", func() { g.SetCancelMode(-1) })
}

// TestGroupIsNoCopy: go vet's copylocks check reports copies of a Group.
// vet flags a copied value whose type, or the type of one of
// its fields (recursively), has Lock and Unlock methods on its pointer.
func TestGroupIsNoCopy(t *testing.T) {
	var hasLocker func(typ reflect.Type, depth int) bool
	hasLocker = func(typ reflect.Type, depth int) bool {
		if depth > 8 {
			return false
		}
		ptr := reflect.PointerTo(typ)
		_, lock := ptr.MethodByName("Lock")
		_, unlock := ptr.MethodByName("Unlock")
		if lock && unlock {
			return true
		}
		switch typ.Kind() {
		case reflect.Struct:
			for i := 0; i < typ.NumField(); i++ {
				if hasLocker(typ.Field(i).Type, depth+1) {
					return true
				}
			}
		case reflect.Array:
			return typ.Len() > 0 && hasLocker(typ.Elem(), depth+1)
		}
		return false
	}
	if !hasLocker(reflect.TypeFor[wsgroup.Group](), 0) {
		t.Errorf("wsgroup.Group holds no field with Lock/Unlock methods: go vet cannot report copies")
	}
}
