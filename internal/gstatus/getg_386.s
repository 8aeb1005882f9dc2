//go:build linux

#include "textflag.h"

// func getg() unsafe.Pointer
//
// As on amd64: the runtime keeps the current g in thread-local storage,
// which ABI0 code reads as (TLS).
TEXT ·getg(SB), NOSPLIT, $0-4
	MOVL	(TLS), AX
	MOVL	AX, ret+0(FP)
	RET
