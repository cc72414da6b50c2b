/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The return trampolines of kretprobes.  At the entry of a probed function
 * its return address (the word at %rsp) was replaced by the address of
 * dp_kretprobe_trampoline, so the function's `ret` lands here with %rsp
 * just above the slot that held it (on a jump-optimised entry, see
 * dp_kretprobe_call below, the function is entered with a call and
 * returns to dp_kretprobe_trampoline_call instead).  The trampoline saves
 * the registers as a struct pt_regs and calls dp_kretprobe_handler(regs),
 * which finds the call's instance, writes the real return address back
 * into the slot, and runs the handlers.  Then the registers are restored
 * (handlers may change them, e.g. ax) and the thread goes through the
 * slot where the function would have returned.
 *
 *	E+0   ...caller's frame...
 *	E-8   the return slot: 0, then the real return address
 *	E-224 struct pt_regs (216 bytes)
 *
 * The flags are neither saved nor restored: after a return they are dead
 * (the ABI keeps only DF, which no C code changes), and pushfq/popfq cost
 * more than the rest; handlers see 0x202 (IF set), as in an optimised
 * kprobe at a function entry.  The extended state (the return value may
 * be in %xmm0/%xmm1 or %st(0)) is not saved here: libdprobe's own code
 * never touches it, and dp_kretprobe_handler() calls the handlers of a
 * kretprobe without KPROBE_FLAG_NOSIMD through dp_call_xsave() below,
 * which saves it around the call.
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
#include "xstate.h"
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

/*
 * The body of both trampolines: the frame, the handler, the registers
 * back; %rsp is left just above the return slot, which then holds the
 * real return address.  CFI as described above.
 */
.macro TRAMPOLINE_BODY
	pushq	$0
	/* CFA = entry %rsp = %rsp + 8; the return address at CFA - 8 */
	.cfi_def_cfa rsp, 8
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
	movq	$0x202, PT_FLAGS(%rsp)
	lea	PT_SIZE + 8(%rsp), %rax
	mov	%rax, PT_SP(%rsp)
	movq	$-1, PT_ORIG_AX(%rsp)

	mov	%rsp, %rbp
	.cfi_def_cfa_register rbp
	and	$-16, %rsp
	mov	%rbp, %rdi
	call	dp_kretprobe_handler

	mov	%rbp, %rsp
	.cfi_def_cfa_register rsp
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
.endm

	.text
	.p2align 4
	.globl	dp_kretprobe_trampoline
	.hidden	dp_kretprobe_trampoline
	.type	dp_kretprobe_trampoline, @function
	.cfi_startproc
	.cfi_undefined rip
	nop
dp_kretprobe_trampoline:
	TRAMPOLINE_BODY
	lea	8(%rsp), %rsp
	.cfi_adjust_cfa_offset -8
	/*
	 * Not `ret`: the function's own ret already consumed the return
	 * stack buffer's entry for this call, so a ret here would be
	 * mispredicted and leave every return above it mispredicted too.
	 * The slot is now 8 bytes below %rsp, in the red zone, which a
	 * signal arriving here does not overwrite.
	 */
	jmp	*-8(%rsp)
	.cfi_endproc
	.size	dp_kretprobe_trampoline, . - dp_kretprobe_trampoline

/*
 * Return probes on a jump-optimised function entry, without the two
 * mispredicted returns of the trampoline above.
 *
 * The detour of an optimised function entry (opt.c) comes here when the
 * pre handlers have just hijacked the return address (the slot at
 * (%rsp) holds dp_kretprobe_trampoline), with the registers of the
 * entry and, at -16(%rsp) (in the red zone, which signals leave alone),
 * the address of the site's tail: the replaced instructions relocated and
 * a jump back into the function.  The tail is entered with a `call`,
 * whose return address, pushed over the same slot, is
 * dp_kretprobe_trampoline_call: the function's own `ret` comes back here
 * as the CPU's return stack predicts, and the `ret` at the end goes to
 * the caller as predicted too.  (Otherwise the detour jumps to the tail
 * itself.)
 *
 * An unwinder reaching a frame whose return address is
 * dp_kretprobe_trampoline_call looks it up at the call instruction,
 * where the return address is undefined: it stops, as at the other.
 */
	.p2align 4
	.globl	dp_kretprobe_call
	.hidden	dp_kretprobe_call
	.type	dp_kretprobe_call, @function
	.globl	dp_kretprobe_trampoline_call
	.hidden	dp_kretprobe_trampoline_call
dp_kretprobe_call:
	.cfi_startproc
	.cfi_undefined rip
	lea	8(%rsp), %rsp			/* the slot is rewritten... */
	.cfi_adjust_cfa_offset -8
	call	*-24(%rsp)			/* ...by the call's push */
dp_kretprobe_trampoline_call:
	TRAMPOLINE_BODY
	ret
	.cfi_endproc
	.size	dp_kretprobe_call, . - dp_kretprobe_call

/*
 * int dp_call_xsave(fn, a, b): fn(a, b) with the extended state (x87,
 * SSE, AVX...) saved before and restored after, for handlers that may
 * use it.  The save area is on the stack, 64-byte aligned, sized by
 * dp_xsave_setup(); dp_xsave_mode: 0 fxsave, 1 xsave, 2 xsavec (only the
 * components in use are written).
 */
	.p2align 4
	.globl	dp_call_xsave
	.hidden	dp_call_xsave
	.type	dp_call_xsave, @function
dp_call_xsave:
	.cfi_startproc
	push	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_offset rbp, -16
	mov	%rsp, %rbp
	.cfi_def_cfa_register rbp
	push	%rbx
	.cfi_offset rbx, -24
	push	%r12
	.cfi_offset r12, -32
	push	%r13
	.cfi_offset r13, -40
	mov	%rdi, %rbx
	mov	%rsi, %r12
	mov	%rdx, %r13
	DP_XSTATE_SAVE
	mov	%r12, %rdi
	mov	%r13, %rsi
	call	*%rbx
	mov	%eax, %ebx
	DP_XSTATE_RESTORE
	mov	%ebx, %eax
	lea	-24(%rbp), %rsp
	pop	%r13
	.cfi_restore r13
	pop	%r12
	.cfi_restore r12
	pop	%rbx
	.cfi_restore rbx
	pop	%rbp
	.cfi_def_cfa rsp, 8
	.cfi_restore rbp
	ret
	.cfi_endproc
	.size	dp_call_xsave, . - dp_call_xsave

/*
 * One word of the probed thread's stack, read or written without
 * crashing: as nofault_copy.S, but a single mov, which a `ret` reading
 * the same word right after can forward from (a rep movsb store cannot).
 * A fault between dp_word_nofault_begin and _end resumes at
 * dp_word_nofault_efault (dp_word_nofault_fixup(), from the SIGSEGV
 * handler), which returns -EFAULT; nothing in between touches the stack.
 *
 *   long dp_load_nofault(const uint64_t *src, uint64_t *dst)   0 or -EFAULT
 *   long dp_store_nofault(uint64_t *dst, uint64_t val)         0 or -EFAULT
 */
	.p2align 4
	.globl	dp_load_nofault
	.hidden	dp_load_nofault
	.type	dp_load_nofault, @function
	.globl	dp_word_nofault_begin
	.hidden	dp_word_nofault_begin
	.globl	dp_word_nofault_end
	.hidden	dp_word_nofault_end
	.globl	dp_word_nofault_efault
	.hidden	dp_word_nofault_efault
dp_load_nofault:
	.cfi_startproc
dp_word_nofault_begin:
	mov	(%rdi), %rax
	mov	%rax, (%rsi)
	xor	%eax, %eax
	ret
	.cfi_endproc
	.size	dp_load_nofault, . - dp_load_nofault

	.globl	dp_store_nofault
	.hidden	dp_store_nofault
	.type	dp_store_nofault, @function
dp_store_nofault:
	.cfi_startproc
	mov	%rsi, (%rdi)
	xor	%eax, %eax
	ret
dp_word_nofault_end:
	.cfi_endproc
	.size	dp_store_nofault, . - dp_store_nofault

	.type	dp_word_nofault_efault, @function
dp_word_nofault_efault:
	.cfi_startproc
	mov	$-14, %rax		/* -EFAULT */
	ret
	.cfi_endproc
	.size	dp_word_nofault_efault, . - dp_word_nofault_efault

	.section .note.GNU-stack, "", @progbits
