package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/go-steal/steal/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(testkit.Settled(m)) }

// TestTableApplies: every edit of the table finds its text exactly once in
// today's code, so the table cannot go stale unnoticed when the code it
// breaks changes (running the mutants takes minutes; this takes none).
func TestTableApplies(t *testing.T) {
	root := filepath.Join("..", "..")
	names := map[string]bool{}
	for _, m := range mutants {
		if names[m.name] {
			t.Errorf("two mutants named %s", m.name)
		}
		names[m.name] = true
		data, err := os.ReadFile(filepath.Join(root, m.file))
		if err != nil {
			t.Errorf("%s: %v", m.name, err)
			continue
		}
		s := string(data)
		for _, e := range m.edits {
			if n := strings.Count(s, e.old); n != 1 {
				t.Errorf("%s: %s holds the text to replace %d times, want once:\n%s", m.name, m.file, n, e.old)
				continue
			}
			s = strings.Replace(s, e.old, e.new, 1)
		}
		if s == string(data) {
			t.Errorf("%s: the edits change nothing", m.name)
		}
	}
}
