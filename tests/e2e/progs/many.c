// SPDX-License-Identifier: GPL-2.0
/*
 * 1,000 functions, fn1000 .. fn1999, each called three times through a
 * table, then a clean exit: a probe on every one gives 1,000 probe
 * locations (agent-many).  Every body differs (its own constant), so the
 * compiler cannot fold them into one.  Prints the sum of the results,
 * which only the program's own arithmetic decides.
 */
#include <stdio.h>

#define FN(a, b, c) \
	__attribute__((noinline, noclone)) long fn1##a##b##c(long x) \
	{ return x * 3 + 1##a##b##c; }
#define FN10(a, b) FN(a, b, 0) FN(a, b, 1) FN(a, b, 2) FN(a, b, 3) \
	FN(a, b, 4) FN(a, b, 5) FN(a, b, 6) FN(a, b, 7) FN(a, b, 8) FN(a, b, 9)
#define FN100(a) FN10(a, 0) FN10(a, 1) FN10(a, 2) FN10(a, 3) FN10(a, 4) \
	FN10(a, 5) FN10(a, 6) FN10(a, 7) FN10(a, 8) FN10(a, 9)

#define PT(a, b, c) fn1##a##b##c,
#define PT10(a, b) PT(a, b, 0) PT(a, b, 1) PT(a, b, 2) PT(a, b, 3) \
	PT(a, b, 4) PT(a, b, 5) PT(a, b, 6) PT(a, b, 7) PT(a, b, 8) PT(a, b, 9)
#define PT100(a) PT10(a, 0) PT10(a, 1) PT10(a, 2) PT10(a, 3) PT10(a, 4) \
	PT10(a, 5) PT10(a, 6) PT10(a, 7) PT10(a, 8) PT10(a, 9)

FN100(0) FN100(1) FN100(2) FN100(3) FN100(4)
FN100(5) FN100(6) FN100(7) FN100(8) FN100(9)

static long (*volatile table[1000])(long) = {
	PT100(0) PT100(1) PT100(2) PT100(3) PT100(4)
	PT100(5) PT100(6) PT100(7) PT100(8) PT100(9)
};

int main(void)
{
	long sum = 0;

	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 1000; i++)
			sum += table[i](round);
	printf("many: sum %ld\n", sum);
	return 0;
}
