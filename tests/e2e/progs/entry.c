// SPDX-License-Identifier: GPL-2.0
/*
 * Probe places for dprobe show (cases/show.sh), built plain (entry),
 * with -pg -mfentry -mnop-mcount (entryfentry: a 5-byte nop at each
 * function's entry) and with -fpatchable-function-entry=5 (entrypatch:
 * five one-byte nops there).
 *  - pick: a switch compiled to a jump table, an indirect jmp: the
 *    agent reads the table (none of its entries lands in the bytes a jmp
 *    replaces) and optimises; a jmp over the compiler's nop in the other
 *    builds (no branch lands inside those);
 *  - viacall: an indirect call through a register in its first 5 bytes:
 *    it cannot run elsewhere (it would push the detour's address), so a
 *    probe at its entry is an int3 in every build;
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

/* viacall(x, fn): fn(x), through %rax */
__asm__(".text\n.globl viacall\n.type viacall, @function\nviacall:\n"
	"\tmovq %rsi, %rax\n\tcall *%rax\n\tret\n"
	".size viacall, . - viacall\n");

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
