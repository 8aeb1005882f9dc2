package wsgroup_test

import (
	"os"
	"testing"

	"github.com/go-steal/steal/internal/testkit"
)

// TestExamplesTerminate runs every example under the hang guard before go
// test runs them as examples (tests run first), with their output discarded.
// Examples have no *testing.T, so a deadlocked example would otherwise hang
// the whole run until -timeout; under the guard it ends the test binary
// with a dump of every goroutine. Their output is checked when go test
// runs them as examples.
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
		{"ExampleFor", ExampleFor},
		{"ExampleFor_error", ExampleFor_error},
		{"ExampleMap", ExampleMap},
		{"ExampleForEach", ExampleForEach},
		{"ExampleFor_panicInWait", ExampleFor_panicInWait},
		{"ExampleReadStats", ExampleReadStats},
	}
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The testing package keeps its own reference to the original stdout, so
	// test output is not affected by the swap.
	stdout := os.Stdout
	os.Stdout = devNull
	defer func() { os.Stdout = stdout }()

	for _, ex := range examples {
		t.Run(ex.name, func(t *testing.T) { testkit.Guard(t, ex.f) })
	}
	devNull.Close()
}
