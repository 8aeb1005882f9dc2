//go:build explore

package sleep

import "github.com/go-steal/steal/internal/explore/xsync"

// Under the interleaving explorer the search rounds are variables, so that
// a test can shorten the idle protocol to the steps that matter (see
// rounds.go for their meaning). Production builds have them as constants.
var (
	Rounds     = defaultRounds
	SpinRounds = defaultSpinRounds
)

// SpinFor is 0 under the explorer: the rounds are bounded by number only,
// so that a schedule does not depend on the clock.
const SpinFor = 0

// yield is a yield point of the explorer's schedule (rounds.go has the
// production yield).
func yield() { xsync.Gosched() }
