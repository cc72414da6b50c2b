/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DWARF (CFI) unwinding of a user stack from a snapshot taken at a hit
 * (dprobe trace --call-graph dwarf): the registers and a copy of the
 * bytes above the stack pointer, unwound later, off the hit path, with
 * libdw's frame API over the call-frame information (.eh_frame) of the
 * objects the process maps.
 *
 * The snapshot comes from the traced process (its ring, or its memory at
 * a ptrace stop) and is believed in nothing: memory is read only from
 * the copy, code and CFI only from dprobe's own copies of the mapped
 * files (struct dp_elf), the walk stops at a bound, and garbage gives a
 * short stack, never a crash.
 */
#ifndef DPROBE_SYM_UNWIND_H
#define DPROBE_SYM_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sym/proc.h"

/*
 * The registers a snapshot holds, in x86-64's DWARF numbering: rax rdx
 * rcx rbx rsi rdi rbp rsp (0-7), r8-r15 (8-15), rip (16).
 */
#define DP_UNWIND_NREGS	17
#define DP_UNWIND_RSP	7
#define DP_UNWIND_RIP	16

/* The default and the largest stack copy, in bytes (perf's default). */
#define DP_UNWIND_DEFAULT_SIZE	8192u
#define DP_UNWIND_MAX_SIZE	32768u

struct dp_stack_snap {
	uint64_t regs[DP_UNWIND_NREGS];
	const uint8_t *stack;	/* @len bytes copied from regs[RSP] up */
	size_t len;
	/* the copy is shorter than asked for: it stopped where the stack
	 * ends, nothing of it lies above (else it was cut at the size) */
	bool whole;
};

struct dp_unwinder;

/* An unwinder over the objects @p maps (read again as @p's set changes). */
int dp_unwinder_new(struct dp_proc *p, struct dp_unwinder **out);
void dp_unwinder_free(struct dp_unwinder *u);

/*
 * The frames of snapshot @s of thread @tid into @out (at most @max): the
 * snapshot's rip, then each caller's return address, innermost first.
 * Returns how many (0 if @max is 0).  *@complete (may be NULL) says
 * whether the walk reached the outermost frame (the CFI said so) rather
 * than stopping at @max or where the snapshot or the CFI gave out.
 *
 * A walk that stopped at a bad frame ends with DP_STACK_BAD_FRAME
 * (event/record.h), counted, when there is room: a caller's return
 * address or CFA that the CFI puts below the stack pointer, unaligned,
 * beyond the stack's end (@s->whole) or far above it; a return address
 * that can be no code (low, kernel half, a mapping of data).  Not marked:
 * the end of the copy of a stack cut at its size, a pc without CFI that
 * may be code (JIT code): the walk cannot tell; a return address 0,
 * which libdwfl takes for the outermost frame.
 */
unsigned dp_unwind(struct dp_unwinder *u, pid_t tid,
		   const struct dp_stack_snap *s, uint64_t *out, unsigned max,
		   bool *complete);

#endif
