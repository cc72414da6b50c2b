/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a jump guard's stub (maskguard.c) sends sigprocmask() or
 * pthread_sigmask(): %edi how, %rsi set, %rdx oset as the caller passed
 * them, %r11 the tail (the function's first instruction relocated, then
 * the rest of it), (%rsp) the caller's return address.  %rax, %rcx and
 * %r8-%r11 hold nothing at the entry of a three-argument function.
 *
 * A call that cannot block anything (no set, SIG_UNBLOCK) goes straight
 * on, as if nothing were there.  Otherwise dp_maskguard_set() chooses the
 * set (the caller's, or a copy without SIGTRAP in our frame), and the
 * function runs on it from here, returning to us, then to the caller.
 */
#define SIG_UNBLOCK 1	/* <signal.h>'s, which is C */
#define FRAME	128		/* the copy: a glibc sigset_t */

	.text
	.p2align 4
	.globl	dp_maskguard_entry
	.hidden	dp_maskguard_entry
	.type	dp_maskguard_entry, @function
dp_maskguard_entry:
	.cfi_startproc
	test	%rsi, %rsi
	jz	1f
	cmp	$SIG_UNBLOCK, %edi
	je	1f
	push	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_offset rbp, -16
	mov	%rsp, %rbp
	.cfi_def_cfa_register rbp
	push	%r11
	push	%rdi
	push	%rsi
	push	%rdx
	sub	$FRAME, %rsp		/* 16-byte aligned again */
	xor	%eax, %eax
	mov	$FRAME / 8, %ecx
2:	mov	%rax, -8(%rsp, %rcx, 8)
	dec	%ecx
	jnz	2b
	mov	%rsp, %rdx
	call	dp_maskguard_set
	mov	%rax, %rsi
	mov	-16(%rbp), %rdi
	mov	-32(%rbp), %rdx
	mov	-8(%rbp), %r11
	call	*%r11
	leave
	.cfi_def_cfa rsp, 8
	.cfi_restore rbp
	ret
1:	jmp	*%r11
	.cfi_endproc
	.size	dp_maskguard_entry, . - dp_maskguard_entry

	.section .note.GNU-stack, "", @progbits
