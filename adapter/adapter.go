package adapter

import (
	"context"
	"fmt"
	"os"

	"golang.org/x/sync/errgroup"

	"github.com/go-steal/steal/wsgroup"
)

// Group is the errgroup API: *errgroup.Group and *wsgroup.Group satisfy it.
type Group interface {
	// Go calls f in a new task; see errgroup.Group.Go.
	Go(f func() error)
	// TryGo calls f in a new task only if the group is below its limit;
	// see errgroup.Group.TryGo.
	TryGo(f func() error) bool
	// SetLimit limits the number of active tasks; see
	// errgroup.Group.SetLimit.
	SetLimit(n int)
	// Wait waits for every task and returns the first error; see
	// errgroup.Group.Wait.
	Wait() error
}

var (
	_ Group = (*errgroup.Group)(nil)
	_ Group = (*wsgroup.Group)(nil)
)

// Kind names an implementation.
type Kind string

const (
	// Errgroup is one goroutine per task: golang.org/x/sync/errgroup, or
	// sync.WaitGroup for NewWaitGroup.
	Errgroup Kind = "errgroup"
	// Wsgroup is github.com/go-steal/steal/wsgroup: tasks run on a pool of
	// reused workers with work stealing.
	Wsgroup Kind = "wsgroup"
)

// EnvVar is the environment variable that NewFromEnv, WithContextFromEnv
// and WaitGroupFromEnv read.
const EnvVar = "STEAL_GROUP"

// ParseKind returns the Kind that s names: "errgroup" or "wsgroup".
// Anything else is an error that names the valid values.
func ParseKind(s string) (Kind, error) {
	switch k := Kind(s); k {
	case Errgroup, Wsgroup:
		return k, nil
	}
	return "", fmt.Errorf("adapter: unknown group kind %q: want %q or %q", s, Errgroup, Wsgroup)
}

// KindFromEnv returns the Kind named by the STEAL_GROUP environment
// variable, or def when the variable is unset or empty. An unknown value is
// an error (ParseKind); def is not checked.
func KindFromEnv(def Kind) (Kind, error) {
	s, ok := os.LookupEnv(EnvVar)
	if !ok || s == "" {
		return def, nil
	}
	k, err := ParseKind(s)
	if err != nil {
		return "", fmt.Errorf("%s: %w", EnvVar, err)
	}
	return k, nil
}

// New returns a new zero group of kind k: no limit, no context. It panics
// if k is not Errgroup or Wsgroup (a programming error; use ParseKind for
// input).
func New(k Kind) Group {
	switch k {
	case Errgroup:
		return new(errgroup.Group)
	case Wsgroup:
		return new(wsgroup.Group)
	}
	panic(fmt.Sprintf("adapter: New called with unknown kind %q (want %q or %q)", string(k), Errgroup, Wsgroup))
}

// WithContext returns a new group of kind k and a Context derived from ctx:
// errgroup.WithContext's or wsgroup.WithContext's, whose documentation says
// when the Context is canceled. It panics if k is unknown, like New.
func WithContext(k Kind, ctx context.Context) (Group, context.Context) {
	switch k {
	case Errgroup:
		return errgroup.WithContext(ctx)
	case Wsgroup:
		return wsgroup.WithContext(ctx)
	}
	panic(fmt.Sprintf("adapter: WithContext called with unknown kind %q (want %q or %q)", string(k), Errgroup, Wsgroup))
}

// envKind is KindFromEnv for the constructors: it also refuses an unknown
// def, which KindFromEnv returns unchecked, so that they return an error
// where New would panic.
func envKind(def Kind) (Kind, error) {
	k, err := KindFromEnv(def)
	if err != nil {
		return "", err
	}
	return ParseKind(string(k))
}

// NewFromEnv is New with the kind from STEAL_GROUP (KindFromEnv).
func NewFromEnv(def Kind) (Group, error) {
	k, err := envKind(def)
	if err != nil {
		return nil, err
	}
	return New(k), nil
}

// WithContextFromEnv is WithContext with the kind from STEAL_GROUP
// (KindFromEnv).
func WithContextFromEnv(def Kind, ctx context.Context) (Group, context.Context, error) {
	k, err := envKind(def)
	if err != nil {
		return nil, nil, err
	}
	g, ctx := WithContext(k, ctx)
	return g, ctx, nil
}
