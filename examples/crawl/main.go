// Command crawl starts an HTTP server on loopback serving a small site (a
// tree of pages that link to their children), then crawls it with a
// wsgroup.Group: SetLimit bounds the requests in flight, each page's task
// starts a task per new link (recursive Go under a limit, which does not
// deadlock with wsgroup), and WithContext cancels the crawl on the first
// error.
//
// It crawls twice: the healthy site, where every page must be found, and
// the same site with one page answering 500, where the first error cancels
// the requests in flight and stops the crawl.
//
// Usage:
//
//	go run ./examples/crawl
//	go run ./examples/crawl -pages 1000 -limit 16
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-steal/steal/wsgroup"
)

// site serves /page/0 .. /page/n-1; page i links to pages 3i+1 .. 3i+3.
// Each response takes a millisecond, like a real backend. broken, if not
// negative, answers 500.
type site struct {
	n      int
	broken atomic.Int64
}

func (s *site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var i int
	if _, err := fmt.Sscanf(r.URL.Path, "/page/%d", &i); err != nil || i < 0 || i >= s.n {
		http.NotFound(w, r)
		return
	}
	select {
	case <-time.After(time.Millisecond):
	case <-r.Context().Done():
		return
	}
	if int64(i) == s.broken.Load() {
		http.Error(w, "backend failure", http.StatusInternalServerError)
		return
	}
	fmt.Fprintf(w, "<html><body><h1>page %d</h1>\n", i)
	for c := 3*i + 1; c <= 3*i+3 && c < s.n; c++ {
		fmt.Fprintf(w, "<a href=\"/page/%d\">page %d</a>\n", c, c)
	}
	fmt.Fprintln(w, "</body></html>")
}

var link = regexp.MustCompile(`href="(/page/[0-9]+)"`)

// crawl fetches base+"/page/0" and every page reachable from it, at most
// limit requests at a time, and returns the pages fetched.
func crawl(base string, limit int) (int, error) {
	g, ctx := wsgroup.WithContext(context.Background())
	g.SetLimit(limit)
	var seen sync.Map
	var fetched atomic.Int64
	var visit func(path string) error
	visit = func(path string) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", path, resp.Status)
		}
		fetched.Add(1)
		for _, m := range link.FindAllSubmatch(body, -1) {
			next := string(m[1])
			if _, dup := seen.LoadOrStore(next, true); !dup {
				// Inside a task, Go does not block at the limit (it
				// queues), so this recursion cannot deadlock.
				g.Go(func() error { return visit(next) })
			}
		}
		return nil
	}
	seen.Store("/page/0", true)
	g.Go(func() error { return visit("/page/0") })
	err := g.Wait()
	return int(fetched.Load()), err
}

func main() {
	pages := flag.Int("pages", 400, "pages in the site")
	limit := flag.Int("limit", 8, "requests in flight at most (SetLimit)")
	flag.Parse()
	if *pages < 2 || *limit < 1 {
		fmt.Fprintln(os.Stderr, "crawl: -pages must be at least 2 and -limit at least 1")
		os.Exit(2)
	}

	s := &site{n: *pages}
	s.broken.Store(-1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "crawl:", err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: s}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	fmt.Printf("serving %d pages on %s\n", *pages, base)

	fmt.Fprintln(os.Stderr, "crawling the healthy site...")
	start := time.Now()
	n, err := crawl(base, *limit)
	fmt.Printf("healthy site: fetched %d of %d pages in %v, error: %v\n", n, *pages, time.Since(start).Round(time.Millisecond), err)
	if err != nil || n != *pages {
		fmt.Fprintln(os.Stderr, "crawl: FAIL: the healthy crawl must fetch every page without error")
		os.Exit(1)
	}

	broken := *pages / 3
	s.broken.Store(int64(broken))
	fmt.Fprintf(os.Stderr, "crawling with page %d broken...\n", broken)
	start = time.Now()
	n, err = crawl(base, *limit)
	fmt.Printf("page %d broken: fetched %d of %d pages in %v, stopped by: %v\n", broken, n, *pages, time.Since(start).Round(time.Millisecond), err)
	var want = fmt.Sprintf("GET /page/%d: 500 Internal Server Error", broken)
	if err == nil || err.Error() != want {
		fmt.Fprintf(os.Stderr, "crawl: FAIL: want the crawl stopped by %q\n", want)
		os.Exit(1)
	}
	if n >= *pages {
		fmt.Fprintln(os.Stderr, "crawl: FAIL: the first error did not stop the crawl")
		os.Exit(1)
	}
	fmt.Printf("the first error canceled the group's context: requests in flight were canceled, and the %d pages not fetched include every page reached only through page %d and the tasks still queued, whose requests failed at once on the canceled context\n", *pages-n, broken)
}
