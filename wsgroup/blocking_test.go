package wsgroup_test

// Blocking tasks in a group with no limit: code written for errgroup,
// where every task has its own goroutine, must not starve on a pool of
// GOMAXPROCS workers. (Also TestTasksWaitingForLaterTasks, and the
// scheduler's watchdog tests, which bound the pool's growth.)

import (
	"crypto/md5"
	"fmt"
	"testing"

	"go.uber.org/goleak"

	"github.com/go-steal/steal/wsgroup"
)

// TestMD5AllPipeline is the shape of the pipelines article's bounded
// MD5All: one producer sends paths on an unbuffered channel, 20 consumers
// hash them and send results on another unbuffered channel, and Wait runs in
// a separate goroutine that closes the results channel, while the caller
// drains it. Every task blocks on a channel most of the time.
func TestMD5AllPipeline(t *testing.T) {
	const files, consumers = 500, 20
	data := make(map[string][]byte, files)
	for i := range files {
		data[fmt.Sprintf("dir%d/file%d", i%7, i)] = fmt.Appendf(nil, "contents of file %d", i)
	}
	type result struct {
		path string
		sum  [md5.Size]byte
	}
	withGOMAXPROCS(t, func(t *testing.T) {
		runWithTimeout(t, func() {
			var g wsgroup.Group
			paths := make(chan string)
			g.Go(func() error {
				defer close(paths)
				for p := range data {
					paths <- p
				}
				return nil
			})
			c := make(chan result)
			for range consumers {
				g.Go(func() error {
					for p := range paths {
						c <- result{p, md5.Sum(data[p])}
					}
					return nil
				})
			}
			waited := make(chan error, 1)
			go func() {
				waited <- g.Wait()
				close(c)
			}()
			got := make(map[string][md5.Size]byte)
			for r := range c {
				if _, dup := got[r.path]; dup {
					t.Errorf("%s hashed twice", r.path)
				}
				got[r.path] = r.sum
			}
			if err := <-waited; err != nil {
				t.Errorf("Wait() = %v, want nil", err)
			}
			if len(got) != files {
				t.Errorf("%d of %d files hashed", len(got), files)
			}
			for p, sum := range got {
				if sum != md5.Sum(data[p]) {
					t.Errorf("%s: wrong sum", p)
				}
			}
		})
		goleak.VerifyNone(t)
	})
}
