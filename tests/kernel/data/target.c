// SPDX-License-Identifier: GPL-2.0
/*
 * Probe target for the kernel differential test.  The probes are only
 * defined, never enabled, so nothing here runs under a probe; the functions
 * just give the corpus real file offsets (entry points, a mid-instruction
 * byte) and globals (a USDT-style semaphore for the reference counter).
 */
#include <stdio.h>
#include <string.h>

struct S {
	int a;
	unsigned short b;
	char name[16];
	const char *p;
};

/* A 16-bit counter the kernel may bump: the shape of a USDT semaphore. */
unsigned short dpk_semaphore;
unsigned short dpk_semaphore2;
long dpk_global = 0x12345678;

__attribute__((noinline)) long probe_me(long x, const char *s, struct S *st,
					int neg)
{
	return x + (long)strlen(s) + st->a + neg;
}

__attribute__((noinline)) void *retnull(void)
{
	return NULL;
}

__attribute__((noinline)) int leaf(int a, int b)
{
	return a * b + dpk_semaphore;
}

int main(int argc, char **argv)
{
	struct S st = { -5, 0xbeef, "structname", "ptrstr" };
	long sum = 0;

	(void)argv;
	for (int i = 0; i < argc; i++)
		sum += probe_me(i + 40, "hello world", &st, -7);
	sum += leaf(argc, 3) + (retnull() != NULL) + dpk_global;
	printf("%ld\n", sum);
	return 0;
}
