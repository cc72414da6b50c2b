/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a detour calls (arch/x86_64/optprobe.c builds the detour): %rdi is
 * the struct pt_regs frame, %rsi the site, the stack 16-byte aligned at
 * the call.  The detour saves only the general registers; the pre
 * handlers are ordinary C code that may use SIMD registers the probed
 * code still needs (float arguments, vectorised loops), so the extended
 * state is saved around them as dp_call_xsave() in trampoline.S does,
 * unless every probe on the site promised not to touch it
 * (KPROBE_FLAG_NOSIMD, site->nosimd).
 */
#include "xstate.h"
#define SITE_NOSIMD	8

	.text
	.p2align 4
	.globl	dp_opt_entry
	.hidden	dp_opt_entry
	.type	dp_opt_entry, @function
dp_opt_entry:
	.cfi_startproc
	cmpb	$0, SITE_NOSIMD(%rsi)
	jne	dp_opt_hit			/* a tail call, same alignment */
	push	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_offset rbp, -16
	mov	%rsp, %rbp
	.cfi_def_cfa_register rbp
	push	%rdi
	push	%rsi
	DP_XSTATE_SAVE
	mov	-8(%rbp), %rdi
	mov	-16(%rbp), %rsi
	call	dp_opt_hit
	DP_XSTATE_RESTORE
	mov	%rbp, %rsp
	.cfi_def_cfa_register rsp
	pop	%rbp
	.cfi_adjust_cfa_offset -8
	.cfi_restore rbp
	ret
	.cfi_endproc
	.size	dp_opt_entry, . - dp_opt_entry

	.section .note.GNU-stack, "", @progbits
