//go:build linux

#include "textflag.h"

// func getg() unsafe.Pointer
//
// An ABI0 function: on linux/amd64 the runtime keeps the current g in
// thread-local storage as well as in R14 (the register ABIInternal code
// uses), and (TLS) is the form the assembler accepts in ABI0 code.
TEXT ·getg(SB), NOSPLIT, $0-8
	MOVQ	(TLS), AX
	MOVQ	AX, ret+0(FP)
	RET
