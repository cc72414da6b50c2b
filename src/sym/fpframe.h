/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whether a frame-pointer walk that stopped early met a bad frame or the
 * end of the chain.  The walks (the agent's at a hit, the ptrace
 * engine's at a stop) end a stack with DP_STACK_BAD_FRAME (event/
 * record.h) wherever the next frame pointer is no frame pointer; that is
 * a bad frame only if the code the frame pointer belongs to keeps one.
 * Code built without frame pointers (most -O2 code, the C library's
 * start code: its %rbp is whatever it holds, 1 in glibc 2.36's
 * __libc_start_call_main) uses %rbp as it likes, and a walk that reaches
 * it has reached the end of what frame pointers can tell: no mark, or
 * every stack of every optimised program would carry one.
 */
#ifndef DPROBE_SYM_FPFRAME_H
#define DPROBE_SYM_FPFRAME_H

#include <stdbool.h>
#include <stdint.h>

#include "sym/proc.h"

/* Whether the code at run-time address @addr keeps a frame pointer. */
typedef bool (*dp_keeps_fp_fn)(void *arg, uint64_t addr);

/*
 * The stack of @*n entries at @stack (innermost first), settled: a
 * DP_STACK_BAD_FRAME at its end stays only where a frame was expected,
 * that is when the entry before it is a return address (not the first
 * entry, the probed place) into code that @keeps says keeps a frame
 * pointer (the frame pointer met last is that code's %rbp); otherwise it
 * is dropped (*@n one less).
 */
void dp_stack_settle(uint64_t *stack, unsigned *n, dp_keeps_fp_fn keeps,
		     void *arg);

/*
 * Whether the function of @p containing @addr (by its symbol) starts
 * with the frame-making prologue (arch/x86_64/frame.h) and @addr is past
 * it.  False where no symbol or no file bytes say so: without knowing,
 * no frame is expected.
 */
bool dp_proc_keeps_fp(struct dp_proc *p, uint64_t addr);

/* dp_stack_settle() with dp_proc_keeps_fp() on @p. */
void dp_proc_stack_settle(struct dp_proc *p, uint64_t *stack, unsigned *n);

#endif
