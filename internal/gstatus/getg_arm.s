//go:build linux

#include "textflag.h"

// func getg() unsafe.Pointer
//
// On arm the runtime keeps the current g in R10, which the assembler
// calls g.
TEXT ·getg(SB), NOSPLIT, $0-4
	MOVW	g, R0
	MOVW	R0, ret+0(FP)
	RET
