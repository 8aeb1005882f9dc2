// A module of its own, so that the library's go.mod does not require
// golang.org/x/tools. It has no replace directive for github.com/go-steal/steal
// (it does not import it): go run and go install refuse pkg@version for a
// module whose go.mod has one, which would break
// go run github.com/go-steal/steal/cmd/wsgroupcheck@latest.
module github.com/go-steal/steal/cmd/wsgroupcheck

go 1.26.0

require (
	go.uber.org/goleak v1.3.0
	golang.org/x/tools v0.52.0
)

require (
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
)
