package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The end-to-end tests build the command and run it, and the go command, on
// copies of the program written for errgroup in examples/errgroupapp and of
// testdata/wsgroupapp, made modules whose github.com/go-steal/steal is this
// repository.

func TestEndToEnd(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "wsgroup")); err != nil {
		t.Fatalf("repository root %s: %v", root, err)
	}
	bin := filepath.Join(t.TempDir(), "wsgroupcheck")
	goCmd(t, ".", nil, "build", "-o", bin, ".")

	t.Run("fix", func(t *testing.T) {
		t.Parallel()
		dir := copyApp(t, errgroupApp(root), root, "golang.org/x/sync v0.24.0")
		want, err := os.ReadFile(filepath.Join("testdata", "errgroupapp.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if got := goCmd(t, dir, nil, "run", "."); got != string(want) {
			t.Fatalf("errgroup version printed %q, want %q", got, want)
		}

		if out, err := command(dir, nil, bin, "-fix", "./..."); err != nil {
			t.Fatalf("wsgroupcheck -fix ./...: %v\n%s", err, out)
		}
		src, err := os.ReadFile(filepath.Join(dir, "main.go"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(src, []byte(`errgroup "github.com/go-steal/steal/wsgroup"`)) ||
			bytes.Contains(src, []byte(`"golang.org/x/sync/errgroup"`)) {
			t.Fatalf("import not rewritten by -fix:\n%s", src)
		}

		goCmd(t, dir, []string{"GOFLAGS=-mod=mod"}, "mod", "tidy")
		goCmd(t, dir, nil, "build", "-o", "app", ".")
		got, err := command(dir, nil, filepath.Join(dir, "app"))
		if err != nil {
			t.Fatalf("migrated program: %v\n%s", err, got)
		}
		if got != string(want) {
			t.Errorf("migrated program printed %q, want %q", got, want)
		}
		if out, err := command(dir, nil, bin, "./..."); err != nil || out != "" {
			t.Errorf("wsgroupcheck ./... after -fix: %v\n%s", err, out)
		}
	})

	t.Run("vet errgroup", func(t *testing.T) {
		t.Parallel()
		dir := copyApp(t, errgroupApp(root), root, "golang.org/x/sync v0.24.0")
		out, err := command(dir, nil, "go", "vet", "-vettool="+bin, "./...")
		if err == nil {
			t.Fatalf("go vet succeeded; want it to fail with the diagnostic:\n%s", out)
		}
		want := fmt.Sprintf(`main.go:%d:2: errgroup can be replaced by wsgroup by changing this import to errgroup "github.com/go-steal/steal/wsgroup"`,
			importLine(t, filepath.Join(dir, "main.go"), `"golang.org/x/sync/errgroup"`))
		if !strings.Contains(out, want) || !strings.Contains(out, migrateURL+"the-one-line-change") {
			t.Errorf("go vet output lacks %q:\n%s", want, out)
		}
	})

	t.Run("vet wsgroup", func(t *testing.T) {
		t.Parallel()
		dir := copyApp(t, filepath.Join("testdata", "wsgroupapp"), root)
		out, err := command(dir, nil, "go", "vet", "-vettool="+bin, "./...")
		if err == nil {
			t.Fatalf("go vet succeeded; want it to fail with diagnostics:\n%s", out)
		}
		for _, want := range []string{
			"main.go:19:3: runtime.LockOSThread without runtime.UnlockOSThread in a task",
			"main.go:22:2: SetLimit on g after a Go on it (line 18)",
			"main.go:24:3: runtime.Goexit in a task",
			"main.go:30:4: this For body receives from ch",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("go vet output lacks %q:\n%s", want, out)
			}
		}
		// Profiler labels carry over to a task and are restored after it,
		// as under errgroup: pprof.SetGoroutineLabels in a task is fine.
		if strings.Contains(out, "SetGoroutineLabels") {
			t.Errorf("go vet reported pprof.SetGoroutineLabels in a task:\n%s", out)
		}
	})
}

// importLine returns the line of file on which the import path quoted
// appears first.
func importLine(t *testing.T, file, quoted string) int {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(src, []byte(quoted))
	if i < 0 {
		t.Fatalf("%s does not import %s", file, quoted)
	}
	return 1 + bytes.Count(src[:i], []byte("\n"))
}

// errgroupApp is the directory of the example program written for errgroup.
func errgroupApp(root string) string { return filepath.Join(root, "examples", "errgroupapp") }

// copyApp copies the main.go of the directory from into a new module in a
// temporary directory, requiring the modules given and this repository, and
// runs go mod tidy there, as the module's author would have.
func copyApp(t *testing.T, from, root string, require ...string) string {
	t.Helper()
	dir := t.TempDir()
	name := filepath.Base(from)
	src, err := os.ReadFile(filepath.Join(from, "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	gomod := "module example.com/" + name + "\n\ngo 1.26.0\n\n" +
		"require github.com/go-steal/steal v0.0.0-00010101000000-000000000000\n"
	for _, r := range require {
		gomod += "require " + r + "\n"
	}
	gomod += "\nreplace github.com/go-steal/steal => " + root + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	goCmd(t, dir, []string{"GOFLAGS=-mod=mod"}, "mod", "tidy")
	return dir
}

// goCmd runs the go command in dir and returns its standard output, failing
// the test if it fails.
func goCmd(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	out, err := command(dir, env, "go", args...)
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// command runs name in dir, with env added to the environment, and returns
// its output; standard error is included only when it fails, so that a
// command's warnings do not spoil the comparison of what it prints.
func command(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append([]string{"GOWORK=off"}, env...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String() + stderr.String(), err
	}
	return stdout.String(), nil
}
