// SPDX-License-Identifier: GPL-2.0
/*
 * Jump-optimised probes: which probe points can be optimised, and a detour
 * that really runs: built in a page near a test function, called in its
 * place, it must call the handler with the right register frame and then
 * give the function's own result.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "arch/arch.h"

/* opt_target(a, b) = opt_const * a + b, with a %rip-relative load first. */
__asm__(".text\n"
	".globl opt_target\n"
	"opt_target:\n"
	"	movq opt_const(%rip), %rax\n"
	"	imulq %rdi, %rax\n"
	"	addq %rsi, %rax\n"
	"	ret\n"
	".globl opt_target_end\n"
	"opt_target_end:\n"
	".data\n"
	"opt_const: .quad 3\n"
	".text\n");
long opt_target(long a, long b);
extern const uint8_t opt_target_end[];

static struct dp_regs seen;
static void *seen_arg;
static int calls;

static void handler(struct dp_regs *regs, void *arg)
{
	seen = *regs;
	seen_arg = arg;
	calls++;
}

/* An RWX page within rel32 reach of @near (tests only). */
static uint8_t *page_near(uint64_t near)
{
	for (uint64_t d = 1 << 20; d < (1ull << 30); d += 1 << 20) {
		void *p = mmap((void *)((near & ~0xfffull) - d), 4096,
			       PROT_READ | PROT_WRITE | PROT_EXEC,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			       -1, 0);

		if (p != MAP_FAILED)
			return p;
	}
	return NULL;
}

static void analyze_bytes(const uint8_t *code, size_t n, uint64_t addr_off,
			  int want, const char *why_part)
{
	struct dp_optprobe op;
	const char *why = NULL;
	int ret = dp_opt_analyze(code, 0x1000, n, 0x1000 + addr_off, &op, &why);

	cr_expect_eq(ret, want, "ret %d (%s), want %d", ret, why ? why : "",
		     want);
	if (why_part)
		cr_expect(why && strstr(why, why_part), "why: %s", why ? why : "");
}

Test(optprobe, analysis)
{
	/* push %rbp; mov %rsp,%rbp; mov %edi,%eax; pop %rbp; ret */
	static const uint8_t plain[] = { 0x55, 0x48, 0x89, 0xe5, 0x89, 0xf8,
					 0x5d, 0xc3 };
	/* endbr64; push %rbp; mov %rsp,%rbp; mov %edi,%eax; pop; ret */
	static const uint8_t endbr[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48,
					 0x89, 0xe5, 0x89, 0xf8, 0x5d, 0xc3 };
	/* push %rbp; mov %rsp,%rbp; jmp back to +1 (into the region) */
	static const uint8_t into[] = { 0x55, 0x48, 0x89, 0xe5, 0x89, 0xf8,
					0xeb, 0xf9, 0xc3 };
	/* call rel32 first */
	static const uint8_t call[] = { 0xe8, 0, 0, 0, 0, 0x90, 0xc3 };
	/* mov %rdi,%rax; jmp *%rax */
	static const uint8_t ind[] = { 0x48, 0x89, 0xf8, 0x48, 0x89, 0xc0,
				       0xff, 0xe0 };
	static const uint8_t nops[] = { 0x90, 0x90, 0x90 };
	struct dp_optprobe op;

	analyze_bytes(plain, sizeof(plain), 0, 0, NULL);
	cr_assert_eq(dp_opt_analyze(plain, 0x1000, sizeof(plain), 0x1000, &op,
				    NULL), 0);
	cr_expect_eq(op.nbytes, 6);
	cr_expect_eq(op.ninsn, 3);
	cr_expect(!op.save_flags, "flags are dead at a function entry");
	cr_assert_eq(dp_opt_analyze(endbr, 0x1000, sizeof(endbr), 0x1000, &op,
				    NULL), 0);
	cr_expect_eq(op.patch, 0x1004, "the jmp goes after endbr64");
	cr_expect_eq(op.addr, 0x1000);
	cr_assert_eq(dp_opt_analyze(plain, 0x1000, sizeof(plain), 0x1001, &op,
				    NULL), 0);
	cr_expect(op.save_flags, "mid-function flags may be live");
	analyze_bytes(into, sizeof(into), 0, -EOPNOTSUPP, "branch targets");
	analyze_bytes(call, sizeof(call), 0, -EOPNOTSUPP, "call");
	analyze_bytes(ind, sizeof(ind), 0, -EOPNOTSUPP, "indirect jump");
	analyze_bytes(plain, sizeof(plain), 6, -EOPNOTSUPP, "a branch, call");
	analyze_bytes(nops, sizeof(nops), 0, -EOPNOTSUPP, "fewer than 5 bytes");
}

/*
 * A compiler's entry site: -pg -mfentry -mnop-mcount's 5-byte nop and
 * -fpatchable-function-entry's one-byte nops, after an endbr64 or not.
 * The jmp replaces the nops, with nothing to relocate; a jump table in
 * the function no longer refuses it, as no branch lands in those nops.
 */
Test(optprobe, entry_sites)
{
	/* nopl 0(%rax,%rax); mov %rdi,%rax; jmp *%rax */
	static const uint8_t fentry[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00, 0x48,
					  0x89, 0xf8, 0xff, 0xe0 };
	/* endbr64; the same */
	static const uint8_t ebfentry[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x0f,
					    0x1f, 0x44, 0x00, 0x00, 0x48,
					    0x89, 0xf8, 0xff, 0xe0 };
	/* five nops; mov %rdi,%rax; jmp *%rax */
	static const uint8_t patch[] = { 0x90, 0x90, 0x90, 0x90, 0x90, 0x48,
					 0x89, 0xf8, 0xff, 0xe0 };
	/* four nops are no site for a jmp */
	static const uint8_t four[] = { 0x90, 0x90, 0x90, 0x90, 0x48, 0x89,
					0xf8, 0xff, 0xe0 };
	struct dp_optprobe op;
	uint64_t at;

	cr_expect_eq(dp_entry_site(fentry, sizeof(fentry), 0x1000, &at),
		     DP_ENTRY_FENTRY);
	cr_expect_eq(at, 0x1000);
	cr_expect_eq(dp_entry_site(ebfentry, sizeof(ebfentry), 0x1000, &at),
		     DP_ENTRY_FENTRY);
	cr_expect_eq(at, 0x1004);
	cr_expect_eq(dp_entry_site(patch, sizeof(patch), 0x1000, NULL),
		     DP_ENTRY_PATCHABLE);
	cr_expect_eq(dp_entry_site(four, sizeof(four), 0x1000, NULL),
		     DP_ENTRY_NONE);
	cr_expect_eq(dp_entry_site(fentry, 3, 0x1000, NULL), DP_ENTRY_NONE);
	cr_expect(dp_entry_site_name(DP_ENTRY_FENTRY) &&
		  !dp_entry_site_name(DP_ENTRY_NONE));

	cr_assert_eq(dp_opt_analyze(fentry, 0x1000, sizeof(fentry), 0x1000,
				    &op, NULL), 0);
	cr_expect_eq(op.entry_site, DP_ENTRY_FENTRY);
	cr_expect_eq(op.nbytes, 5);
	cr_assert_eq(dp_opt_analyze(ebfentry, 0x1000, sizeof(ebfentry), 0x1000,
				    &op, NULL), 0);
	cr_expect_eq(op.patch, 0x1004);
	cr_expect_eq(op.nbytes, 5);
	cr_assert_eq(dp_opt_analyze(patch, 0x1000, sizeof(patch), 0x1000, &op,
				    NULL), 0);
	cr_expect_eq(op.entry_site, DP_ENTRY_PATCHABLE);
	cr_expect_eq(op.ninsn, 5);
	/* not at the function's start, or no site: the jump table refuses */
	analyze_bytes(four, sizeof(four), 0, -EOPNOTSUPP, "indirect jump");
	analyze_bytes(patch, sizeof(patch), 1, -EOPNOTSUPP, "indirect jump");
}

static void run_detour(bool save_flags)
{
	uint64_t fn = (uint64_t)(uintptr_t)opt_target;
	size_t size = (size_t)(opt_target_end - (const uint8_t *)opt_target);
	uint8_t *page = page_near(fn), jmp[DP_OPT_JMP_LEN];
	long (*detour)(long, long) = (long (*)(long, long))(void *)page;
	struct dp_optprobe op;
	const char *why = NULL;
	int n;

	cr_assert_not_null(page);
	cr_assert_eq(dp_opt_analyze((const uint8_t *)opt_target, fn, size, fn,
				    &op, &why), 0, "%s", why ? why : "");
	cr_expect_eq(op.nbytes, 7, "the %%rip-relative load alone covers 5");
	op.save_flags = save_flags;
	n = dp_opt_make_detour(&op, (uint64_t)(uintptr_t)page,
			       (uint64_t)(uintptr_t)handler, 0x1234, page, 4096);
	cr_assert_gt(n, 0, "detour: %d", n);
	cr_assert_eq(dp_opt_make_jump(&op, (uint64_t)(uintptr_t)page, jmp), 0);
	cr_expect_eq(jmp[0], 0xe9);

	calls = 0;
	/* entering the detour as the jmp would: it is a call of opt_target */
	cr_expect_eq(detour(7, 5), 3 * 7 + 5);
	cr_expect_eq(detour(-2, 100), 94);
	cr_expect_eq(calls, 2);
	cr_expect_eq((long)seen.di, -2);
	cr_expect_eq((long)seen.si, 100);
	cr_expect_eq(seen.ip, fn);
	cr_expect_eq(seen.orig_ax, (uint64_t)-1);
	cr_expect_eq(seen.sp % 16, 8, "sp at entry: just below a return address");
	cr_expect_eq((uintptr_t)seen_arg, 0x1234);
	munmap(page, 4096);
}

Test(optprobe, detour_runs)
{
	run_detour(false);
}

Test(optprobe, detour_runs_saving_flags)
{
	run_detour(true);
}

Test(optprobe, jump_out_of_reach)
{
	struct dp_optprobe op = { .patch = 0x1000 };
	uint8_t jmp[DP_OPT_JMP_LEN];

	cr_expect_eq(dp_opt_make_jump(&op, 0x1000 + (3ull << 31), jmp), -ERANGE);
	cr_expect_eq(dp_opt_make_jump(&op, 0x1000ull + 5 + 0x7fffffff, jmp), 0);
}

/*
 * An fprobe's site where the compiler left one: `-pg -mfentry
 * -mnop-mcount` (a 5-byte nopl after the endbr64) or
 * `-fpatchable-function-entry=5` (five 1-byte nops).  The jump takes the
 * nops' place exactly: nothing is displaced, the detour runs none of the
 * function's instructions and returns to the first real one.
 */
__attribute__((noinline, patchable_function_entry(5)))
long patchable_target(long a)
{
	return a * 7;
}

static void nop_site(const uint8_t *code, size_t n, uint64_t skip)
{
	/* (analysed as if at 0x1000: only the bytes matter) */
	struct dp_optprobe op;
	const char *why = NULL;
	uint8_t detour[4096];

	cr_assert_eq(dp_opt_analyze(code, 0x1000, n, 0x1000, &op, &why), 0,
		     "%s", why ? why : "");
	cr_expect_eq(op.patch, 0x1000 + skip, "the jump after the endbr64");
	cr_expect_eq(op.nbytes, 5);
	for (unsigned i = 0; i < op.ninsn; i++)
		cr_expect_eq(op.insn[i].op, DP_OP_NOP, "only nops displaced");
	/* the detour: frame, handler, frame, the jump back to +5 */
	cr_expect_gt(dp_opt_make_detour(&op, 0x2000, 0x3000, 0, detour,
					 sizeof(detour)), 0);
}

Test(optprobe, fentry_and_patchable_sites)
{
	/* endbr64; nopl 0x0(%rax,%rax,1); push %rbp; mov %rsp,%rbp; ... */
	static const uint8_t fentry[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x0f, 0x1f,
					  0x44, 0x00, 0x00, 0x55, 0x48, 0x89,
					  0xe5, 0x89, 0xf8, 0x5d, 0xc3 };
	const uint8_t *p = (const uint8_t *)patchable_target;
	uint64_t skip = p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e ? 4 : 0;

	nop_site(fentry, sizeof(fentry), 4);
	/* this very function, as GCC laid it out */
	for (int i = 0; i < 5; i++)
		cr_assert_eq(p[skip + i], 0x90, "byte %d of the entry", i);
	/* the function's bytes: up to its ret (it has one, at its end) */
	size_t n = skip + 5;

	while (n < 256 && p[n] != 0xc3)
		n++;
	nop_site(p, n + 1, skip);
	cr_expect_eq(patchable_target(6), 42);
}
