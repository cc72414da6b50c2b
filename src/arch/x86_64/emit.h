/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one writer of x86-64 control-transfer bytes: jmp, call and jcc with
 * a rel32, the absolute jump, int3 and nop fill.  Slots, detours, tails,
 * the tracepoints' jmp/nop and the engines' breakpoints are all built
 * through it, so each encoding is written down once.
 *
 * A struct dp_emit is a cursor over a caller's byte array: @pc is the
 * address at which buf[0] will run, so a rel32 is computed from where the
 * instruction really ends (pc + len after it), not from the array.  Every
 * call either writes the whole instruction or nothing:
 *   -ENOSPC  it does not fit in the @cap bytes (@overflow is then set, so
 *            a sequence of writes may be checked once at the end)
 *   -ERANGE  a rel32 cannot reach the target (beyond +-2 GiB)
 * Nothing here allocates or calls a library function, so the in-process
 * agent may build code anywhere.
 */
#ifndef DPROBE_ARCH_EMIT_H
#define DPROBE_ARCH_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DP_INT3			0xcc	/* the breakpoint: one byte */
#define DP_JMP_REL32_LEN	5	/* e9 rel32 */
#define DP_JMP_REL8_LEN		2	/* eb rel8 */
#define DP_CALL_REL32_LEN	5	/* e8 rel32 */
#define DP_JCC_REL32_LEN	6	/* 0f 8x rel32 */
#define DP_JMP_ABS_LEN		14	/* ff 25 00000000, then addr64 */
#define DP_NOP_MAX_LEN		9	/* the longest nop it writes */
#define DP_PUSH_U64_MAX_LEN	13	/* 68 imm32, c7 44 24 04 imm32 */
#define DP_JMP_MEM_LEN		6	/* ff 25 rel32 */

struct dp_emit {
	uint8_t *buf;
	size_t cap, len;	/* bytes available, bytes written */
	uint64_t pc;		/* run-time address of buf[0] */
	bool overflow;		/* some write did not fit */
};

/* A cursor over @cap bytes at @buf, which will run at address @pc. */
static inline void dp_emit_init(struct dp_emit *e, void *buf, size_t cap,
				uint64_t pc)
{
	e->buf = buf;
	e->cap = cap;
	e->len = 0;
	e->pc = pc;
	e->overflow = false;
}

/* Run-time address of the next byte written. */
static inline uint64_t dp_emit_here(const struct dp_emit *e)
{
	return e->pc + e->len;
}

/*
 * The rel32 of an instruction ending at @end that goes to @to, in *@rel;
 * false if it does not fit in a signed 32-bit displacement.
 */
bool dp_emit_rel32(uint64_t end, uint64_t to, int32_t *rel);

/* @n raw bytes (an instruction the caller encoded itself); 0 or -ENOSPC. */
int dp_emit_bytes(struct dp_emit *e, const void *bytes, size_t n);
/* A little-endian 32- or 64-bit value; 0 or -ENOSPC. */
int dp_emit_u32(struct dp_emit *e, uint32_t v);
int dp_emit_u64(struct dp_emit *e, uint64_t v);

/* jmp rel32 / call rel32 to @to; 0, -ERANGE or -ENOSPC. */
int dp_emit_jmp(struct dp_emit *e, uint64_t to);
int dp_emit_call(struct dp_emit *e, uint64_t to);
/* jmp rel8 (`jmp short`) to @to; 0, -ERANGE (beyond -128..127) or -ENOSPC. */
int dp_emit_jmp8(struct dp_emit *e, uint64_t to);
/* jcc rel32 to @to, @cond the condition code (0-15, jne is 5). */
int dp_emit_jcc(struct dp_emit *e, unsigned int cond, uint64_t to);

/*
 * Push the 64-bit @v using no register and leaving the flags alone:
 * `push $imm32` (sign-extended to 64 bits), then `movl $hi,4(%rsp)` when
 * that extension is not @v's upper half (DP_PUSH_U64_MAX_LEN in all).
 * Like a call's push it writes only the 8 bytes at the new %rsp, nothing
 * below it.  0 or -ENOSPC.
 */
int dp_emit_push_u64(struct dp_emit *e, uint64_t v);

/* `jmp *rel32(%rip)`: to the address stored at @ptr; 0, -ERANGE, -ENOSPC. */
int dp_emit_jmp_mem(struct dp_emit *e, uint64_t ptr);

/* `jmp *0(%rip)` then the 8-byte @to: reaches anywhere. 0 or -ENOSPC. */
int dp_emit_jmp_abs(struct dp_emit *e, uint64_t to);
/* jmp rel32 if it reaches @to, else the absolute jump; 0 or -ENOSPC. */
int dp_emit_jmp_far(struct dp_emit *e, uint64_t to);

/* @n int3; 0 or -ENOSPC. */
int dp_emit_int3(struct dp_emit *e, size_t n);

/*
 * @n bytes of nops: the recommended single-instruction nops of 1 to
 * DP_NOP_MAX_LEN bytes (90, 66 90, 0f 1f 00, ... 66 0f 1f 84 00 00000000),
 * as few as possible, the longest first.  The 5-byte one, 0f 1f 44 00 00,
 * is an application tracepoint's disabled form.  0 or -ENOSPC.
 */
int dp_emit_nops(struct dp_emit *e, size_t n);

#endif
