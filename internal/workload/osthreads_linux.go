package workload

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// threadStats sums, over the process's threads (/proc/self/task), the
// time each has spent runnable but waiting for a CPU (the second field of
// its schedstat: the OS run queue's wait, not Go's) and its voluntary
// context switches (each is the thread going to sleep, to be woken later:
// a count of thread wake-ups), and reports whether they could be read.
// Threads that exited between two readings drop out of the later one; Go
// keeps its threads for the process's life, so the difference of two
// readings is what the threads did in between.
func threadStats() (runWait time.Duration, wakeups int64, ok bool) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil || len(tasks) == 0 {
		return 0, 0, false
	}
	for _, t := range tasks {
		dir := filepath.Join("/proc/self/task", t.Name())
		sched, err := os.ReadFile(filepath.Join(dir, "schedstat"))
		if err != nil {
			continue // the thread exited meanwhile
		}
		f := bytes.Fields(sched)
		if len(f) < 2 {
			return 0, 0, false
		}
		wait, err := strconv.ParseInt(string(f[1]), 10, 64)
		if err != nil {
			return 0, 0, false
		}
		runWait += time.Duration(wait)
		status, err := os.ReadFile(filepath.Join(dir, "status"))
		if err != nil {
			continue
		}
		found := false
		for sc := bufio.NewScanner(bytes.NewReader(status)); sc.Scan(); {
			if v, isIt := bytes.CutPrefix(sc.Bytes(), []byte("voluntary_ctxt_switches:")); isIt {
				n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
				if err != nil {
					return 0, 0, false
				}
				wakeups += n
				found = true
				break
			}
		}
		if !found {
			return 0, 0, false
		}
	}
	return runWait, wakeups, true
}
