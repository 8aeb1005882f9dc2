module github.com/go-steal/steal

go 1.26.0

require (
	github.com/anishathalye/porcupine v1.3.1
	github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b
	github.com/petermattis/goid v0.0.0-20260820044319-269ab09b5261
	go.uber.org/goleak v1.3.0
	golang.org/x/exp v0.0.0-20261113113407-e3970619a1a4
	golang.org/x/sync v0.24.0
	pgregory.net/rapid v1.3.0
)
