// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target: a function with inlined copies.  scale(v, k) is inlined
 * into use1() (k = 2) and use2() (k = 3) and also has an out-of-line
 * copy, called through a pointer (k = 5); each caller prints what it
 * passed and got:
 *
 *   use1: scale(5, 2) = 11
 *   use2: scale(7, 3) = 23        (scale + 1)
 *   ptr: scale(4, 5) = 21
 */
#include <stdio.h>

static inline __attribute__((always_inline)) int scale(int v, int k)
{
	return v * k + 1;
}

__attribute__((noipa)) int use1(int v)
{
	int r = scale(v, 2);

	printf("use1: scale(%d, 2) = %d\n", v, r);
	return r;
}

__attribute__((noipa)) int use2(int v)
{
	int r = scale(v, 3) + 1;

	printf("use2: scale(%d, 3) = %d\n", v, r);
	return r;
}

int (*volatile scale_ptr)(int, int) = scale;

int main(void)
{
	int r;

	use1(5);
	use2(7);
	r = scale_ptr(4, 5);
	printf("ptr: scale(4, 5) = %d\n", r);
	return 0;
}
