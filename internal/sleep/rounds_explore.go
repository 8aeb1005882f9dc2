//go:build explore

package sleep

// Under the interleaving explorer the search rounds are variables, so that
// a test can shorten the idle protocol to the steps that matter (see
// rounds.go for their meaning). Production builds have them as constants.
var (
	Rounds     = defaultRounds
	SpinRounds = defaultSpinRounds
)
