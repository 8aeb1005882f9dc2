// Package adapter lets a program choose between golang.org/x/sync/errgroup
// and wsgroup at run time, so that a service can roll wsgroup out gradually
// and roll it back without a deploy.
//
// Group is the errgroup API as an interface, which *errgroup.Group and
// *wsgroup.Group both satisfy. New and WithContext make a group of a given
// Kind; NewFromEnv and WithContextFromEnv read the Kind from the STEAL_GROUP
// environment variable ("errgroup" or "wsgroup"), with a default for when it
// is unset. An unknown value is an error that names the valid ones, never a
// silent fallback: a typo in a rollout flag should be seen.
//
// WaitGroup is the same for code written against sync.WaitGroup's Go and
// Wait: NewWaitGroup returns a *sync.WaitGroup (one goroutine per task) or a
// WaitGroup that runs its functions on wsgroup's workers.
//
// Code that takes a Group works with either implementation; what differs
// between them is listed in wsgroup's package documentation (Differences
// from errgroup), and migrate.md at the repository root says how to roll
// wsgroup out with this package.
package adapter
