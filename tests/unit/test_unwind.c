// SPDX-License-Identifier: GPL-2.0
/*
 * DWARF unwinding of a stack snapshot (sym/unwind.h): a snapshot of this
 * test's own stack unwinds to the frames glibc's backtrace() finds from
 * the same place, and snapshots of garbage (registers, bytes, code
 * addresses in the wrong places) give a bounded stack and never a crash.
 */
#include <criterion/criterion.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include "event/record.h"
#include "sym/proc.h"
#include "sym/unwind.h"

#define SNAP_BYTES 16384
#define MAX_FRAMES 32

static struct dp_unwinder *open_self(struct dp_proc **p)
{
	struct dp_unwinder *u;
	char why[256];

	cr_assert_eq(dp_proc_open(getpid(), p, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(dp_unwinder_new(*p, &u), 0);
	return u;
}

/* The highest address of this thread's stack. */
static uintptr_t stack_top(void)
{
	pthread_attr_t a;
	void *lo;
	size_t size;

	cr_assert_eq(pthread_getattr_np(pthread_self(), &a), 0);
	cr_assert_eq(pthread_attr_getstack(&a, &lo, &size), 0);
	pthread_attr_destroy(&a);
	return (uintptr_t)lo + size;
}

/* DWARF numbering (unwind.h) from a ucontext's general registers. */
static void snap_regs(struct dp_stack_snap *s, const ucontext_t *uc)
{
	static const int map[DP_UNWIND_NREGS] = {
		REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP,
		REG_RSP, REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13,
		REG_R14, REG_R15, REG_RIP,
	};

	for (int i = 0; i < DP_UNWIND_NREGS; i++)
		s->regs[i] = (uint64_t)uc->uc_mcontext.gregs[map[i]];
}

/*
 * A snapshot of the caller of getcontext() here, as the agent takes one
 * at a hit, and glibc's backtrace() from the same function.
 */
static __attribute__((noinline)) int
snap_and_backtrace(struct dp_stack_snap *s, uint8_t *buf, void **bt, int nbt)
{
	ucontext_t uc;
	uintptr_t sp;
	int n;

	getcontext(&uc);
	snap_regs(s, &uc);
	sp = (uintptr_t)s->regs[DP_UNWIND_RSP];
	s->len = stack_top() - sp < SNAP_BYTES ? stack_top() - sp : SNAP_BYTES;
	s->whole = s->len < SNAP_BYTES;
	/* read as dprobe reads a process (ASan would see the stack's
	 * redzones in a memcpy) */
	{
		struct iovec l = { buf, s->len }, r = { (void *)sp, s->len };

		cr_assert_eq(process_vm_readv(getpid(), &l, 1, &r, 1, 0),
			     (ssize_t)s->len);
	}
	s->stack = buf;
	n = backtrace(bt, nbt);
	__asm__ volatile("" ::: "memory");	/* no tail call */
	return n;
}

static __attribute__((noinline)) int middle(struct dp_stack_snap *s,
					    uint8_t *buf, void **bt, int nbt)
{
	int n = snap_and_backtrace(s, buf, bt, nbt);

	__asm__ volatile("" ::: "memory");
	return n;
}

Test(unwind, own_stack_as_backtrace)
{
	struct dp_proc *p;
	struct dp_unwinder *u = open_self(&p);
	struct dp_stack_snap s;
	uint8_t *buf = malloc(SNAP_BYTES);
	uint64_t fr[MAX_FRAMES];
	void *bt[MAX_FRAMES];
	bool complete;
	unsigned n, k;
	int nbt;

	cr_assert_not_null(buf);
	nbt = middle(&s, buf, bt, MAX_FRAMES);
	n = dp_unwind(u, gettid(), &s, fr, MAX_FRAMES, &complete);
	cr_assert_gt(nbt, 3);
	cr_assert_gt(n, 3);
	/* frame 0 is where each was taken (getcontext's return, backtrace's
	 * return; under ASan, its interceptor's first): the callers from
	 * there on are the same addresses */
	for (k = 1; k < 3 && (uint64_t)(uintptr_t)bt[k] != fr[1]; k++)
		;
	cr_assert_lt(k, 3, "middle's frame %#lx not in backtrace()",
		     (unsigned long)fr[1]);
	cr_expect_eq(n - 1, (unsigned)nbt - k, "%u frames, backtrace() %d",
		     n, nbt);
	for (unsigned i = 1; i < n && i - 1 + k < (unsigned)nbt; i++)
		cr_expect_eq(fr[i], (uint64_t)(uintptr_t)bt[i - 1 + k],
			     "frame %u: %#lx, backtrace() %p", i,
			     (unsigned long)fr[i], bt[i - 1 + k]);
	cr_expect(complete || n == MAX_FRAMES, "the walk ended on an error");
	cr_expect_neq(fr[n - 1], DP_STACK_BAD_FRAME, "a bad frame on our stack");
	/* a smaller bound is kept */
	cr_expect_eq(dp_unwind(u, gettid(), &s, fr, 2, NULL), 2);
	dp_unwinder_free(u);
	dp_proc_close(p);
	free(buf);
}

Test(unwind, no_stack_bytes)
{
	struct dp_proc *p;
	struct dp_unwinder *u = open_self(&p);
	struct dp_stack_snap s = { .stack = NULL, .len = 0 };
	uint64_t fr[MAX_FRAMES];

	s.regs[DP_UNWIND_RIP] = (uint64_t)(uintptr_t)&middle;
	s.regs[DP_UNWIND_RSP] = 0x7ffff000;
	/* the caller's return address would be at [rsp]: not in the copy */
	cr_expect_eq(dp_unwind(u, 1, &s, fr, MAX_FRAMES, NULL), 1);
	cr_expect_eq(fr[0], s.regs[DP_UNWIND_RIP]);
	cr_expect_eq(dp_unwind(u, 1, &s, fr, 0, NULL), 0);
	dp_unwinder_free(u);
	dp_proc_close(p);
}

/*
 * Where a walk that stops short is a bad frame (unwind.h): at middle's
 * first instruction its caller's return address is at [rsp].  Past the
 * end of a copy cut at its size it is unknown (no mark); past the end of
 * a copy that reached the stack's top, or at an unaligned stack pointer,
 * it is a bad frame; 0 is the end of the chain for libdwfl (no mark).
 */
Test(unwind, bad_frames)
{
	struct dp_proc *p;
	struct dp_unwinder *u = open_self(&p);
	uint64_t zero = 0, fr[MAX_FRAMES];
	struct dp_stack_snap s = { .stack = NULL, .len = 0 };

	s.regs[DP_UNWIND_RIP] = (uint64_t)(uintptr_t)&middle;
	s.regs[DP_UNWIND_RSP] = 0x7ffff000;
	s.whole = true;
	cr_assert_eq(dp_unwind(u, 1, &s, fr, MAX_FRAMES, NULL), 2);
	cr_expect_eq(fr[0], s.regs[DP_UNWIND_RIP]);
	cr_expect_eq(fr[1], DP_STACK_BAD_FRAME);
	/* no room for the mark: the frames only */
	cr_expect_eq(dp_unwind(u, 1, &s, fr, 1, NULL), 1);
	s.whole = false;
	s.regs[DP_UNWIND_RSP] = 0x7ffff004;
	cr_assert_eq(dp_unwind(u, 1, &s, fr, MAX_FRAMES, NULL), 2);
	cr_expect_eq(fr[1], DP_STACK_BAD_FRAME);
	s.regs[DP_UNWIND_RSP] = 0x7ffff000;
	s.stack = (const uint8_t *)&zero;
	s.len = sizeof(zero);
	cr_expect_eq(dp_unwind(u, 1, &s, fr, MAX_FRAMES, NULL), 1);
	dp_unwinder_free(u);
	dp_proc_close(p);
}

/* A word a hostile snapshot might hold: garbage, or a code address. */
static uint64_t hostile_word(unsigned *seed, const uint64_t *code, int ncode)
{
	switch (rand_r(seed) % 4) {
	case 0:
		return code[rand_r(seed) % ncode] + (uint64_t)(rand_r(seed) % 64);
	case 1:
		return 0;
	default:
		return ((uint64_t)rand_r(seed) << 33) ^ (uint64_t)rand_r(seed);
	}
}

/*
 * Garbage snapshots, with code addresses among them so that the walk
 * goes on for a while: bounded stacks, no crash, no read outside the
 * copy (ASan sees one), in bounded time.
 */
Test(unwind, garbage_never_crashes, .timeout = 60)
{
	struct dp_proc *p;
	struct dp_unwinder *u = open_self(&p);
	const uint64_t code[] = {
		(uint64_t)(uintptr_t)&middle,
		(uint64_t)(uintptr_t)&snap_and_backtrace,
		(uint64_t)(uintptr_t)&memcpy,
		(uint64_t)(uintptr_t)&malloc,
		(uint64_t)(uintptr_t)&getpid,
	};
	uint64_t *buf = malloc(4096);
	uint64_t fr[MAX_FRAMES];
	unsigned seed = 16;

	cr_assert_not_null(buf);
	for (int round = 0; round < 3000; round++) {
		struct dp_stack_snap s;
		size_t words = (size_t)(rand_r(&seed) % 512);

		for (int i = 0; i < DP_UNWIND_NREGS; i++)
			s.regs[i] = hostile_word(&seed, code, 5);
		/* a stack pointer near the copy's addresses, or anywhere */
		s.regs[DP_UNWIND_RSP] = round % 3 ? 0x7ffe00000000ull + 8u *
			(uint64_t)(rand_r(&seed) % 64) : hostile_word(&seed, code, 5);
		s.regs[DP_UNWIND_RIP] = code[round % 5] +
			(uint64_t)(rand_r(&seed) % 200);
		for (size_t i = 0; i < words; i++) {
			buf[i] = hostile_word(&seed, code, 5);
			/* frame pointers that point into the copy */
			if (rand_r(&seed) % 5 == 0)
				buf[i] = s.regs[DP_UNWIND_RSP] +
					8u * (uint64_t)(rand_r(&seed) % 512);
		}
		s.stack = (const uint8_t *)buf;
		s.len = words * 8 - (words && round % 7 == 0 ? 3 : 0);
		s.whole = round % 2;
		cr_assert_leq(dp_unwind(u, 1, &s, fr, MAX_FRAMES, NULL),
			      MAX_FRAMES);
	}
	dp_unwinder_free(u);
	dp_proc_close(p);
	free(buf);
}
