//go:build linux && (amd64 || arm64 || 386 || arm)

package gstatus

import (
	"bytes"
	"errors"
	"runtime"
	"strconv"
)

// The check takes a goroutine's id from what the runtime itself prints in
// runtime.Stack for the calling goroutine: each goroutine's entry there
// begins with a header line such as
//
//	goroutine 17 [chan receive]:
//
// whose bracket holds the goroutine's state, or, for a parked goroutine,
// the words of its wait reason (which the tests compare with the reasons
// the check learned).

// stackID returns the calling goroutine's id as runtime.Stack prints it.
func stackID() (uint64, error) {
	var buf [128]byte
	n := runtime.Stack(buf[:], false)
	line, _, _ := bytes.Cut(buf[:n], []byte("\n"))
	id, _, ok := parseHeader(line)
	if !ok {
		return 0, errors.New("gstatus: cannot parse runtime.Stack header " + strconv.Quote(string(line)))
	}
	return id, nil
}

// parseHeader parses one header line of runtime.Stack and returns the
// goroutine's id and the words for its state or wait reason, without the
// annotations the runtime may add after them:
//
//	goroutine 17 [chan receive, 2 minutes, locked to thread]:
//	goroutine 17 [select (scan)]:
//	goroutine 17 [sleep labels:{"k": "v"}]:
//
// It strips what follows the first comma (minutes blocked, "locked to
// thread", the synctest bubble), profiler labels, and the " (scan)" and
// " (leaked)" marks. It does not strip parentheses in general: "chan
// receive (nil chan)" and "select (no cases)" are wait reasons of their
// own, and so are the synctest ones ending in "(durable)" (a " (durable)"
// mark is only added inside a synctest bubble, where the check's probes
// never run).
func parseHeader(line []byte) (id uint64, words string, ok bool) {
	rest, found := bytes.CutPrefix(line, []byte("goroutine "))
	if !found {
		return 0, "", false
	}
	digits, rest, _ := bytes.Cut(rest, []byte(" "))
	id, err := strconv.ParseUint(string(digits), 10, 64)
	if err != nil {
		return 0, "", false
	}
	// At GOTRACEBACK=system and above a crash dump puts "gp=... m=..."
	// before the bracket; runtime.Stack does not, but skipping to the
	// bracket costs nothing.
	_, rest, found = bytes.Cut(rest, []byte("["))
	if !found {
		return 0, "", false
	}
	rest, found = bytes.CutSuffix(rest, []byte("]:"))
	if !found {
		return 0, "", false
	}
	rest, _, _ = bytes.Cut(rest, []byte(" labels:{"))
	rest, _, _ = bytes.Cut(rest, []byte(","))
	rest = bytes.TrimSuffix(rest, []byte(" (scan)"))
	rest = bytes.TrimSuffix(rest, []byte(" (leaked)"))
	if len(rest) == 0 {
		return 0, "", false
	}
	return id, string(rest), true
}
