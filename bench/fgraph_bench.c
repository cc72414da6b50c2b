// SPDX-License-Identifier: GPL-2.0
/*
 * A call-heavy program for bench/fgraph.sh: every function of it traced
 * by a function tracer (dprobe's --tracer function_graph, uftrace
 * record).  Each round calls a small tree of functions: round -> step
 * (four times) -> mix and leaf, so 1 + 4 * 3 = 13 calls a round, with a
 * little arithmetic in each so that the calls are real.
 *
 *   fgraph_bench N   ->  "<ns for the loop> <calls made>" on stdout
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noclone))

volatile unsigned long sink;

NOINLINE unsigned long leaf(unsigned long x)
{
	return x * 2654435761u >> 7;
}

NOINLINE unsigned long mix(unsigned long a, unsigned long b)
{
	return (a ^ (b << 3)) + 17;
}

NOINLINE unsigned long step(unsigned long x)
{
	return mix(leaf(x), x) + 1;
}

NOINLINE unsigned long round_(unsigned long i)
{
	unsigned long s = 0;

	for (int k = 0; k < 4; k++)
		s += step(i + (unsigned long)k);
	return s;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	struct timespec a, b;
	unsigned long s = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		s += round_((unsigned long)i);
	clock_gettime(CLOCK_MONOTONIC, &b);
	sink = s;
	printf("%lld %ld\n", (long long)(b.tv_sec - a.tv_sec) * 1000000000LL +
	       (b.tv_nsec - a.tv_nsec), n * 13);
	return 0;
}
