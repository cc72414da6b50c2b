// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark target for user stacks (bench/stack.sh): bench/loop.c's
 * work(a, b, s), called N times from DEPTH nested calls, so that a probe
 * on work() with --stack walks DEPTH + 3 frames or so (work, the chain,
 * main, the C library's start code).  Built with frame pointers.
 *
 *   stack_loop N [DEPTH [PAD]]   prints "<ns for the loop> <N> <checksum>"
 *
 * Only the calls of work() are timed; the chain is entered once.  PAD
 * bytes of stack (default 0) are taken in main before the chain, so that
 * a snapshot of the stack above work() (--call-graph dwarf,SIZE) has
 * SIZE bytes to copy and does not end at the stack's top.
 */
#include <alloca.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noipa)) long work(int a, long b, const char *s)
{
	return a + b + s[a & 3];
}

static long long elapsed;
static volatile long sink;

/* depth frames of chain(), then the timed loop; a store after each
 * call keeps it a real call (not a tail call, not a loop) */
__attribute__((noipa)) long chain(int depth, long n)
{
	long long t0;
	long sum = 0, r;

	if (depth > 0) {
		r = chain(depth - 1, n);
		sink = r;
		return r + 1;
	}
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		sum += work((int)i, i * 3, "bench");
	elapsed = now_ns() - t0;
	return sum;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	int depth = argc > 2 ? atoi(argv[2]) : 10;
	size_t pad = argc > 3 ? (size_t)atol(argv[3]) : 0;
	char *p = alloca(pad + 1);
	long sum;

	memset(p, 0, pad + 1);
	sink = p[pad];
	sum = chain(depth, n);

	printf("%lld %ld %ld\n", elapsed, n, sum);
	return 0;
}
