// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target of the stack tracer (--tracer stack): one deepest stack,
 * known from the source, built with frame pointers
 * (-fno-omit-frame-pointer, tests/e2e/lib.sh).
 *
 * main calls shallow() (leaf under it: 3 frames), then down(3), which
 * recurses to down(0), which calls leaf(): the deepest stack is leaf,
 * down four times, main.  Each down() keeps a 256-byte array, so the
 * four down frames have one size, over 256 bytes; leaf at its entry has
 * made no frame yet: its entry's size is its return address.  Each
 * call's result is used after it, so no call is a tail call, and noipa
 * keeps every function out of line at each -O level.
 *
 * Usage: stackmax  -- prints "stackmax: ok".
 */
#include <stdio.h>

volatile long sink;

__attribute__((noipa)) long leaf(long x)
{
	sink = x;
	return x + 1;
}

__attribute__((noipa)) long shallow(void)
{
	long r = leaf(1);

	sink = r;
	return r + 1;
}

__attribute__((noipa)) long down(int n)
{
	volatile char buf[256];
	long r;

	buf[n] = (char)n;
	r = n ? down(n - 1) : leaf(buf[0]);
	sink = r + buf[n];
	return r + 1;
}

int main(void)
{
	shallow();
	down(3);
	shallow();
	printf("stackmax: ok\n");
	return 0;
}
