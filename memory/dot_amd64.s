//go:build amd64 && !purego

#include "textflag.h"

// func dotAVX2(a, b []float32) float32
//
// Four 8-float accumulators (32 floats a round, so the multiply-adds of a round overlap),
// then 8 floats at a time, then one at a time; the accumulators are summed at the end.
TEXT ·dotAVX2(SB), NOSPLIT, $0-52
	MOVQ a_base+0(FP), SI
	MOVQ a_len+8(FP), CX
	MOVQ b_base+24(FP), DI
	XORQ AX, AX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

	MOVQ CX, DX
	ANDQ $-32, DX // floats done 32 at a time

loop32:
	CMPQ AX, DX
	JGE  rest8
	VMOVUPS (SI)(AX*4), Y4
	VMOVUPS 32(SI)(AX*4), Y5
	VMOVUPS 64(SI)(AX*4), Y6
	VMOVUPS 96(SI)(AX*4), Y7
	VFMADD231PS (DI)(AX*4), Y4, Y0
	VFMADD231PS 32(DI)(AX*4), Y5, Y1
	VFMADD231PS 64(DI)(AX*4), Y6, Y2
	VFMADD231PS 96(DI)(AX*4), Y7, Y3
	ADDQ $32, AX
	JMP  loop32

rest8:
	MOVQ CX, DX
	ANDQ $-8, DX // floats done 8 at a time

loop8:
	CMPQ AX, DX
	JGE  reduce
	VMOVUPS (SI)(AX*4), Y4
	VFMADD231PS (DI)(AX*4), Y4, Y0
	ADDQ $8, AX
	JMP  loop8

reduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0

loop1:
	CMPQ AX, CX
	JGE  done
	VMOVSS (SI)(AX*4), X4
	VFMADD231SS (DI)(AX*4), X4, X0
	INCQ AX
	JMP  loop1

done:
	VZEROUPPER
	MOVSS X0, ret+48(FP)
	RET
