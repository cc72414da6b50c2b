/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Memory copies that return -EFAULT instead of crashing, with no system
 * call: the kernel's exception-table idea.  Every instruction that may
 * touch a bad address lies between dp_nofault_begin and dp_nofault_end;
 * libdprobe's SIGSEGV/SIGBUS handler sees a fault there and resumes the
 * thread at nofault_efault, which returns -EFAULT to the caller.  Nothing
 * between the labels pushes to the stack, so the fixup's `ret` returns
 * from whichever copy faulted.
 *
 *   long dp_copy_nofault(void *dst, const void *src, size_t len)
 *	0, or -EFAULT
 *   long dp_strncpy_nofault(char *dst, const void *src, size_t size)
 *	bytes copied with the NUL (a truncated string is terminated at
 *	dst[size - 1]), 0 when size is 0, or -EFAULT
 */
	.text
	.p2align 4
	.globl	dp_copy_nofault
	.hidden	dp_copy_nofault
	.type	dp_copy_nofault, @function
	.globl	dp_nofault_begin
	.hidden	dp_nofault_begin
	.globl	dp_nofault_end
	.hidden	dp_nofault_end
	.globl	dp_nofault_efault
	.hidden	dp_nofault_efault
dp_copy_nofault:
	.cfi_startproc
	mov	%rdx, %rcx
dp_nofault_begin:
	rep movsb
	xor	%eax, %eax
	ret
	.cfi_endproc
	.size	dp_copy_nofault, . - dp_copy_nofault

	.p2align 4
	.globl	dp_strncpy_nofault
	.hidden	dp_strncpy_nofault
	.type	dp_strncpy_nofault, @function
dp_strncpy_nofault:
	.cfi_startproc
	xor	%eax, %eax
	test	%rdx, %rdx
	jz	2f
1:	movzbl	(%rsi,%rax), %ecx
	mov	%cl, (%rdi,%rax)
	inc	%rax
	test	%cl, %cl
	jz	2f
	cmp	%rdx, %rax
	jb	1b
	movb	$0, -1(%rdi,%rax)
2:	ret
dp_nofault_end:
	.cfi_endproc
	.size	dp_strncpy_nofault, . - dp_strncpy_nofault

	.p2align 4
	.type	dp_nofault_efault, @function
dp_nofault_efault:
	.cfi_startproc
	mov	$-14, %rax		/* -EFAULT */
	ret
	.cfi_endproc
	.size	dp_nofault_efault, . - dp_nofault_efault

	.section .note.GNU-stack, "", @progbits
