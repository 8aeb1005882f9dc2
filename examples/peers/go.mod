module github.com/go-steal/steal/examples/peers

go 1.26.0

replace github.com/go-steal/steal => ../..

require (
	github.com/alitto/pond/v2 v2.7.1
	github.com/go-steal/steal v0.0.0-00010101000000-000000000000
	github.com/panjf2000/ants/v2 v2.12.1
	github.com/sourcegraph/conc v0.3.0
	go.uber.org/goleak v1.3.0
	golang.org/x/sync v0.24.0
)

require (
	github.com/petermattis/goid v0.0.0-20260820044319-269ab09b5261 // indirect
	go.uber.org/atomic v1.7.0 // indirect
	go.uber.org/multierr v1.9.0 // indirect
)
