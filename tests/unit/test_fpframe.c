// SPDX-License-Identifier: GPL-2.0
/*
 * Frame-pointer walks that stop early (arch/x86_64/frame.h,
 * sym/fpframe.h): each frame pointer's check, the prologue of a function
 * that keeps a frame pointer, and the decision that keeps a walk's
 * DP_STACK_BAD_FRAME only where a frame was expected.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <unistd.h>

#include "arch/arch.h"
#include "event/record.h"
#include "sym/fpframe.h"

#define SP 0x7ffe00001000ull

Test(fpframe, check)
{
	/* 0: the chain's end, as _start and a new thread leave %rbp */
	cr_expect_eq(dp_frame_check(0, SP, SP), DP_FRAME_END);
	cr_expect_eq(dp_frame_check(SP, SP, SP), DP_FRAME_NEXT);
	cr_expect_eq(dp_frame_check(SP + 0x40, SP + 0x10, SP), DP_FRAME_NEXT);
	cr_expect_eq(dp_frame_check(SP + DP_FRAME_SPAN, SP, SP),
		     DP_FRAME_NEXT);
	/* misaligned, below the stack pointer, back below the frame
	 * before (a loop), out of the span, a kernel address, 1 (what
	 * glibc's __libc_start_call_main leaves in %rbp) */
	cr_expect_eq(dp_frame_check(SP + 0x44, SP, SP), DP_FRAME_BAD);
	cr_expect_eq(dp_frame_check(SP - 0x40, SP - 0x80, SP), DP_FRAME_BAD);
	cr_expect_eq(dp_frame_check(SP + 0x40, SP + 0x50, SP), DP_FRAME_BAD);
	cr_expect_eq(dp_frame_check(SP + DP_FRAME_SPAN + 8, SP, SP),
		     DP_FRAME_BAD);
	cr_expect_eq(dp_frame_check(0xffff888000000000ull, SP, SP),
		     DP_FRAME_BAD);
	cr_expect_eq(dp_frame_check(1, SP, SP), DP_FRAME_BAD);
}

Test(fpframe, prologue)
{
	static const uint8_t plain[] = { 0x55, 0x48, 0x89, 0xe5, 0x90 };
	static const uint8_t cet[] = { 0xf3, 0x0f, 0x1e, 0xfa,
				       0x55, 0x48, 0x89, 0xe5 };
	static const uint8_t other_mov[] = { 0x55, 0x48, 0x8b, 0xec };
	/* no frame: push %rbx first; sub from %rsp; endbr64 then a push
	 * of another register; a push of %rbp without the mov */
	static const uint8_t none1[] = { 0x53, 0x48, 0x89, 0xfb };
	static const uint8_t none2[] = { 0x48, 0x83, 0xec, 0x08 };
	static const uint8_t none3[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x41, 0x54 };
	static const uint8_t none4[] = { 0x55, 0x53, 0x48, 0x89, 0xfd };

	cr_expect_eq(dp_frame_prologue(plain, sizeof(plain)), 4);
	cr_expect_eq(dp_frame_prologue(cet, sizeof(cet)), 8);
	cr_expect_eq(dp_frame_prologue(other_mov, sizeof(other_mov)), 4);
	cr_expect_eq(dp_frame_prologue(none1, sizeof(none1)), 0);
	cr_expect_eq(dp_frame_prologue(none2, sizeof(none2)), 0);
	cr_expect_eq(dp_frame_prologue(none3, sizeof(none3)), 0);
	cr_expect_eq(dp_frame_prologue(none4, sizeof(none4)), 0);
	/* cut short: never read past @len */
	cr_expect_eq(dp_frame_prologue(plain, 3), 0);
	cr_expect_eq(dp_frame_prologue(cet, 7), 0);
	cr_expect_eq(dp_frame_prologue(cet, 0), 0);
}

/* Code from 0x1000 to 0x2000 keeps frame pointers; the rest does not. */
static unsigned asked;
static bool keeps(void *arg, uint64_t addr)
{
	(void)arg;
	asked++;
	return addr >= 0x1000 && addr < 0x2000;
}

static unsigned settle(uint64_t *s, unsigned n)
{
	dp_stack_settle(s, &n, keeps, NULL);
	return n;
}

Test(fpframe, settle)
{
	/* the frame pointer met last was the %rbp of the code that the
	 * return address before the mark returns into */
	uint64_t fp_code[] = { 0x5000, 0x1100, DP_STACK_BAD_FRAME };
	uint64_t no_fp[] = { 0x5000, 0x1100, 0x3100, DP_STACK_BAD_FRAME };
	/* the return address is the byte after the call: a call that is
	 * the last instruction of frame-keeping code */
	uint64_t edge[] = { 0x5000, 0x2000, DP_STACK_BAD_FRAME };
	/* only the probed place before the mark: its own frame, which a
	 * probe inside a prologue or an epilogue cannot tell */
	uint64_t first[] = { 0x1100, DP_STACK_BAD_FRAME };
	uint64_t ended[] = { 0x5000, 0x1100, 0x1200 };

	cr_expect_eq(settle(fp_code, 3), 3);
	cr_expect_eq(settle(no_fp, 4), 3);
	cr_expect_eq(settle(edge, 3), 3);
	asked = 0;
	cr_expect_eq(settle(first, 2), 1);
	cr_expect_eq(settle(ended, 3), 3);
	cr_expect_eq(settle(ended, 0), 0);
	cr_expect_eq(asked, 0, "asked about a stack without the mark");
}

/* Two functions of this program, one keeping a frame pointer (written
 * out: the compiler's choice depends on the build's flags). */
__asm__(".text\n"
	".type fp_with, @function\n"
	"fp_with:\n\tpush %rbp\n\tmov %rsp, %rbp\n"
	"\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n"
	"\tpop %rbp\n\tret\n"
	".size fp_with, . - fp_with\n"
	".type fp_without, @function\n"
	"fp_without:\n\tpush %rbx\n"
	"\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n"
	"\tpop %rbx\n\tret\n"
	".size fp_without, . - fp_without\n");
extern const char fp_with[], fp_without[];

/* dp_proc_keeps_fp() on this process: the symbol's first bytes. */
Test(fpframe, own_functions)
{
	uint64_t a = (uint64_t)(uintptr_t)fp_with;
	uint64_t b = (uint64_t)(uintptr_t)fp_without;
	struct dp_proc *p;
	char why[256];

	cr_assert_eq(dp_proc_open(getpid(), &p, why, sizeof(why)), 0, "%s",
		     why);
	cr_expect(dp_proc_keeps_fp(p, a + 6), "past fp_with's prologue");
	cr_expect_not(dp_proc_keeps_fp(p, a), "inside the prologue");
	cr_expect_not(dp_proc_keeps_fp(p, b + 6));
	cr_expect_not(dp_proc_keeps_fp(p, 0x10), "no object there");
	cr_expect_not(dp_proc_keeps_fp(NULL, a + 6));
	dp_proc_close(p);
}
