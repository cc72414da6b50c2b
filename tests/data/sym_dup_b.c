// SPDX-License-Identifier: GPL-2.0
/* The second static dup_helper; see sym_dup_a.c. */

__attribute__((noinline)) static int dup_helper(int x)
{
	return x * 7 - 5;
}

__attribute__((noinline)) int dup_b(int x)
{
	return dup_helper(x) - 4;
}
