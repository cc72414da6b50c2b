// SPDX-License-Identifier: GPL-2.0
/*
 * arch/x86_64/emit: every sequence the emitter writes, decoded back with
 * dprobe's own decoder (dp_insn_analyze(), Zydis underneath), is the
 * instruction asked for, with the length and the target asked for; a
 * rel32 out of reach and a write past the array are refused and leave
 * the array as it was.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include <criterion/criterion.h>
#include <Zydis/Zydis.h>

#include "arch/arch.h"

/* Where the arrays "run": high enough that +-2 GiB does not wrap. */
#define PC 0x7f1234560000ull
#define FILLER 0x5a

static uint8_t buf[64];
static struct dp_emit e;

static void fresh(size_t cap, uint64_t pc)
{
	cr_assert_leq(cap, sizeof(buf));
	memset(buf, FILLER, sizeof(buf));
	dp_emit_init(&e, buf, cap, pc);
}

/* The instruction at buf[@off], which runs at @pc + @off. */
static void decode_at(size_t off, struct dp_insn *in, int want)
{
	const char *why = NULL;
	int ret = dp_insn_analyze(buf + off, e.len - off, e.pc + off, in, &why);

	cr_assert_eq(ret, want, "decode at %zu: %d (%s)", off, ret,
		     why ? why : "-");
}

static ZydisMnemonic zydis_mnemonic(const uint8_t *p, size_t n, size_t *len)
{
	ZydisDecoder d;
	ZydisDecodedInstruction insn;

	ZydisDecoderInit(&d, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	cr_assert(ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&d, NULL, p, n,
							     &insn)));
	*len = insn.length;
	return insn.mnemonic;
}

static void untouched_from(size_t off)
{
	for (size_t i = off; i < sizeof(buf); i++)
		cr_assert_eq(buf[i], FILLER, "byte %zu written", i);
}

/* ---- rel32 branches ------------------------------------------------------ */

static void check_branch(enum dp_insn_op op, size_t len, uint64_t to,
			 size_t at)
{
	struct dp_insn in;

	cr_assert_eq(e.len, at + len);
	decode_at(at, &in, 0);
	cr_assert_eq(in.op, op);
	cr_assert_eq(in.len, len);
	cr_assert_eq(in.target, to, "target %#lx, asked %#lx",
		     (unsigned long)in.target, (unsigned long)to);
}

Test(emit, jmp_and_call)
{
	const uint64_t to[] = { PC, PC + 5, PC - 0x1000, PC + 0x12345678,
				PC + 5 + INT32_MAX, PC + 5 + INT32_MIN };

	for (size_t i = 0; i < sizeof(to) / sizeof(to[0]); i++) {
		fresh(sizeof(buf), PC);
		cr_assert_eq(dp_emit_jmp(&e, to[i]), 0);
		check_branch(DP_OP_JMP, DP_JMP_REL32_LEN, to[i], 0);
		cr_assert_eq(buf[0], 0xe9);

		fresh(sizeof(buf), PC);
		cr_assert_eq(dp_emit_call(&e, to[i]), 0);
		check_branch(DP_OP_CALL, DP_CALL_REL32_LEN, to[i], 0);
		cr_assert_eq(buf[0], 0xe8);
		untouched_from(DP_CALL_REL32_LEN);
	}
}

Test(emit, rel32_from_where_it_runs)
{
	/* after 7 bytes the rel32 counts from pc + 7 + 5, not from buf */
	fresh(sizeof(buf), PC);
	cr_assert_eq(dp_emit_int3(&e, 7), 0);
	cr_assert_eq(dp_emit_here(&e), PC + 7);
	cr_assert_eq(dp_emit_jmp(&e, PC + 0x100), 0);
	check_branch(DP_OP_JMP, 5, PC + 0x100, 7);
	cr_assert_eq(dp_emit_call(&e, PC - 0x100), 0);
	check_branch(DP_OP_CALL, 5, PC - 0x100, 12);
}

/* jmp short: the pre-entry jump of -fpatchable-function-entry=N,M sites */
Test(emit, jmp8)
{
	const uint64_t ok[] = { PC + 2, PC + 2 + 127, PC + 2 - 128, PC - 7 };
	const uint64_t far[] = { PC + 2 + 128, PC + 2 - 129, PC + 0x1000 };

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		fresh(sizeof(buf), PC);
		cr_assert_eq(dp_emit_jmp8(&e, ok[i]), 0);
		check_branch(DP_OP_JMP, DP_JMP_REL8_LEN, ok[i], 0);
		cr_assert_eq(buf[0], 0xeb);
		untouched_from(DP_JMP_REL8_LEN);
	}
	for (size_t i = 0; i < sizeof(far) / sizeof(far[0]); i++) {
		fresh(sizeof(buf), PC);
		cr_assert_eq(dp_emit_jmp8(&e, far[i]), -ERANGE);
		cr_assert_eq(e.len, 0);
		untouched_from(0);
	}
	fresh(1, PC);
	cr_assert_eq(dp_emit_jmp8(&e, PC), -ENOSPC);
	untouched_from(0);
}

Test(emit, all_jcc)
{
	for (unsigned int cond = 0; cond < 16; cond++) {
		const uint64_t to = PC + 0x40 - 0x11 * cond;
		struct dp_insn in;

		fresh(sizeof(buf), PC);
		cr_assert_eq(dp_emit_jcc(&e, cond, to), 0);
		check_branch(DP_OP_JCC, DP_JCC_REL32_LEN, to, 0);
		decode_at(0, &in, 0);
		cr_assert_eq(in.cond, cond);
		cr_assert_eq(buf[0], 0x0f);
		cr_assert_eq(buf[1], 0x80 | cond);
	}
}

Test(emit, rel32_out_of_range)
{
	const uint64_t far[] = { PC + 6 + INT32_MAX + 1ull,
				 PC + 5 + INT32_MIN - 1ull, PC + (8ull << 30),
				 0x1000 };
	int32_t rel;

	cr_assert(dp_emit_rel32(PC, PC + INT32_MAX, &rel));
	cr_assert_eq(rel, INT32_MAX);
	cr_assert(dp_emit_rel32(PC, PC + INT32_MIN, &rel));
	cr_assert_eq(rel, INT32_MIN);
	for (size_t i = 0; i < sizeof(far) / sizeof(far[0]); i++) {
		fresh(sizeof(buf), PC);
		cr_assert_eq(dp_emit_jmp(&e, far[i]), -ERANGE);
		cr_assert_eq(dp_emit_call(&e, far[i]), -ERANGE);
		cr_assert_eq(dp_emit_jcc(&e, 5, far[i]), -ERANGE);
		cr_assert_not(dp_emit_rel32(PC + 6, far[i], &rel));
		cr_assert_eq(e.len, 0);
		cr_assert_not(e.overflow);
		untouched_from(0);
	}
}

/* ---- the absolute jump --------------------------------------------------- */

static void check_abs(size_t at, uint64_t to)
{
	struct dp_insn in;
	uint64_t q = 0;

	decode_at(at, &in, 0);
	cr_assert_eq(in.op, DP_OP_JMP_IND);
	cr_assert_eq(in.len, 6);
	/* jmp *0(%rip): the pointer is right after the instruction */
	cr_assert_eq(in.rm.reg, DP_INSN_NOREG);
	cr_assert_eq(in.rm.base, DP_INSN_NOREG);
	cr_assert_eq((uint64_t)in.rm.disp, e.pc + at + 6);
	for (int i = 0; i < 8; i++)
		q |= (uint64_t)buf[at + 6 + i] << (8 * i);
	cr_assert_eq(q, to);
}

Test(emit, jmp_abs)
{
	fresh(sizeof(buf), PC);
	cr_assert_eq(dp_emit_jmp_abs(&e, 0x1122334455667788ull), 0);
	cr_assert_eq(e.len, DP_JMP_ABS_LEN);
	check_abs(0, 0x1122334455667788ull);
	untouched_from(DP_JMP_ABS_LEN);
}

Test(emit, jmp_far_picks_the_form)
{
	/* in reach: rel32 */
	fresh(sizeof(buf), PC);
	cr_assert_eq(dp_emit_jmp_far(&e, PC + 0x7fff0000), 0);
	check_branch(DP_OP_JMP, 5, PC + 0x7fff0000, 0);
	/* out of reach, both ways: the absolute jump */
	fresh(sizeof(buf), PC);
	cr_assert_eq(dp_emit_jmp_far(&e, 0x400000), 0);
	cr_assert_eq(e.len, DP_JMP_ABS_LEN);
	check_abs(0, 0x400000);
	cr_assert_eq(dp_emit_jmp_far(&e, PC + (4ull << 30)), 0);
	cr_assert_eq(e.len, 2 * DP_JMP_ABS_LEN);
	check_abs(DP_JMP_ABS_LEN, PC + (4ull << 30));
}

/* ---- int3, nops, raw bytes ----------------------------------------------- */

Test(emit, int3)
{
	struct dp_insn in;
	size_t len;

	cr_assert_eq(DP_INT3, 0xcc);
	fresh(sizeof(buf), PC);
	cr_assert_eq(dp_emit_int3(&e, 3), 0);
	cr_assert_eq(e.len, 3);
	for (size_t i = 0; i < 3; i++) {
		decode_at(i, &in, -EEXIST);	/* "int3 is already there" */
		cr_assert_eq(zydis_mnemonic(buf + i, 3 - i, &len),
			     ZYDIS_MNEMONIC_INT3);
		cr_assert_eq(len, 1);
	}
	untouched_from(3);
}

Test(emit, nop_fill)
{
	for (size_t n = 0; n <= 40; n++) {
		size_t off = 0, count = 0;

		fresh(sizeof(buf), PC);
		cr_assert_eq(dp_emit_nops(&e, n), 0);
		cr_assert_eq(e.len, n);
		while (off < n) {
			struct dp_insn in;
			size_t len;

			decode_at(off, &in, 0);
			cr_assert_eq(in.op, DP_OP_NOP, "n=%zu off=%zu", n, off);
			cr_assert_eq(zydis_mnemonic(buf + off, n - off, &len),
				     ZYDIS_MNEMONIC_NOP);
			cr_assert_eq(len, in.len);
			off += in.len;
			count++;
		}
		cr_assert_eq(off, n, "n=%zu: nops end at %zu", n, off);
		/* as few as possible: one up to the longest nop */
		cr_assert_eq(count, (n + DP_NOP_MAX_LEN - 1) / DP_NOP_MAX_LEN);
		untouched_from(n);
	}
}

Test(emit, nop5_is_the_tracepoint_nop)
{
	static const uint8_t nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

	fresh(sizeof(buf), PC);
	cr_assert_eq(dp_emit_nops(&e, 5), 0);
	cr_assert_arr_eq(buf, nop5, sizeof(nop5));
}

Test(emit, raw_bytes_and_values)
{
	static const uint8_t want[] = { 0x48, 0x89, 0xe7, 0x78, 0x56, 0x34,
					0x12, 8, 7, 6, 5, 4, 3, 2, 1 };
	static const uint8_t mov[] = { 0x48, 0x89, 0xe7 };

	fresh(sizeof(buf), PC);
	cr_assert_eq(dp_emit_bytes(&e, mov, sizeof(mov)), 0);
	cr_assert_eq(dp_emit_u32(&e, 0x12345678), 0);
	cr_assert_eq(dp_emit_u64(&e, 0x0102030405060708ull), 0);
	cr_assert_eq(e.len, sizeof(want));
	cr_assert_arr_eq(buf, want, sizeof(want));
	untouched_from(sizeof(want));
}

/* ---- a call's push, an indirect jump through memory ---------------------- */

/* push_u64(@v); pop %rax; ret, run for real in an executable page. */
static uint64_t run_push(uint8_t *page, uint64_t v, size_t *len)
{
	static const uint8_t pop_ret[] = { 0x58, 0xc3 };
	uint64_t (*fn)(void) = (uint64_t (*)(void))(void *)page;
	struct dp_emit pe;

	dp_emit_init(&pe, page, 64, (uint64_t)(uintptr_t)page);
	cr_assert_eq(dp_emit_push_u64(&pe, v), 0);
	*len = pe.len;
	cr_assert_eq(dp_emit_bytes(&pe, pop_ret, sizeof(pop_ret)), 0);
	return fn();
}

Test(emit, push_u64_runs)
{
	/* sign-extended imm32 alone, and with the upper half stored */
	const struct { uint64_t v; size_t len; } cases[] = {
		{ 0x401234, 5 }, { 0, 5 }, { 0x7fffffff, 5 },
		{ 0xffffffff80000000ull, 5 }, { (uint64_t)-1, 5 },
		{ 0x80000000, DP_PUSH_U64_MAX_LEN },
		{ 0x5555deadbeefull, DP_PUSH_U64_MAX_LEN },
		{ 0x7ffff7a12345ull, DP_PUSH_U64_MAX_LEN },
	};
	uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cr_assert_neq(page, MAP_FAILED);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len;

		cr_expect_eq(run_push(page, cases[i].v, &len), cases[i].v,
			     "case %zu", i);
		cr_expect_eq(len, cases[i].len, "case %zu: %zu bytes", i, len);
	}
	munmap(page, 4096);

	/* all or nothing */
	fresh(DP_PUSH_U64_MAX_LEN - 1, PC);
	cr_assert_eq(dp_emit_push_u64(&e, 0x7ffff7a12345ull), -ENOSPC);
	cr_assert_eq(e.len, 0);
	untouched_from(0);
}

Test(emit, jmp_mem)
{
	struct dp_insn in;

	fresh(sizeof(buf), PC);
	cr_assert_eq(dp_emit_jmp_mem(&e, PC - 0x2000), 0);
	cr_assert_eq(e.len, DP_JMP_MEM_LEN);
	decode_at(0, &in, 0);
	cr_assert_eq(in.op, DP_OP_JMP_IND);
	cr_assert_eq(in.rm.base, DP_INSN_NOREG);
	cr_assert_eq((uint64_t)in.rm.disp, PC - 0x2000);
	untouched_from(DP_JMP_MEM_LEN);
	fresh(sizeof(buf), PC);
	cr_assert_eq(dp_emit_jmp_mem(&e, PC + (4ull << 30)), -ERANGE);
	cr_assert_eq(e.len, 0);
	untouched_from(0);
}

/* ---- overflow ------------------------------------------------------------ */

Test(emit, overflow_refused)
{
	fresh(4, PC);
	cr_assert_eq(dp_emit_jmp(&e, PC), -ENOSPC);
	cr_assert(e.overflow);
	cr_assert_eq(e.len, 0);
	cr_assert_eq(dp_emit_call(&e, PC), -ENOSPC);
	cr_assert_eq(dp_emit_jcc(&e, 4, PC), -ENOSPC);
	cr_assert_eq(dp_emit_u64(&e, 1), -ENOSPC);
	cr_assert_eq(dp_emit_nops(&e, 5), -ENOSPC);
	cr_assert_eq(dp_emit_int3(&e, 5), -ENOSPC);
	untouched_from(0);

	/* what fits still goes in; the overflow stays noted */
	cr_assert_eq(dp_emit_u32(&e, 0), 0);
	cr_assert_eq(e.len, 4);
	cr_assert(e.overflow);
	cr_assert_eq(dp_emit_int3(&e, 1), -ENOSPC);
	untouched_from(4);

	/* exactly full is fine */
	fresh(DP_JMP_ABS_LEN, PC);
	cr_assert_eq(dp_emit_jmp_abs(&e, 0), 0);
	cr_assert_not(e.overflow);
	cr_assert_eq(dp_emit_int3(&e, 0), 0);

	/* one short of the absolute jump: -ENOSPC, not a rel32 */
	fresh(DP_JMP_ABS_LEN - 1, PC);
	cr_assert_eq(dp_emit_jmp_far(&e, 0x1000), -ENOSPC);
	cr_assert_eq(dp_emit_jmp_abs(&e, 0x1000), -ENOSPC);
	cr_assert_eq(e.len, 0);
	untouched_from(0);
}
