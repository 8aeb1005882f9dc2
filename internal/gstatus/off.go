//go:build !(go1.26 && !go1.27 && linux && (amd64 || arm64))

// This file is the reader of every build that layout_go126.go does not
// describe: another Go release, operating system or architecture. It is
// always off: On reports false, Self returns the zero Handle and Read
// returns Unknown.

package gstatus

import "unsafe"

// prove fails: there is nothing to prove the reader with.
func prove() error { return errUnsupported }

// self and read are never called while the reader is off.
func self() Handle { return Handle{} }

func read(Handle) Status { return Unknown }

// Without a layout there is no labels word to prove.
func proveLabels(uintptr) bool { return false }

func labelsWord() *unsafe.Pointer { return nil }

// labelsOffset names no word: proveLabels fails without looking.
const labelsOffset = 0
