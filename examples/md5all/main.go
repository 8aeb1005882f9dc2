// Command md5all computes the MD5 sum of every regular file below a
// directory with a pipeline of bounded parallelism, the MD5All of the Go
// blog's "Go Concurrency Patterns: Pipelines" written with a wsgroup.Group:
// one task walks the tree and sends paths on an unbuffered channel, 20
// tasks read and hash files, and a goroutine waits for the group and closes
// the results channel while main collects.
//
// It runs the same pipeline with golang.org/x/sync/errgroup too, checks that
// both saw the same files with the same sums, and prints the number of
// files, their total size, a digest of all the sums (compare it with
// another run or machine) and the time each took.
//
// Usage:
//
//	go run ./examples/md5all              # the Go standard library's source tree
//	go run ./examples/md5all DIR
package main

import (
	"context"
	"crypto/md5"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/go-steal/steal/wsgroup"
)

const digesters = 20

type result struct {
	path string
	sum  [md5.Size]byte
	size int
}

// group is what the pipeline needs of a group: both errgroup's and
// wsgroup's have it.
type group interface {
	Go(func() error)
	Wait() error
}

// md5All hashes every regular file below root. newGroup makes the group
// (errgroup.WithContext or wsgroup.WithContext).
func md5All(root string, newGroup func(context.Context) (group, context.Context), progress func(int)) (map[string]result, error) {
	g, ctx := newGroup(context.Background())
	paths := make(chan string)
	g.Go(func() error {
		defer close(paths)
		return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err // nil for a directory or a special file: skip it
			}
			select {
			case paths <- path:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	})

	c := make(chan result)
	for range digesters {
		g.Go(func() error {
			for path := range paths {
				data, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				select {
				case c <- result{path, md5.Sum(data), len(data)}:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return nil
		})
	}
	errc := make(chan error, 1)
	go func() {
		errc <- g.Wait()
		close(c)
	}()

	m := make(map[string]result)
	for r := range c {
		m[r.path] = r
		if progress != nil && len(m)%2000 == 0 {
			progress(len(m))
		}
	}
	if err := <-errc; err != nil {
		return nil, err
	}
	return m, nil
}

// treeDigest is the MD5 of every file's path (relative to root) and sum,
// in path order.
func treeDigest(root string, m map[string]result) [md5.Size]byte {
	paths := make([]string, 0, len(m))
	for p := range m {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	h := md5.New()
	for _, p := range paths {
		rel, _ := filepath.Rel(root, p)
		fmt.Fprintf(h, "%s %x\n", filepath.ToSlash(rel), m[p].sum)
	}
	var d [md5.Size]byte
	copy(d[:], h.Sum(nil))
	return d
}

func main() {
	root := ""
	switch len(os.Args) {
	case 1:
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			fmt.Fprintln(os.Stderr, "md5all: no directory given and `go env GOROOT` failed:", err)
			os.Exit(2)
		}
		root = filepath.Join(strings.TrimSpace(string(out)), "src")
	case 2:
		root = os.Args[1]
	default:
		fmt.Fprintln(os.Stderr, "usage: md5all [DIR]")
		os.Exit(2)
	}

	impls := []struct {
		name     string
		newGroup func(context.Context) (group, context.Context)
	}{
		{"errgroup", func(ctx context.Context) (group, context.Context) { return errgroup.WithContext(ctx) }},
		{"wsgroup", func(ctx context.Context) (group, context.Context) { return wsgroup.WithContext(ctx) }},
	}
	var first map[string]result
	for _, im := range impls {
		fmt.Fprintf(os.Stderr, "%s: hashing %s ...\n", im.name, root)
		start := time.Now()
		m, err := md5All(root, im.newGroup, func(n int) { fmt.Fprintf(os.Stderr, "  %d files\n", n) })
		d := time.Since(start)
		if err != nil {
			fmt.Fprintf(os.Stderr, "md5all: %s: %v\n", im.name, err)
			os.Exit(1)
		}
		var bytes int
		for _, r := range m {
			bytes += r.size
		}
		fmt.Printf("%-8s %d files, %d bytes, tree digest %x, %v\n", im.name, len(m), bytes, treeDigest(root, m), d.Round(time.Millisecond))
		if first == nil {
			first = m
			continue
		}
		if len(m) != len(first) {
			fmt.Fprintf(os.Stderr, "md5all: FAIL: %s saw %d files, errgroup %d\n", im.name, len(m), len(first))
			os.Exit(1)
		}
		for p, r := range m {
			if first[p].sum != r.sum {
				fmt.Fprintf(os.Stderr, "md5all: FAIL: %s: sums differ\n", p)
				os.Exit(1)
			}
		}
	}
	fmt.Println("both saw the same files with the same sums (the first run also warmed the OS's file cache)")
}
