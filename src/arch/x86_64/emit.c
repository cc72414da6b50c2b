// SPDX-License-Identifier: GPL-2.0
/*
 * The x86-64 code emitter (see emit.h).  Values are stored byte by byte,
 * little-endian, whatever the alignment of the array.
 */
#include <errno.h>

#include "arch/x86_64/emit.h"

/* The single-instruction nops by length (Intel SDM, "NOP"). */
static const uint8_t nops[DP_NOP_MAX_LEN][DP_NOP_MAX_LEN] = {
	{ 0x90 },
	{ 0x66, 0x90 },
	{ 0x0f, 0x1f, 0x00 },
	{ 0x0f, 0x1f, 0x40, 0x00 },
	{ 0x0f, 0x1f, 0x44, 0x00, 0x00 },
	{ 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 },
	{ 0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00 },
	{ 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 },
	{ 0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 },
};

/* Room for @n more bytes?  If not, the cursor remembers it. */
static bool room(struct dp_emit *e, size_t n)
{
	if (e->len > e->cap || n > e->cap - e->len) {
		e->overflow = true;
		return false;
	}
	return true;
}

static void put_le(struct dp_emit *e, uint64_t v, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		e->buf[e->len++] = (uint8_t)(v >> (8 * i));
}

bool dp_emit_rel32(uint64_t end, uint64_t to, int32_t *rel)
{
	int64_t d = (int64_t)(to - end);

	if (d < INT32_MIN || d > INT32_MAX)
		return false;
	*rel = (int32_t)d;
	return true;
}

int dp_emit_bytes(struct dp_emit *e, const void *bytes, size_t n)
{
	const uint8_t *p = bytes;

	if (!room(e, n))
		return -ENOSPC;
	for (size_t i = 0; i < n; i++)
		e->buf[e->len++] = p[i];
	return 0;
}

int dp_emit_u32(struct dp_emit *e, uint32_t v)
{
	if (!room(e, 4))
		return -ENOSPC;
	put_le(e, v, 4);
	return 0;
}

int dp_emit_u64(struct dp_emit *e, uint64_t v)
{
	if (!room(e, 8))
		return -ENOSPC;
	put_le(e, v, 8);
	return 0;
}

/* @op (@oplen bytes) then the rel32 from the instruction's end to @to. */
static int branch(struct dp_emit *e, const uint8_t *op, size_t oplen,
		  uint64_t to)
{
	int32_t rel;

	if (!dp_emit_rel32(dp_emit_here(e) + oplen + 4, to, &rel))
		return -ERANGE;
	if (!room(e, oplen + 4))
		return -ENOSPC;
	for (size_t i = 0; i < oplen; i++)
		e->buf[e->len++] = op[i];
	put_le(e, (uint32_t)rel, 4);
	return 0;
}

int dp_emit_jmp(struct dp_emit *e, uint64_t to)
{
	static const uint8_t op[] = { 0xe9 };

	return branch(e, op, sizeof(op), to);
}

int dp_emit_jmp8(struct dp_emit *e, uint64_t to)
{
	int64_t rel = (int64_t)(to - (dp_emit_here(e) + DP_JMP_REL8_LEN));

	if (rel < -128 || rel > 127)
		return -ERANGE;
	if (!room(e, DP_JMP_REL8_LEN))
		return -ENOSPC;
	e->buf[e->len++] = 0xeb;
	e->buf[e->len++] = (uint8_t)(int8_t)rel;
	return 0;
}

int dp_emit_call(struct dp_emit *e, uint64_t to)
{
	static const uint8_t op[] = { 0xe8 };

	return branch(e, op, sizeof(op), to);
}

int dp_emit_jcc(struct dp_emit *e, unsigned int cond, uint64_t to)
{
	const uint8_t op[] = { 0x0f, (uint8_t)(0x80 | (cond & 0xf)) };

	return branch(e, op, sizeof(op), to);
}

int dp_emit_push_u64(struct dp_emit *e, uint64_t v)
{
	static const uint8_t movl_hi[] = { 0xc7, 0x44, 0x24, 0x04 };
	bool fits = (uint64_t)(int64_t)(int32_t)v == v;

	if (!room(e, fits ? 5 : DP_PUSH_U64_MAX_LEN))
		return -ENOSPC;
	e->buf[e->len++] = 0x68;
	put_le(e, (uint32_t)v, 4);
	if (!fits) {
		for (size_t i = 0; i < sizeof(movl_hi); i++)
			e->buf[e->len++] = movl_hi[i];
		put_le(e, (uint32_t)(v >> 32), 4);
	}
	return 0;
}

int dp_emit_jmp_mem(struct dp_emit *e, uint64_t ptr)
{
	static const uint8_t op[] = { 0xff, 0x25 };

	/* the operand is %rip-relative: the same rel32 as a branch's */
	return branch(e, op, sizeof(op), ptr);
}

int dp_emit_jmp_abs(struct dp_emit *e, uint64_t to)
{
	static const uint8_t op[] = { 0xff, 0x25, 0, 0, 0, 0 };

	if (!room(e, DP_JMP_ABS_LEN))
		return -ENOSPC;
	for (size_t i = 0; i < sizeof(op); i++)
		e->buf[e->len++] = op[i];
	put_le(e, to, 8);
	return 0;
}

int dp_emit_jmp_far(struct dp_emit *e, uint64_t to)
{
	int err = dp_emit_jmp(e, to);

	return err == -ERANGE ? dp_emit_jmp_abs(e, to) : err;
}

int dp_emit_int3(struct dp_emit *e, size_t n)
{
	if (!room(e, n))
		return -ENOSPC;
	for (size_t i = 0; i < n; i++)
		e->buf[e->len++] = DP_INT3;
	return 0;
}

int dp_emit_nops(struct dp_emit *e, size_t n)
{
	if (!room(e, n))
		return -ENOSPC;
	while (n) {
		size_t k = n < DP_NOP_MAX_LEN ? n : DP_NOP_MAX_LEN;

		for (size_t i = 0; i < k; i++)
			e->buf[e->len++] = nops[k - 1][i];
		n -= k;
	}
	return 0;
}
