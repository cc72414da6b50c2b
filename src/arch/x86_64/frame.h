/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The frame-pointer convention of x86-64 code built with frame pointers:
 * a function starts with `push %rbp; mov %rsp,%rbp` (after an endbr64
 * under CET), so that while it runs %rbp points at its frame, the saved
 * %rbp of its caller at [%rbp] and its return address at [%rbp + 8].
 *
 * Header-only: the agent's walk at a hit (engine/agent/stack.c) and the
 * ptrace engine's at a stop use the same check of each frame pointer,
 * and dprobe decides from a function's first bytes whether it keeps a
 * frame (sym/fpframe.c).
 */
#ifndef DPROBE_ARCH_FRAME_H
#define DPROBE_ARCH_FRAME_H

#include <stddef.h>
#include <stdint.h>

/*
 * How far above the stack pointer a frame may be: a thread's stack is
 * 8 MiB by default; what lies further is not a frame of it.  A garbage
 * %rbp (code built without frame pointers) is mostly caught here, before
 * any read.
 */
#define DP_FRAME_SPAN (16ull << 20)

enum dp_frame_step {
	DP_FRAME_NEXT,		/* a frame to read at @fp */
	DP_FRAME_END,		/* 0: the chain's outermost end, as _start
				 * and a new thread's start leave %rbp */
	DP_FRAME_BAD,		/* not a frame pointer of this stack */
};

/*
 * What frame pointer @fp is, on a stack whose pointer is @sp, after
 * frames that end at @lo (@sp for the first): a frame lies above the
 * stack pointer and above the frame before it, 8-byte aligned, within
 * DP_FRAME_SPAN.  Whether the frame's words then read is the caller's.
 */
static inline enum dp_frame_step dp_frame_check(uint64_t fp, uint64_t lo,
						uint64_t sp)
{
	if (!fp)
		return DP_FRAME_END;
	if ((fp & 7) || fp < lo || fp < sp || fp - sp > DP_FRAME_SPAN)
		return DP_FRAME_BAD;
	return DP_FRAME_NEXT;
}

/*
 * The length of the frame-making prologue that @code (@len bytes of a
 * function's start) begins with: [endbr64] push %rbp; mov %rsp,%rbp
 * (either encoding of the mov).  0 when it does not: the function keeps
 * no frame pointer, or makes it later (shrink-wrapped) or otherwise.
 */
static inline unsigned dp_frame_prologue(const uint8_t *code, size_t len)
{
	static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	unsigned at = 0;

	if (len >= 4 && !__builtin_memcmp(code, endbr64, 4))
		at = 4;
	if (len < at + 4u || code[at] != 0x55 || code[at + 1] != 0x48)
		return 0;
	if ((code[at + 2] == 0x89 && code[at + 3] == 0xe5) ||
	    (code[at + 2] == 0x8b && code[at + 3] == 0xec))
		return at + 4;
	return 0;
}

#endif
