// SPDX-License-Identifier: GPL-2.0
/*
 * Target for the sym/ unit tests: a few functions of different shapes, a
 * data object, and names close to each other for the "did you mean" list.
 * Never run by the tests, only read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sym_counter = 3;
const char sym_greeting[] = "hello";

__attribute__((noinline)) int sym_work(int a, const char *name)
{
	int n = (int)strlen(name);

	sym_counter += a;
	return n * a + sym_counter;
}

__attribute__((noinline)) int sym_worker(int a)
{
	return sym_work(a, sym_greeting) + 1;
}

__attribute__((noinline)) static long sym_loop(long n)
{
	long s = 0;

	for (long i = 0; i < n; i++)
		s += i * 0x12345678L ^ (s >> 3);
	return s;
}

int main(int argc, char **argv)
{
	int a = argc > 1 ? atoi(argv[1]) : 2;

	printf("%d %ld\n", sym_worker(a), sym_loop(a * 10));
	return 0;
}
