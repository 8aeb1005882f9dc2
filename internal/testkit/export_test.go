package testkit

import "time"

// SetChildLimit bounds how long a child process may run (childLimit) until
// the returned restore is called.
func SetChildLimit(d time.Duration) (restore func()) {
	old := childLimit
	childLimit = d
	return func() { childLimit = old }
}
