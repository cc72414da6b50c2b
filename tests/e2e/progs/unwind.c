// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target for DWARF unwinding (--call-graph dwarf): a known call
 * chain built without frame pointers (-O2 -fomit-frame-pointer,
 * tests/e2e/lib.sh; unwindfp.c is the same code with them).
 *
 * main calls outer, outer middle, middle leaf; no call is a tail call
 * (each result is used after it) and noipa keeps each function out of
 * line.  With an argument, leaf prints the program's own stack as glibc's
 * backtrace() finds it (with libgcc's unwinder, from the CFI), one
 * return address a line ("bt 0x..."), innermost first: the first is in
 * leaf after the call to backtrace(), the others are its callers' return
 * addresses, which a probe at leaf's entry sees the same.
 *
 * Usage: unwind [bt]  -- prints "unwind: ok".
 */
#include <execinfo.h>
#include <stdio.h>

volatile long sink;
static int show;

__attribute__((noipa)) long leaf(long x)
{
	void *bt[64];
	int n = show ? backtrace(bt, 64) : 0;

	for (int i = 0; i < n; i++)
		printf("bt %p\n", bt[i]);
	sink = n;
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

int main(int argc, char **argv)
{
	(void)argv;
	show = argc > 1;
	sink = outer(argc);
	printf("unwind: ok\n");
	return 0;
}
