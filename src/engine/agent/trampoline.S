/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The return trampoline of kretprobes.  At the entry of a probed function
 * its return address (the word at %rsp) was replaced by the address of
 * dp_kretprobe_trampoline, so the function's `ret` lands here with %rsp
 * just above the slot that held it.  The trampoline saves the registers
 * as a struct pt_regs, saves the extended (x87/SSE/AVX) state, and calls
 * dp_kretprobe_handler(regs), which finds the call's instance, writes the
 * real return address back into the slot, and runs the handlers.  Then
 * everything is restored (handlers may change registers, e.g. ax) and a
 * `ret` through the slot goes where the function would have returned.
 *
 *	E+0   ...caller's frame...
 *	E-8   the return slot: 0, then the real return address
 *	E-224 struct pt_regs (216 bytes)
 *	      padding to 64 bytes, then the xsave/fxsave area
 *
 * The extended state is saved because the handlers are ordinary C code
 * and the function's return value may be in %xmm0/%xmm1 or %st(0).
 *
 * CFI: from the push on, the slot holds the real return address whenever
 * code other than ours runs (the handler fills it before calling any
 * handler), so an unwinder started in a handler (backtrace(), a crash
 * report) walks on into the real caller.  A frame whose return address
 * *is* the trampoline is looked up at trampoline - 1, the nop below,
 * where the return address is undefined: unwinders stop there cleanly
 * (libdprobe puts the real addresses back before a C++ exception or a
 * thread cancellation unwinds, see kretprobe.c).
 */
#define PT_R15		0
#define PT_R14		8
#define PT_R13		16
#define PT_R12		24
#define PT_BP		32
#define PT_BX		40
#define PT_R11		48
#define PT_R10		56
#define PT_R9		64
#define PT_R8		72
#define PT_AX		80
#define PT_CX		88
#define PT_DX		96
#define PT_SI		104
#define PT_DI		112
#define PT_ORIG_AX	120
#define PT_IP		128
#define PT_CS		136
#define PT_FLAGS	144
#define PT_SP		152
#define PT_SS		160
#define PT_DS		184
#define PT_ES		192
#define PT_FS		200
#define PT_GS		208
#define PT_SIZE		216

	.text
	.p2align 4
	.globl	dp_kretprobe_trampoline
	.hidden	dp_kretprobe_trampoline
	.type	dp_kretprobe_trampoline, @function
	.cfi_startproc
	.cfi_undefined rip
	nop
dp_kretprobe_trampoline:
	pushq	$0
	/* CFA = entry %rsp = %rsp + 8; the return address at CFA - 8 */
	.cfi_def_cfa_offset 8
	.cfi_offset rip, -8
	lea	-PT_SIZE(%rsp), %rsp		/* lea: the flags are intact */
	.cfi_adjust_cfa_offset PT_SIZE
	mov	%r15, PT_R15(%rsp)
	mov	%r14, PT_R14(%rsp)
	mov	%r13, PT_R13(%rsp)
	mov	%r12, PT_R12(%rsp)
	mov	%rbp, PT_BP(%rsp)
	.cfi_offset rbp, PT_BP - PT_SIZE - 8
	mov	%rbx, PT_BX(%rsp)
	mov	%r11, PT_R11(%rsp)
	mov	%r10, PT_R10(%rsp)
	mov	%r9, PT_R9(%rsp)
	mov	%r8, PT_R8(%rsp)
	mov	%rax, PT_AX(%rsp)
	mov	%rcx, PT_CX(%rsp)
	mov	%rdx, PT_DX(%rsp)
	mov	%rsi, PT_SI(%rsp)
	mov	%rdi, PT_DI(%rsp)
	pushfq
	.cfi_adjust_cfa_offset 8
	popq	PT_FLAGS(%rsp)
	.cfi_adjust_cfa_offset -8
	lea	PT_SIZE + 8(%rsp), %rax
	mov	%rax, PT_SP(%rsp)
	movq	$-1, PT_ORIG_AX(%rsp)
	movq	$0, PT_IP(%rsp)
	xor	%eax, %eax
	mov	%cs, %eax
	mov	%rax, PT_CS(%rsp)
	mov	%ss, %eax
	mov	%rax, PT_SS(%rsp)
	mov	%ds, %eax
	mov	%rax, PT_DS(%rsp)
	mov	%es, %eax
	mov	%rax, PT_ES(%rsp)
	mov	%fs, %eax
	mov	%rax, PT_FS(%rsp)
	mov	%gs, %eax
	mov	%rax, PT_GS(%rsp)

	mov	%rsp, %rbp
	.cfi_def_cfa_register rbp
	and	$-64, %rsp
	sub	dp_xsave_size(%rip), %rsp
	cmpb	$0, dp_xsave_mode(%rip)
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
	xsave64	(%rsp)
	jmp	2f
1:	fxsave64 (%rsp)
	/* the handlers start with an empty x87 stack, as the ABI wants */
2:	emms

	mov	%rbp, %rdi
	call	dp_kretprobe_handler

	cmpb	$0, dp_xsave_mode(%rip)
	je	3f
	mov	$-1, %eax
	mov	$-1, %edx
	xrstor64 (%rsp)
	jmp	4f
3:	fxrstor64 (%rsp)
4:	mov	%rbp, %rsp
	.cfi_def_cfa_register rsp
	pushq	PT_FLAGS(%rsp)
	.cfi_adjust_cfa_offset 8
	popfq
	.cfi_adjust_cfa_offset -8
	mov	PT_R15(%rsp), %r15
	mov	PT_R14(%rsp), %r14
	mov	PT_R13(%rsp), %r13
	mov	PT_R12(%rsp), %r12
	mov	PT_BP(%rsp), %rbp
	.cfi_restore rbp
	mov	PT_BX(%rsp), %rbx
	mov	PT_R11(%rsp), %r11
	mov	PT_R10(%rsp), %r10
	mov	PT_R9(%rsp), %r9
	mov	PT_R8(%rsp), %r8
	mov	PT_AX(%rsp), %rax
	mov	PT_CX(%rsp), %rcx
	mov	PT_DX(%rsp), %rdx
	mov	PT_SI(%rsp), %rsi
	mov	PT_DI(%rsp), %rdi
	lea	PT_SIZE(%rsp), %rsp
	.cfi_adjust_cfa_offset -PT_SIZE
	ret
	.cfi_endproc
	.size	dp_kretprobe_trampoline, . - dp_kretprobe_trampoline

	.section .note.GNU-stack, "", @progbits
