// SPDX-License-Identifier: GPL-2.0
/*
 * Tracepoint jump sites and kprobes (src/engine/agent/tracepoint.c,
 * opt.c): jump optimisation never covers a site or a site's target, a
 * region optimised before the object's jump table was known is undone
 * when it comes, a kprobe registered on a nop before the table (as when
 * dprobe starts a program: its probes come before the program's
 * constructors) does not keep the tracepoint off, and a register that
 * fails never calls its probe.
 *
 * The sites are written in assembly so that their layout is known:
 *
 *   tpj_hot:   nop5 (a site of tpj:jt) ; ret
 *   tpj_cold:  xor %eax,%eax ; [target:] sub $8,%rsp ; mov $5,%edi ;
 *              call __dp_tp_call_jt ; add $8,%rsp ; ret
 *
 * The target is 2 bytes into another function, as GCC places the call
 * of a tracepoint in FN.cold: the optimiser's own look at tpj_cold's
 * branches cannot see the jump.  A jump-optimised kprobe at tpj_cold
 * would replace the first 6 bytes with a jmp and int3 padding, and the
 * tracepoint's jump would land on the padding (a SIGTRAP that kills the
 * program).  The test calls the table's registration functions itself to
 * put the table back after its probes, as a constructor would.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <dprobe/kprobes.h>

#define DP_CREATE_TRACE_POINTS
#include <dprobe/tracepoint.h>

#include "agent_test.h"

DP_TRACE_EVENT(tpj, jt,
	TP_PROTO(long v),
	TP_ARGS(v),
	TP_FIELDS(tp_field(long, v)))

__asm__(".text\n"
	".globl tpj_hot\n"
	".type tpj_hot, @function\n"
	"tpj_hot:\n"
	"1:	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
	"	ret\n"
	".size tpj_hot, . - tpj_hot\n"
	".pushsection __dp_jump_table, \"a\"\n"
	".balign 8\n"
	".long 1b - ., 2f - .\n"
	".quad __dp_tracepoint_jt - .\n"
	".popsection\n"
	".globl tpj_cold\n"
	".type tpj_cold, @function\n"
	"tpj_cold:\n"
	"	xor %eax, %eax\n"
	"2:	sub $8, %rsp\n"
	"	mov $5, %edi\n"
	"	call __dp_tp_call_jt\n"
	"	add $8, %rsp\n"
	"	ret\n"
	".size tpj_cold, . - tpj_cold\n");

void tpj_hot(void);
void tpj_cold(void);

/* A second and third site of the same tracepoint, in C. */
__attribute__((noinline)) void tpj_fire(long v)
{
	trace_jt(v);
}

__attribute__((noinline)) int tpj_enabled(void)
{
	return trace_jt_enabled();
}

static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

static long seen, calls;

static void jt_probe(void *data, long v)
{
	(void)data;
	seen += v;
	calls++;
}

static int hits_cold, hits_hot;

static int pre_cold(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	(void)regs;
	hits_cold++;
	return 0;
}

static int pre_hot(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	(void)regs;
	hits_hot++;
	return 0;
}

static void kp_init(struct kprobe *kp, void (*fn)(void),
		    int (*pre)(struct kprobe *, struct pt_regs *), bool noopt)
{
	memset(kp, 0, sizeof(*kp));
	kp->addr = (kprobe_opcode_t *)(void *)fn;
	kp->pre_handler = pre;
	kp->flags = noopt ? KPROBE_FLAG_NOOPT : 0;
}

static void counts_reset(void)
{
	seen = calls = 0;
	hits_cold = hits_hot = 0;
}

static uint64_t rel(const void *field, int64_t off)
{
	return (uint64_t)(uintptr_t)field + (uint64_t)off;
}

/* tpj_hot's first bytes: the nop, or "jmp tpj_cold+2". */
static bool hot_is(bool jmp)
{
	const uint8_t *b = (const uint8_t *)(uintptr_t)tpj_hot;
	uint64_t to = (uint64_t)(uintptr_t)tpj_cold + 2;
	int32_t d;

	if (!jmp)
		return !memcmp(b, nop5, 5);
	memcpy(&d, b + 1, 4);
	return b[0] == 0xe9 &&
	       (uint64_t)(uintptr_t)tpj_hot + 5 + (uint64_t)(int64_t)d == to;
}

static bool reason_is_jump(const struct kprobe *kp)
{
	const char *r = kprobe_opt_reason(kp);

	return r && strstr(r, "tracepoint");
}

/* ---- optimisation ------------------------------------------------------ */

static void test_target(void)
{
	struct kprobe kp;

	BEGIN("a kprobe over a tracepoint's target (in another function) is "
	      "not optimised, and the tracepoint's jump lands where it should");
	counts_reset();
	CHECK_EQ(register_trace_jt(jt_probe, NULL), 0);
	CHECK(hot_is(true), "tpj_hot is not the jmp");
	kp_init(&kp, tpj_cold, pre_cold, false);
	CHECK_EQ(register_kprobe(&kp), 0);
	CHECK_EQ(kprobe_optimized(&kp), 0);
	CHECK(reason_is_jump(&kp), "reason: %s", kprobe_opt_reason(&kp));
	tpj_hot();
	CHECK_EQ(calls, 1);
	CHECK_EQ(seen, 5);
	CHECK_EQ(hits_cold, 0);
	tpj_cold();
	CHECK_EQ(calls, 2);
	CHECK_EQ(hits_cold, 1);
	/* disabled and enabled again: still not optimised */
	CHECK_EQ(disable_kprobe(&kp), 0);
	CHECK_EQ(enable_kprobe(&kp), 0);
	CHECK_EQ(kprobe_optimized(&kp), 0);
	tpj_hot();
	CHECK_EQ(calls, 3);
	unregister_kprobe(&kp);
	CHECK_EQ(unregister_trace_jt(jt_probe, NULL), 0);
	CHECK(hot_is(false), "tpj_hot is not the nop");
	END();
}

static void test_site(void)
{
	struct kprobe kp;

	BEGIN("a kprobe on a tracepoint's nop is not optimised; the "
	      "tracepoint is enabled under it and both run");
	counts_reset();
	kp_init(&kp, tpj_hot, pre_hot, false);
	CHECK_EQ(register_kprobe(&kp), 0);
	CHECK_EQ(kprobe_optimized(&kp), 0);
	CHECK(reason_is_jump(&kp), "reason: %s", kprobe_opt_reason(&kp));
	tpj_hot();
	CHECK_EQ(hits_hot, 1);
	CHECK_EQ(calls, 0);
	CHECK_EQ(register_trace_jt(jt_probe, NULL), 0);
	CHECK_EQ(kprobe_optimized(&kp), 0);
	tpj_hot();
	CHECK_EQ(hits_hot, 2);
	CHECK_EQ(calls, 1);
	unregister_kprobe(&kp);
	CHECK(hot_is(true), "the kprobe did not leave the jmp");
	tpj_hot();
	CHECK_EQ(calls, 2);
	CHECK_EQ(unregister_trace_jt(jt_probe, NULL), 0);
	CHECK(hot_is(false), "tpj_hot is not the nop");
	END();
}

/*
 * The table goes, kprobes are optimised over the site and the target
 * (nothing forbids it then), and the table comes back, the tracepoint's
 * key on (@key_first: before the kprobes) or off.
 */
static void table_late(bool key_first)
{
	struct kprobe cold, hot;

	counts_reset();
	__dp_jump_table_unregister(__start___dp_jump_table);
	if (key_first)
		CHECK_EQ(register_trace_jt(jt_probe, NULL), 0);
	CHECK(hot_is(false), "a site of an unknown table was patched");
	kp_init(&cold, tpj_cold, pre_cold, false);
	kp_init(&hot, tpj_hot, pre_hot, false);
	CHECK_EQ(register_kprobe(&cold), 0);
	CHECK_EQ(register_kprobe(&hot), 0);
	/* not a check of the fix: without it the case tests less */
	if (!kprobe_optimized(&cold) || !kprobe_optimized(&hot))
		printf("# not optimised: %s / %s\n", kprobe_opt_reason(&cold),
		       kprobe_opt_reason(&hot));
	__dp_jump_table_register(__start___dp_jump_table,
				 __stop___dp_jump_table);
	CHECK_EQ(kprobe_optimized(&cold), 0);
	CHECK_EQ(kprobe_optimized(&hot), 0);
	if (!key_first)
		CHECK_EQ(register_trace_jt(jt_probe, NULL), 0);
	tpj_hot();
	CHECK_EQ(hits_hot, 1);
	CHECK_EQ(hits_cold, 0);
	CHECK_EQ(calls, 1);
	tpj_fire(3);
	CHECK_EQ(calls, 2);
	CHECK_EQ(seen, 8);
	unregister_kprobe(&cold);
	unregister_kprobe(&hot);
	CHECK(hot_is(true), "tpj_hot is not the jmp");
	tpj_hot();
	CHECK_EQ(calls, 3);
	CHECK_EQ(unregister_trace_jt(jt_probe, NULL), 0);
	CHECK(hot_is(false), "tpj_hot is not the nop");
}

static void test_table_late(void)
{
	BEGIN("optimised kprobes over a site and its target, made before the "
	      "table was known, are undone when it registers (key on)");
	table_late(true);
	END();
	BEGIN("the same with the key off when the table registers");
	table_late(false);
	END();
}

/*
 * dprobe starts a program: its kprobe on the nop and its probe on the
 * tracepoint are registered (in either order) before the program's
 * constructor hands the table over.
 */
static void constructor_order(bool trace_first)
{
	struct kprobe kp;

	counts_reset();
	__dp_jump_table_unregister(__start___dp_jump_table);
	kp_init(&kp, tpj_hot, pre_hot, true);
	if (trace_first)
		CHECK_EQ(register_trace_jt(jt_probe, NULL), 0);
	CHECK_EQ(register_kprobe(&kp), 0);
	if (!trace_first)
		CHECK_EQ(register_trace_jt(jt_probe, NULL), 0);
	__dp_jump_table_register(__start___dp_jump_table,
				 __stop___dp_jump_table);
	CHECK_EQ(tpj_enabled(), 1);
	tpj_hot();
	CHECK_EQ(hits_hot, 1);
	CHECK_EQ(calls, 1);
	CHECK_EQ(seen, 5);
	CHECK_EQ(unregister_trace_jt(jt_probe, NULL), 0);
	CHECK_EQ(tpj_enabled(), 0);
	tpj_hot();
	CHECK_EQ(hits_hot, 2);
	CHECK_EQ(calls, 1);
	unregister_kprobe(&kp);
	CHECK(hot_is(false), "tpj_hot is not the nop");
}

static void test_constructor_order(void)
{
	BEGIN("a kprobe on the nop before the table registers: the "
	      "tracepoint is on too (probe first)");
	constructor_order(true);
	END();
	BEGIN("the same, the kprobe first");
	constructor_order(false);
	END();
}

/* ---- a failed register ---------------------------------------------------- */

/*
 * A kprobe on pwrite(), which libdprobe writes code with, calls the
 * tracepoint's out-of-line call as a thread that took a jump would,
 * while the sites are being patched.
 */
static int pre_pwrite(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	(void)regs;
	__dp_tp_call_jt(1000);
	return 0;
}

/* Write @b over the first byte of @addr, as a debugger would. */
static int poke_byte(uint64_t addr, uint8_t b)
{
	int fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = pwrite(fd, &b, 1, (off_t)addr);
	close(fd);
	return n == 1 ? 0 : -EIO;
}

static void test_failed_register(void)
{
	const struct dp_jump_entry *last = NULL;
	struct kprobe obs;
	int sites = 0;

	BEGIN("a register that cannot patch every site fails, puts the "
	      "others back, and never calls its probe");
	counts_reset();
	for (const struct dp_jump_entry *e = __start___dp_jump_table;
	     e < __stop___dp_jump_table; e++)
		if (e->key && rel(&e->key, e->key) ==
			      (uint64_t)(uintptr_t)&__dp_tracepoint_jt) {
			last = e;
			sites++;
		}
	CHECK(sites >= 2, "%d sites", sites);
	if (!last) {
		END();
		return;
	}
	/* the sites before the last are patched, then the last fails */
	CHECK_EQ(poke_byte(rel(&last->code, last->code), 0xcc), 0);
	memset(&obs, 0, sizeof(obs));
	obs.symbol_name = "libc.so.6:pwrite";
	obs.pre_handler = pre_pwrite;
	obs.flags = KPROBE_FLAG_NOOPT;
	CHECK_EQ(register_kprobe(&obs), 0);
	CHECK_EQ(register_trace_jt(jt_probe, NULL), -EBUSY);
	unregister_kprobe(&obs);
	CHECK_EQ(calls, 0);
	CHECK_EQ(__dp_tracepoint_jt.key, 0);
	CHECK(!__dp_tracepoint_jt.funcs, "an array is left");
	CHECK(hot_is(false), "tpj_hot is not the nop");
	CHECK_EQ(poke_byte(rel(&last->code, last->code), nop5[0]), 0);
	CHECK_EQ(tpj_enabled(), 0);
	/* and with the site whole again, it works */
	CHECK_EQ(register_trace_jt(jt_probe, NULL), 0);
	tpj_fire(2);
	CHECK_EQ(calls, 1);
	CHECK_EQ(unregister_trace_jt(jt_probe, NULL), 0);
	END();
}

int main(void)
{
	test_target();
	test_site();
	test_table_late();
	test_constructor_order();
	test_failed_register();
	return t_exit();
}
