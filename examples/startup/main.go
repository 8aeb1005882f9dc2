// Command startup measures what wsgroup costs a program at start-up, as
// whole processes: it builds four small programs against this checkout,
//
//   - none: an empty main, which imports nothing;
//   - errgroup: the same with golang.org/x/sync/errgroup imported (and
//     never used): the program before it moves to wsgroup;
//   - import: the same with wsgroup imported instead (and never used);
//   - use: one Group, one Go and one Wait in main;
//
// runs them in turn (none, errgroup, import, use, none, ...) -n times
// each, and prints each one's median and 90th percentile wall time from
// fork to exit, and the differences of the medians: what importing
// wsgroup adds to a program that never uses it, against one that imports
// nothing and one that imports errgroup, and what one Go and Wait add on
// top. BENCHMARKS.md states the goals and the figures.
//
// Usage, from the repository root:
//
//	go run ./examples/startup            # 200 runs of each
//	go run ./examples/startup -n 1000
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// programs are the four mains, by name.
var programs = []struct{ name, src string }{
	{"none", "package main\n\nfunc main() {}\n"},
	{"errgroup", "package main\n\nimport _ \"golang.org/x/sync/errgroup\"\n\nfunc main() {}\n"},
	{"import", "package main\n\nimport _ \"github.com/go-steal/steal/wsgroup\"\n\nfunc main() {}\n"},
	{"use", `package main

import "github.com/go-steal/steal/wsgroup"

func main() {
	var g wsgroup.Group
	ran := false
	g.Go(func() error { ran = true; return nil })
	if err := g.Wait(); err != nil || !ran {
		panic("the task did not run")
	}
}
`},
}

func main() {
	n := flag.Int("n", 200, "runs of each program")
	flag.Parse()
	if err := run(*n); err != nil {
		fmt.Fprintln(os.Stderr, "startup:", err)
		os.Exit(1)
	}
}

func run(n int) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "startup")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bins, err := build(root, dir)
	if err != nil {
		return err
	}
	times := make([][]time.Duration, len(bins))
	for range n {
		for i, bin := range bins {
			d, err := timeRun(bin)
			if err != nil {
				return fmt.Errorf("%s: %w", programs[i].name, err)
			}
			times[i] = append(times[i], d)
		}
	}
	med := make([]time.Duration, len(times))
	fmt.Printf("%d runs of each, in turn\n\n| program | median | p90 |\n|---|---|---|\n", n)
	for i, ts := range times {
		slices.Sort(ts)
		med[i] = ts[len(ts)/2]
		fmt.Printf("| %s | %v | %v |\n", programs[i].name, round(med[i]), round(ts[len(ts)*9/10]))
	}
	fmt.Printf("\nimporting wsgroup adds %v to a program that imports nothing, %v to one that imports errgroup instead;\n",
		round(med[2]-med[0]), round(med[2]-med[1]))
	fmt.Printf("one Go and Wait in main add %v more\n", round(med[3]-med[2]))
	return nil
}

// moduleRoot returns the directory of this repository's go.mod: the
// current directory or one above it.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(b), "module github.com/go-steal/steal\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run this from inside the steal repository")
		}
		dir = parent
	}
}

// build writes a module with the four mains into dir, requiring this
// checkout of the library (its go.sum copied, so that nothing is fetched),
// and builds them; it returns the binaries' paths, in the order of
// programs.
func build(root, dir string) ([]string, error) {
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		return nil, err
	}
	mod := "module startup\n\ngo 1.26\n\nrequire github.com/go-steal/steal v0.0.0\n\nreplace github.com/go-steal/steal => " + root + "\n"
	files := map[string]string{"go.mod": mod, "go.sum": string(sum)}
	for _, p := range programs {
		files[filepath.Join(p.name, "main.go")] = p.src
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return nil, err
		}
	}
	tidy := exec.Command("go", "mod", "tidy")
	tidy.Dir = dir
	if out, err := tidy.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go mod tidy: %v\n%s", err, out)
	}
	var bins []string
	for _, p := range programs {
		bin := filepath.Join(dir, "bin", p.name)
		cmd := exec.Command("go", "build", "-o", bin, "./"+p.name)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build %s: %v\n%s", p.name, err, out)
		}
		bins = append(bins, bin)
	}
	return bins, nil
}

// timeRun runs bin once and returns its wall time, from the start of the
// process to its exit.
func timeRun(bin string) (time.Duration, error) {
	start := time.Now()
	out, err := exec.Command(bin).CombinedOutput()
	d := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("%v\n%s", err, out)
	}
	return d, nil
}

// round rounds d to microseconds.
func round(d time.Duration) time.Duration { return d.Round(time.Microsecond) }
