module github.com/go-steal/steal/examples/profiles

go 1.26.0

replace github.com/go-steal/steal => ../..

require (
	github.com/go-steal/steal v0.0.0-00010101000000-000000000000
	github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b
	go.uber.org/goleak v1.3.0
	golang.org/x/sync v0.24.0
)

require github.com/petermattis/goid v0.0.0-20260820044319-269ab09b5261 // indirect
