// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target: a known call chain for user stacks (--stack), built with
 * frame pointers (-fno-omit-frame-pointer, tests/e2e/lib.sh).
 *
 * main calls outer(i) then other(i) for i < N; outer calls middle,
 * middle calls leaf.  Each call's result is used after it (stored to a
 * volatile), so no call is a tail call, and noipa keeps each function
 * out of line at every -O level: at leaf the stack is leaf, middle,
 * outer, main, then whatever called main (the C library's start code,
 * built without frame pointers: where the chain may end).
 *
 * Usage: stack [N]  -- prints "stack: ok N".
 */
#include <stdio.h>
#include <stdlib.h>

volatile long sink;

__attribute__((noipa)) long leaf(long x)
{
	sink = x;
	return x + 1;
}

__attribute__((noipa)) long middle(long x)
{
	long r = leaf(x * 2);

	sink = r;
	return r + 1;
}

__attribute__((noipa)) long outer(long x)
{
	long r = middle(x + 1);

	sink = r;
	return r + 1;
}

__attribute__((noipa)) long other(long x)
{
	sink = x;
	return x;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 3;

	for (long i = 0; i < n; i++) {
		outer(i);
		other(i);
	}
	printf("stack: ok %ld\n", n);
	return 0;
}
