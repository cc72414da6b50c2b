// SPDX-License-Identifier: GPL-2.0
/*
 * What a jump-optimised probe costs per hit, against the floor the issue
 * sets: a function-pointer hook writing the same 32-byte record (timestamp,
 * ip, two arguments) into a thread-local ring.
 *
 *   base   the loop calling work(i, i) with nothing attached
 *   floor  the loop calling a hook(ip, a, b) through a pointer, then work()
 *   opt    work()'s first instructions replaced by a jmp to a detour that
 *          saves a struct dp_regs frame and calls the same record writer
 *
 * Usage: opt_bench N REPEATS; prints the median ns per call of each.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "arch/arch.h"

struct rec { uint64_t ts, ip, a, b; };
#define RING 4096
static __thread struct rec ring[RING];
static __thread unsigned head;

static inline void record(uint64_t ip, uint64_t a, uint64_t b)
{
	struct rec *r = &ring[head++ & (RING - 1)];

	r->ts = __rdtsc();
	r->ip = ip;
	r->a = a;
	r->b = b;
}

__attribute__((noinline)) long work(long a, long b)
{
	__asm__ volatile("" ::: "memory");
	return a * 3 + b;
}
__asm__(".globl work_end_marker\nwork_end_marker: nop\n");

static void hook(uint64_t ip, uint64_t a, uint64_t b)
{
	record(ip, a, b);
}
static void (*volatile hookp)(uint64_t, uint64_t, uint64_t) = hook;

static void handler(struct dp_regs *regs, void *arg)
{
	(void)arg;
	record(regs->ip, regs->di, regs->si);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long (*volatile workp)(long, long) = work;

static double run(long n, int mode)
{
	double t0 = now();
	long s = 0;

	for (long i = 0; i < n; i++) {
		if (mode == 1)
			hookp((uint64_t)work, i, i);
		s += workp(i, i);
	}
	__asm__ volatile("" :: "r"(s));
	return (now() - t0) / n * 1e9;
}

static int cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

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

static int optimize(void)
{
	uint64_t fn = (uint64_t)(uintptr_t)work;
	struct dp_optprobe op;
	const char *why = NULL;
	uint8_t jmp[DP_OPT_JMP_LEN], *page = page_near(fn);
	uint64_t pg = fn & ~0xfffull;

	if (!page || dp_opt_analyze((const uint8_t *)work, fn, 64, fn, &op, &why)) {
		fprintf(stderr, "cannot optimise work(): %s\n", why ? why : "no page");
		return -1;
	}
	if (dp_opt_make_detour(&op, (uint64_t)(uintptr_t)page,
			       (uint64_t)(uintptr_t)handler, 0, page, 4096) < 0 ||
	    dp_opt_make_jump(&op, (uint64_t)(uintptr_t)page, jmp))
		return -1;
	/* single-threaded benchmark: a plain write is enough here */
	mprotect((void *)pg, 8192, PROT_READ | PROT_WRITE | PROT_EXEC);
	memcpy((void *)(uintptr_t)op.patch, jmp, sizeof(jmp));
	mprotect((void *)pg, 8192, PROT_READ | PROT_EXEC);
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000000;
	int reps = argc > 2 ? atoi(argv[2]) : 5;
	double t[3][64];
	const char *names[] = { "base", "floor", "opt" };

	for (int m = 0; m < 3; m++) {
		if (m == 2 && optimize())
			return 1;
		for (int r = 0; r < reps; r++)
			t[m][r] = run(n, m == 1);
		qsort(t[m], reps, sizeof(double), cmp);
	}
	printf("| case | median ns/call | ns over base |\n| --- | ---: | ---: |\n");
	for (int m = 0; m < 3; m++)
		printf("| %s | %.2f | %.2f |\n", names[m], t[m][reps / 2],
		       t[m][reps / 2] - t[0][reps / 2]);
	printf("\nopt / floor (over base): %.2f\n",
	       (t[2][reps / 2] - t[0][reps / 2]) / (t[1][reps / 2] - t[0][reps / 2]));
	return 0;
}
