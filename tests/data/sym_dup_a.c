// SPDX-License-Identifier: GPL-2.0
/*
 * With sym_dup_b.c: two static functions named dup_helper in different
 * translation units, so the name alone is ambiguous (NON_UNIQ_SYMBOL).
 */
#include <stdio.h>

int dup_b(int x);

__attribute__((noinline)) static int dup_helper(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int dup_a(int x)
{
	return dup_helper(x) + 2;
}

int main(int argc, char **argv)
{
	(void)argv;
	printf("%d\n", dup_a(argc) + dup_b(argc));
	return 0;
}
