#include "textflag.h"

// func prefetchRows(rows *int32, n, stride int, pf *prefetchSet)
//
// For each of the n rows read at rows, rows+stride, …: PREFETCHT0 of the
// row's element in pf.w8, pf.v8 (8-byte elements), pf.b1 (1-byte) and
// pf.i4 (4-byte). A prefetch changes no memory and never faults, whatever
// the address.
TEXT ·prefetchRows(SB), NOSPLIT, $0-32
	MOVQ rows+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ stride+16(FP), DX
	MOVQ pf+24(FP), DI
	TESTQ CX, CX
	JLE done
	MOVQ 0(DI), R8
	MOVQ 8(DI), R9
	MOVQ 16(DI), R10
	MOVQ 24(DI), R11

loop:
	MOVLQSX (SI), AX
	PREFETCHT0 (R8)(AX*8)
	PREFETCHT0 (R9)(AX*8)
	PREFETCHT0 (R10)(AX*1)
	PREFETCHT0 (R11)(AX*4)
	ADDQ DX, SI
	DECQ CX
	JNZ loop

done:
	RET
