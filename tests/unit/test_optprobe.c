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
	/* call rel32 first (to the instruction after it) */
	static const uint8_t call[] = { 0xe8, 0, 0, 0, 0, 0x90, 0xc3 };
	/* call *%rax first: only a %rip-relative pointer is relocated */
	static const uint8_t callreg[] = { 0xff, 0xd0, 0x90, 0x90, 0x90, 0xc3 };
	/* loop to itself, jrcxz */
	static const uint8_t loop[] = { 0xe2, 0xfe, 0x90, 0x90, 0x90, 0xc3 };
	static const uint8_t jrcxz[] = { 0xe3, 0x03, 0x90, 0x90, 0x90, 0xc3 };
	/* test %rdi,%rdi; je +1: a jcc into the region */
	static const uint8_t jccin[] = { 0x48, 0x85, 0xff, 0x74, 0xfd, 0x90,
					 0xc3 };
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
	analyze_bytes(call, sizeof(call), 0, 0, NULL);
	analyze_bytes(callreg, sizeof(callreg), 0, -EOPNOTSUPP,
		      "an indirect call");
	/* loop and jrcxz move: their targets are the region's start, and
	 * after it */
	analyze_bytes(loop, sizeof(loop), 0, 0, NULL);
	analyze_bytes(jrcxz, sizeof(jrcxz), 0, 0, NULL);
	analyze_bytes(jccin, sizeof(jccin), 0, -EOPNOTSUPP, "branch targets");
	/* no reader: no jump table can be read */
	analyze_bytes(ind, sizeof(ind), 0, -EOPNOTSUPP, "indirect jump");
	/* pop; ret and then the end: no padding known */
	analyze_bytes(plain, sizeof(plain), 6, -EOPNOTSUPP, "fewer than 5");
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

/*
 * -fpatchable-function-entry=N,M with 2 to 4 bytes of nops at the symbol
 * and 5 or more before it (entrysite.h): a jmp short at the symbol to a
 * jmp rel32 in the nops before, nothing relocated.  Told from the bytes
 * either side; too few nops on either side is a site that is not used.
 */
Test(optprobe, patchable_short_layouts)
{
	static const uint8_t pre5[] = { 0x90, 0x90, 0x90, 0x90, 0x90 };
	static const uint8_t pre4[] = { 0x0f, 0x90, 0x90, 0x90, 0x90 };
	/* two nops; mov %rdi,%rax; jmp *%rax (a jump table is no matter) */
	static const uint8_t two[] = { 0x90, 0x90, 0x48, 0x89, 0xf8, 0xff,
				       0xe0 };
	/* endbr64; xchg %ax,%ax (clang's two-byte nop); lea; ret */
	static const uint8_t eb2[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x66, 0x90,
				       0x48, 0x8d, 0x04, 0x7f, 0xc3 };
	/* N = M: no nop at the symbol */
	static const uint8_t none[] = { 0x48, 0x89, 0xf8, 0xc3 };
	/* two nops, then a jmp back to the second one */
	static const uint8_t into[] = { 0x90, 0x90, 0x48, 0x89, 0xf8, 0xeb,
					0xfa, 0xc3 };
	struct dp_optprobe op;
	const char *why = NULL;
	uint8_t j[4];
	uint64_t at;

	cr_expect_eq(dp_entry_site_around(pre5, 5, two, sizeof(two), 0x1000,
					  &at), DP_ENTRY_PATCHABLE_SHORT);
	cr_expect_eq(at, 0x1000);
	cr_expect_eq(dp_entry_site_around(pre5, 5, eb2, sizeof(eb2), 0x1000,
					  &at), DP_ENTRY_PATCHABLE_SHORT);
	cr_expect_eq(at, 0x1004);
	cr_expect_eq(dp_entry_site_around(pre4, 5, two, sizeof(two), 0x1000,
					  NULL), DP_ENTRY_PATCHABLE_UNUSED);
	cr_expect_eq(dp_entry_site_around(pre5, 5, none, sizeof(none), 0x1000,
					  NULL), DP_ENTRY_PATCHABLE_UNUSED);
	cr_expect_eq(dp_entry_site_around(NULL, 0, none, sizeof(none), 0x1000,
					  NULL), DP_ENTRY_NONE);
	cr_expect_eq(dp_entry_nop_bytes(eb2, sizeof(eb2)), 0, "endbr64");
	cr_expect(dp_entry_site_name(DP_ENTRY_PATCHABLE_SHORT) &&
		  dp_entry_site_name(DP_ENTRY_PATCHABLE_UNUSED));

	cr_assert_eq(dp_opt_analyze_short(two, 0x1000, sizeof(two), pre5, &op,
					  &why), 0, "%s", why ? why : "");
	cr_expect_eq(op.patch, 0x1000);
	cr_expect_eq(op.nbytes, 2);
	cr_expect_eq(op.entry_site, DP_ENTRY_PATCHABLE_SHORT);
	cr_assert_eq(dp_opt_make_jump_short(&op, j), 0);
	cr_expect(j[0] == 0xeb && j[1] == 0xf9, "jmp short to 0xffb: %02x %02x",
		  j[0], j[1]);
	cr_assert_eq(dp_opt_analyze_short(eb2, 0x1000, sizeof(eb2), pre5, &op,
					  NULL), 0);
	cr_expect_eq(op.patch, 0x1004);
	cr_assert_eq(dp_opt_make_jump_short(&op, j), 0);
	cr_expect(j[0] == 0xeb && j[1] == 0xf5);
	cr_expect_eq(dp_opt_analyze_short(two, 0x1000, sizeof(two), pre4, &op,
					  NULL), -EOPNOTSUPP);
	cr_expect_eq(dp_opt_analyze_short(none, 0x1000, sizeof(none), pre5,
					  &op, NULL), -EOPNOTSUPP);
	why = NULL;
	cr_expect_eq(dp_opt_analyze_short(into, 0x1000, sizeof(into), pre5,
					  &op, &why), -EOPNOTSUPP);
	cr_expect(why && strstr(why, "entry's nops"), "%s", why ? why : "");
}

/* The short layout patched for real in a page and called through it. */
Test(optprobe, patchable_short_runs)
{
	/* five nops; sym: three nops; lea (%rdi,%rdi,2),%rax; ret */
	static const uint8_t fn[] = { 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
				      0x90, 0x48, 0x8d, 0x04, 0x7f, 0xc3 };
	uint8_t *page = page_near((uint64_t)(uintptr_t)handler);
	uint8_t *sym = page + 0x100 + 5;
	uint64_t fs = (uint64_t)(uintptr_t)sym;
	long (*call)(long) = (long (*)(long))(void *)sym;
	struct dp_optprobe op;
	const char *why = NULL;
	int n;

	cr_assert_not_null(page);
	memset(page, 0xcc, 4096);
	memcpy(page + 0x100, fn, sizeof(fn));
	cr_assert_eq(dp_opt_analyze_short(sym, fs, sizeof(fn) - 5, sym - 5,
					  &op, &why), 0, "%s", why ? why : "");
	cr_expect_eq(op.nbytes, 3);
	n = dp_opt_make_detour(&op, fs + 0x200, (uint64_t)(uintptr_t)handler,
			       0x77, sym + 0x200, 1024);
	cr_assert_gt(n, 0);
	cr_assert_eq(dp_opt_make_pre_jump(&op, fs + 0x200, sym - 5), 0);
	cr_assert_eq(dp_opt_make_jump_short(&op, sym), 0);
	cr_expect_eq(sym[2], 0xcc, "the third nop padded");
	calls = 0;
	cr_expect_eq(call(14), 42);
	cr_expect_eq(calls, 1);
	cr_expect_eq(seen.ip, fs, "the probe is at the symbol");
	cr_expect_eq((long)seen.di, 14);
	cr_expect_eq((uintptr_t)seen_arg, 0x77);
	munmap(page, 4096);
}

/*
 * Functions whose first instructions branch or call, optimised for real:
 * the jmp written over their bytes as the agent writes it, then called.
 * rc_leaf keeps the return address it was called with, which must be
 * the one the untraced call pushes (the address after it at the site).
 */
#define RC_FN(n) ".globl " #n "\n.type " #n ", @function\n" #n ":\n"
#define RC_END(n) ".size " #n ", . - " #n "\n.globl " #n "_end\n" #n "_end:\n"
#define RC_CALL(t) ".byte 0xe8\n.long " #t " - . - 4\n"	/* always rel32 */
#define RC_JMP(t) ".byte 0xe9\n.long " #t " - . - 4\n"
__asm__(".text\n.p2align 4\n"
	RC_FN(rc_leaf)				/* 3x, keeps (%rsp) */
	"	movq (%rsp), %rcx\n"
	"	movq %rcx, rc_seen_ret(%rip)\n"
	"	leaq (%rdi,%rdi,2), %rax\n"
	"	ret\n"
	RC_END(rc_leaf)
	RC_FN(rc_call)				/* 3x + 1: a call first */
	RC_CALL(rc_leaf)
	".globl rc_call_ret\nrc_call_ret:\n"
	"	addq $1, %rax\n"
	"	ret\n"
	RC_END(rc_call)
	RC_FN(rc_callmem)			/* 3x + 1 through a pointer */
	"	call *rc_ptr(%rip)\n"
	".globl rc_callmem_ret\nrc_callmem_ret:\n"
	"	addq $1, %rax\n"
	"	ret\n"
	RC_END(rc_callmem)
	RC_FN(rc_pushcall)			/* 3x + 2: the call second */
	"	pushq %rbx\n"
	RC_CALL(rc_leaf)
	".globl rc_pushcall_ret\nrc_pushcall_ret:\n"
	"	popq %rbx\n"
	"	addq $2, %rax\n"
	"	ret\n"
	RC_END(rc_pushcall)
	RC_FN(rc_jcc)				/* x ? x + 10 : -1 */
	"	testq %rdi, %rdi\n"
	"	je 1f\n"
	"	leaq 10(%rdi), %rax\n"
	"	ret\n"
	"1:	movq $-1, %rax\n"
	"	ret\n"
	RC_END(rc_jcc)
	RC_FN(rc_mid)				/* x < 5 ? x + 200 : x + 100 */
	"	cmpq $5, %rdi\n"
	".globl rc_mid_jl\nrc_mid_jl:\n"	/* the probe: flags live */
	"	jl 1f\n"
	"	leaq 100(%rdi), %rax\n"
	"	ret\n"
	"1:	leaq 200(%rdi), %rax\n"
	"	ret\n"
	RC_END(rc_mid)
	RC_FN(rc_tail)				/* a tail call: jmp rc_leaf */
	RC_JMP(rc_leaf)
	RC_END(rc_tail)
	RC_FN(rc_jmp8)				/* x + 7, a jmp rel8 over a nop */
	"	jmp 1f\n"
	"	nopl (%rax)\n"
	"1:	leaq 7(%rdi), %rax\n"
	"	ret\n"
	RC_END(rc_jmp8)
	".data\n.p2align 3\n"
	"rc_ptr: .quad rc_leaf\n"
	".globl rc_seen_ret\nrc_seen_ret: .quad 0\n"
	".text\n");

long rc_call(long), rc_callmem(long), rc_pushcall(long), rc_jcc(long);
long rc_mid(long), rc_tail(long), rc_jmp8(long);
extern const uint8_t rc_call_end[], rc_callmem_end[], rc_pushcall_end[];
extern const uint8_t rc_jcc_end[], rc_mid_end[], rc_tail_end[], rc_jmp8_end[];
extern const uint8_t rc_call_ret[], rc_callmem_ret[], rc_pushcall_ret[];
extern const uint8_t rc_mid_jl[];
extern uint64_t rc_seen_ret;

struct patched {
	uint8_t *page;			/* the detour */
	uint8_t *text;			/* the region's page(s) */
	uint64_t patch;
	unsigned int nbytes;
	uint8_t orig[16];
	struct dp_optprobe op;
};

/* This process's memory, for the jump tables of the functions below
 * (their %rip-relative addresses are all in this test's .data). */
static int self_read(void *priv, uint64_t addr, void *dst, size_t len)
{
	(void)priv;
	memcpy(dst, (const void *)(uintptr_t)addr, len);
	return 0;
}

/* The probe at @at of the function [@fn, @end) optimised for real. */
static void patch_in(struct patched *p, const void *fn, const void *end,
		     const void *at)
{
	uint64_t start = (uint64_t)(uintptr_t)fn;
	uint8_t jmp[DP_OPT_JMP_LEN];
	const char *why = NULL;
	int n;

	const struct dp_opt_ctx c = {
		.fcode = fn, .fstart = start,
		.fsize = (size_t)((const uint8_t *)end - (const uint8_t *)fn),
		.read = self_read,
	};

	cr_assert_eq(dp_opt_analyze_in(&c, (uint64_t)(uintptr_t)at, &p->op,
				       &why), 0, "%s", why ? why : "");
	p->patch = p->op.patch;
	p->nbytes = p->op.nbytes;
	p->page = page_near(p->patch);
	cr_assert_not_null(p->page);
	n = dp_opt_make_detour(&p->op, (uint64_t)(uintptr_t)p->page,
			       (uint64_t)(uintptr_t)handler, 0x77, p->page,
			       4096);
	cr_assert_gt(n, 0, "detour: %d", n);
	cr_assert_eq(dp_opt_make_jump(&p->op, (uint64_t)(uintptr_t)p->page,
				      jmp), 0);
	p->text = (uint8_t *)(uintptr_t)(p->patch & ~0xfffull);
	cr_assert_eq(mprotect(p->text, 8192, PROT_READ | PROT_WRITE |
			      PROT_EXEC), 0);
	memcpy(p->orig, (void *)(uintptr_t)p->patch, p->nbytes);
	memset((void *)(uintptr_t)p->patch, DP_INT3, p->nbytes);
	memcpy((void *)(uintptr_t)p->patch, jmp, sizeof(jmp));
	calls = 0;
}

static void patch_out(struct patched *p)
{
	memcpy((void *)(uintptr_t)p->patch, p->orig, p->nbytes);
	mprotect(p->text, 8192, PROT_READ | PROT_EXEC);
	munmap(p->page, 4096);
}

/* The probed function @fn with @x gives @want, the handler saw @x. */
static void expect_call(long (*fn)(long), long x, long want, uint64_t ip)
{
	int before = calls;
	long got = fn(x);

	cr_expect_eq(got, want, "f(%ld) = %ld, want %ld", x, got, want);
	cr_expect_eq(calls, before + 1, "the handler ran");
	cr_expect_eq((long)seen.di, x);
	cr_expect_eq(seen.ip, ip);
}

/* A call first: the callee sees the return address of the untraced call. */
static void call_first(long (*fn)(long), const uint8_t *end,
		       const uint8_t *ret)
{
	struct patched p;

	patch_in(&p, (const void *)fn, end, (const void *)fn);
	cr_expect_eq(p.nbytes, (uint64_t)(uintptr_t)ret -
		     (uint64_t)(uintptr_t)fn, "the region ends after the call");
	rc_seen_ret = 0;
	expect_call(fn, 5, 16 + (ret == rc_pushcall_ret), (uintptr_t)fn);
	cr_expect_eq(rc_seen_ret, (uint64_t)(uintptr_t)ret,
		     "return address %#lx, untraced %#lx",
		     (unsigned long)rc_seen_ret, (unsigned long)(uintptr_t)ret);
	expect_call(fn, -3, -8 + (ret == rc_pushcall_ret), (uintptr_t)fn);
	patch_out(&p);
}

Test(optprobe, relocated_call_runs)
{
	call_first(rc_call, rc_call_end, rc_call_ret);
}

Test(optprobe, relocated_call_through_pointer_runs)
{
	struct patched p;

	call_first(rc_callmem, rc_callmem_end, rc_callmem_ret);
	patch_in(&p, (const void *)rc_callmem, rc_callmem_end,
		 (const void *)rc_callmem);
	cr_expect_eq(p.op.insn[0].op, DP_OP_CALL_IND);
	patch_out(&p);
}

Test(optprobe, relocated_call_after_a_push_runs)
{
	call_first(rc_pushcall, rc_pushcall_end, rc_pushcall_ret);
}

Test(optprobe, relocated_jcc_runs)
{
	struct patched p;

	patch_in(&p, (const void *)rc_jcc, rc_jcc_end, (const void *)rc_jcc);
	cr_expect_eq(p.op.insn[1].op, DP_OP_JCC);
	expect_call(rc_jcc, 4, 14, (uintptr_t)rc_jcc);	/* falls through */
	expect_call(rc_jcc, 0, -1, (uintptr_t)rc_jcc);	/* taken */
	patch_out(&p);
}

Test(optprobe, relocated_jcc_with_live_flags_runs)
{
	struct patched p;

	/* the handler's own code changes the flags: the cmp's must be back */
	patch_in(&p, (const void *)rc_mid, rc_mid_end, rc_mid_jl);
	cr_expect(p.op.save_flags);
	expect_call(rc_mid, 3, 203, (uintptr_t)rc_mid_jl);
	expect_call(rc_mid, 9, 109, (uintptr_t)rc_mid_jl);
	expect_call(rc_mid, 5, 105, (uintptr_t)rc_mid_jl);
	patch_out(&p);
}

Test(optprobe, relocated_jmp_runs)
{
	struct patched p;

	patch_in(&p, (const void *)rc_tail, rc_tail_end, (const void *)rc_tail);
	expect_call(rc_tail, 6, 18, (uintptr_t)rc_tail);
	patch_out(&p);
	patch_in(&p, (const void *)rc_jmp8, rc_jmp8_end, (const void *)rc_jmp8);
	cr_expect_eq(p.nbytes, 5, "the jmp rel8 and the dead nop");
	expect_call(rc_jmp8, 6, 13, (uintptr_t)rc_jmp8);
	patch_out(&p);
}

Test(optprobe, relocated_branch_out_of_reach)
{
	struct dp_optprobe op;
	uint8_t detour[DP_OPT_DETOUR_SIZE];
	const uint64_t fn = (uint64_t)(uintptr_t)rc_call;

	cr_assert_eq(dp_opt_analyze((const uint8_t *)rc_call, fn,
				    (size_t)(rc_call_end - (const uint8_t *)rc_call),
				    fn, &op, NULL), 0);
	/* the detour 6 GiB away: its jmp to the callee cannot be a rel32 */
	cr_expect_eq(dp_opt_make_detour(&op, fn + (6ull << 30), 0x1000, 0,
					detour, sizeof(detour)), -ERANGE);
	cr_expect_gt(dp_opt_make_detour(&op, fn + (1ull << 30), 0x1000, 0,
					detour, sizeof(detour)), 0);
}

/* ---- what only the process can tell: padding and jump tables ----------- */

/* The fake process memory of a table test: @mem at @base. */
struct fake_mem {
	uint64_t base;
	const uint8_t *mem;
	size_t len;
};

static int fake_read(void *priv, uint64_t addr, void *dst, size_t len)
{
	const struct fake_mem *m = priv;

	if (addr < m->base || addr + len > m->base + m->len)
		return -EFAULT;
	memcpy(dst, m->mem + (addr - m->base), len);
	return 0;
}

static int analyze_ctx(const uint8_t *code, size_t n, const uint8_t *pad,
		       size_t npad, struct fake_mem *m, struct dp_optprobe *op,
		       const char **why)
{
	const struct dp_opt_ctx c = {
		.fcode = code, .fstart = 0x1000, .fsize = n, .pad = pad,
		.npad = npad, .read = m ? fake_read : NULL, .priv = m,
	};

	*why = NULL;
	return dp_opt_analyze_in(&c, 0x1000, op, why);
}

/*
 * A function shorter than the jmp whose last instruction is a ret or a
 * jmp is replaced into its padding (int3s, nops) when no symbol covers
 * it; not when the padding is other bytes, or when the function's end
 * falls through.
 */
Test(optprobe, short_function_into_padding)
{
	/* lea (%rdi,%rdi),%eax; ret */
	static const uint8_t shortret[] = { 0x8d, 0x04, 0x3f, 0xc3 };
	/* jmp *%rax */
	static const uint8_t jmpreg[] = { 0xff, 0xe0 };
	/* mov %edi,%eax: runs on into what follows */
	static const uint8_t falls[] = { 0x89, 0xf8 };
	static const uint8_t int3s[] = { 0xcc, 0xcc, 0xcc, 0xcc };
	static const uint8_t nopw[] = { 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	static const uint8_t data[] = { 0x00, 0x00, 0x00, 0x00 };
	/* a jmp *%rax is an indirect jump: its tables are read (none) */
	struct fake_mem none = { 0 };
	struct dp_optprobe op;
	const char *why;

	cr_expect_eq(analyze_ctx(shortret, 4, int3s, 4, NULL, &op, &why), 0,
		     "%s", why ? why : "");
	cr_expect_eq(op.nbytes, 5);
	cr_expect_eq(op.npad, 1);
	cr_expect_eq(op.ninsn, 2);
	cr_expect_eq(analyze_ctx(jmpreg, 2, nopw, 6, &none, &op, &why), 0,
		     "%s", why ? why : "");
	cr_expect_eq(op.npad, 3);
	cr_expect_eq(analyze_ctx(shortret, 4, data, 4, NULL, &op, &why),
		     -EOPNOTSUPP);
	cr_expect_eq(analyze_ctx(shortret, 4, int3s, 0, NULL, &op, &why),
		     -EOPNOTSUPP, "no padding known");
	cr_expect_eq(analyze_ctx(falls, 2, int3s, 4, NULL, &op, &why),
		     -EOPNOTSUPP);
	cr_expect(why && strstr(why, "fewer than 5"), "%s", why ? why : "");
}

/*
 * Jump tables: a switch's `lea table(%rip)`, its entries 32-bit offsets
 * from the table, read from the process.  An entry into the replaced
 * bytes refuses the probe; entries elsewhere in the function do not.
 */
Test(optprobe, jump_tables_read)
{
	/*
	 * 0x1000 push %rbp; mov %rsp,%rbp; mov %edi,%eax  (the region)
	 * 0x1006 lea 0x1ff3(%rip),%rdx -> 0x3000 (the table)
	 * 0x100d movslq (%rdx,%rax,4),%rax; add %rdx,%rax; jmp *%rax
	 * 0x1016 pop %rbp; ret
	 */
	static const uint8_t fn[] = {
		0x55, 0x48, 0x89, 0xe5, 0x89, 0xf8,
		0x48, 0x8d, 0x15, 0xf3, 0x1f, 0x00, 0x00,
		0x48, 0x63, 0x04, 0x82, 0x48, 0x01, 0xd0, 0xff, 0xe0,
		0x5d, 0xc3,
	};
	int32_t good[] = { 0x1016 - 0x3000, 0x1006 - 0x3000, 0x7777 };
	int32_t bad[] = { 0x1016 - 0x3000, 0x1002 - 0x3000, 0x7777 };
	struct fake_mem m = { 0x3000, (const uint8_t *)good, sizeof(good) };
	struct dp_optprobe op;
	const char *why;

	cr_expect_eq(analyze_ctx(fn, sizeof(fn), NULL, 0, &m, &op, &why), 0,
		     "%s", why ? why : "");
	m.mem = (const uint8_t *)bad;
	cr_expect_eq(analyze_ctx(fn, sizeof(fn), NULL, 0, &m, &op, &why),
		     -EOPNOTSUPP);
	cr_expect(why && strstr(why, "jump table"), "%s", why ? why : "");
	/* a table that cannot be read is no proof */
	m.len = 0;
	cr_expect_eq(analyze_ctx(fn, sizeof(fn), NULL, 0, &m, &op, &why), 0,
		     "an unreadable address is no table: %s",
		     why ? why : "");
}

/* The address of a replaced byte, taken (lea 0x1002(%rip)), refuses. */
Test(optprobe, address_of_region_taken)
{
	/* push %rbp; mov %rsp,%rbp; mov %edi,%eax; lea -0xb(%rip),%rax;
	 * pop %rbp; ret */
	static const uint8_t fn[] = {
		0x55, 0x48, 0x89, 0xe5, 0x89, 0xf8,
		0x48, 0x8d, 0x05, 0xf5, 0xff, 0xff, 0xff, 0x5d, 0xc3,
	};
	struct dp_optprobe op;
	const char *why;

	cr_expect_eq(analyze_ctx(fn, sizeof(fn), NULL, 0, NULL, &op, &why),
		     -EOPNOTSUPP);
	cr_expect(why && strstr(why, "address of a replaced byte"), "%s",
		  why ? why : "");
}

/* Run for real: a ret and jmps through a pointer moved to the detour,
 * loop and jrcxz relocated. */
__asm__(".text\n.p2align 4\n"
	RC_FN(rc_short)				/* 2x, 4 bytes */
	"	leal (%rdi,%rdi), %eax\n"
	"	ret\n"
	RC_END(rc_short)
	"	.byte 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc\n"
	".p2align 4\n"
	RC_FN(rc_jmpptr)			/* jmp *rc_ptr(%rip): 3x */
	"	jmp *rc_ptr(%rip)\n"
	RC_END(rc_jmpptr)
	RC_FN(rc_loop)				/* 2x, x > 0 */
	"	movq %rdi, %rcx\n"
	"	xorl %eax, %eax\n"
	"1:	addq $2, %rax\n"
	".globl rc_loop_at\nrc_loop_at:\n"
	"	loop 1b\n"
	"	nop\n	nop\n	nop\n"
	"	ret\n"
	RC_END(rc_loop)
	RC_FN(rc_jrcxz)				/* x ? 5 : 9 */
	"	movq %rdi, %rcx\n"
	".globl rc_jrcxz_at\nrc_jrcxz_at:\n"
	"	jrcxz 1f\n"
	"	nop\n	nop\n	nop\n"
	"	movq $5, %rax\n"
	"	ret\n"
	"1:	movq $9, %rax\n"
	"	ret\n"
	RC_END(rc_jrcxz)
	".text\n");

long rc_short(long), rc_jmpptr(long), rc_loop(long), rc_jrcxz(long);
extern const uint8_t rc_short_end[], rc_jmpptr_end[], rc_loop_end[];
extern const uint8_t rc_jrcxz_end[], rc_loop_at[], rc_jrcxz_at[];

Test(optprobe, relocated_ret_into_padding_runs)
{
	static const uint8_t pad[] = { 0xcc, 0xcc, 0xcc, 0xcc };
	const uint64_t fn = (uint64_t)(uintptr_t)rc_short;
	const struct dp_opt_ctx c = {
		.fcode = (const uint8_t *)rc_short, .fstart = fn,
		.fsize = (size_t)(rc_short_end - (const uint8_t *)rc_short),
		.pad = pad, .npad = sizeof(pad),
	};
	struct patched p = { 0 };
	uint8_t jmp[DP_OPT_JMP_LEN];
	const char *why = NULL;

	cr_assert_eq(dp_opt_analyze_in(&c, fn, &p.op, &why), 0, "%s",
		     why ? why : "");
	cr_assert_eq(p.op.npad, 1);
	p.patch = p.op.patch;
	p.nbytes = p.op.nbytes;
	p.page = page_near(p.patch);
	cr_assert_not_null(p.page);
	cr_assert_gt(dp_opt_make_detour(&p.op, (uint64_t)(uintptr_t)p.page,
					(uint64_t)(uintptr_t)handler, 0x77,
					p.page, 4096), 0);
	cr_assert_eq(dp_opt_make_jump(&p.op, (uint64_t)(uintptr_t)p.page,
				      jmp), 0);
	p.text = (uint8_t *)(uintptr_t)(p.patch & ~0xfffull);
	cr_assert_eq(mprotect(p.text, 8192, PROT_READ | PROT_WRITE |
			      PROT_EXEC), 0);
	memcpy(p.orig, (void *)(uintptr_t)p.patch, p.nbytes);
	memcpy((void *)(uintptr_t)p.patch, jmp, sizeof(jmp));
	calls = 0;
	expect_call(rc_short, 21, 42, fn);
	patch_out(&p);
	cr_expect_eq(rc_short(4), 8);
}

Test(optprobe, relocated_jmp_through_pointer_runs)
{
	struct patched p;

	patch_in(&p, (const void *)rc_jmpptr, rc_jmpptr_end,
		 (const void *)rc_jmpptr);
	cr_expect_eq(p.op.insn[0].op, DP_OP_JMP_IND);
	expect_call(rc_jmpptr, 7, 21, (uintptr_t)rc_jmpptr);
	patch_out(&p);
}

Test(optprobe, relocated_loop_and_jrcxz_run)
{
	struct patched p;
	long got;

	patch_in(&p, (const void *)rc_loop, rc_loop_end, rc_loop_at);
	got = rc_loop(4);
	cr_expect_eq(got, 8, "loop: %ld", got);
	cr_expect_eq(calls, 4, "the probe on the loop runs each round");
	patch_out(&p);
	patch_in(&p, (const void *)rc_jrcxz, rc_jrcxz_end, rc_jrcxz_at);
	expect_call(rc_jrcxz, 0, 9, (uintptr_t)rc_jrcxz_at);
	expect_call(rc_jrcxz, 3, 5, (uintptr_t)rc_jrcxz_at);
	patch_out(&p);
}
