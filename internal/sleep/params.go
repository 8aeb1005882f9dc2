package sleep

import "time"

// The idle protocol's tuning (see the rule in the scheduler's params.go):
// the default search rounds, Rounds and SpinRounds (rounds.go) in normal
// builds, and their starting values under the interleaving explorer; and
// the default SpinFor of normal builds.
const (
	defaultRounds     = 32
	defaultSpinRounds = 8
	defaultSpinFor    = 10 * time.Microsecond
)
