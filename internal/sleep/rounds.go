//go:build !explore

package sleep

import "github.com/go-steal/steal/internal/explore/xsync"

// Rounds is how many fruitless searches a worker makes before it
// announces that it is getting sleepy. After each of the first SpinRounds
// it searches again at once (when GOMAXPROCS > 1); after each of the rest
// it yields the processor first (yield).
//
// Spinning first is what the Go runtime's own idle Ms do: work often
// arrives within a microsecond (a producer that is feeding the pool, a
// sibling about to push). With one P, spinning only delays whoever would
// post the work, so the spin rounds are skipped.
const (
	Rounds     = defaultRounds
	SpinRounds = defaultSpinRounds
)

// SpinFor bounds the search rounds in time: a worker that has searched
// for that long since its first fruitless search gets sleepy, whatever
// its round. A round that yields on a processor with nothing else to run
// returns at once, so the rounds alone would keep an idle worker on a CPU
// for as long as 24 trips through the runtime's scheduler take.
const SpinFor = defaultSpinFor

// yield is xsync.Yield (the runtime's goyield: it wakes no thread).
// Idle.yield says when a search round uses it.
func yield() { xsync.Yield() }
