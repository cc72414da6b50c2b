// SPDX-License-Identifier: GPL-2.0
/*
 * Several kprobes on one address (the kernel's aggregate probes): their
 * handlers run in registration order, each can be disabled and enabled
 * on its own, the int3 goes away only when none is enabled, and a kprobe
 * and a kretprobe can share a function entry.
 */
#include <errno.h>
#include <stdint.h>

#include <dprobe/kprobes.h>

#include "agent_test.h"

__attribute__((noipa)) long target(long x)
{
	return x * 7;
}

static char order[16];
static int norder, posts;

static void mark(char c)
{
	if (norder < (int)sizeof(order) - 1)
		order[norder++] = c;
	order[norder] = '\0';
}

static int pre_a(struct kprobe *p, struct pt_regs *r) { (void)p; (void)r; mark('a'); return 0; }
static int pre_b(struct kprobe *p, struct pt_regs *r) { (void)p; (void)r; mark('b'); return 0; }
static int pre_c(struct kprobe *p, struct pt_regs *r) { (void)p; (void)r; mark('c'); return 0; }

static void post_any(struct kprobe *p, struct pt_regs *r, unsigned long f)
{
	(void)r;
	(void)f;
	posts++;
	mark((char)(p->symbol_name ? 'P' : 'Q'));
}

static struct kprobe ka = { .symbol_name = "target", .pre_handler = pre_a };
static struct kprobe kb = { .symbol_name = "target", .pre_handler = pre_b,
			    .post_handler = post_any };
static struct kprobe kc = { .symbol_name = "target", .pre_handler = pre_c };

static void reset(void)
{
	norder = 0;
	order[0] = '\0';
	posts = 0;
}

static bool armed(void)
{
	uint8_t b = *(volatile uint8_t *)target;

	/* an int3, or the jmp of a jump-optimised probe */
	return b == 0xcc || b == 0xe9;
}

static void test_order(void)
{
	BEGIN("three kprobes on one address run in registration order");
	CHECK_EQ(register_kprobe(&ka), 0);
	CHECK_EQ(register_kprobe(&kb), 0);
	CHECK_EQ(register_kprobe(&kc), 0);
	reset();
	CHECK_EQ(target(2), 14);
	CHECK(!strcmp(order, "abcP"), "order %s", order);
	END();
}

static void test_enable_disable(void)
{
	BEGIN("disable/enable one probe of an aggregate, then all of them");
	CHECK_EQ(disable_kprobe(&kb), 0);
	CHECK(kprobe_disabled(&kb), "flags %x", kb.flags);
	reset();
	CHECK_EQ(target(3), 21);
	CHECK(!strcmp(order, "ac"), "order %s", order);
	CHECK(armed(), "int3 gone with a probe still enabled");
	CHECK_EQ(disable_kprobe(&ka), 0);
	CHECK_EQ(disable_kprobe(&kc), 0);
	CHECK(!armed(), "int3 still there with every probe disabled");
	reset();
	CHECK_EQ(target(3), 21);
	CHECK(!strcmp(order, ""), "order %s", order);
	CHECK_EQ(enable_kprobe(&kb), 0);
	CHECK(armed(), "int3 missing after enable");
	reset();
	CHECK_EQ(target(4), 28);
	CHECK(!strcmp(order, "bP"), "order %s", order);
	CHECK_EQ(enable_kprobe(&ka), 0);
	CHECK_EQ(enable_kprobe(&kc), 0);
	CHECK_EQ(enable_kprobe(&kc), 0);	/* twice: fine */
	reset();
	CHECK_EQ(target(1), 7);
	CHECK(!strcmp(order, "abcP"), "order %s", order);
	END();
}

static void test_unregister_middle(void)
{
	BEGIN("unregistering one probe of an aggregate leaves the others");
	unregister_kprobe(&kb);
	reset();
	CHECK_EQ(target(5), 35);
	CHECK(!strcmp(order, "ac"), "order %s", order);
	unregister_kprobe(&ka);
	reset();
	CHECK_EQ(target(5), 35);
	CHECK(!strcmp(order, "c"), "order %s", order);
	CHECK(armed(), "int3 gone too early");
	unregister_kprobe(&kc);
	CHECK(!armed(), "int3 left behind");
	reset();
	CHECK_EQ(target(5), 35);
	CHECK(!strcmp(order, ""), "order %s", order);
	END();
}

static int rets;
static long retval;

static int on_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	(void)ri;
	rets++;
	retval = (long)regs_return_value(regs);
	mark('r');
	return 0;
}

static void test_with_kretprobe(void)
{
	struct kretprobe rp = { .kp.symbol_name = "target", .handler = on_ret };

	BEGIN("a kprobe and a kretprobe on the same entry");
	ka.addr = NULL;
	CHECK_EQ(register_kprobe(&ka), 0);
	CHECK_EQ(register_kretprobe(&rp), 0);
	reset();
	rets = 0;
	CHECK_EQ(target(6), 42);
	CHECK(!strcmp(order, "ar"), "order %s", order);
	CHECK_EQ(retval, 42);
	CHECK_EQ(disable_kretprobe(&rp), 0);
	reset();
	CHECK_EQ(target(1), 7);
	CHECK(!strcmp(order, "a"), "order %s", order);
	CHECK_EQ(enable_kretprobe(&rp), 0);
	unregister_kprobe(&ka);
	reset();
	CHECK_EQ(target(2), 14);
	CHECK(!strcmp(order, "r"), "order %s", order);
	unregister_kretprobe(&rp);
	CHECK(!armed(), "int3 left behind");
	END();
}

/* The same struct registered again and again, as the hammer test does. */
static void test_reuse(void)
{
	int bad = 0;

	BEGIN("register/unregister the same kprobe 200 times");
	for (int i = 0; i < 200; i++) {
		kb.addr = NULL;
		if (register_kprobe(&kb))
			bad++;
		reset();
		if (target(1) != 7 || strcmp(order, "bP"))
			bad++;
		unregister_kprobe(&kb);
	}
	CHECK_EQ(bad, 0);
	END();
}

int main(void)
{
	test_order();
	test_enable_disable();
	test_unregister_middle();
	test_with_kretprobe();
	test_reuse();
	return t_exit();
}
