package wsgroup_test

import (
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing/fstest"

	"github.com/go-steal/steal/wsgroup"
)

// fakeFetch stands in for an HTTP GET: the examples never touch the network.
func fakeFetch(url string) error {
	if strings.Contains(url, "invalid") {
		return fmt.Errorf("fetch %s: no such host", url)
	}
	return nil
}

// JustErrors illustrates the use of a Group in place of a sync.WaitGroup to
// simplify goroutine counting and error handling. (errgroup's example of the
// same name, with a fake fetch instead of http.Get.)
func ExampleGroup_justErrors() {
	g := new(wsgroup.Group)
	var urls = []string{
		"http://www.golang.org/",
		"http://www.google.com/",
		"http://www.example.com/",
	}
	for _, url := range urls {
		// Launch a task to fetch the URL.
		g.Go(func() error {
			return fakeFetch(url)
		})
	}
	// Wait for all fetches to complete.
	if err := g.Wait(); err == nil {
		fmt.Println("Successfully fetched all URLs.")
	}

	// The same with one bad URL: Wait returns its error.
	g = new(wsgroup.Group)
	for _, url := range append(urls, "http://invalid.example/") {
		g.Go(func() error { return fakeFetch(url) })
	}
	if err := g.Wait(); err != nil {
		fmt.Println("Error:", err)
	}

	// Output:
	// Successfully fetched all URLs.
	// Error: fetch http://invalid.example/: no such host
}

type Result string
type Search func(ctx context.Context, query string) (Result, error)

func fakeSearch(kind string) Search {
	return func(_ context.Context, query string) (Result, error) {
		return Result(fmt.Sprintf("%s result for %q", kind, query)), nil
	}
}

var (
	Web   = fakeSearch("web")
	Image = fakeSearch("image")
	Video = fakeSearch("video")
)

// Parallel illustrates the use of a Group for synchronizing a simple parallel
// task: the "Google Search 2.0" function from
// https://talks.golang.org/2012/concurrency.slide#46, augmented with a Context
// and error-handling.
func ExampleGroup_parallel() {
	Google := func(ctx context.Context, query string) ([]Result, error) {
		g, ctx := wsgroup.WithContext(ctx)

		searches := []Search{Web, Image, Video}
		results := make([]Result, len(searches))
		for i, search := range searches {
			g.Go(func() error {
				result, err := search(ctx, query)
				if err == nil {
					results[i] = result
				}
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return nil, err
		}
		return results, nil
	}

	results, err := Google(context.Background(), "golang")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	for _, result := range results {
		fmt.Println(result)
	}

	// Output:
	// web result for "golang"
	// image result for "golang"
	// video result for "golang"
}

// Pipeline demonstrates the use of a Group to implement a multi-stage
// pipeline: a version of the MD5All function with bounded parallelism from
// https://blog.golang.org/pipelines, here over an in-memory file system.
// The walker and the 20 digesters block on each other through channels; with
// no limit, wsgroup keeps enough workers for all of them to make progress.
func ExampleGroup_pipeline() {
	fsys := fstest.MapFS{
		"README":          {Data: []byte("steal\n")},
		"docs/intro.txt":  {Data: []byte("work stealing\n")},
		"docs/empty.txt":  {Data: nil},
		"src/a/main.go":   {Data: []byte("package main\n")},
		"src/a/README":    {Data: []byte("steal\n")},
		"src/b/notes.txt": {Data: []byte("fork-join\n")},
	}

	m, err := md5All(context.Background(), fsys, ".")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	paths := make([]string, 0, len(m))
	for path := range m {
		paths = append(paths, path)
	}
	slices.Sort(paths)
	for _, path := range paths {
		fmt.Printf("%s:\t%x\n", path, m[path])
	}

	// A failing walk: the error is returned and every task has ended.
	_, err = md5All(context.Background(), fsys, "missing")
	fmt.Println("error:", err)

	// Output:
	// README:	b3218af952e027099368dd5fe55ea824
	// docs/empty.txt:	d41d8cd98f00b204e9800998ecf8427e
	// docs/intro.txt:	26be66401a08ac1cc213d16e400f7399
	// src/a/README:	b3218af952e027099368dd5fe55ea824
	// src/a/main.go:	98ab3c79c3a0e5fcced00e8433fecdca
	// src/b/notes.txt:	f7a246ba03b32f3944bef401efe64a9c
	// error: open missing: file does not exist
}

type md5Result struct {
	path string
	sum  [md5.Size]byte
}

// md5All reads all the files in the file tree rooted at root in fsys and
// returns a map from file path to the MD5 sum of the file's contents. If the
// directory walk fails or any read operation fails, md5All returns an error.
func md5All(ctx context.Context, fsys fs.FS, root string) (map[string][md5.Size]byte, error) {
	// ctx is canceled when g.Wait() returns. When this version of md5All
	// returns - even in case of error! - we know that all of the tasks have
	// finished and the memory they were using can be garbage-collected.
	g, ctx := wsgroup.WithContext(ctx)
	paths := make(chan string)

	g.Go(func() error {
		defer close(paths)
		return fs.WalkDir(fsys, root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.Type().IsRegular() {
				return nil
			}
			select {
			case paths <- path:
			case <-ctx.Done():
				return ctx.Err()
			}
			return nil
		})
	})

	// Start a fixed number of tasks to read and digest files.
	c := make(chan md5Result)
	const numDigesters = 20
	for i := 0; i < numDigesters; i++ {
		g.Go(func() error {
			for path := range paths {
				data, err := fs.ReadFile(fsys, path)
				if err != nil {
					return err
				}
				select {
				case c <- md5Result{path, md5.Sum(data)}:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return nil
		})
	}
	go func() {
		g.Wait()
		close(c)
	}()

	m := make(map[string][md5.Size]byte)
	for r := range c {
		m[r.path] = r.sum
	}
	// Check whether any of the tasks failed. Since g is accumulating the
	// errors, we don't need to send them (or check for them) in the
	// individual results sent on the channel.
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return m, nil
}

// WithContext: the first error cancels the group's context, with that error
// as its cause, so the other tasks can stop early.
func ExampleWithContext() {
	errNotFound := errors.New("not found")

	g, ctx := wsgroup.WithContext(context.Background())
	g.Go(func() error {
		// This task gives up as soon as another one fails.
		<-ctx.Done()
		return ctx.Err()
	})
	g.Go(func() error {
		return errNotFound
	})

	err := g.Wait()
	fmt.Println("Wait:", err)
	fmt.Println("cause:", context.Cause(ctx))
	fmt.Println("ctx.Err:", ctx.Err())

	// Output:
	// Wait: not found
	// cause: not found
	// ctx.Err: context canceled
}

// Go runs each function as a task; Wait waits for all of them. Each task
// writes its own slot of the results, so no lock is needed.
func ExampleGroup_Go() {
	var g wsgroup.Group
	squares := make([]int, 10)
	for i := range squares {
		g.Go(func() error {
			squares[i] = i * i
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(squares)

	// Output:
	// [0 1 4 9 16 25 36 49 64 81]
}

// TryGo starts a task only if the group is below its limit.
func ExampleGroup_TryGo() {
	var g wsgroup.Group
	g.SetLimit(1)

	release := make(chan struct{})
	fmt.Println("first:", g.TryGo(func() error {
		<-release
		return nil
	}))
	// The only slot is taken until the first task returns.
	fmt.Println("second:", g.TryGo(func() error { return nil }))

	close(release)
	g.Wait()
	// Nothing is active any more.
	fmt.Println("after Wait:", g.TryGo(func() error { return nil }))
	g.Wait()

	// Output:
	// first: true
	// second: false
	// after Wait: true
}

// SetLimit bounds how many of the group's tasks execute at once; Go waits
// for a free slot.
func ExampleGroup_SetLimit() {
	var g wsgroup.Group
	g.SetLimit(2)

	var active, maxActive atomic.Int32
	var mu sync.Mutex
	sum := 0
	for i := 1; i <= 100; i++ {
		g.Go(func() error {
			n := active.Add(1)
			defer active.Add(-1)
			for {
				m := maxActive.Load()
				if n <= m || maxActive.CompareAndSwap(m, n) {
					break
				}
			}
			mu.Lock()
			sum += i
			mu.Unlock()
			return nil
		})
	}
	g.Wait()
	fmt.Println("sum:", sum)
	fmt.Println("at most 2 at once:", maxActive.Load() <= 2)

	// Output:
	// sum: 5050
	// at most 2 at once: true
}

// Wait returns the first error. The group can be used again afterwards, and
// the first error sticks.
func ExampleGroup_Wait() {
	var g wsgroup.Group

	g.Go(func() error { return nil })
	fmt.Println("1st Wait:", g.Wait())

	g.Go(func() error { return errors.New("disk full") })
	fmt.Println("2nd Wait:", g.Wait())

	g.Go(func() error { return nil })
	fmt.Println("3rd Wait:", g.Wait())

	// Output:
	// 1st Wait: <nil>
	// 2nd Wait: disk full
	// 3rd Wait: disk full
}

// ForkJoin: every call creates a group of its own, forks two subproblems and
// joins them. The nested groups share the workers of the outermost one, and
// a Wait inside a task runs queued tasks instead of blocking a goroutine.
func ExampleGroup_forkJoin() {
	var fib func(n int) int
	fib = func(n int) int {
		if n < 2 {
			return n
		}
		var g wsgroup.Group
		var a, b int
		g.Go(func() error { a = fib(n - 1); return nil })
		g.Go(func() error { b = fib(n - 2); return nil })
		g.Wait()
		return a + b
	}
	fmt.Println(fib(20))

	// Output:
	// 6765
}

// Recursive: tasks add their subtasks to their own limited group without
// waiting for them. With errgroup, a task blocked in Go holds its slot and
// this deadlocks; with wsgroup it completes.
func ExampleGroup_recursive() {
	type dir struct {
		files   int
		subdirs []int
	}
	// A small directory tree: dir i has tree[i].files files.
	tree := []dir{
		{files: 1, subdirs: []int{1, 2}},
		{files: 2, subdirs: []int{3}},
		{files: 3, subdirs: []int{4, 5}},
		{files: 4},
		{files: 5},
		{files: 6},
	}

	var g wsgroup.Group
	g.SetLimit(2)
	var total atomic.Int64
	var visit func(i int) func() error
	visit = func(i int) func() error {
		return func() error {
			total.Add(int64(tree[i].files))
			for _, s := range tree[i].subdirs {
				g.Go(visit(s))
			}
			return nil
		}
	}
	g.Go(visit(0))
	if err := g.Wait(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("files:", total.Load())

	// Output:
	// files: 21
}

// SetPanicMode(PanicInWait) turns a task's panic into a panic in Wait, on
// the caller's goroutine, after the group's context has been canceled and
// the other tasks have returned.
func ExampleGroup_SetPanicMode() {
	g, ctx := wsgroup.WithContext(context.Background())
	g.SetPanicMode(wsgroup.PanicInWait)
	g.Go(func() error {
		<-ctx.Done()
		var pe *wsgroup.PanicError
		fmt.Println("context canceled by a panic:", errors.As(context.Cause(ctx), &pe))
		return nil
	})
	g.Go(func() error {
		var table []int
		_ = table[3] // index out of range
		return nil
	})

	defer func() {
		pe := recover().(*wsgroup.PanicError)
		fmt.Println("Wait panicked with:", pe.Value)
		var re runtime.Error
		fmt.Println("a runtime error:", errors.As(pe, &re))
	}()
	g.Wait()
	// Output:
	// context canceled by a panic: true
	// Wait panicked with: runtime error: index out of range [3] with length 0
	// a runtime error: true
}

// SetCancelMode(SkipQueued) drops work once the group is canceled: here
// the first error cancels it, and a later TryGo queues nothing.
func ExampleGroup_SetCancelMode() {
	g, ctx := wsgroup.WithContext(context.Background())
	g.SetCancelMode(wsgroup.SkipQueued)
	g.Go(func() error { return errors.New("bad input") })

	<-ctx.Done()
	queued := g.TryGo(func() error {
		fmt.Println("not printed: the group was canceled")
		return nil
	})
	fmt.Println("queued after the cancellation:", queued)
	fmt.Println("Wait:", g.Wait())
	// Output:
	// queued after the cancellation: false
	// Wait: bad input
}
