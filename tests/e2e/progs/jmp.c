// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target: longjmp across frames that have a return probe pending.
 *
 * Rounds i = 0..24 each call outer(i) -> inner(i) from one call site in
 * main, except round 12, which calls deeper(5).  inner longjmps back to
 * main when i is odd, so in rounds 1, 3, ..., 23 neither outer nor inner
 * returns; in the even rounds inner returns i * 10 and outer that + 1.
 * deeper(d) recurses down to d = 0 and longjmps from there: six nested
 * frames abandoned at once.  Twelve abandoned frames of outer and of
 * inner are more than a return probe's default MAXACTIVE (10), so a
 * tracer that kept the stale instances would run out of them and miss
 * the returns of the last even rounds.
 *
 * Output: one line per round, then the total, 1696:
 *   returns  sum of 10i + 1 over even i != 12      = 1452
 *   longjmp  sum of odd i < 24 (the value passed)  =  144
 *   deeper   longjmp value                         =  100
 */
#include <setjmp.h>
#include <stdio.h>

#define ROUNDS 25

static jmp_buf env;
volatile long sink;

__attribute__((noipa)) long inner(long i)
{
	if (i & 1)
		longjmp(env, (int)i);
	sink = i * 10;
	return sink;
}

__attribute__((noipa)) long outer(long i)
{
	long r = inner(i);

	sink = r + 1;
	return sink;
}

__attribute__((noipa)) long deeper(long depth)
{
	long r;

	if (depth < 0)		/* never: keeps a path that returns */
		return depth;
	if (depth == 0)
		longjmp(env, 100);
	r = deeper(depth - 1);
	sink = r;
	return r;
}

int main(void)
{
	long total = 0;

	for (volatile long i = 0; i < ROUNDS; i++) {
		int v = setjmp(env);

		if (v) {
			printf("jmp: round %ld longjmp %d\n", (long)i, v);
			total += v;
			continue;
		}
		if (i == 12) {
			deeper(5);
			continue;
		}
		total += outer(i);
		printf("jmp: round %ld returned\n", (long)i);
	}
	printf("jmp: total %ld\n", total);
	return 0;
}
