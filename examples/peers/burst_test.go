package peers

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-steal/steal/internal/workload"
)

// The 1M burst runs each implementation in a process of its own (the test
// binary again, with burstChildEnv naming the implementation), because
// peak RSS is a per-process high-water mark.
const (
	burstChildEnv  = "PEERS_BURST_CHILD"
	burstRoundsEnv = "PEERS_BURST_ROUNDS"
	burstTasks     = 1_000_000
)

// burstChild submits 1M tasks of ~1.1 µs from outside to the implementation
// named by burstChildEnv, waits, and prints its peak RSS and the batch's
// wall time per task.
func burstChild() int {
	name := os.Getenv(burstChildEnv)
	rounds, err := strconv.Atoi(os.Getenv(burstRoundsEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad", burstRoundsEnv, err)
		return 2
	}
	var open func(int) batcher
	for _, im := range flatImpls(false) {
		if im.name == name {
			open = im.open
		}
	}
	if open == nil {
		fmt.Fprintln(os.Stderr, "unknown implementation", name)
		return 2
	}
	out := make([]uint64, burstTasks)
	var ran atomic.Int64
	r := open(procs())
	start := time.Now()
	r.batch(burstTasks, func(i int) {
		out[i] = workload.Spin(uint64(i), rounds)
		ran.Add(1)
	})
	elapsed := time.Since(start)
	r.close()
	if ran.Load() != burstTasks {
		fmt.Fprintf(os.Stderr, "%d of %d tasks ran\n", ran.Load(), burstTasks)
		return 1
	}
	hwm, err := peakRSS()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Printf("maxrss-KiB %d ns/task %.1f\n", hwm, float64(elapsed.Nanoseconds())/burstTasks)
	return 0
}

// peakRSS returns the process's peak resident set size in KiB, VmHWM from
// /proc/self/status. (Not getrusage's ru_maxrss: Linux carries that over
// fork and exec, so a child would report its parent's peak if higher.)
func peakRSS() (int64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/self/status")
}

// BenchmarkBurst1M: 1M tasks of ~1.1 µs submitted from outside at once.
// peak-RSS-MiB is the child process's high-water mark (the same 8 MB of
// result slots in every row); ns/task is the batch's wall time measured in
// the child, without process start-up.
func BenchmarkBurst1M(b *testing.B) {
	rounds := microRounds()
	for _, im := range flatImpls(false) {
		b.Run(im.name, func(b *testing.B) {
			var peak, nsTask float64
			for b.Loop() {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), burstChildEnv+"="+im.name, burstRoundsEnv+"="+strconv.Itoa(rounds))
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					b.Fatalf("child: %v\n%s", err, stderr.Bytes())
				}
				var kib int64
				var ns float64
				if _, err := fmt.Sscanf(string(out), "maxrss-KiB %d ns/task %g", &kib, &ns); err != nil {
					b.Fatalf("child output %q: %v", out, err)
				}
				peak = max(peak, float64(kib)/1024)
				nsTask += ns
			}
			b.ReportMetric(peak, "peak-RSS-MiB")
			b.ReportMetric(nsTask/float64(b.N), "ns/task")
		})
	}
}
