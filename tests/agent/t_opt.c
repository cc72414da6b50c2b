// SPDX-License-Identifier: GPL-2.0
/*
 * Jump optimisation: what pre handlers see is the same as with the int3,
 * the kernel's refusals, rip-relative code, an endbr64, handlers that
 * use SIMD registers, the program's own signal handlers, fork; the
 * -fpatchable-function-entry=N,M layouts, with threads running through.
 *
 * The probed functions are written in assembly so that their bytes, and
 * so what can be optimised, do not depend on the compiler.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dprobe/kprobes.h>

#include "agent_test.h"

#define FN(name) ".globl " #name "\n.type " #name ", @function\n" #name ":\n"
#define END_FN(name) ".size " #name ", . - " #name "\n"

__asm__(".text\n"
	/* a + b + 1, with a mid-function probe where the flags are live */
	FN(o_add)
	"mov %rdi, %rax\n"		/* +0 entry probe: replaces 6 bytes */
	"add %rsi, %rax\n"		/* +3 */
	"cmp $5, %rax\n"		/* +6 */
	".globl o_add_mid\no_add_mid:\n"
	"lea 1(%rax), %rax\n"		/* +10 mid probe: flags of the cmp */
	"mov %rax, %rdx\n"		/* +14 */
	"ret\n"
	END_FN(o_add)
	/* endbr64 first: the jmp goes after it */
	FN(o_endbr)
	"endbr64\n"
	"mov %rdi, %rax\n"
	"add %rsi, %rax\n"
	"ret\n"
	END_FN(o_endbr)
	/* what -pg -mfentry -mnop-mcount leaves: endbr64, a 5-byte nop */
	FN(o_fentry)
	"endbr64\n"
	".byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
	"mov %rdi, %rax\n"
	"add %rsi, %rax\n"
	"ret\n"
	END_FN(o_fentry)
	/* what -fpatchable-function-entry=5 leaves: five nops */
	FN(o_patchable)
	"nop\nnop\nnop\nnop\nnop\n"
	"lea (%rdi,%rsi), %rax\n"
	"ret\n"
	END_FN(o_patchable)
	/* a rip-relative load in the replaced bytes */
	FN(o_riprel)
	"mov o_counter(%rip), %rax\n"
	"add %rdi, %rax\n"
	"ret\n"
	END_FN(o_riprel)
	/* a loop back into the bytes the jmp would replace */
	FN(o_branch)
	"mov %rdi, %rax\n"
	"1: add $1, %rax\n"
	"dec %rsi\n"
	"jnz 1b\n"
	"ret\n"
	END_FN(o_branch)
	/* a + b: a jump table (o_table) with an entry into the bytes the
	 * jmp would replace (the add, at +3), taken once */
	FN(o_indirect)
	"mov %rdi, %rax\n"
	"2: add %rsi, %rax\n"
	"test %rsi, %rsi\n"
	"jz 1f\n"
	"xor %esi, %esi\n"
	"lea o_table(%rip), %rcx\n"
	"movslq (%rcx), %rdx\n"
	"add %rdx, %rcx\n"
	"jmp *%rcx\n"
	"1: ret\n"
	END_FN(o_indirect)
	".section .rodata\no_table: .long 2b - o_table\n.text\n"
	/* a ret in the bytes to replace, another function right after */
	FN(o_short)
	"mov %rdi, %rax\n"
	"ret\n"
	END_FN(o_short)
	/* the same with padding after it: the jmp goes into the padding */
	FN(o_shortpad)
	"mov %rdi, %rax\n"
	"ret\n"
	END_FN(o_shortpad)
	".byte 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc\n"
	/* fewer than 5 bytes in the function (never called) */
	FN(o_tiny)
	"mov %rdi, %rax\n"
	"nop\n"
	END_FN(o_tiny)
	"ret\n"
	/* a double in %xmm0, live across the probe */
	FN(o_double)
	"mov %rdi, %rax\n"
	"add %rsi, %rax\n"
	"addsd %xmm1, %xmm0\n"
	"ret\n"
	END_FN(o_double)
	/* -fpatchable-function-entry=7,5: 5 nops before the symbol (no
	 * symbol covers them), 2 at it */
	"nop\nnop\nnop\nnop\nnop\n"
	FN(o_pshort)
	"nop\nnop\n"
	"lea (%rdi,%rsi), %rax\n"
	"ret\n"
	END_FN(o_pshort)
	/* the same from clang with -fcf-protection: endbr64, xchg %ax,%ax */
	"nop\nnop\nnop\nnop\nnop\n"
	FN(o_pshort_eb)
	"endbr64\n"
	".byte 0x66, 0x90\n"
	"lea (%rdi,%rsi), %rax\n"
	"ret\n"
	END_FN(o_pshort_eb)
	/* a function too short for the jmp whose padding is the next
	 * one's nops before its symbol (=7,5): one region or the other
	 * (twice: a site is analysed once) */
#define PAD_PAIR(a, b) \
	FN(a) "mov %rdi, %rax\nret\n" END_FN(a) \
	"nop\nnop\nnop\nnop\nnop\n" \
	FN(b) "nop\nnop\nlea (%rdi,%rsi), %rax\nret\n" END_FN(b)
	PAD_PAIR(o_padnext, o_pshort2)
	PAD_PAIR(o_padnext3, o_pshort3)
	/* =5,5: every nop before the symbol, none at it */
	"nop\nnop\nnop\nnop\nnop\n"
	FN(o_pbefore)
	"mov %rdi, %rax\n"
	"add %rsi, %rax\n"
	"ret\n"
	END_FN(o_pbefore)
	".data\n.globl o_counter\no_counter: .quad 1000\n.text\n");

long o_add(long a, long b);
extern const char o_add_mid[];
long o_endbr(long a, long b);
long o_fentry(long a, long b);
long o_patchable(long a, long b);
long o_riprel(long a);
long o_branch(long a, long n);
long o_indirect(long a, long b);
long o_short(long a);
long o_shortpad(long a);
double o_double(long a, long b, double x, double y);
long o_pshort(long a, long b);
long o_pshort_eb(long a, long b);
long o_pbefore(long a, long b);
long o_padnext(long a);
long o_pshort2(long a, long b);
long o_padnext3(long a);
long o_pshort3(long a, long b);

static struct pt_regs seen;
static long nhits;

static int record(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	seen = *regs;
	nhits++;
	return 0;
}

static void post_nop(struct kprobe *p, struct pt_regs *regs,
		     unsigned long flags)
{
	(void)p;
	(void)regs;
	(void)flags;
}

/* Register @kp (opt or not), call o_add(20, 22), return what was seen. */
static struct pt_regs hit_add(const void *addr, unsigned int flags, bool *opt)
{
	struct kprobe kp = { .addr = (kprobe_opcode_t *)addr,
			     .pre_handler = record, .flags = flags };

	memset(&seen, 0, sizeof(seen));
	CHECK_EQ(register_kprobe(&kp), 0);
	*opt = kprobe_optimized(&kp);
	CHECK_EQ(o_add(20, 22), 43);
	unregister_kprobe(&kp);
	return seen;
}

static void test_same_regs(const char *what, const void *addr, bool flags_live)
{
	struct pt_regs a, b;
	bool opt_a, opt_b;
	char name[96];

	snprintf(name, sizeof(name), "%s: optimised hit sees the int3's registers",
		 what);
	BEGIN(name);
	a = hit_add(addr, KPROBE_FLAG_NOOPT, &opt_a);
	b = hit_add(addr, 0, &opt_b);
	CHECK(!opt_a, "optimised with KPROBE_FLAG_NOOPT");
	CHECK(opt_b, "not optimised");
	CHECK_EQ(a.ip, (unsigned long)addr + 1);
	CHECK_EQ(b.ip, a.ip);
	CHECK_EQ(b.di, 20);
	CHECK_EQ(b.si, 22);
	CHECK_EQ(b.di, a.di);
	CHECK_EQ(b.si, a.si);
	CHECK_EQ(b.sp, a.sp);
	CHECK_EQ(b.cs, a.cs);
	CHECK_EQ(b.ss, a.ss);
	CHECK_EQ(b.fs_base, a.fs_base);
	CHECK_EQ(b.orig_ax, -1l);
	if (flags_live) {
		/* the arithmetic flags after cmp $5, 42: all clear */
		CHECK_EQ(b.flags & 0x8d5, a.flags & 0x8d5);
		CHECK_EQ(b.ax, 42);
	}
	END();
}

static int set_di(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	regs->di = 100;
	nhits++;
	return 0;
}

static void test_change_regs(void)
{
	struct kprobe kp = { .symbol_name = "o_add", .pre_handler = set_di };

	BEGIN("an optimised pre handler's register changes take effect");
	nhits = 0;
	CHECK_EQ(register_kprobe(&kp), 0);
	CHECK(kprobe_optimized(&kp), "not optimised: %s", kprobe_opt_reason(&kp));
	CHECK_STR_EQ(kprobe_opt_reason(&kp), "");
	CHECK_EQ(o_add(1, 2), 103);
	CHECK_EQ(nhits, 1);
	unregister_kprobe(&kp);
	CHECK_EQ(o_add(1, 2), 4);
	CHECK_EQ(nhits, 1);
	END();
}

static void test_endbr_riprel(void)
{
	struct kprobe kp = { .symbol_name = "o_endbr", .pre_handler = record };
	struct kprobe kr = { .symbol_name = "o_riprel", .pre_handler = record };
	uint8_t before[16], before_r[16];

	BEGIN("endbr64 first, and a rip-relative load in the replaced bytes");
	memcpy(before, (const void *)o_endbr, sizeof(before));
	memcpy(before_r, (const void *)o_riprel, sizeof(before_r));
	nhits = 0;
	CHECK_EQ(register_kprobe(&kp), 0);
	CHECK_EQ(register_kprobe(&kr), 0);
	CHECK(kprobe_optimized(&kp), "endbr: %s", kprobe_opt_reason(&kp));
	CHECK(kprobe_optimized(&kr), "riprel: %s", kprobe_opt_reason(&kr));
	/* the endbr64 stays in place, the jmp after it */
	CHECK_EQ(*(volatile uint8_t *)o_endbr, 0xf3);
	CHECK_EQ(((volatile uint8_t *)o_endbr)[4], 0xe9);
	CHECK_EQ(o_endbr(3, 4), 7);
	CHECK_EQ(seen.ip, (unsigned long)o_endbr + 1);
	CHECK_EQ(seen.di, 3);
	CHECK_EQ(o_riprel(5), 1005);
	CHECK_EQ(nhits, 2);
	unregister_kprobe(&kp);
	unregister_kprobe(&kr);
	CHECK(!memcmp(before, (const void *)o_endbr, sizeof(before)), "bytes");
	CHECK(!memcmp(before_r, (const void *)o_riprel, sizeof(before_r)),
	      "bytes");
	CHECK_EQ(o_riprel(5), 1005);
	END();
}

/*
 * An fprobe where the compiler left a site (an fentry nop, a patchable
 * entry): the jmp takes the nops' place, nothing of the function is
 * displaced, and the detour returns to its first real instruction.
 */
static void test_nop_site(const char *what, const char *sym,
			  long (*fn)(long, long), unsigned jmp_at)
{
	struct kprobe kp = { .symbol_name = sym, .pre_handler = record };
	uint8_t before[16];

	BEGIN(what);
	memcpy(before, (const void *)fn, sizeof(before));
	nhits = 0;
	CHECK_EQ(register_kprobe(&kp), 0);
	CHECK(kprobe_optimized(&kp), "%s: %s", sym, kprobe_opt_reason(&kp));
	CHECK_EQ(((volatile uint8_t *)fn)[jmp_at], 0xe9);
	/* the function's own instructions are where they were */
	CHECK(!memcmp(before + jmp_at + 5, (const uint8_t *)fn + jmp_at + 5,
		      sizeof(before) - jmp_at - 5), "bytes after the site");
	CHECK_EQ(fn(3, 4), 7);
	CHECK_EQ(nhits, 1);
	CHECK_EQ(seen.di, 3);
	unregister_kprobe(&kp);
	CHECK(!memcmp(before, (const void *)fn, sizeof(before)), "bytes");
	CHECK_EQ(fn(3, 4), 7);
	END();
}

/* The code @off bytes from function @fn (hidden from the compiler, which
 * would take a function for a one-element object). */
static const uint8_t *code_at(long (*fn)(long, long), long off)
{
	uintptr_t a = (uintptr_t)fn;

	__asm__("" : "+r"(a));
	return (const uint8_t *)(a + (uintptr_t)off);
}

/*
 * -fpatchable-function-entry=7,5: a jmp short over the nops at the
 * symbol (after the endbr64 at @jmp_at) to a jmp rel32 to the detour in
 * the 5 nops before it; the function's instructions stay where they
 * are, and unregistering gives every byte back, the nops before too.
 */
static void test_short_site(const char *what, const char *sym,
			    long (*fn)(long, long), unsigned jmp_at)
{
	struct kprobe kp = { .symbol_name = sym, .pre_handler = record };
	const uint8_t *code = code_at(fn, -5);
	uint8_t before[24];

	BEGIN(what);
	memcpy(before, code, sizeof(before));
	nhits = 0;
	CHECK_EQ(register_kprobe(&kp), 0);
	CHECK(kprobe_optimized(&kp), "%s: %s", sym, kprobe_opt_reason(&kp));
	CHECK_EQ(((volatile uint8_t *)code)[0], 0xe9);
	CHECK_EQ(((volatile uint8_t *)code)[5 + jmp_at], 0xeb);
	CHECK(!memcmp(before + 5 + jmp_at + 2, code + 5 + jmp_at + 2,
		      sizeof(before) - 7 - jmp_at), "bytes after the site");
	CHECK_EQ(fn(3, 4), 7);
	CHECK_EQ(nhits, 1);
	CHECK_EQ(seen.di, 3);
	unregister_kprobe(&kp);
	CHECK(!memcmp(before, code, sizeof(before)), "bytes");
	CHECK_EQ(fn(3, 4), 7);
	END();
}

/* =5,5: no nop at the symbol, so the jmp takes its instructions as at
 * any function; the nops before it are not touched. */
static void test_before_only(void)
{
	struct kprobe kp = { .symbol_name = "o_pbefore",
			     .pre_handler = record };
	const uint8_t *code = code_at(o_pbefore, 0);
	static const uint8_t nops[5] = { 0x90, 0x90, 0x90, 0x90, 0x90 };

	BEGIN("-fpatchable-function-entry=5,5: optimised as any function");
	nhits = 0;
	CHECK_EQ(register_kprobe(&kp), 0);
	CHECK(kprobe_optimized(&kp), "%s", kprobe_opt_reason(&kp));
	CHECK_EQ(((volatile uint8_t *)code)[0], 0xe9);
	CHECK(!memcmp(code - 5, nops, 5), "the nops before");
	CHECK_EQ(o_pbefore(3, 4), 7);
	CHECK_EQ(nhits, 1);
	unregister_kprobe(&kp);
	END();
}

/*
 * o_padnext's jmp would take its padding, which is o_pshort2's nops
 * before its symbol: whichever probe comes first has them, the other is
 * placed without them (o_padnext an int3, o_pshort2 optimised over its
 * own instructions), and both functions compute the same.
 */
static void test_pad_or_pre(bool pad_first)
{
	struct kprobe a = { .symbol_name = pad_first ? "o_padnext" :
				"o_padnext3", .pre_handler = record };
	struct kprobe b = { .symbol_name = pad_first ? "o_pshort2" :
				"o_pshort3", .pre_handler = record };
	long (*fa)(long) = pad_first ? o_padnext : o_padnext3;
	long (*fb)(long, long) = pad_first ? o_pshort2 : o_pshort3;
	const uint8_t *code = code_at(fb, -5);
	uint8_t before[16];

	BEGIN(pad_first ? "a short function's jmp in its padding first: the "
			  "next one's nops before its symbol are taken" :
			  "the nops before the symbol first: the function "
			  "before does not take them as its padding");
	memcpy(before, code, sizeof(before));
	nhits = 0;
	CHECK_EQ(register_kprobe(pad_first ? &a : &b), 0);
	CHECK_EQ(register_kprobe(pad_first ? &b : &a), 0);
	CHECK(kprobe_optimized(pad_first ? &a : &b), "the first: %s",
	      kprobe_opt_reason(pad_first ? &a : &b));
	if (pad_first) {
		CHECK(kprobe_optimized(&b), "%s", kprobe_opt_reason(&b));
		CHECK_EQ(code[5], 0xe9);	/* over its own instructions */
	} else {
		CHECK(!kprobe_optimized(&a), "o_padnext optimised");
		CHECK_EQ(code[5], 0xeb);	/* the jmp short */
	}
	CHECK_EQ(fa(5), 5);
	CHECK_EQ(fb(3, 4), 7);
	CHECK_EQ(nhits, 2);
	unregister_kprobe(&a);
	unregister_kprobe(&b);
	CHECK(!memcmp(before, code, sizeof(before)), "bytes");
	END();
}

static atomic_int short_stop;
static atomic_long short_wrong, short_calls;

static void *call_pshort(void *arg)
{
	long i = 0;

	(void)arg;
	while (!atomic_load_explicit(&short_stop, memory_order_relaxed)) {
		if (o_pshort(i, 1) != i + 1)
			atomic_fetch_add(&short_wrong, 1);
		i++;
	}
	atomic_fetch_add(&short_calls, i);
	return NULL;
}

/*
 * Threads call o_pshort all the time while its probe is registered and
 * unregistered: each time the jmp before the symbol goes in first, then
 * the jmp short (over the int3), and out in the reverse order; no call
 * may see half of it.
 */
static void test_short_threads(void)
{
	struct kprobe kp = { .symbol_name = "o_pshort", .pre_handler = record };
	const uint8_t *code = code_at(o_pshort, -5);
	uint8_t before[16];
	pthread_t t[2];
	int opt = 0;

	BEGIN("-fpatchable-function-entry=7,5: 2 threads run through 200 "
	      "rounds of patching");
	memcpy(before, code, sizeof(before));
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, call_pshort, NULL);
	for (int i = 0; i < 200; i++) {
		kp.addr = NULL;
		CHECK_EQ(register_kprobe(&kp), 0);
		opt += kprobe_optimized(&kp);
		unregister_kprobe(&kp);
	}
	atomic_store(&short_stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("# %d of 200 rounds optimised, %ld calls\n", opt,
	       atomic_load(&short_calls));
	CHECK(opt > 0, "never optimised");
	CHECK_EQ(atomic_load(&short_wrong), 0);
	CHECK(!memcmp(before, code, sizeof(before)), "bytes");
	END();
}

static void refused(const char *sym, kprobe_post_handler_t post,
		    const char *want, long (*call)(void), long result)
{
	struct kprobe kp = { .symbol_name = sym, .pre_handler = record,
			     .post_handler = post };
	const char *why;
	char name[128];

	snprintf(name, sizeof(name), "%s: not optimised (%s), works as an int3",
		 sym, want);
	BEGIN(name);
	nhits = 0;
	CHECK_EQ(register_kprobe(&kp), 0);
	CHECK(!kprobe_optimized(&kp), "optimised");
	why = kprobe_opt_reason(&kp);
	CHECK(why && strstr(why, want), "reason: %s", why ? why : "(null)");
	CHECK_EQ(*(volatile uint8_t *)kp.addr, 0xcc);
	if (call) {
		long r = call();

		CHECK_EQ(r, result);
		CHECK_EQ(nhits, 1);
	}
	unregister_kprobe(&kp);
	END();
}

/* Optimised although short or switching: it runs as untraced, the
 * probe hit once. */
static void optimised(const char *sym, const char *what, long (*call)(void),
		      long result)
{
	struct kprobe kp = { .symbol_name = sym, .pre_handler = record };
	char name[128];

	snprintf(name, sizeof(name), "%s: optimised (%s)", sym, what);
	BEGIN(name);
	nhits = 0;
	CHECK_EQ(register_kprobe(&kp), 0);
	CHECK(kprobe_optimized(&kp), "not optimised: %s",
	      kprobe_opt_reason(&kp) ? kprobe_opt_reason(&kp) : "(null)");
	CHECK_EQ(call(), result);
	CHECK_EQ(nhits, 1);
	unregister_kprobe(&kp);
	END();
}

static long call_branch(void) { return o_branch(10, 3); }
static long call_indirect(void) { return o_indirect(10, 3); }
static long call_short(void) { return o_short(9); }
static long call_shortpad(void) { return o_shortpad(11); }
static long call_add(void) { return o_add(1, 1); }

static int clobber_simd(struct kprobe *p, struct pt_regs *regs)
{
	volatile double d = (double)regs->di;

	(void)p;
	/* makes the compiler use %xmm0 and %xmm1 */
	__asm__ volatile("xorpd %%xmm0, %%xmm0; xorpd %%xmm1, %%xmm1" ::: "xmm0",
			 "xmm1");
	d = d * 3.5;
	nhits += d > 0;
	return 0;
}

static void test_simd(void)
{
	struct kprobe kp = { .symbol_name = "o_double",
			     .pre_handler = clobber_simd };

	BEGIN("a handler that uses SIMD registers: the program's are kept");
	nhits = 0;
	CHECK_EQ(register_kprobe(&kp), 0);
	CHECK(kprobe_optimized(&kp), "%s", kprobe_opt_reason(&kp));
	CHECK(o_double(1, 2, 1.25, 2.5) == 3.75, "double");
	CHECK_EQ(nhits, 1);
	unregister_kprobe(&kp);
	END();
}

static volatile sig_atomic_t prog_traps, prog_segvs;
static int *volatile bad_ptr = (int *)8;
static sigjmp_buf segv_jb;

static void prog_trap(int sig)
{
	(void)sig;
	prog_traps++;
}

static void prog_segv(int sig)
{
	(void)sig;
	prog_segvs++;
	siglongjmp(segv_jb, 1);
}

static void test_program_handlers(void)
{
	struct kprobe kp = { .symbol_name = "o_add", .pre_handler = record };

	BEGIN("the program's SIGTRAP and SIGSEGV handlers, optimised probe");
	signal(SIGTRAP, prog_trap);
	signal(SIGSEGV, prog_segv);
	nhits = 0;
	CHECK_EQ(register_kprobe(&kp), 0);
	CHECK(kprobe_optimized(&kp), "%s", kprobe_opt_reason(&kp));
	CHECK_EQ(o_add(2, 3), 6);
	raise(SIGTRAP);
	__asm__ volatile("int3");
	if (!sigsetjmp(segv_jb, 1))
		*bad_ptr = 1;
	CHECK_EQ(o_add(2, 3), 6);
	CHECK_EQ(prog_traps, 2);
	CHECK_EQ(prog_segvs, 1);
	CHECK_EQ(nhits, 2);
	unregister_kprobe(&kp);
	signal(SIGTRAP, SIG_DFL);
	signal(SIGSEGV, SIG_DFL);
	END();
}

static void test_fork(void)
{
	struct kprobe kp = { .symbol_name = "o_add", .pre_handler = record };
	int status = -1;
	pid_t pid;

	BEGIN("fork after optimisation: the child's probe works");
	nhits = 0;
	CHECK_EQ(register_kprobe(&kp), 0);
	CHECK(kprobe_optimized(&kp), "%s", kprobe_opt_reason(&kp));
	pid = fork();
	if (!pid) {
		long r = o_add(4, 5) + o_add(1, 1);

		/* the child can also unregister: bytes back, no more hits */
		unregister_kprobe(&kp);
		r += o_add(1, 1);
		_exit(r == 10 + 3 + 3 && nhits == 2 ? 0 : 1);
	}
	CHECK(pid > 0, "fork");
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %x",
	      status);
	CHECK_EQ(o_add(4, 5), 10);
	CHECK_EQ(nhits, 1);
	unregister_kprobe(&kp);
	END();
}

int main(void)
{
	if (getenv("DPROBE_NOOPT")) {
		struct kprobe kp = { .symbol_name = "o_add",
				     .pre_handler = record };

		BEGIN("DPROBE_NOOPT=1: nothing is optimised, and says why");
		CHECK_EQ(register_kprobe(&kp), 0);
		CHECK(!kprobe_optimized(&kp), "optimised");
		CHECK_STR_EQ(kprobe_opt_reason(&kp), "DPROBE_NOOPT is set");
		CHECK_EQ(o_add(1, 1), 3);
		unregister_kprobe(&kp);
		END();
		return t_exit();
	}
	test_same_regs("o_add entry", (const void *)o_add, false);
	test_same_regs("o_add+10", o_add_mid, true);
	test_change_regs();
	test_endbr_riprel();
	test_nop_site("-mfentry -mnop-mcount: the jmp takes the 5-byte nop",
		      "o_fentry", o_fentry, 4);
	test_nop_site("-fpatchable-function-entry=5: the jmp takes the nops",
		      "o_patchable", o_patchable, 0);
	test_short_site("-fpatchable-function-entry=7,5: a jmp short to the "
			"nops before", "o_pshort", o_pshort, 0);
	test_short_site("the same after an endbr64, over a 2-byte nop",
			"o_pshort_eb", o_pshort_eb, 4);
	test_before_only();
	test_pad_or_pre(true);
	test_pad_or_pre(false);
	test_short_threads();
	refused("o_branch", NULL, "a branch targets the replaced bytes",
		call_branch, 13);
	refused("o_indirect", NULL, "a jump table targets", call_indirect,
		13);
	refused("o_short", NULL, "fewer than 5 bytes", call_short, 9);
	optimised("o_shortpad", "a ret, then the padding", call_shortpad, 11);
	refused("o_tiny", NULL, "fewer than 5 bytes", NULL, 0);
	refused("o_add", post_nop, "post_handler", call_add, 3);
	test_simd();
	test_program_handlers();
	test_fork();
	return t_exit();
}
