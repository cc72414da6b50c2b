// SPDX-License-Identifier: GPL-2.0
/*
 * libdprobe.so loaded with dlopen() after the program installed its own
 * SIGTRAP and SIGSEGV handlers (as when the agent is injected): those
 * handlers must still receive the program's own traps and faults, and
 * probes work.  Its sigaction() does not interpose then: the program's
 * later sigaction()/signal()/sigprocmask() calls reach libc, whose own
 * functions libdprobe guards with probes, while it has another probe
 * armed: with none, libc's code is its own again, and actions the program
 * set meanwhile are taken as its own when the guards come back.
 * Usage: dl_late PATH/libdprobe.so
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

#include <dprobe/kprobes.h>

#include "agent_test.h"

__attribute__((noipa)) long probed(long x)
{
	return x * 2;
}

__attribute__((noipa)) static long deref(uintptr_t a)
{
	return *(volatile long *)a;
}

__attribute__((noipa)) static void do_int3(void)
{
	__asm__ volatile("int3" ::: "memory");
}

static volatile int hits, traps, segvs;
static sigjmp_buf jb;

static int count_pre(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	(void)regs;
	hits++;
	return 0;
}

static void on_trap(int sig)
{
	(void)sig;
	traps++;
}

static void on_segv(int sig)
{
	(void)sig;
	segvs++;
	siglongjmp(jb, 1);
}

static void on_trap2(int sig)
{
	(void)sig;
	traps += 100;
}

static void on_segv2(int sig)
{
	(void)sig;
	segvs += 100;
	siglongjmp(jb, 1);
}

static void on_trap3(int sig)
{
	(void)sig;
	traps += 1000;
}

/* libc's functions the guards go on, and their first bytes as loaded */
#define GUARDED 3
static const unsigned char *guarded[GUARDED];
static unsigned char guarded_code[GUARDED][16];

/* How many of them have their own first bytes now. */
static int guarded_intact(void)
{
	int n = 0;

	for (int i = 0; i < GUARDED; i++)
		n += !memcmp(guarded[i], guarded_code[i], 16);
	return n;
}

int main(int argc, char **argv)
{
	int (*reg)(struct kprobe *);
	void (*unreg)(struct kprobe *);
	int (*pread_)(void *, const void *, size_t);
	struct kprobe kp = { .symbol_name = "probed", .pre_handler = count_pre };
	void *h;
	long v;

	BEGIN("dlopen()ed after the program's handlers: they still work");
	guarded[0] = (const unsigned char *)(uintptr_t)sigaction;
	guarded[1] = (const unsigned char *)(uintptr_t)sigprocmask;
	guarded[2] = (const unsigned char *)(uintptr_t)pthread_sigmask;
	for (int i = 0; i < GUARDED; i++)
		memcpy(guarded_code[i], guarded[i], 16);
	signal(SIGTRAP, on_trap);
	signal(SIGSEGV, on_segv);
	h = argc > 1 ? dlopen(argv[1], RTLD_NOW) : NULL;
	CHECK(h != NULL, "dlopen: %s", dlerror());
	if (!h) {
		END();
		return t_exit();
	}
	reg = (int (*)(struct kprobe *))dlsym(h, "register_kprobe");
	unreg = (void (*)(struct kprobe *))dlsym(h, "unregister_kprobe");
	pread_ = (int (*)(void *, const void *, size_t))dlsym(h, "dp_probe_read");
	CHECK(reg && unreg && pread_, "dlsym");
	CHECK_EQ(guarded_intact(), GUARDED);	/* nothing armed yet */
	CHECK_EQ(reg(&kp), 0);
	CHECK_EQ(guarded_intact(), 0);
	CHECK_EQ(probed(4), 8);
	CHECK_EQ(hits, 1);
	do_int3();
	CHECK_EQ(traps, 1);
	if (!sigsetjmp(jb, 1))
		deref(64);
	CHECK_EQ(segvs, 1);
	CHECK_EQ(pread_(&v, (void *)64, sizeof(v)), -EFAULT);
	CHECK_EQ(segvs, 1);
	CHECK_EQ(probed(5), 10);
	CHECK_EQ(hits, 2);
	END();

	BEGIN("later sigaction/signal/sigprocmask calls keep libdprobe's handlers");
	{
		struct sigaction sa = { 0 }, old;
		sigset_t set;

		sa.sa_handler = on_trap2;
		CHECK_EQ(sigaction(SIGTRAP, &sa, NULL), 0);
		CHECK_EQ(sigaction(SIGTRAP, NULL, &old), 0);
		CHECK(old.sa_handler == on_trap2, "sigaction reports %p",
		      (void *)old.sa_handler);
		CHECK((void *)signal(SIGSEGV, on_segv2) == (void *)on_segv,
		      "signal() returns the program's handler");
		traps = segvs = hits = 0;
		do_int3();
		CHECK_EQ(traps, 100);
		if (!sigsetjmp(jb, 1))
			deref(64);
		CHECK_EQ(segvs, 100);
		CHECK_EQ(probed(6), 12);
		CHECK_EQ(hits, 1);
		sigemptyset(&set);
		sigaddset(&set, SIGTRAP);
		sigaddset(&set, SIGUSR1);
		CHECK_EQ(sigprocmask(SIG_BLOCK, &set, NULL), 0);
		CHECK_EQ(pthread_sigmask(SIG_BLOCK, &set, NULL), 0);
		sigprocmask(SIG_BLOCK, NULL, &set);
		CHECK(!sigismember(&set, SIGTRAP), "SIGTRAP blocked");
		CHECK(sigismember(&set, SIGUSR1), "SIGUSR1 not blocked");
		CHECK_EQ(probed(7), 14);
		CHECK_EQ(hits, 2);
	}
	unreg(&kp);
	CHECK_EQ(probed(5), 10);
	CHECK_EQ(hits, 2);
	END();

	BEGIN("no probe left: libc's code is its own; the program's actions "
	      "set meanwhile are kept when probes come back");
	{
		struct sigaction sa = { 0 }, cur, read_ours;

		CHECK_EQ(guarded_intact(), GUARDED);
		/* unguarded: these reach the kernel */
		sa.sa_handler = on_trap3;
		CHECK_EQ(sigaction(SIGTRAP, &sa, NULL), 0);
		traps = hits = 0;
		do_int3();
		CHECK_EQ(traps, 1000);
		/* as the kernel wants: a kprobe registered again is reset */
		kp = (struct kprobe){ .symbol_name = "probed",
				      .pre_handler = count_pre };
		CHECK_EQ(reg(&kp), 0);
		CHECK_EQ(guarded_intact(), 0);
		do_int3();
		CHECK_EQ(traps, 2000);
		CHECK_EQ(probed(8), 16);
		CHECK_EQ(hits, 1);
		CHECK_EQ(sigaction(SIGTRAP, NULL, &cur), 0);
		CHECK(cur.sa_handler == on_trap3, "sigaction reports %p",
		      (void *)cur.sa_handler);
		unreg(&kp);
		CHECK_EQ(guarded_intact(), GUARDED);
		/* libdprobe's own action, read while unguarded and put back
		 * later: the program's stays on_trap3 */
		CHECK_EQ(sigaction(SIGTRAP, NULL, &read_ours), 0);
		kp = (struct kprobe){ .symbol_name = "probed",
				      .pre_handler = count_pre };
		CHECK_EQ(reg(&kp), 0);
		CHECK_EQ(sigaction(SIGTRAP, &read_ours, NULL), 0);
		traps = hits = 0;
		do_int3();
		CHECK_EQ(traps, 1000);
		CHECK_EQ(probed(9), 18);
		CHECK_EQ(hits, 1);
		unreg(&kp);
		CHECK_EQ(guarded_intact(), GUARDED);
	}
	END();
	return t_exit();
}
