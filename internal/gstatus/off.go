//go:build !(linux && (amd64 || arm64 || 386 || arm))

// This file is the reader of every port that read.go does not serve: any
// operating system but Linux, or an architecture other than amd64, arm64,
// 386 and arm. The reader stays off there: On reports false, Self returns
// the zero Handle and Read returns Unknown.

package gstatus

import "unsafe"

// supported: this build has no reader; the first Start or Prove turns it
// off for good, without a check.
const supported = false

// Handle identifies one goroutine for reads by other goroutines: on this
// port it holds nothing, and its Read returns Unknown.
type Handle struct{}

// findings is empty: nothing is ever found here, and nothing is kept.
type findings struct{}

func keep(findings) {}

// prove is never called here (decide sees supported false first).
func prove() (findings, error) { return findings{}, errUnsupported }

// self and read are never called while the reader is off.
func self() Handle { return Handle{} }

func read(Handle) Status { return Unknown }

func labelsWord() *unsafe.Pointer { return nil }
