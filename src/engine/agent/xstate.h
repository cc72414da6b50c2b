/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Saving the extended (SIMD, x87) state around C handlers, for the
 * assembler files (opt_entry.S, trampoline.S): one copy of the sequence.
 *
 * DP_XSTATE_SAVE: aligns %rsp down to 64, makes room for the state
 * (dp_xsave_size, set up by dp_xsave_setup()) and saves it with the
 * instruction dp_xsave_mode names (0 fxsave, 1 xsave, 2 xsavec), then
 * empties the x87 stack as the ABI wants at a call.  Clobbers %rax, %rcx,
 * %rdx.  DP_XSTATE_RESTORE: the reverse, with %rsp where the save left
 * it; clobbers %rax, %rdx.  Both use the local labels 1 to 5.
 */
#ifndef DPROBE_AGENT_XSTATE_H
#define DPROBE_AGENT_XSTATE_H

.macro DP_XSTATE_SAVE
	and	$-64, %rsp
	sub	dp_xsave_size(%rip), %rsp
	movzbl	dp_xsave_mode(%rip), %ecx
	test	%ecx, %ecx
	je	1f
	/* XRSTOR wants the XSAVE header's reserved bytes zero */
	xor	%eax, %eax
	mov	%rax, 512(%rsp)
	mov	%rax, 520(%rsp)
	mov	%rax, 528(%rsp)
	mov	%rax, 536(%rsp)
	mov	%rax, 544(%rsp)
	mov	%rax, 552(%rsp)
	mov	%rax, 560(%rsp)
	mov	%rax, 568(%rsp)
	mov	$-1, %eax
	mov	$-1, %edx
	cmp	$2, %ecx
	je	3f
	xsave64	(%rsp)
	jmp	2f
3:	xsavec64 (%rsp)
	jmp	2f
1:	fxsave64 (%rsp)
2:	emms
.endm

.macro DP_XSTATE_RESTORE
	cmpb	$0, dp_xsave_mode(%rip)
	je	4f
	mov	$-1, %eax
	mov	$-1, %edx
	xrstor64 (%rsp)
	jmp	5f
4:	fxrstor64 (%rsp)
5:
.endm

#endif
