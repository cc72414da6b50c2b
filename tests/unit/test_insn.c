// SPDX-License-Identifier: GPL-2.0
/*
 * arch/x86_64/insn: verdicts on hand-assembled instructions, slot bytes
 * checked by decoding them again with Zydis, a sweep over libc's code,
 * emulation against the CPU itself (jcc, loop, jrcxz run in an executable
 * page of this process) and against a fake memory, and slots that really
 * run: instructions of asm stubs below, copied out of line near them.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <Zydis/Zydis.h>

#include "arch/arch.h"
#include "engine/kernel/internal.h"

/* ---- helpers ------------------------------------------------------------ */

/* "48 8d 05 00 00 00 00" → bytes; returns the count. */
static size_t unhex(const char *s, uint8_t *out, size_t max)
{
	size_t n = 0;
	unsigned int v;
	int k;

	while (*s) {
		while (*s == ' ')
			s++;
		if (!*s)
			break;
		cr_assert(n < max && sscanf(s, "%2x%n", &v, &k) == 1 && k == 2,
			  "bad hex near \"%s\"", s);
		out[n++] = (uint8_t)v;
		s += 2;
	}
	return n;
}

static int analyze_hex(const char *hex, uint64_t addr, struct dp_insn *in,
		       const char **why)
{
	uint8_t b[32];
	size_t n = unhex(hex, b, sizeof(b));

	return dp_insn_analyze(b, n, addr, in, why);
}

static void analyze_ok(const char *hex, uint64_t addr, struct dp_insn *in)
{
	const char *why = NULL;
	int ret = analyze_hex(hex, addr, in, &why);

	cr_assert_eq(ret, 0, "%s: %d (%s)", hex, ret, why ? why : "?");
}

struct zdec {
	ZydisDecodedInstruction insn;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
};

static bool zdecode(const uint8_t *b, size_t n, struct zdec *z)
{
	ZydisDecoder d;

	ZydisDecoderInit(&d, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	return ZYAN_SUCCESS(ZydisDecoderDecodeFull(&d, b, n, &z->insn, z->ops));
}

/* Index of the %rip-relative memory operand, or -1. */
static int riprel_op(const struct zdec *z)
{
	for (int i = 0; i < z->insn.operand_count; i++)
		if (z->ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY &&
		    (z->ops[i].mem.base == ZYDIS_REGISTER_RIP ||
		     z->ops[i].mem.base == ZYDIS_REGISTER_EIP))
			return i;
	return -1;
}

static uint64_t zabs(const struct zdec *z, int op, uint64_t at)
{
	ZyanU64 a = 0;

	cr_assert(ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&z->insn, &z->ops[op],
							at, &a)));
	return a;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/*
 * Where the jump at @buf[@pos] (address @slot + @pos) goes: a rel32 jmp or
 * `jmp *0(%rip)` with the destination stored in the slot.
 */
static uint64_t jump_dest(const uint8_t *buf, size_t n, uint64_t slot,
			  size_t pos)
{
	struct zdec z;
	uint64_t a;

	cr_assert(zdecode(buf + pos, n - pos, &z), "jump back does not decode");
	cr_assert_eq(z.insn.mnemonic, ZYDIS_MNEMONIC_JMP);
	a = zabs(&z, 0, slot + pos);
	if (z.ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE)
		return a;
	cr_assert_eq(z.ops[0].type, ZYDIS_OPERAND_TYPE_MEMORY);
	cr_assert(a >= slot && a + 8 <= slot + n, "pointer outside the slot");
	return get64(buf + (a - slot));
}

/* ---- analysis verdicts -------------------------------------------------- */

struct verdict {
	const char *hex;
	int err;
	const char *what;	/* strategy if err == 0, else the reason */
};

#define OK(h, s) { h, 0, s }
#define NO(h, r) { h, -EOPNOTSUPP, r }

static const char *const R_PRIV = "privileged instruction";
static const char *const R_INT = "interrupt instruction";
static const char *const R_IO = "port I/O instruction";
static const char *const R_FAR = "far branch or return";
static const char *const R_66 = "0x66 prefix on a branch (Intel and AMD disagree)";
static const char *const R_SEG = "segment override other than %fs/%gs";

static const struct verdict verdicts[] = {
	/* ordinary code: out of line */
	OK("55", "xol"),				/* push %rbp */
	OK("48 89 e5", "xol"),				/* mov %rsp,%rbp */
	OK("48 83 ec 10", "xol"),			/* sub $0x10,%rsp */
	OK("41 57", "xol"),				/* push %r15 */
	OK("6a 05", "xol"),				/* push $5 */
	OK("68 00 01 00 00", "xol"),			/* push $0x100 */
	OK("41 90", "xol"),				/* xchg %eax,%r8d: not a nop */
	OK("f3 90", "xol"),				/* pause */
	OK("0f 05", "xol"),				/* syscall */
	OK("f0 0f b1 0f", "xol"),			/* lock cmpxchg %ecx,(%rdi) */
	OK("9d", "xol"),				/* popfq */
	OK("c9", "xol"),				/* leave */
	OK("0f a2", "xol"),				/* cpuid */
	OK("0f 31", "xol"),				/* rdtsc */
	OK("64 8b 00", "xol"),				/* mov %fs:(%rax),%eax */
	OK("65 48 8b 04 25 28 00 00 00", "xol"),	/* mov %gs:0x28,%rax */
	OK("64 48 8b 04 25 28 00 00 00", "xol"),	/* stack protector load */
	OK("48 a1 00 00 00 00 00 00 00 00", "xol"),	/* movabs 0x0,%rax */
	OK("8e d8", "xol"),				/* mov %ax,%ds */
	OK("c6 f8 01", "xol"),				/* xabort $1 */
	OK("0f 01 d5", "xol"),				/* xend */
	OK("f3 48 0f 1e c8", "xol"),			/* rdsspq %rax */
	/* %rip-relative operands: relocated */
	OK("48 8d 05 00 00 00 00", "xol:riprel"),	/* lea 0x0(%rip),%rax */
	OK("8b 05 0e 2f 00 00", "xol:riprel"),		/* mov 0x2f0e(%rip),%eax */
	OK("83 3d 00 01 00 00 05", "xol:riprel"),	/* cmpl $0x5,0x100(%rip) */
	OK("c7 05 00 01 00 00 01 00 00 00", "xol:riprel"), /* movl $1,..(%rip) */
	OK("c5 f9 6f 05 10 00 00 00", "xol:riprel"),	/* vmovdqa 0x10(%rip),%xmm0 */
	OK("c5 fd 6f 05 10 00 00 00", "xol:riprel"),	/* vmovdqa ..,%ymm0 */
	OK("0f 28 05 10 00 00 00", "xol:riprel"),	/* movaps 0x10(%rip),%xmm0 */
	OK("66 0f 6f 05 10 00 00 00", "xol:riprel"),	/* movdqa */
	OK("62 f1 7c 48 28 05 10 00 00 00", "xol:riprel"), /* vmovaps (EVEX) */
	OK("c4 e2 79 18 05 10 00 00 00", "xol:riprel"), /* vbroadcastss */
	OK("f0 ff 05 00 00 00 00", "xol:riprel"),	/* lock incl 0x0(%rip) */
	OK("ff 35 00 00 00 00", "xol:riprel"),		/* push 0x0(%rip) */
	OK("8f 05 00 00 00 00", "xol:riprel"),		/* pop 0x0(%rip) */
	OK("d9 05 00 00 00 00", "xol:riprel"),		/* flds */
	OK("67 8b 05 00 00 00 00", "xol:riprel"),	/* mov 0x0(%eip),%eax */
	OK("64 48 8b 05 00 00 00 00", "xol:riprel"),	/* mov %fs:0x0(%rip),%rax */
	OK("c7 f8 00 01 00 00", "xol:rel32"),		/* xbegin */
	/* emulated */
	OK("f3 0f 1e fa", "emulate:nop"),		/* endbr64 */
	OK("f3 0f 1e fb", "emulate:nop"),		/* endbr32 */
	OK("90", "emulate:nop"),
	OK("66 90", "emulate:nop"),
	OK("0f 1f 00", "emulate:nop"),
	OK("0f 1f 40 00", "emulate:nop"),
	OK("0f 1f 44 00 00", "emulate:nop"),
	OK("66 0f 1f 44 00 00", "emulate:nop"),
	OK("0f 1f 80 00 00 00 00", "emulate:nop"),
	OK("66 0f 1f 84 00 00 00 00 00", "emulate:nop"),
	OK("66 2e 0f 1f 84 00 00 00 00 00", "emulate:nop"),	/* cs nopw */
	OK("66 66 2e 0f 1f 84 00 00 00 00 00", "emulate:nop"),
	OK("eb 05", "emulate:jmp"),
	OK("e9 00 01 00 00", "emulate:jmp"),
	OK("48 eb 05", "emulate:jmp"),
	OK("67 eb 05", "emulate:jmp"),
	OK("74 05", "emulate:jcc"),
	OK("0f 84 00 01 00 00", "emulate:jcc"),
	OK("2e 74 05", "emulate:jcc"),			/* not-taken hint */
	OK("3e 0f 85 00 01 00 00", "emulate:jcc"),	/* taken hint */
	OK("f2 0f 84 00 01 00 00", "emulate:jcc"),	/* bnd jz */
	OK("e8 00 00 00 00", "emulate:call"),
	OK("67 e8 00 00 00 00", "emulate:call"),	/* addr32 call (ld relaxation) */
	OK("f2 e8 00 00 00 00", "emulate:call"),	/* bnd call */
	OK("66 48 e8 00 00 00 00", "emulate:call"),	/* data16 rex.W call (TLS) */
	OK("66 66 48 e8 00 00 00 00", "emulate:call"),
	OK("ff d0", "emulate:call-indirect"),		/* call *%rax */
	OK("41 ff d3", "emulate:call-indirect"),	/* call *%r11 */
	OK("ff 54 98 08", "emulate:call-indirect"),	/* call *0x8(%rax,%rbx,4) */
	OK("ff 15 34 12 00 00", "emulate:call-indirect"), /* call *0x1234(%rip) */
	OK("3e ff 14 c5 00 00 00 00", "emulate:call-indirect"), /* notrack */
	OK("64 ff 14 25 10 00 00 00", "emulate:call-indirect"), /* %fs:0x10 */
	OK("67 ff 10", "emulate:call-indirect"),	/* call *(%eax) */
	OK("ff e0", "emulate:jmp-indirect"),		/* jmp *%rax */
	OK("3e ff e0", "emulate:jmp-indirect"),		/* notrack jmp *%rax */
	OK("f2 ff 25 00 00 00 00", "emulate:jmp-indirect"), /* bnd jmp *(%rip) */
	OK("ff 24 c5 00 00 00 00", "emulate:jmp-indirect"),
	OK("41 ff 24 24", "emulate:jmp-indirect"),	/* jmp *(%r12) */
	OK("c3", "emulate:ret"),
	OK("c2 08 00", "emulate:ret"),
	OK("f3 c3", "emulate:ret"),			/* rep ret */
	OK("f2 c3", "emulate:ret"),			/* bnd ret */
	OK("e2 fe", "emulate:loop"),
	OK("e1 fe", "emulate:loope"),
	OK("e0 fe", "emulate:loopne"),
	OK("e3 fe", "emulate:jrcxz"),
	OK("67 e3 fe", "emulate:jrcxz"),		/* jecxz */
	/* refused */
	{ "cc", -EEXIST, "int3 is already there" },
	NO("cd 80", R_INT),
	NO("cd 03", R_INT),
	NO("f1", R_INT),				/* int1 */
	{ "ce", -EILSEQ, "decoding failed" },		/* into: not in 64-bit */
	NO("f4", R_PRIV),				/* hlt */
	NO("fa", R_PRIV),				/* cli */
	NO("fb", R_PRIV),				/* sti */
	NO("0f 01 f8", R_PRIV),				/* swapgs */
	NO("0f 30", R_PRIV),				/* wrmsr */
	NO("0f 32", R_PRIV),				/* rdmsr */
	NO("0f 20 c0", R_PRIV),				/* mov %cr0,%rax */
	NO("0f 06", R_PRIV),				/* clts */
	NO("0f 07", R_PRIV),				/* sysret */
	NO("0f 37", R_PRIV),				/* getsec */
	NO("0f 01 c8", R_PRIV),				/* monitor */
	NO("e4 10", R_IO),
	NO("e5 10", R_IO),
	NO("e6 10", R_IO),
	NO("ec", R_IO),
	NO("ef", R_IO),
	NO("6c", R_IO),					/* insb */
	NO("6f", R_IO),					/* outsl */
	NO("f3 6e", R_IO),				/* rep outsb */
	NO("0f 34", "sysenter does not return to the next instruction"),
	NO("0f 0b", "undefined instruction on purpose (ud0/ud1/ud2)"),
	NO("0f b9 00", "undefined instruction on purpose (ud0/ud1/ud2)"),
	NO("ff 1d 00 00 00 00", R_FAR),			/* lcall *(%rip) */
	NO("ff 2d 00 00 00 00", R_FAR),			/* ljmp *(%rip) */
	NO("ff 18", R_FAR),				/* lcall *(%rax) */
	NO("cb", R_FAR),				/* lret */
	NO("ca 08 00", R_FAR),
	NO("cf", R_FAR),				/* iret */
	NO("48 cf", R_FAR),				/* iretq */
	NO("66 e9 00 00 00 00", R_66),
	NO("66 eb 05", R_66),
	NO("66 74 05", R_66),
	NO("66 0f 84 00 01 00 00", R_66),
	NO("48 66 e8 00 00 00 00", R_66),		/* REX not last: ignored */
	NO("66 c3", R_66),
	NO("66 c2 08 00", R_66),
	NO("66 ff d0", R_66),
	NO("66 ff e0", R_66),
	NO("66 ff 25 00 00 00 00", R_66),
	NO("66 e2 fe", R_66),
	NO("66 e3 fe", R_66),
	NO("2e 8b 00", R_SEG),
	NO("3e 8b 00", R_SEG),
	NO("26 8b 00", R_SEG),
	NO("36 8b 00", R_SEG),
	NO("2e 2e 48 8b 05 00 00 00 00", R_SEG),
	NO("2e ff e0", R_SEG),				/* cs jmp *%rax */
	NO("3e e8 00 00 00 00", R_SEG),			/* ds call rel32 */
	NO("3e c3", R_SEG),
	NO("8e d0", "mov to %ss masks traps"),
	NO("67 e2 fe", "loop with a 32-bit counter (0x67 prefix)"),
	NO("66 c7 f8 00 01", "16-bit relative operand"),	/* xbegin rel16 */
	NO("0f 01 c1", "virtualization instruction"),	/* vmcall */
	NO("0f 01 d4", "virtualization instruction"),	/* vmfunc */
	NO("0f 01 d7", "enclave instruction"),		/* enclu */
	NO("f3 0f 01 ec", "returns through the stack (uiret)"),
	{ "06", -EILSEQ, "decoding failed" },		/* push %es */
	{ "48", -EILSEQ, "decoding failed" },		/* cut short */
	{ "8b 05 00 00", -EILSEQ, "decoding failed" },
	{ "0f ff", -EILSEQ, "decoding failed" },
};

Test(insn, verdicts)
{
	for (size_t i = 0; i < sizeof(verdicts) / sizeof(verdicts[0]); i++) {
		const struct verdict *v = &verdicts[i];
		struct dp_insn in;
		const char *why = "unset";
		int ret = analyze_hex(v->hex, 0x401000, &in, &why);

		cr_expect_eq(ret, v->err, "%s: %d (%s), want %d", v->hex, ret,
			     why ? why : "-", v->err);
		if (ret != v->err)
			continue;
		if (!ret) {
			cr_expect_null(why, "%s: reason on success", v->hex);
			cr_expect_str_eq(dp_insn_strategy(&in), v->what,
					 "%s", v->hex);
			cr_expect_eq(in.kind, strncmp(v->what, "xol", 3) ?
				     DP_INSN_EMULATE : DP_INSN_XOL, "%s", v->hex);
			cr_expect_eq(dp_insn_needs_slot(&in),
				     in.kind == DP_INSN_XOL);
		} else {
			cr_expect(why && !strcmp(why, v->what),
				  "%s: reason \"%s\", want \"%s\"", v->hex,
				  why ? why : "(null)", v->what);
		}
	}
}

Test(insn, bad_arguments)
{
	struct dp_insn in;
	const char *why;
	uint8_t b[1] = { 0x90 };

	cr_expect_eq(dp_insn_analyze(NULL, 1, 0, &in, &why), -EINVAL);
	cr_expect_eq(dp_insn_analyze(b, 1, 0, NULL, &why), -EINVAL);
	cr_expect_eq(dp_insn_analyze(b, 0, 0, &in, &why), -EILSEQ);
	cr_expect_str_eq(why, "decoding failed");
	cr_expect_eq(dp_insn_analyze(b, 1, 0, &in, NULL), 0);
}

/* The fields emulation and relocation rely on. */
Test(insn, fields)
{
	struct dp_insn in;

	analyze_ok("48 8b 05 0e 2f 00 00", 0x401000, &in);
	cr_expect_eq(in.len, 7);
	cr_expect_eq(in.addr, 0x401000);
	cr_expect_eq(memcmp(in.bytes, "\x48\x8b\x05\x0e\x2f\x00\x00", 7), 0);
	cr_expect_eq(in.riprel_off, 3);
	cr_expect_eq(in.riprel_target, 0x401007 + 0x2f0e);
	cr_expect_eq(in.rel_off, -1);

	/* the disp32 is not at the end when an immediate follows */
	analyze_ok("c7 05 00 01 00 00 01 00 00 00", 0x401000, &in);
	cr_expect_eq(in.riprel_off, 2);
	cr_expect_eq(in.riprel_target, 0x40100a + 0x100);
	analyze_ok("62 f1 7c 48 28 05 10 00 00 00", 0x401000, &in);
	cr_expect_eq(in.riprel_off, 6);
	analyze_ok("83 3d f0 ff ff ff 05", 0x401000, &in);
	cr_expect_eq(in.riprel_target, 0x401007 - 0x10);

	analyze_ok("67 8b 05 00 00 00 80", 0xfffffff0, &in);
	cr_expect(in.riprel_addr32);
	cr_expect_eq(in.riprel_target, (uint32_t)(0xfffffff7 + 0x80000000u));

	analyze_ok("c7 f8 00 01 00 00", 0x401000, &in);
	cr_expect_eq(in.rel_off, 2);
	cr_expect_eq(in.target, 0x401106);

	analyze_ok("eb fe", 0x401000, &in);
	cr_expect_eq(in.target, 0x401000);
	analyze_ok("e8 fb ff ff ff", 0x401000, &in);	/* call to itself */
	cr_expect_eq(in.target, 0x401000);
	analyze_ok("e9 00 00 00 80", 0x7f0000000000, &in);
	cr_expect_eq(in.target, 0x7f0000000005 - 0x80000000ull);
	analyze_ok("c2 08 00", 0x401000, &in);
	cr_expect_eq(in.pop, 8);
	analyze_ok("c3", 0x401000, &in);
	cr_expect_eq(in.pop, 0);
	analyze_ok("67 e3 10", 0x401000, &in);
	cr_expect(in.ecx);
	cr_expect_eq(in.target, 0x401013);
	analyze_ok("e3 10", 0x401000, &in);
	cr_expect(!in.ecx);

	analyze_ok("ff 54 98 08", 0x401000, &in);
	cr_expect_eq(in.rm.reg, DP_INSN_NOREG);
	cr_expect_eq(in.rm.base, offsetof(struct dp_regs, ax));
	cr_expect_eq(in.rm.index, offsetof(struct dp_regs, bx));
	cr_expect_eq(in.rm.scale, 4);
	cr_expect_eq(in.rm.disp, 8);
	analyze_ok("41 ff d3", 0x401000, &in);
	cr_expect_eq(in.rm.reg, offsetof(struct dp_regs, r11));
	analyze_ok("ff 15 34 12 00 00", 0x401000, &in);
	cr_expect_eq(in.rm.base, DP_INSN_NOREG);
	cr_expect_eq(in.rm.disp, 0x401006 + 0x1234);
	cr_expect_eq(in.riprel_off, 2);
	analyze_ok("64 ff 14 25 10 00 00 00", 0x401000, &in);
	cr_expect_eq(in.rm.seg, DP_SEG_FS);
	cr_expect_eq(in.rm.disp, 0x10);
	analyze_ok("67 ff 10", 0x401000, &in);
	cr_expect(in.rm.addr32);
}

/* Every jcc, short and near: condition code and target. */
Test(insn, all_jcc)
{
	for (unsigned int c = 0; c < 16; c++) {
		char hex[64];
		struct dp_insn in;

		snprintf(hex, sizeof(hex), "%02x 10", 0x70 + c);
		analyze_ok(hex, 0x401000, &in);
		cr_expect_eq(in.op, DP_OP_JCC);
		cr_expect_eq(in.cond, c);
		cr_expect_eq(in.len, 2);
		cr_expect_eq(in.target, 0x401012);

		snprintf(hex, sizeof(hex), "0f %02x f0 ff ff ff", 0x80 + c);
		analyze_ok(hex, 0x401000, &in);
		cr_expect_eq(in.op, DP_OP_JCC);
		cr_expect_eq(in.cond, c);
		cr_expect_eq(in.len, 6);
		cr_expect_eq(in.target, 0x401006 - 0x10);
	}
}

/* ---- slots -------------------------------------------------------------- */

static const char *const riprel_insns[] = {
	"48 8d 05 00 00 00 00",
	"8b 05 0e 2f 00 00",
	"48 8b 05 f0 ff ff ff",
	"83 3d 00 01 00 00 05",
	"c7 05 00 01 00 00 01 00 00 00",
	"48 c7 05 00 01 00 00 ff ff ff ff",
	"c5 f9 6f 05 10 00 00 00",
	"c5 fd 6f 05 10 00 00 00",
	"0f 28 05 10 00 00 00",
	"66 0f 6f 05 10 00 00 00",
	"62 f1 7c 48 28 05 10 00 00 00",
	"62 f1 fd 48 6f 05 00 00 00 80",		/* vmovdqa64, disp -2 GB */
	"c4 e2 79 18 05 10 00 00 00",
	"c4 e3 79 0f 05 10 00 00 00 08",		/* vpalignr: imm after disp */
	"f0 ff 05 00 00 00 00",
	"f0 48 0f b1 0d 00 10 00 00",			/* lock cmpxchg */
	"ff 35 00 00 00 00",
	"d9 05 00 00 00 00",
	"64 48 8b 05 00 00 00 00",
	"66 0f 3a 0f 05 00 00 00 00 04",		/* palignr */
	"0f 18 05 40 00 00 00",				/* prefetchnta */
};

/* The slot decodes to the same instruction naming the same address. */
static void check_riprel_slot(const char *hex, uint64_t addr, uint64_t slot)
{
	uint8_t code[16], buf[DP_INSN_SLOT_SIZE];
	size_t n = unhex(hex, code, sizeof(code));
	struct zdec orig, moved;
	struct dp_insn in;
	int len, o1, o2;

	cr_assert(zdecode(code, n, &orig));
	o1 = riprel_op(&orig);
	cr_assert_geq(o1, 0, "%s: no rip operand", hex);
	analyze_ok(hex, addr, &in);
	cr_assert_eq(in.riprel_target, zabs(&orig, o1, addr), "%s", hex);

	len = dp_insn_make_slot(&in, slot, buf, sizeof(buf));
	cr_assert_gt(len, in.len, "%s at %#" PRIx64 ": %d", hex, slot, len);
	cr_assert(zdecode(buf, len, &moved), "%s: slot does not decode", hex);
	cr_expect_eq(moved.insn.length, in.len, "%s", hex);
	cr_expect_eq(moved.insn.mnemonic, orig.insn.mnemonic, "%s", hex);
	o2 = riprel_op(&moved);
	cr_assert_eq(o2, o1, "%s", hex);
	cr_expect_eq(zabs(&moved, o2, slot), zabs(&orig, o1, addr),
		     "%s: slot %#" PRIx64 " names %#" PRIx64 ", want %#" PRIx64,
		     hex, slot, zabs(&moved, o2, slot), zabs(&orig, o1, addr));
	/* only the displacement changed */
	for (int i = 0; i < in.len; i++)
		if (i < in.riprel_off || i >= in.riprel_off + 4)
			cr_expect_eq(buf[i], code[i], "%s: byte %d", hex, i);
	cr_expect_eq(jump_dest(buf, len, slot, in.len), addr + in.len,
		     "%s: jump back", hex);
	for (size_t i = len; i < sizeof(buf); i++)
		cr_expect_eq(buf[i], 0xcc, "padding byte %zu", i);
}

Test(insn, riprel_slots)
{
	const uint64_t addr = 0x555555555234ull;
	const int64_t deltas[] = {
		0x1000, -0x1000, 0x10000000, -0x10000000, 0x7fff0000,
		-0x7fff0000, 64, -64,
	};

	for (size_t i = 0; i < sizeof(riprel_insns) / sizeof(riprel_insns[0]);
	     i++)
		for (size_t j = 0; j < sizeof(deltas) / sizeof(deltas[0]); j++) {
			struct dp_insn in;
			struct zdec z;
			uint8_t code[16];
			size_t n = unhex(riprel_insns[i], code, sizeof(code));
			uint64_t tgt;

			cr_assert(zdecode(code, n, &z));
			tgt = zabs(&z, riprel_op(&z), addr);
			analyze_ok(riprel_insns[i], addr, &in);
			/* stay in reach of the operand, wherever it points */
			if (llabs((int64_t)(tgt - (addr + deltas[j]))) >
			    0x7fff0000)
				continue;
			check_riprel_slot(riprel_insns[i], addr,
					  addr + deltas[j]);
		}
}

Test(insn, riprel_out_of_range)
{
	uint8_t buf[DP_INSN_SLOT_SIZE];
	struct dp_insn in;
	const uint64_t addr = 0x555555555000ull;

	analyze_ok("48 8d 05 00 00 00 00", addr, &in);	/* names addr+7 */
	/*
	 * From slot S the copy names S + 7 + disp: the farthest slots are
	 * addr + 2^31 (disp = INT32_MIN) and addr - (2^31 - 1) (INT32_MAX).
	 */
	cr_expect_gt(dp_insn_make_slot(&in, addr + 0x80000000ull, buf,
				       sizeof(buf)), 0);
	cr_expect_gt(dp_insn_make_slot(&in, addr - 0x7fffffffull, buf,
				       sizeof(buf)), 0);
	cr_expect_eq(dp_insn_make_slot(&in, addr + 0x80000001ull, buf,
				       sizeof(buf)), -ERANGE);
	cr_expect_eq(dp_insn_make_slot(&in, addr - 0x80000000ull, buf,
				       sizeof(buf)), -ERANGE);
	cr_expect_eq(dp_insn_make_slot(&in, 0x7f0000000000ull, buf,
				       sizeof(buf)), -ERANGE);

	/* xbegin's abort address is relocated the same way */
	analyze_ok("c7 f8 00 01 00 00", addr, &in);
	cr_expect_eq(dp_insn_make_slot(&in, addr + 0x90000000ull, buf,
				       sizeof(buf)), -ERANGE);

	/* a 32-bit address wraps: any slot reaches it */
	analyze_ok("67 8b 05 00 00 00 80", addr, &in);
	cr_expect_gt(dp_insn_make_slot(&in, 0x7f0000000000ull, buf,
				       sizeof(buf)), 0);
}

Test(insn, addr32_slot)
{
	uint8_t code[16], buf[DP_INSN_SLOT_SIZE];
	const uint64_t addr = 0x555555555000ull, slot = 0x7f0012345000ull;
	struct dp_insn in;
	struct zdec z;
	int len;

	analyze_ok("67 8b 05 00 00 00 80", addr, &in);
	len = dp_insn_make_slot(&in, slot, buf, sizeof(buf));
	cr_assert_gt(len, 0);
	cr_assert(zdecode(buf, len, &z));
	/* EIP-relative: both addresses are (next ip + disp) mod 4 GB */
	cr_expect_eq((uint32_t)(slot + in.len + (uint64_t)z.insn.raw.disp.value),
		     in.riprel_target);
	unhex("67 8b 05 00 00 00 80", code, sizeof(code));
	cr_expect_eq(memcmp(buf, code, 3), 0);
}

Test(insn, xbegin_slot)
{
	uint8_t buf[DP_INSN_SLOT_SIZE];
	const uint64_t addr = 0x555555555000ull, slot = addr - 0x40000000;
	struct dp_insn in;
	struct zdec z;
	int len;

	analyze_ok("c7 f8 00 01 00 00", addr, &in);
	len = dp_insn_make_slot(&in, slot, buf, sizeof(buf));
	cr_assert_eq(len, 6 + 5);
	cr_assert(zdecode(buf, len, &z));
	cr_expect_eq(z.insn.mnemonic, ZYDIS_MNEMONIC_XBEGIN);
	cr_expect_eq(zabs(&z, 0, slot), addr + 6 + 0x100);
	cr_expect_eq(jump_dest(buf, len, slot, 6), addr + 6);
}

/* Without a %rip operand a slot may be anywhere: absolute jump back. */
Test(insn, far_slot)
{
	uint8_t buf[DP_INSN_SLOT_SIZE];
	const uint64_t addr = 0x401000;
	const uint64_t slots[] = { 0x7f1234567000ull, 0x402000, 0x10000 };
	struct dp_insn in;

	analyze_ok("48 89 e5", addr, &in);
	for (size_t i = 0; i < 3; i++) {
		int len = dp_insn_make_slot(&in, slots[i], buf, sizeof(buf));

		cr_assert_gt(len, 0);
		cr_expect_eq(len, i ? 3 + 5 : 3 + 14);
		cr_expect_eq(memcmp(buf, "\x48\x89\xe5", 3), 0);
		cr_expect_eq(jump_dest(buf, len, slots[i], 3), addr + 3);
	}
}

Test(insn, slot_space)
{
	uint8_t buf[DP_INSN_SLOT_SIZE];
	struct dp_insn in;

	/* the longest instruction (15 bytes) and the long jump back (14) */
	analyze_ok("f0 64 67 48 81 84 80 00 00 00 00 00 00 00 00", 0x401000,
		   &in);
	cr_assert_eq(in.len, 15);
	cr_expect_eq(dp_insn_make_slot(&in, 0x7f1234567000ull, buf,
				       sizeof(buf)), in.len + 14);
	cr_expect_leq(in.len + 14, DP_INSN_SLOT_SIZE);
	cr_expect_eq(dp_insn_make_slot(&in, 0x7f1234567000ull, buf, in.len),
		     -ENOSPC);
	cr_expect_eq(dp_insn_make_slot(&in, 0x7f1234567000ull, buf, 3),
		     -ENOSPC);
	/* jmp, jcc, nop never need a slot */
	analyze_ok("eb 05", 0x401000, &in);
	cr_expect_eq(dp_insn_make_slot(&in, 0x402000, buf, sizeof(buf)),
		     -EINVAL);
	analyze_ok("90", 0x401000, &in);
	cr_expect_eq(dp_insn_make_slot(&in, 0x402000, buf, sizeof(buf)),
		     -EINVAL);
	analyze_ok("ff e0", 0x401000, &in);
	cr_expect(!dp_insn_may_fault(&in));
	cr_expect_eq(dp_insn_make_slot(&in, 0x402000, buf, sizeof(buf)),
		     -EINVAL);
}

/* Fault slots of emulated instructions that touch memory. */
Test(insn, fault_slots)
{
	uint8_t buf[DP_INSN_SLOT_SIZE];
	const uint64_t addr = 0x555555555000ull;
	const uint64_t slots[] = { addr + 0x1000, 0x7f1234567000ull };
	struct dp_insn in;
	struct zdec z;
	uint64_t orig;
	int len;

	analyze_ok("e8 fb 0f 00 00", addr, &in);	/* call addr+0x1000 */
	cr_expect(dp_insn_may_fault(&in));
	for (size_t i = 0; i < 2; i++) {
		uint64_t slot = slots[i], q;

		len = dp_insn_make_slot(&in, slot, buf, sizeof(buf));
		cr_assert_gt(len, 0);
		cr_assert_leq(len, DP_INSN_SLOT_SIZE);
		cr_assert(zdecode(buf, len, &z));
		cr_expect_eq(z.insn.mnemonic, ZYDIS_MNEMONIC_CALL);
		cr_assert_eq(z.ops[0].type, ZYDIS_OPERAND_TYPE_MEMORY);
		q = zabs(&z, 0, slot);
		cr_assert(q >= slot && q + 8 <= slot + len);
		cr_expect_eq(get64(buf + (q - slot)), addr + 0x1000);
		cr_expect_eq(jump_dest(buf, len, slot, 6), addr + 5);
		cr_expect_eq(dp_insn_slot_to_orig(&in, slot, slot, &orig), 0);
		cr_expect_eq(orig, addr);
		cr_expect_eq(dp_insn_slot_to_orig(&in, slot, slot + 6, &orig),
			     0);
		cr_expect_eq(orig, addr + 5);
		cr_expect_eq(dp_insn_slot_to_orig(&in, slot, slot + 5, &orig),
			     -ENOENT);
	}

	analyze_ok("ff 15 34 12 00 00", addr, &in);	/* call *0x1234(%rip) */
	len = dp_insn_make_slot(&in, addr - 0x2000, buf, sizeof(buf));
	cr_assert_eq(len, 6 + 5);
	cr_assert(zdecode(buf, len, &z));
	cr_expect_eq(zabs(&z, 0, addr - 0x2000), addr + 6 + 0x1234);
	cr_expect_eq(jump_dest(buf, len, addr - 0x2000, 6), addr + 6);
	cr_expect_eq(dp_insn_make_slot(&in, 0x7f1234567000ull, buf,
				       sizeof(buf)), -ERANGE);

	analyze_ok("c2 10 00", addr, &in);
	len = dp_insn_make_slot(&in, 0x7f1234567000ull, buf, sizeof(buf));
	cr_expect_eq(memcmp(buf, "\xc2\x10\x00", 3), 0);
	cr_expect_eq(len, 3 + 14);

	analyze_ok("ff 24 c5 00 10 00 00", addr, &in);	/* jmp *0x1000(,%rax,8) */
	cr_expect(dp_insn_may_fault(&in));
	len = dp_insn_make_slot(&in, 0x7f1234567000ull, buf, sizeof(buf));
	cr_expect_eq(len, 7 + 14);
	cr_expect_eq(memcmp(buf, "\xff\x24\xc5\x00\x10\x00\x00", 7), 0);
}

Test(insn, slot_to_orig)
{
	struct dp_insn in;
	uint64_t orig = 0;

	analyze_ok("48 8b 05 00 00 00 00", 0x401000, &in);
	cr_expect_eq(dp_insn_slot_to_orig(&in, 0x500000, 0x500000, &orig), 0);
	cr_expect_eq(orig, 0x401000);
	cr_expect_eq(dp_insn_slot_to_orig(&in, 0x500000, 0x500007, &orig), 0);
	cr_expect_eq(orig, 0x401007);
	cr_expect_eq(dp_insn_slot_to_orig(&in, 0x500000, 0x500003, &orig),
		     -ENOENT);
	cr_expect_eq(dp_insn_slot_to_orig(&in, 0x500000, 0x500008, &orig),
		     -ENOENT);
	analyze_ok("74 05", 0x401000, &in);
	cr_expect_eq(dp_insn_slot_to_orig(&in, 0x500000, 0x500000, &orig),
		     -ENOENT);
}

/* ---- a sweep over real code --------------------------------------------- */

struct text {
	uint64_t start, end;
};

static int find_libc_text(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct text *t = arg;

	(void)size;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "/libc.so"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			t->start = info->dlpi_addr + ph->p_vaddr;
			t->end = t->start + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

/*
 * Every instruction of libc's text (linear sweep, resynchronising on
 * undecodable bytes): analysis never disagrees with Zydis about lengths,
 * refusals come with a reason, relocated slots name the same addresses and
 * emulated branch targets are Zydis' own.
 */
Test(insn, libc_sweep)
{
	struct text t = { 0, 0 };
	size_t total = 0, riprel = 0, emulated = 0, refused = 0;
	uint8_t buf[DP_INSN_SLOT_SIZE];

	dl_iterate_phdr(find_libc_text, &t);
	if (!t.start)
		cr_skip_test("libc text not found");
	for (uint64_t a = t.start; a < t.end;) {
		const uint8_t *p = (const uint8_t *)a;
		size_t avail = t.end - a < 15 ? t.end - a : 15;
		struct dp_insn in;
		const char *why = NULL;
		struct zdec z;
		int ret = dp_insn_analyze(p, avail, a, &in, &why);

		if (!zdecode(p, avail, &z)) {
			cr_assert_eq(ret, -EILSEQ, "%#" PRIx64, a);
			a++;
			continue;
		}
		total++;
		cr_assert_eq(in.len, z.insn.length, "%#" PRIx64, a);
		if (ret) {
			cr_assert(why, "%#" PRIx64 ": no reason", a);
			refused++;
		} else if (in.kind == DP_INSN_EMULATE) {
			emulated++;
			if (in.op != DP_OP_NOP && in.op != DP_OP_RET &&
			    in.op != DP_OP_CALL_IND && in.op != DP_OP_JMP_IND)
				cr_assert_eq(in.target, zabs(&z, 0, a),
					     "%#" PRIx64, a);
		} else if (in.riprel_off >= 0) {
			int op = riprel_op(&z), len;
			uint64_t slot = a - 0x20000000;
			struct zdec m;

			riprel++;
			cr_assert_geq(op, 0, "%#" PRIx64, a);
			len = dp_insn_make_slot(&in, slot, buf, sizeof(buf));
			cr_assert_gt(len, 0, "%#" PRIx64, a);
			cr_assert(zdecode(buf, len, &m));
			cr_assert_eq(zabs(&m, op, slot), zabs(&z, op, a),
				     "%#" PRIx64, a);
			cr_assert_eq(jump_dest(buf, len, slot, in.len),
				     a + in.len);
		}
		a += z.insn.length;
	}
	cr_log_info("libc sweep: %zu insns, %zu riprel, %zu emulated, "
		    "%zu refused", total, riprel, emulated, refused);
	cr_expect_gt(total, 100000);
	cr_expect_gt(riprel, 1000);
	cr_expect_gt(emulated, 10000);
	/* syscall wrappers are fine; refusals are rare in real code */
	cr_expect_lt(refused, total / 100);
}

/* ---- emulation: conditions ---------------------------------------------- */

#define CF (1u << 0)
#define PF (1u << 2)
#define ZF (1u << 6)
#define SF (1u << 7)
#define OF (1u << 11)

/* Flag combination number @i (0-31) as an RFLAGS value. */
static uint64_t flags_of(unsigned int i)
{
	return 0x2 | ((i & 1) ? CF : 0) | ((i & 2) ? PF : 0) |
	       ((i & 4) ? ZF : 0) | ((i & 8) ? SF : 0) | ((i & 16) ? OF : 0);
}

/* The conditions as the manuals name them, written out independently. */
static bool by_name(const char *m, uint64_t f)
{
	bool cf = f & CF, pf = f & PF, zf = f & ZF, sf = f & SF, of = f & OF;
	static const char *const names[16] = {
		"jo", "jno", "jb", "jnb", "jz", "jnz", "jbe", "jnbe",
		"js", "jns", "jp", "jnp", "jl", "jnl", "jle", "jnle",
	};
	const bool val[16] = {
		of, !of, cf, !cf, zf, !zf, cf || zf, !cf && !zf,
		sf, !sf, pf, !pf, sf != of, sf == of, zf || sf != of,
		!zf && sf == of,
	};

	for (int i = 0; i < 16; i++)
		if (!strcmp(m, names[i]))
			return val[i];
	cr_assert_fail("unknown jcc %s", m);
	return false;
}

static void *exec_page(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static const struct dp_insn_mem no_mem;

/*
 * int stub(uint64_t flags): push %rdi; popfq; jcc +6; mov $0,%eax; ret;
 * mov $1,%eax; ret: the CPU says whether the branch is taken.
 */
static void build_jcc_stub(uint8_t *p, unsigned int cond)
{
	static const uint8_t tail[] = {
		0xb8, 0, 0, 0, 0, 0xc3, 0xb8, 1, 0, 0, 0, 0xc3,
	};

	p[0] = 0x57;
	p[1] = 0x9d;
	p[2] = (uint8_t)(0x70 + cond);
	p[3] = 6;
	memcpy(p + 4, tail, sizeof(tail));
}

Test(insn, jcc_conditions)
{
	uint8_t *page = exec_page();

	for (unsigned int c = 0; c < 16; c++) {
		struct dp_insn s, n;
		char hex[64];
		struct zdec z;
		uint8_t b[2] = { (uint8_t)(0x70 + c), 0x10 };

		snprintf(hex, sizeof(hex), "%02x 10", 0x70 + c);
		analyze_ok(hex, 0x401000, &s);
		snprintf(hex, sizeof(hex), "0f %02x 00 01 00 00", 0x80 + c);
		analyze_ok(hex, 0x401000, &n);
		cr_assert(zdecode(b, 2, &z));
		if (page) {
			build_jcc_stub(page, c);
			__builtin___clear_cache((char *)page,
						(char *)page + 64);
		}
		for (unsigned int i = 0; i < 32; i++) {
			uint64_t f = flags_of(i);
			struct dp_regs r = { .flags = f, .ip = 0x401001 };
			bool want = by_name(ZydisMnemonicGetString(z.insn.mnemonic),
					    f);

			cr_expect_eq(dp_insn_cond(c, f), want, "cond %u flags %#"
				     PRIx64, c, f);
			if (page) {
				int (*stub)(uint64_t) = (int (*)(uint64_t))page;

				cr_expect_eq(stub(f), want, "CPU: cond %u flags %#"
					     PRIx64, c, f);
			}
			cr_assert_eq(dp_insn_emulate(&s, &r, &no_mem), 0);
			cr_expect_eq(r.ip, want ? 0x401012 : 0x401002);
			r.ip = 0;
			cr_assert_eq(dp_insn_emulate(&n, &r, &no_mem), 0);
			cr_expect_eq(r.ip, want ? 0x401106 : 0x401006);
			cr_expect_eq(r.flags, f);
		}
	}
	if (page)
		munmap(page, 4096);
	else
		cr_log_warn("no executable page: jcc checked by name only");
}

/*
 * uint64_t stub(flags, rcx, uint64_t *rcx_out):
 *   mov %rsi,%rcx; push %rdi; popfq; <insn> +4; xor %eax,%eax; jmp +5;
 *   mov $1,%eax; mov %rcx,(%rdx); ret
 */
static void build_count_stub(uint8_t *p, const uint8_t *insn, size_t n)
{
	static const uint8_t head[] = { 0x48, 0x89, 0xf1, 0x57, 0x9d };
	static const uint8_t tail[] = {
		0x31, 0xc0, 0xeb, 0x05, 0xb8, 1, 0, 0, 0, 0x48, 0x89, 0x0a,
		0xc3,
	};

	memcpy(p, head, sizeof(head));
	memcpy(p + sizeof(head), insn, n);
	p[sizeof(head) + n - 1] = 4;
	memcpy(p + sizeof(head) + n, tail, sizeof(tail));
	__builtin___clear_cache((char *)p, (char *)p + 64);
}

Test(insn, loop_and_jrcxz)
{
	static const char *const forms[] = {
		"e2 04", "e1 04", "e0 04", "e3 04", "67 e3 04",
	};
	const uint64_t counts[] = {
		0, 1, 2, 3, 0xffffffff, 0x100000000ull, 0x100000001ull,
		0xffffffffffffffffull,
	};
	uint8_t *page = exec_page();

	if (!page)
		cr_skip_test("no executable page");
	for (size_t k = 0; k < sizeof(forms) / sizeof(forms[0]); k++) {
		uint8_t code[4];
		size_t n = unhex(forms[k], code, sizeof(code));
		uint64_t (*stub)(uint64_t, uint64_t, uint64_t *) =
			(uint64_t (*)(uint64_t, uint64_t, uint64_t *))page;
		struct dp_insn in;

		build_count_stub(page, code, n);
		analyze_ok(forms[k], 0x401000, &in);
		for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
			for (int zf = 0; zf < 2; zf++) {
				uint64_t f = 0x2 | (zf ? ZF : 0), rcx = 0;
				bool taken = stub(f, counts[i], &rcx);
				struct dp_regs r = {
					.cx = counts[i], .flags = f,
				};

				cr_assert_eq(dp_insn_emulate(&in, &r, &no_mem),
					     0);
				cr_expect_eq(r.ip, taken ? in.target :
					     0x401000 + n, "%s rcx %#" PRIx64
					     " zf %d", forms[k], counts[i], zf);
				cr_expect_eq(r.cx, rcx, "%s rcx %#" PRIx64,
					     forms[k], counts[i]);
			}
	}
	munmap(page, 4096);
}

/* ---- emulation: calls, returns, indirect branches ----------------------- */

#define FAKE_BASE 0x7ffd00001000ull
#define FAKE_SIZE 256

struct fake_mem {
	uint8_t bytes[FAKE_SIZE];
	int reads, writes;
	uint64_t last;		/* address of the last access */
};

static int fake_read(void *priv, uint64_t addr, void *dst, size_t len)
{
	struct fake_mem *m = priv;

	m->reads++;
	m->last = addr;
	if (addr < FAKE_BASE || addr + len > FAKE_BASE + FAKE_SIZE)
		return -EFAULT;
	memcpy(dst, m->bytes + (addr - FAKE_BASE), len);
	return 0;
}

static int fake_write(void *priv, uint64_t addr, const void *src, size_t len)
{
	struct fake_mem *m = priv;

	m->writes++;
	m->last = addr;
	if (addr < FAKE_BASE || addr + len > FAKE_BASE + FAKE_SIZE)
		return -EFAULT;
	memcpy(m->bytes + (addr - FAKE_BASE), src, len);
	return 0;
}

static uint64_t fake_get(const struct fake_mem *m, uint64_t addr)
{
	return get64(m->bytes + (addr - FAKE_BASE));
}

static void fake_put(struct fake_mem *m, uint64_t addr, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		m->bytes[addr - FAKE_BASE + i] = (uint8_t)(v >> (8 * i));
}

static struct fake_mem fm;
static const struct dp_insn_mem fake = { fake_read, fake_write, &fm };

static void fake_reset(void)
{
	memset(&fm, 0, sizeof(fm));
}

Test(insn, emulate_call_ret, .init = fake_reset)
{
	const uint64_t sp = FAKE_BASE + 128;
	struct dp_regs r = { .sp = sp, .ip = 0x401001 };
	struct dp_insn in;

	analyze_ok("e8 fb 0f 00 00", 0x401000, &in);
	cr_assert_eq(dp_insn_emulate(&in, &r, &fake), 0);
	cr_expect_eq(r.ip, 0x402000);
	cr_expect_eq(r.sp, sp - 8);
	cr_expect_eq(fake_get(&fm, sp - 8), 0x401005);

	/* ret pops it again */
	analyze_ok("c3", 0x402010, &in);
	cr_assert_eq(dp_insn_emulate(&in, &r, &fake), 0);
	cr_expect_eq(r.ip, 0x401005);
	cr_expect_eq(r.sp, sp);

	/* ret $16 drops the arguments too */
	r.sp = sp - 8;
	analyze_ok("c2 10 00", 0x402010, &in);
	cr_assert_eq(dp_insn_emulate(&in, &r, &fake), 0);
	cr_expect_eq(r.ip, 0x401005);
	cr_expect_eq(r.sp, sp + 16);

	/* the pushed address is the one after the whole instruction */
	r.sp = sp;
	analyze_ok("67 e8 fa 0f 00 00", 0x401000, &in);
	cr_assert_eq(dp_insn_emulate(&in, &r, &fake), 0);
	cr_expect_eq(fake_get(&fm, sp - 8), 0x401006);
	cr_expect_eq(r.ip, 0x402000);
}

Test(insn, emulate_indirect, .init = fake_reset)
{
	const uint64_t sp = FAKE_BASE + 128;
	struct dp_regs r = { .sp = sp };
	struct dp_insn in;

	/* call *%rax */
	analyze_ok("ff d0", 0x401000, &in);
	r.ax = 0x7f0000001234ull;
	cr_assert_eq(dp_insn_emulate(&in, &r, &fake), 0);
	cr_expect_eq(r.ip, 0x7f0000001234ull);
	cr_expect_eq(r.sp, sp - 8);
	cr_expect_eq(fake_get(&fm, sp - 8), 0x401002);

	/* call *0x8(%rax,%rbx,4) */
	r = (struct dp_regs){ .sp = sp, .ax = FAKE_BASE, .bx = 4 };
	fake_put(&fm, FAKE_BASE + 8 + 16, 0x555555550000ull);
	analyze_ok("ff 54 98 08", 0x401000, &in);
	cr_assert_eq(dp_insn_emulate(&in, &r, &fake), 0);
	cr_expect_eq(fm.reads, 1);
	cr_expect_eq(r.ip, 0x555555550000ull);
	cr_expect_eq(fake_get(&fm, sp - 8), 0x401004);

	/* call *0x1234(%rip): the pointer is read from a fixed address */
	r = (struct dp_regs){ .sp = sp };
	fake_put(&fm, FAKE_BASE + 64, 0x401800);
	analyze_ok("ff 15 34 12 00 00", FAKE_BASE + 64 - 6 - 0x1234, &in);
	cr_assert_eq(dp_insn_emulate(&in, &r, &fake), 0);
	cr_expect_eq(r.ip, 0x401800);
	cr_expect_eq(fake_get(&fm, sp - 8), FAKE_BASE + 64 - 0x1234);

	/* call *(%rsp): the operand uses %rsp before the push */
	r = (struct dp_regs){ .sp = sp };
	fake_put(&fm, sp, 0x404040);
	analyze_ok("ff 14 24", 0x401000, &in);
	cr_assert_eq(dp_insn_emulate(&in, &r, &fake), 0);
	cr_expect_eq(r.ip, 0x404040);
	cr_expect_eq(fake_get(&fm, sp - 8), 0x401003);

	/* call *%fs:0x10 */
	r = (struct dp_regs){ .sp = sp, .fs_base = FAKE_BASE + 32 };
	fake_put(&fm, FAKE_BASE + 48, 0x405050);
	analyze_ok("64 ff 14 25 10 00 00 00", 0x401000, &in);
	cr_assert_eq(dp_insn_emulate(&in, &r, &fake), 0);
	cr_expect_eq(r.ip, 0x405050);

	/* jmp *%r11, jmp *(%r12): no push */
	r = (struct dp_regs){ .sp = sp, .r11 = 0x406000 };
	analyze_ok("41 ff e3", 0x401000, &in);
	cr_assert_eq(dp_insn_emulate(&in, &r, &fake), 0);
	cr_expect_eq(r.ip, 0x406000);
	cr_expect_eq(r.sp, sp);
	r = (struct dp_regs){ .sp = sp, .r12 = FAKE_BASE + 200 };
	fake_put(&fm, FAKE_BASE + 200, 0x407000);
	analyze_ok("41 ff 24 24", 0x401000, &in);
	fm.writes = 0;
	cr_assert_eq(dp_insn_emulate(&in, &r, &fake), 0);
	cr_expect_eq(r.ip, 0x407000);
	cr_expect_eq(r.sp, sp);
	cr_expect_eq(fm.writes, 0);

	/* 67: the address is computed in 32 bits */
	r = (struct dp_regs){ .sp = sp, .ax = 0xabcd000000000010ull };
	analyze_ok("67 ff 20", 0x401000, &in);	/* jmp *(%eax) */
	cr_expect_eq(dp_insn_emulate(&in, &r, &fake), -EFAULT);
	cr_expect_eq(fm.last, 0x10);
}

Test(insn, emulate_skips)
{
	struct dp_regs r = { .ip = 0x401001, .flags = 0x246 }, before;
	struct dp_insn in;

	analyze_ok("66 0f 1f 84 00 00 00 00 00", 0x401000, &in);
	before = r;
	cr_assert_eq(dp_insn_emulate(&in, &r, &no_mem), 0);
	before.ip = 0x401009;
	cr_expect_eq(memcmp(&r, &before, sizeof(r)), 0);

	analyze_ok("f3 0f 1e fa", 0x401000, &in);
	cr_assert_eq(dp_insn_emulate(&in, &r, &no_mem), 0);
	cr_expect_eq(r.ip, 0x401004);

	analyze_ok("eb fe", 0x401000, &in);
	cr_assert_eq(dp_insn_emulate(&in, &r, &no_mem), 0);
	cr_expect_eq(r.ip, 0x401000);

	analyze_ok("48 89 e5", 0x401000, &in);
	cr_expect_eq(dp_insn_emulate(&in, &r, &no_mem), -EINVAL);
}

/* A failed access changes nothing, and nothing is written after it. */
Test(insn, emulate_faults, .init = fake_reset)
{
	static const struct {
		const char *hex;
		struct dp_regs regs;
	} cases[] = {
		{ "e8 00 00 00 00", { .sp = 0x1000 } },		/* push faults */
		{ "e8 00 00 00 00", { .sp = FAKE_BASE + 4 } },	/* straddles */
		{ "ff d0", { .sp = 0x1000, .ax = 0x401000 } },
		{ "ff 10", { .sp = FAKE_BASE + 64, .ax = 0x2000 } },	/* read */
		{ "ff 10", { .sp = 0x1000, .ax = FAKE_BASE } },	/* push */
		{ "ff 20", { .sp = FAKE_BASE + 64, .ax = 0x2000 } },
		{ "ff 25 00 00 00 00", { .sp = FAKE_BASE } },	/* jmp *(%rip) */
		{ "c3", { .sp = 0x1000 } },
		{ "c2 08 00", { .sp = FAKE_BASE + FAKE_SIZE - 4 } },
		{ "64 ff 14 25 10 00 00 00", { .sp = FAKE_BASE + 64 } },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dp_regs before = cases[i].regs, r;
		struct dp_insn in;
		uint8_t snap[FAKE_SIZE];

		before.ip = 0x401001;
		before.flags = 0x202;
		r = before;
		analyze_ok(cases[i].hex, 0x401000, &in);
		cr_expect(dp_insn_may_fault(&in), "%s", cases[i].hex);
		memcpy(snap, fm.bytes, sizeof(snap));
		cr_expect_eq(dp_insn_emulate(&in, &r, &fake), -EFAULT, "%s",
			     cases[i].hex);
		cr_expect_eq(memcmp(&r, &before, sizeof(r)), 0,
			     "%s changed registers", cases[i].hex);
		cr_expect_eq(memcmp(snap, fm.bytes, sizeof(snap)), 0,
			     "%s wrote memory", cases[i].hex);
	}
}

/*
 * Effective addresses of indirect operands against Zydis' own calculation
 * with a register context, over random register values.
 */
static int record_read(void *priv, uint64_t addr, void *dst, size_t len)
{
	(void)dst;
	(void)len;
	*(uint64_t *)priv = addr;
	return -EFAULT;
}

Test(insn, indirect_addresses)
{
	static const char *const forms[] = {
		"ff 54 98 08", "ff 10", "41 ff 14 24", "41 ff 55 00",
		"43 ff 54 f5 80", "ff 14 c5 00 10 00 00", "ff 14 25 78 56 34 12",
		"ff 15 34 12 00 00", "ff 25 f0 ff ff ff", "67 ff 10",
		"67 ff 54 98 08", "67 ff 15 00 00 00 80", "ff 94 24 00 01 00 00",
		"42 ff 24 e5 00 00 00 00", "41 ff a4 c7 ff ff ff 7f",
		"64 ff 14 25 10 00 00 00", "65 ff 50 08",
	};
	static ZydisRegisterContext ctx;
	uint64_t seed = 0x9e3779b97f4a7c15ull;

	for (size_t k = 0; k < sizeof(forms) / sizeof(forms[0]); k++) {
		uint8_t code[16];
		size_t n = unhex(forms[k], code, sizeof(code));
		const uint64_t addr = 0x7f5555555000ull + k * 0x1000000;
		struct zdec z;
		struct dp_insn in;

		cr_assert(zdecode(code, n, &z));
		analyze_ok(forms[k], addr, &in);
		for (int round = 0; round < 200; round++) {
			struct dp_regs r;
			uint64_t *w = (uint64_t *)&r, got = 0;
			struct dp_insn_mem rec = { record_read, NULL, &got };
			ZyanU64 want;
			static const ZydisRegister gprs[16] = {
				ZYDIS_REGISTER_RAX, ZYDIS_REGISTER_RCX,
				ZYDIS_REGISTER_RDX, ZYDIS_REGISTER_RBX,
				ZYDIS_REGISTER_RSP, ZYDIS_REGISTER_RBP,
				ZYDIS_REGISTER_RSI, ZYDIS_REGISTER_RDI,
				ZYDIS_REGISTER_R8, ZYDIS_REGISTER_R9,
				ZYDIS_REGISTER_R10, ZYDIS_REGISTER_R11,
				ZYDIS_REGISTER_R12, ZYDIS_REGISTER_R13,
				ZYDIS_REGISTER_R14, ZYDIS_REGISTER_R15,
			};
			const uint64_t *vals[16] = {
				&r.ax, &r.cx, &r.dx, &r.bx, &r.sp, &r.bp,
				&r.si, &r.di, &r.r8, &r.r9, &r.r10, &r.r11,
				&r.r12, &r.r13, &r.r14, &r.r15,
			};

			for (size_t i = 0; i < sizeof(r) / 8; i++) {
				seed ^= seed << 13;
				seed ^= seed >> 7;
				seed ^= seed << 17;
				w[i] = round & 1 ? seed : seed & 0xffff;
			}
			memset(&ctx, 0, sizeof(ctx));
			for (int i = 0; i < 16; i++) {
				ZydisRegister r32 = ZydisRegisterEncode(
					ZYDIS_REGCLASS_GPR32, (ZyanU8)i);

				ctx.values[gprs[i]] = *vals[i];
				ctx.values[r32] = (uint32_t)*vals[i];
			}
			cr_assert(ZYAN_SUCCESS(ZydisCalcAbsoluteAddressEx(
				&z.insn, &z.ops[0], addr, &ctx, &want)));
			/* Zydis leaves segment bases to the caller */
			if (z.ops[0].mem.segment == ZYDIS_REGISTER_FS)
				want += r.fs_base;
			else if (z.ops[0].mem.segment == ZYDIS_REGISTER_GS)
				want += r.gs_base;
			cr_assert_eq(dp_insn_emulate(&in, &r, &rec), -EFAULT);
			cr_assert_eq(got, want, "%s: %#" PRIx64 " want %#"
				     PRIx64, forms[k], got, (uint64_t)want);
		}
	}
}

/* ---- slots that run ----------------------------------------------------- */

/*
 * Small functions whose first instruction is copied out of line; the rest of
 * each runs in place after the jump back.
 */
__asm__(
	"	.pushsection .data\n"
	"	.p2align 4\n"
	"dp_test_insn_data:\n"
	"	.quad 0x1122334455667788, 0x0123456789abcdef\n"
	"	.quad 5, 0\n"
	"	.quad 0xfeedfacecafebeef, 0x0\n"
	"	.quad 0, 0\n"
	"	.popsection\n"
	"	.pushsection .text\n"
	"	.p2align 4\n"
	"dp_test_insn_lea:\n"
	"	leaq dp_test_insn_data(%rip), %rax\n"
	"	ret\n"
	"dp_test_insn_load:\n"
	"	movq dp_test_insn_data+8(%rip), %rax\n"
	"	ret\n"
	"dp_test_insn_cmp:\n"
	"	cmpl $5, dp_test_insn_data+16(%rip)\n"
	"	sete %al\n"
	"	movzbl %al, %eax\n"
	"	ret\n"
	"dp_test_insn_movaps:\n"
	"	movaps dp_test_insn_data+32(%rip), %xmm0\n"
	"	movq %xmm0, %rax\n"
	"	ret\n"
	"dp_test_insn_store:\n"
	"	movl $0x1234, dp_test_insn_data+48(%rip)\n"
	"	movl dp_test_insn_data+48(%rip), %eax\n"
	"	ret\n"
	"dp_test_insn_call:\n"
	"	call dp_test_insn_callee\n"
	"	addq %rdi, %rax\n"
	"	ret\n"
	"dp_test_insn_callee:\n"
	"	movl $41, %eax\n"
	"	ret\n"
	"dp_test_insn_plain:\n"
	"	leaq 3(%rdi), %rax\n"
	"	ret\n"
	"	.popsection\n");

typedef uint64_t (*stub_fn)(uint64_t);

#define HIDDEN __attribute__((visibility("hidden")))
extern HIDDEN char dp_test_insn_lea[], dp_test_insn_load[],
	dp_test_insn_cmp[], dp_test_insn_movaps[], dp_test_insn_store[],
	dp_test_insn_call[], dp_test_insn_plain[], dp_test_insn_data[];

/* An RWX page within 1 GB of @near, or NULL. */
static uint8_t *page_near(uint64_t near)
{
	const uint64_t step = 1 << 20;
	uint64_t base = near & ~(step - 1);

	for (uint64_t k = 1; k < 1024; k++) {
		for (int dir = -1; dir <= 1; dir += 2) {
			uint64_t hint = base + (dir > 0 ? k * step : -k * step);
			void *p = mmap((void *)hint, 4096,
				       PROT_READ | PROT_WRITE | PROT_EXEC,
				       MAP_PRIVATE | MAP_ANONYMOUS |
				       MAP_FIXED_NOREPLACE, -1, 0);

			if (p == MAP_FAILED)
				continue;
			if ((uint64_t)p == hint)
				return p;
			munmap(p, 4096);
		}
	}
	return NULL;
}

/* Run @fn's first instruction from a slot at @page + @off; returns rax. */
static uint64_t run_in_slot(const char *fn, uint8_t *page, size_t off,
			    uint64_t arg)
{
	uint64_t slot = (uint64_t)page + off;
	const char *why = NULL;
	struct dp_insn in;
	int ret, len;

	ret = dp_insn_analyze((const uint8_t *)fn, 15, (uint64_t)fn, &in,
			      &why);
	cr_assert_eq(ret, 0, "%s", why ? why : "?");
	len = dp_insn_make_slot(&in, slot, page + off, DP_INSN_SLOT_SIZE);
	cr_assert_gt(len, 0, "make_slot: %d", len);
	__builtin___clear_cache((char *)page + off,
				(char *)page + off + DP_INSN_SLOT_SIZE);
	return ((stub_fn)slot)(arg);
}

Test(insn, slots_run)
{
	static const struct {
		const char *name;
		char *fn;
		const char *strategy;
	} stubs[] = {
		{ "lea", dp_test_insn_lea, "xol:riprel" },
		{ "load", dp_test_insn_load, "xol:riprel" },
		{ "cmp", dp_test_insn_cmp, "xol:riprel" },
		{ "movaps", dp_test_insn_movaps, "xol:riprel" },
		{ "store", dp_test_insn_store, "xol:riprel" },
		{ "call", dp_test_insn_call, "emulate:call" },
		{ "plain", dp_test_insn_plain, "xol" },
	};
	uint8_t *page = page_near((uint64_t)dp_test_insn_lea);

	if (!page)
		cr_skip_test("no executable page near the code");
	memset(page, 0xcc, 4096);
	for (size_t i = 0; i < sizeof(stubs) / sizeof(stubs[0]); i++) {
		struct dp_insn in;
		uint64_t want, got;

		cr_assert_eq(dp_insn_analyze((const uint8_t *)stubs[i].fn, 15,
					     (uint64_t)stubs[i].fn, &in, NULL),
			     0);
		cr_expect_str_eq(dp_insn_strategy(&in), stubs[i].strategy,
				 "%s", stubs[i].name);
		memset(dp_test_insn_data + 48, 0, 8);
		want = ((stub_fn)stubs[i].fn)(7);
		memset(dp_test_insn_data + 48, 0, 8);
		/* an emulated call runs its fault slot here */
		got = run_in_slot(stubs[i].fn, page, 64 * (i + 1), 7);
		cr_expect_eq(got, want, "%s: %#" PRIx64 " from the slot, %#"
			     PRIx64 " in place", stubs[i].name, got, want);
	}
	cr_expect_eq(((stub_fn)dp_test_insn_lea)(0),
		     (uint64_t)dp_test_insn_data);
	cr_expect_eq(((stub_fn)dp_test_insn_cmp)(0), 1);
	cr_expect_eq(((stub_fn)dp_test_insn_call)(1), 42);
	munmap(page, 4096);
}

/* A slot far from the code jumps back with an absolute jump, and runs. */
Test(insn, far_slot_runs)
{
	uint8_t *page = exec_page();
	uint64_t d, plain = (uint64_t)dp_test_insn_plain;
	struct dp_insn in;
	uint8_t buf[DP_INSN_SLOT_SIZE];

	if (!page)
		cr_skip_test("no executable page");
	d = (uint64_t)page > plain ? (uint64_t)page - plain
				   : plain - (uint64_t)page;
	if (d < 0x80000000ull + 4096) {
		munmap(page, 4096);
		cr_skip_test("the kernel put the page near the code");
	}
	cr_expect_eq(run_in_slot(dp_test_insn_plain, page, 0, 39), 42);
	cr_expect_eq(run_in_slot(dp_test_insn_call, page, 64, 1), 42);
	/* but a %rip-relative operand cannot reach from there */
	cr_assert_eq(dp_insn_analyze((const uint8_t *)dp_test_insn_load, 15,
				     (uint64_t)dp_test_insn_load, &in, NULL),
		     0);
	cr_expect_eq(dp_insn_make_slot(&in, (uint64_t)page + 128, buf,
				       sizeof(buf)), -ERANGE);
	munmap(page, 4096);
}

/* ---- the kernel's uprobe rules (kuprobe.c) -------------------------------- */

/* dp_kuprobe_check() on hex bytes: its return, the reason in @why. */
static int kcheck(const char *hex, char *why, size_t whylen)
{
	uint8_t code[DP_INSN_MAX_LEN];
	size_t n = unhex(hex, code, sizeof(code));

	why[0] = '\0';
	return dp_kuprobe_check(code, n, why, whylen);
}

Test(insn, kuprobe_refused_named)
{
	static const struct { const char *hex, *text, *reason; } bad[] = {
		{ "f0 48 83 05 7e 2e 00 00 01", "'lock addq $0x01, 0x2e7e(%rip)'",
		  "refuse lock-prefixed" },
		{ "f0 0f b1 0a", "'lock cmpxchg", "refuse lock-prefixed" },
		{ "2e 66 0f 1f 84 00 00 00 00 00", "(2e 66 0f", "es/cs/ss/ds" },
		{ "3e ff e0", "(3e ff e0)", "es/cs/ss/ds" },	/* notrack jmp */
		{ "8e d0", "'mov %ax, %ss'", "mov to %ss" },
		{ "cc", "'int3'", "opcode 0xcc" },
		{ "cd 80", "'int $0x80'", "opcode 0xcd" },
		{ "ec", "(ec)", "port I/O" },
		{ "f4", "'hlt'", "opcode 0xf4" },
		{ "c5 f9 ef c0", "'vpxor %xmm0, %xmm0, %xmm0'", "VEX/EVEX prefix (0xef)" },
		{ "c5 fe 6f 06", "'vmovdqu (%rsi), %ymm0'", "(0x6f)" },
		/* a relative branch with an operand-size prefix */
		{ "66 e8 00 00 00 00", "(66 e8", "operand-size prefix (66)" },
		{ "66 e9 00 00 00 00", "(66 e9", "operand-size prefix (66)" },
		{ "66 eb 00", "(66 eb 00)", "operand-size prefix (66)" },
		{ "66 74 00", "(66 74 00)", "operand-size prefix (66)" },
		{ "66 0f 84 00 00 00 00", "(66 0f 84", "operand-size prefix (66)" },
		/* taken by the kernel, but the process dies (SIGSEGV) */
		{ "0f 05", "'syscall'", "dies with SIGSEGV" },
	};
	char why[512];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(kcheck(bad[i].hex, why, sizeof(why)), -ENOTSUP,
			     "%s: taken", bad[i].hex);
		cr_expect(strstr(why, bad[i].text) && strstr(why, bad[i].reason),
			  "%s: \"%s\"", bad[i].hex, why);
	}
}

Test(insn, kuprobe_taken)
{
	/* what the kernel takes, as measured: its 0f escape is marked good
	 * whatever follows; a VEX opcode byte that is good in the one-byte
	 * map; fs/gs overrides, rep, REX */
	static const char *const good[] = {
		"48 89 f8", "55", "c3", "e8 00 00 00 00", "0f 1f 00",
		"f3 0f 1e fa", "c5 f8 77", "64 48 8b 04 25 28 00 00 00",
		"f3 48 ab", "66 90", "48 8d 05 00 00 00 00", "0f a2",
	};
	char why[512];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		cr_expect_eq(kcheck(good[i], why, sizeof(why)), 0, "%s: %s",
			     good[i], why);
}

Test(insn, kuprobe_undecodable)
{
	char why[512];

	cr_expect_eq(kcheck("48", why, sizeof(why)), -ENOEXEC);
	cr_expect(strstr(why, "do not decode"), "%s", why);
}

/* What the kernel answers for a place it will not probe, in words: libc
 * has none for its internal errnos ("Unknown error 524"). */
Test(insn, kuprobe_enotsupp_words)
{
	cr_expect_str_eq(dp_kstrerror(-524),
			 "not supported by the kernel here (ENOTSUPP)");
	cr_expect_str_eq(dp_kstrerror(524),
			 "not supported by the kernel here (ENOTSUPP)");
	cr_expect(strstr(dp_kstrerror(-EOPNOTSUPP), "EOPNOTSUPP"));
	cr_expect(strstr(dp_kstrerror(-517), "EPROBE_DEFER"));
	cr_expect_str_eq(dp_kstrerror(-ENOENT), strerror(ENOENT));
}
