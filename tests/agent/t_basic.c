// SPDX-License-Identifier: GPL-2.0
/*
 * register/unregister at a function entry and in its middle, the
 * instruction-boundary check, the order of pre handler, instruction and
 * post handler, the registers they see and change, argument errors,
 * LIB:SYM names, the recursion guard and fault_handler.
 */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include <Zydis/Zydis.h>
#include <dprobe/kprobes.h>

#include "agent_test.h"

static int seq, pre_seq, post_seq, body_seq;
static unsigned long pre_di, pre_si, pre_dx, pre_ip, post_ip, pre_arg1;
static struct kprobe *running_in_pre;

/* Starts with a 2-byte nop (unless a sanitizer puts code first), so that
 * offset 1 is inside an instruction and the body runs only after the
 * first instruction (and post handler). */
__attribute__((noipa)) long traced(long a, long b, long c)
{
	__asm__ volatile("xchg %%ax, %%ax" ::: "memory");
	body_seq = ++seq;
	return a * 100 + b * 10 + c;
}

__attribute__((noipa)) long inner(long x)
{
	return x + 1;
}

static int insn_len(const void *p)
{
	ZydisDecoder d;
	ZydisDecodedInstruction in;

	ZydisDecoderInit(&d, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&d, NULL, p, 15, &in)))
		return -1;
	return in.length;
}

static int pre_record(struct kprobe *p, struct pt_regs *regs)
{
	pre_seq = ++seq;
	pre_di = regs->di;
	pre_si = regs->si;
	pre_dx = regs->dx;
	pre_ip = regs->ip;
	pre_arg1 = regs_get_kernel_argument(regs, 1);
	running_in_pre = kprobe_running();
	(void)p;
	return 0;
}

static void post_record(struct kprobe *p, struct pt_regs *regs,
			unsigned long flags)
{
	(void)p;
	(void)flags;
	post_seq = ++seq;
	post_ip = regs->ip;
}

static void test_entry(void)
{
	struct kprobe kp = { .symbol_name = "traced" };
	int len = insn_len((const void *)traced);
	long r;

	BEGIN("entry probe: pre, instruction, post, in order, with the arguments");
	kp.pre_handler = pre_record;
	kp.post_handler = post_record;
	CHECK_EQ(register_kprobe(&kp), 0);
	CHECK(kp.addr == (kprobe_opcode_t *)traced, "addr %p", (void *)kp.addr);
	CHECK(kp.flags & KPROBE_FLAG_ON_FUNC_ENTRY, "flags %x", kp.flags);
	CHECK_EQ(*(volatile uint8_t *)traced, 0xcc);
	seq = 0;
	r = traced(1, 2, 3);
	CHECK_EQ(r, 123);
	CHECK_EQ(pre_seq, 1);
	CHECK_EQ(post_seq, 2);
	CHECK_EQ(body_seq, 3);
	CHECK_EQ(pre_di, 1);
	CHECK_EQ(pre_si, 2);
	CHECK_EQ(pre_dx, 3);
	CHECK_EQ(pre_arg1, 2);
	/* as the kernel on x86: ip is just after the int3 */
	CHECK_EQ(pre_ip, (unsigned long)traced + 1);
	CHECK_EQ(post_ip, (unsigned long)traced + len);
	CHECK(running_in_pre == &kp, "kprobe_running() %p", (void *)running_in_pre);
	CHECK(kprobe_running() == NULL, "kprobe_running() outside");
	CHECK_EQ(kp.opcode, kp.opcode);
	unregister_kprobe(&kp);
	CHECK(*(volatile uint8_t *)traced == kp.opcode, "byte not restored");
	seq = 0;
	pre_seq = post_seq = 0;
	CHECK_EQ(traced(4, 5, 6), 456);
	CHECK_EQ(pre_seq, 0);
	CHECK_EQ(post_seq, 0);
	END();
}

static void test_middle(void)
{
	int len = insn_len((const void *)traced);
	struct kprobe kp = { .symbol_name = "traced", .offset = (unsigned)len };
	struct kprobe bad = { .symbol_name = "traced", .offset = 1 };
	int len2 = insn_len((const char *)traced + len);

	BEGIN("probe in the middle of a function, and inside an instruction");
	kp.pre_handler = pre_record;
	kp.post_handler = post_record;
	CHECK_EQ(register_kprobe(&kp), 0);
	CHECK(kp.addr == (kprobe_opcode_t *)traced + len, "addr %p", (void *)kp.addr);
	CHECK(!(kp.flags & KPROBE_FLAG_ON_FUNC_ENTRY), "flags %x", kp.flags);
	pre_ip = post_ip = 0;
	CHECK_EQ(traced(7, 8, 9), 789);
	CHECK_EQ(pre_ip, (unsigned long)traced + len + 1);
	CHECK_EQ(post_ip, (unsigned long)traced + len + len2);
	CHECK(len > 1, "first instruction of %d bytes", len);
	CHECK_EQ(register_kprobe(&bad), -EILSEQ);
	unregister_kprobe(&kp);
	/* by address, re-registered after an unregister */
	kp.symbol_name = NULL;
	kp.offset = 0;
	kp.addr = (kprobe_opcode_t *)traced + len;
	CHECK_EQ(register_kprobe(&kp), 0);
	pre_ip = 0;
	CHECK_EQ(traced(1, 1, 1), 111);
	CHECK_EQ(pre_ip, (unsigned long)traced + len + 1);
	unregister_kprobe(&kp);
	END();
}

static int pre_skip(struct kprobe *p, struct pt_regs *regs)
{
	unsigned long ret;

	(void)p;
	/* return 4242 from the function without running it */
	if (dp_probe_read(&ret, (void *)regs->sp, sizeof(ret)))
		return 0;
	regs->ax = 4242;
	regs->ip = ret;
	regs->sp += 8;
	return 1;
}

static int pre_change_arg(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	regs->di = 9;
	return 0;
}

static void test_change_regs(void)
{
	struct kprobe kp = { .symbol_name = "traced", .pre_handler = pre_skip,
			     .post_handler = post_record };
	struct kprobe kp2 = { .symbol_name = "traced",
			      .pre_handler = pre_change_arg };

	BEGIN("a pre handler changes registers, or ip and skips the instruction");
	CHECK_EQ(register_kprobe(&kp), 0);
	post_seq = body_seq = 0;
	CHECK_EQ(traced(1, 2, 3), 4242);
	CHECK_EQ(post_seq, 0);
	CHECK_EQ(body_seq, 0);
	unregister_kprobe(&kp);
	CHECK_EQ(register_kprobe(&kp2), 0);
	CHECK_EQ(traced(1, 2, 3), 923);
	unregister_kprobe(&kp2);
	CHECK_EQ(traced(1, 2, 3), 123);
	END();
}

static int some_data = 5;

static void test_errors(void)
{
	struct kprobe kp = { .symbol_name = "traced" };
	struct kprobe both = { .symbol_name = "traced",
			       .addr = (kprobe_opcode_t *)traced };
	struct kprobe none = { 0 };
	struct kprobe e = { 0 };
	struct kretprobe rp = { .kp.symbol_name = "traced", .maxactive = 5000 };
	struct kretprobe rp2 = { .kp.symbol_name = "traced", .kp.offset = 1 };

	BEGIN("argument errors: EINVAL, ENOENT, EEXIST, E2BIG");
	CHECK_EQ(register_kprobe(NULL), -EINVAL);
	CHECK_EQ(register_kprobe(&both), -EINVAL);
	CHECK_EQ(register_kprobe(&none), -EINVAL);
	e.symbol_name = "no_such_function_anywhere";
	CHECK_EQ(register_kprobe(&e), -ENOENT);
	e.symbol_name = "libc.so.6:traced";
	CHECK_EQ(register_kprobe(&e), -ENOENT);
	e.symbol_name = "libnosuch.so:getpid";
	CHECK_EQ(register_kprobe(&e), -ENOENT);
	/* not code */
	memset(&e, 0, sizeof(e));
	e.addr = (kprobe_opcode_t *)&some_data;
	CHECK_EQ(register_kprobe(&e), -EINVAL);
	/* libdprobe's own code is never probed */
	e.addr = (kprobe_opcode_t *)register_kprobe;
	CHECK_EQ(register_kprobe(&e), -EINVAL);
	CHECK_EQ(register_kprobe(&kp), 0);
	CHECK_EQ(register_kprobe(&kp), -EEXIST);
	unregister_kprobe(&kp);
	unregister_kprobe(&kp);		/* twice: nothing */
	CHECK_EQ(enable_kprobe(&kp), -EINVAL);
	CHECK_EQ(register_kretprobe(&rp), -E2BIG);
	CHECK_EQ(register_kretprobe(&rp2), -EINVAL);
	CHECK_EQ(regs_query_register_offset("di"),
		 __builtin_offsetof(struct pt_regs, di));
	CHECK_EQ(regs_query_register_offset("nope"), -EINVAL);
	CHECK(!strcmp(regs_query_register_name(
		__builtin_offsetof(struct pt_regs, flags)), "flags"), "name");
	END();
}

static volatile int lib_hits;

static int count_pre(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	(void)regs;
	lib_hits++;
	return 0;
}

static void test_lib_sym(void)
{
	struct kprobe kp = { .symbol_name = "libc.so.6:getpid",
			     .pre_handler = count_pre };
	struct kprobe kp2 = { .symbol_name = "t_basic:inner",
			      .pre_handler = count_pre };

	BEGIN("LIB:SYM names a library's function, or the program's");
	CHECK_EQ(register_kprobe(&kp), 0);
	lib_hits = 0;
	CHECK(getpid() > 0, "getpid");
	CHECK(getpid() > 0, "getpid");
	CHECK_EQ(lib_hits, 2);
	unregister_kprobe(&kp);
	CHECK_EQ(register_kprobe(&kp2), 0);
	lib_hits = 0;
	CHECK_EQ(inner(1), 2);
	CHECK_EQ(lib_hits, 1);
	unregister_kprobe(&kp2);
	END();
}

static struct kprobe nest_inner = { .symbol_name = "inner",
				    .pre_handler = count_pre };

static int pre_calls_inner(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	(void)regs;
	inner(1);
	return 0;
}

static void test_recursion(void)
{
	struct kprobe outer = { .symbol_name = "traced",
				.pre_handler = pre_calls_inner };

	BEGIN("a probe hit inside a handler is a miss");
	CHECK_EQ(register_kprobe(&nest_inner), 0);
	CHECK_EQ(register_kprobe(&outer), 0);
	lib_hits = 0;
	CHECK_EQ(traced(1, 1, 1), 111);
	CHECK_EQ(lib_hits, 0);
	CHECK_EQ(nest_inner.nmissed, 1);
	CHECK_EQ(inner(1), 2);
	CHECK_EQ(lib_hits, 1);
	CHECK_EQ(nest_inner.nmissed, 1);
	unregister_kprobe(&outer);
	unregister_kprobe(&nest_inner);
	END();
}

extern const char fault_insn[], fault_after[];
static int fault_trapnr;
static unsigned long fault_value;

__attribute__((noipa)) static int pre_faults(struct kprobe *p,
					     struct pt_regs *regs)
{
	unsigned long v;

	(void)p;
	(void)regs;
	__asm__ volatile(".globl fault_insn\nfault_insn:\n\t"
			 "movq (%1), %0\n\t"
			 ".globl fault_after\nfault_after:"
			 : "=a"(v) : "r"(8ul) : "memory");
	fault_value = v;
	return 0;
}

static int on_fault(struct kprobe *p, struct pt_regs *regs, int trapnr)
{
	(void)p;
	if (regs->ip != (unsigned long)fault_insn)
		return 0;
	fault_trapnr = trapnr;
	regs->ax = 0xfeed;
	regs->ip = (unsigned long)fault_after;
	return 1;
}

static void test_fault_handler(void)
{
	struct kprobe kp = { .symbol_name = "traced", .pre_handler = pre_faults,
			     .fault_handler = on_fault };

	BEGIN("fault_handler recovers a fault inside a pre handler");
	CHECK_EQ(register_kprobe(&kp), 0);
	CHECK_EQ(traced(2, 2, 2), 222);
	CHECK_EQ(fault_trapnr, 14);
	CHECK_EQ(fault_value, 0xfeed);
	unregister_kprobe(&kp);
	END();
}

static void test_batch(void)
{
	struct kprobe a = { .symbol_name = "traced", .pre_handler = count_pre };
	struct kprobe b = { .symbol_name = "inner", .pre_handler = count_pre };
	struct kprobe c = { .symbol_name = "no_such_function_anywhere" };
	struct kprobe *ok[] = { &a, &b }, *bad[] = { &a, &b, &c };

	BEGIN("register_kprobes: all or nothing");
	CHECK_EQ(register_kprobes(bad, 3), -ENOENT);
	CHECK(*(volatile uint8_t *)traced != 0xcc &&
	      *(volatile uint8_t *)traced != 0xe9, "armed");
	a.addr = b.addr = NULL;
	CHECK_EQ(register_kprobes(ok, 2), 0);
	lib_hits = 0;
	traced(0, 0, 0);
	inner(0);
	CHECK_EQ(lib_hits, 2);
	unregister_kprobes(ok, 2);
	traced(0, 0, 0);
	CHECK_EQ(lib_hits, 2);
	END();
}

static struct kprobe self_kp;
static int api_register, api_enable;

static int pre_calls_api(struct kprobe *p, struct pt_regs *regs)
{
	struct kprobe other = { .symbol_name = "inner" };

	(void)regs;
	api_register = register_kprobe(&other);
	api_enable = disable_kprobe(p);
	unregister_kprobe(p);	/* refused, with a message on stderr */
	return 0;
}

static void test_api_in_handler(void)
{
	BEGIN("the API called from a handler: -EBUSY, unregister ignored");
	self_kp.symbol_name = "traced";
	self_kp.pre_handler = pre_calls_api;
	CHECK_EQ(register_kprobe(&self_kp), 0);
	CHECK_EQ(traced(1, 2, 3), 123);
	CHECK_EQ(api_register, -EBUSY);
	CHECK_EQ(api_enable, -EBUSY);
	/* an int3, or the jmp of a jump-optimised probe */
	CHECK(*(volatile uint8_t *)traced == 0xcc ||
	      *(volatile uint8_t *)traced == 0xe9, "not armed");
	unregister_kprobe(&self_kp);
	CHECK(*(volatile uint8_t *)traced != 0xcc &&
	      *(volatile uint8_t *)traced != 0xe9, "int3 left behind");
	END();
}

int main(void)
{
	test_entry();
	test_middle();
	test_change_regs();
	test_errors();
	test_lib_sym();
	test_recursion();
	test_fault_handler();
	test_batch();
	test_api_in_handler();
	return t_exit();
}
