// SPDX-License-Identifier: GPL-2.0
/*
 * The user stack at the end of an agent record (engine/agent/protocol.h,
 * DP_AGENT_F_STACK): what the agent writes is taken back whole, and
 * anything a hostile program could leave in its ring instead is refused
 * without a read outside the record; the same for the stack tracer's
 * frames with their depths (DP_AGENT_F_STACKMAX).
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/agent/protocol.h"
#include "event/record.h"

/* A record of @reclen bytes (padded to 8), then @n frames and the word
 * @word, in a buffer of exactly that size (ASan sees any overrun). */
static uint8_t *make(uint32_t reclen, unsigned n, uint64_t word,
		     uint32_t *len)
{
	uint32_t at = (reclen + 7) & ~7u;
	uint8_t *b;

	*len = at + 8 * n + 8;
	b = malloc(*len);
	cr_assert_not_null(b);
	memset(b, 0xab, at);
	for (unsigned i = 0; i < n; i++) {
		uint64_t f = 0x1000 + i;

		memcpy(b + at + 8 * i, &f, 8);
	}
	memcpy(b + at + 8 * n, &word, 8);
	return b;
}

Test(agent_stack, round_trip)
{
	uint64_t out[DP_STACK_MAX];
	unsigned n = 0;
	uint32_t len;
	uint8_t *b = make(29, 5, DP_AGENT_STACK_WORD(5), &len);

	cr_assert_eq(dp_agent_stack_take(b, &len, out, DP_STACK_MAX, &n), 0);
	cr_expect_eq(n, 5);
	cr_expect_eq(len, 32, "the record, padded: %u", len);
	for (unsigned i = 0; i < n; i++)
		cr_expect_eq(out[i], 0x1000 + i);
	free(b);
}

Test(agent_stack, deepest)
{
	uint64_t out[DP_STACK_MAX];
	unsigned n = 0;
	uint32_t len;
	uint8_t *b = make(16, DP_STACK_MAX, DP_AGENT_STACK_WORD(DP_STACK_MAX),
			  &len);

	cr_assert_eq(dp_agent_stack_take(b, &len, out, DP_STACK_MAX, &n), 0);
	cr_expect_eq(n, DP_STACK_MAX);
	cr_expect_eq(len, 16);
	free(b);
}

/* What a program scribbling on its ring could leave: refused, the length
 * and the count untouched. */
Test(agent_stack, hostile)
{
	static const struct {
		uint32_t reclen;
		unsigned n;
		uint64_t word;
	} bad[] = {
		{ 16, 3, 3 },					/* no tag */
		{ 16, 3, DP_AGENT_STACK_WORD(0) },		/* no frame */
		{ 16, 3, DP_AGENT_STACK_WORD(DP_STACK_MAX + 1) },	/* too deep */
		{ 0, 3, DP_AGENT_STACK_WORD(4) },		/* more than there */
		{ 0, 3, DP_AGENT_STACK_WORD(1000000) },		/* far more */
		{ 16, 3, DP_AGENT_STACK_WORD(0xffffffffu) },	/* wraps */
		{ 16, 3, ((uint64_t)(DP_AGENT_STACK_TAG ^ 1) << 32) | 3 },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t out[DP_STACK_MAX];
		unsigned n = 77;
		uint32_t len, before;
		uint8_t *b = make(bad[i].reclen, bad[i].n, bad[i].word, &len);

		before = len;
		cr_expect_eq(dp_agent_stack_take(b, &len, out, DP_STACK_MAX,
						 &n), -1, "case %zu", i);
		cr_expect_eq(len, before, "case %zu", i);
		cr_expect_eq(n, 77, "case %zu", i);
		free(b);
	}
}

/* Shorter than the word itself: refused without a read. */
Test(agent_stack, tiny)
{
	uint64_t out[DP_STACK_MAX];
	uint8_t b[7] = { 0 };
	unsigned n = 0;

	for (uint32_t len = 0; len < 8; len++) {
		uint32_t l = len;

		cr_expect_eq(dp_agent_stack_take(b, &l, out, DP_STACK_MAX, &n),
			     -1);
	}
}

/* ---- the stack tracer's frames and depths (DP_AGENT_F_STACKMAX) ----------- */

/* A record of @reclen bytes (padded to 8), @n frames, @n depths and the
 * word @word, in a buffer of exactly that size. */
static uint8_t *make_depths(uint32_t reclen, unsigned n, uint64_t word,
			    uint32_t *len)
{
	uint32_t at = (reclen + 7) & ~7u;
	uint8_t *b;

	*len = at + 16 * n + 8;
	b = malloc(*len);
	cr_assert_not_null(b);
	memset(b, 0xab, at);
	for (unsigned i = 0; i < n; i++) {
		uint64_t f = 0x1000 + i, d = 4000 - 100 * i;

		memcpy(b + at + 8 * i, &f, 8);
		memcpy(b + at + 8 * (n + i), &d, 8);
	}
	memcpy(b + at + 16 * n, &word, 8);
	return b;
}

Test(agent_depths, round_trip)
{
	uint64_t out[DP_STACK_MAX], dep[DP_STACK_MAX];
	unsigned n = 0;
	uint32_t len;
	uint8_t *b = make_depths(21, DP_STACK_MAX,
				 DP_AGENT_DEPTHS_WORD(DP_STACK_MAX), &len);

	cr_assert_eq(dp_agent_depths_take(b, &len, out, dep, DP_STACK_MAX,
					  &n), 0);
	cr_expect_eq(n, DP_STACK_MAX);
	cr_expect_eq(len, 24, "the record, padded: %u", len);
	for (unsigned i = 0; i < n; i++) {
		cr_expect_eq(out[i], 0x1000 + i);
		cr_expect_eq(dep[i], 4000 - 100 * i);
	}
	free(b);
}

/* A plain stack's word is not a stack tracer's, nor is too much. */
Test(agent_depths, hostile)
{
	static const struct {
		uint32_t reclen;
		unsigned n;
		uint64_t word;
	} bad[] = {
		{ 16, 3, DP_AGENT_STACK_WORD(3) },		/* frames only */
		{ 16, 3, DP_AGENT_DEPTHS_WORD(0) },		/* no frame */
		{ 16, 3, DP_AGENT_DEPTHS_WORD(DP_STACK_MAX + 1) },
		{ 0, 3, DP_AGENT_DEPTHS_WORD(4) },		/* more than there */
		{ 16, 3, DP_AGENT_DEPTHS_WORD(0xffffffffu) },	/* wraps */
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t out[DP_STACK_MAX], dep[DP_STACK_MAX];
		unsigned n = 77;
		uint32_t len, before;
		uint8_t *b = make_depths(bad[i].reclen, bad[i].n, bad[i].word,
					 &len);

		before = len;
		cr_expect_eq(dp_agent_depths_take(b, &len, out, dep,
						  DP_STACK_MAX, &n), -1,
			     "case %zu", i);
		cr_expect_eq(len, before, "case %zu", i);
		cr_expect_eq(n, 77, "case %zu", i);
		free(b);
	}
}

/* ---- snapshots (DP_AGENT_F_DWARF) ----------------------------------------- */

/* A record of @reclen bytes (padded to 8), a snapshot head, @slen stack
 * bytes (padded to 8) and the word @word, in a buffer of exactly that
 * size. */
static uint8_t *make_snap(uint32_t reclen, uint32_t slen, uint64_t word,
			  uint32_t *len)
{
	uint32_t at = (reclen + 7) & ~7u;
	struct dp_agent_snap_head h = { .first = 0x1000, .ret_ip = 0 };
	uint8_t *b;

	*len = at + (uint32_t)sizeof(h) + ((slen + 7) & ~7u) + 8;
	b = malloc(*len);
	cr_assert_not_null(b);
	memset(b, 0xab, at);
	for (int i = 0; i < DP_AGENT_SNAP_NREGS; i++)
		h.regs[i] = 0x100 + (uint64_t)i;
	memcpy(b + at, &h, sizeof(h));
	for (uint32_t i = 0; i < ((slen + 7) & ~7u); i++)
		b[at + sizeof(h) + i] = (uint8_t)i;
	memcpy(b + *len - 8, &word, 8);
	return b;
}

Test(agent_snap, round_trip)
{
	struct dp_agent_snap_head h;
	const uint8_t *stk = NULL;
	uint32_t len, slen = 0;
	uint8_t *b = make_snap(29, 4093, DP_AGENT_SNAP_WORD(4093), &len);

	cr_assert_eq(dp_agent_snap_take(b, &len, 8192, &h, &stk, &slen), 0);
	cr_expect_eq(len, 32, "the record, padded: %u", len);
	cr_expect_eq(slen, 4093);
	cr_expect_eq(h.first, 0x1000);
	cr_expect_eq(h.regs[16], 0x110);
	cr_expect_eq(stk, b + 32 + sizeof(h));
	cr_expect_eq(stk[4092], (uint8_t)4092);
	/* an empty stack (nothing mapped above the stack pointer) */
	free(b);
	b = make_snap(8, 0, DP_AGENT_SNAP_WORD(0), &len);
	cr_assert_eq(dp_agent_snap_take(b, &len, 8192, &h, &stk, &slen), 0);
	cr_expect_eq(len, 8);
	cr_expect_eq(slen, 0);
	free(b);
}

/* A ring's scribbles: refused, nothing changed. */
Test(agent_snap, hostile)
{
	static const struct {
		uint32_t reclen, slen;
		uint64_t word;
	} bad[] = {
		{ 16, 64, 64 },					/* no tag */
		{ 16, 64, DP_AGENT_STACK_WORD(8) },		/* a frame list */
		{ 16, 64, DP_AGENT_SNAP_WORD(8200) },		/* over the max */
		{ 0, 64, DP_AGENT_SNAP_WORD(72) },		/* more than there */
		{ 0, 0, DP_AGENT_SNAP_WORD(8) },		/* 8 bytes missing */
		{ 16, 64, DP_AGENT_SNAP_WORD(0xffffffffu) },	/* wraps */
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct dp_agent_snap_head h;
		const uint8_t *stk = NULL;
		uint32_t len, before, slen = 77;
		uint8_t *b = make_snap(bad[i].reclen, bad[i].slen, bad[i].word,
				       &len);

		before = len;
		cr_expect_eq(dp_agent_snap_take(b, &len, 8192, &h, &stk, &slen),
			     -1, "case %zu", i);
		cr_expect_eq(len, before, "case %zu", i);
		cr_expect_eq(slen, 77, "case %zu", i);
		cr_expect_null(stk, "case %zu", i);
		free(b);
	}
}

/* Shorter than a head and its word: refused, whatever the word says. */
Test(agent_snap, shorter_than_head)
{
	struct dp_agent_snap_head h;
	const uint8_t *stk = NULL;
	uint64_t *b = calloc(32, 8);
	uint32_t slen = 0;

	cr_assert_not_null(b);
	for (uint32_t len = 0; len < sizeof(h) + 8; len += 8) {
		uint32_t l = len;

		if (len)
			b[len / 8 - 1] = DP_AGENT_SNAP_WORD(0);
		cr_expect_eq(dp_agent_snap_take(b, &l, 8192, &h, &stk, &slen),
			     -1, "%u bytes", len);
	}
	free(b);
}
