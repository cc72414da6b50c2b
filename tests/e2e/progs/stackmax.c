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
 * leaf(0) (the deepest call) notes its frame pointer: its stack pointer
 * at entry, where the return address is, is the word above.  main then
 * prints the depth the stack tracer must find for it, measured as the
 * tracer says it measures (the end of the [stack] mapping less that
 * stack pointer), for the test to compare.
 *
 * Usage: stackmax  -- prints "stackmax: leaf at depth N", "stackmax: ok".
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

volatile long sink;
static uintptr_t leaf_sp;

__attribute__((noipa)) long leaf(long x)
{
	if (!x)
		leaf_sp = (uintptr_t)__builtin_frame_address(0) + 8;
	sink = x;
	return x + 1;
}

/* The end of the [stack] mapping, or 0. */
static uintptr_t stack_top(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long lo, hi = 0;

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]") &&
		    sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			break;
	if (f)
		fclose(f);
	return hi;
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
	printf("stackmax: leaf at depth %lu\n",
	       (unsigned long)(stack_top() - leaf_sp));
	printf("stackmax: ok\n");
	return 0;
}
