package wsgroup_test

import (
	"flag"
	"os"
	"testing"
	"time"
)

// TestExamplesTerminate runs every example under the hang guard before go
// test runs them as examples (tests run first), with their output discarded.
// Examples have no *testing.T, so a deadlocked example would otherwise hang
// the whole run until -timeout. If one hangs, this test fails with a goroutine
// dump and sets -test.skip so that the examples are not run again (they would
// hang the same way); their output is still checked on every run in which they
// terminate.
func TestExamplesTerminate(t *testing.T) {
	examples := []struct {
		name string
		f    func()
	}{
		{"ExampleGroup_justErrors", ExampleGroup_justErrors},
		{"ExampleGroup_parallel", ExampleGroup_parallel},
		{"ExampleGroup_pipeline", ExampleGroup_pipeline},
		{"ExampleWithContext", ExampleWithContext},
		{"ExampleGroup_Go", ExampleGroup_Go},
		{"ExampleGroup_TryGo", ExampleGroup_TryGo},
		{"ExampleGroup_SetLimit", ExampleGroup_SetLimit},
		{"ExampleGroup_Wait", ExampleGroup_Wait},
		{"ExampleGroup_forkJoin", ExampleGroup_forkJoin},
		{"ExampleGroup_recursive", ExampleGroup_recursive},
		{"ExampleGroup_SetPanicMode", ExampleGroup_SetPanicMode},
		{"ExampleGroup_SetCancelMode", ExampleGroup_SetCancelMode},
	}
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The testing package keeps its own reference to the original stdout, so
	// test output is not affected by the swap.
	stdout := os.Stdout
	os.Stdout = devNull
	restore := func() { os.Stdout = stdout }
	defer restore()

	for _, ex := range examples {
		done := make(chan struct{})
		go func() {
			defer close(done)
			ex.f()
		}()
		timer := time.NewTimer(hangTimeout())
		select {
		case <-done:
			timer.Stop()
		case <-timer.C:
			// The example's goroutine is abandoned (and keeps devNull
			// open); the run has failed anyway.
			restore()
			abandoned.Store(true)
			if f := flag.Lookup("test.skip"); f != nil && f.Value.String() == "" {
				f.Value.Set("^Example")
			}
			t.Fatalf("hang: %s still not finished after %v (examples will be skipped); all goroutines:\n%s",
				ex.name, hangTimeout(), allStacks())
		}
	}
	devNull.Close()
}
