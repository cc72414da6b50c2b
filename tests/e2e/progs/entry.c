// SPDX-License-Identifier: GPL-2.0
/*
 * Probe places for dprobe show (cases/show.sh), built plain (entry),
 * with -pg -mfentry -mnop-mcount (entryfentry: a 5-byte nop at each
 * function's entry) and with -fpatchable-function-entry=5 (entrypatch:
 * five one-byte nops there).
 *  - pick: a switch compiled to a jump table, an indirect jmp: a probe
 *    at its entry is an int3 in the plain build (a jump table could land
 *    in the bytes a jmp replaces), a jmp over the compiler's nop in the
 *    others (no branch lands inside those);
 *  - mix: straight-line arithmetic, more than 5 bytes of it: a jmp
 *    optimised probe in every build.
 */
#include <stdio.h>

__attribute__((noinline)) int pick(int k, int v)
{
	switch (k) {
	case 0: return v + 3;
	case 1: return v * 7;
	case 2: return v - 9;
	case 3: return v ^ 11;
	case 4: return v << 2;
	case 5: return v / 3;
	case 6: return v % 5;
	case 7: return v * v;
	default: return v;
	}
}

__attribute__((noinline)) long mix(long a, long b)
{
	return a * 31 + b * 17 + (a ^ b);
}

int main(int argc, char **argv)
{
	long s = 0;

	(void)argv;
	for (int i = 0; i < 9; i++)
		s = mix(s, pick(i, argc));
	printf("%ld\n", s);
	return 0;
}
