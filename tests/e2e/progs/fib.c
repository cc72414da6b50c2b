// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target: recursion under return probes.
 *
 * fib(n) = n for n < 2, else fib(n-1) + fib(n-2).  The two recursive
 * calls go through one call instruction in a loop whose bound the
 * compiler cannot see (`steps` is volatile), so at every -O level fib has
 * exactly one recursive call site and no call is turned into a jump: each
 * call returns to the instruction after that one `call`, and the
 * outermost call returns into main.  The store to `sink` after the loop
 * keeps the calls out of tail position.
 *
 * Usage: fib N [REPEAT] -- prints fib(N) and the number of calls made.
 */
#include <stdio.h>
#include <stdlib.h>

volatile int steps = 2;
volatile long sink;
long calls;

__attribute__((noipa)) long fib(long n)
{
	long s = 0;

	calls++;
	if (n < 2)
		return n;
	for (int k = 1; k <= steps; k++)
		s += fib(n - k);
	sink = s;
	return s;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10;
	int repeat = argc > 2 ? atoi(argv[2]) : 1;
	long r = 0;

	/* volatile: the loop is not rotated or peeled into two call sites */
	for (volatile int i = 0; i < repeat; i++)
		r = fib(n);
	printf("fib: fib(%ld) = %ld, %ld calls\n", n, r, calls);
	return 0;
}
