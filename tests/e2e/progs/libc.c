// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target: probes in libc (MOD:SYM with a soname, a path, or a
 * PATH:OFFSET uprobe place).  Calls the libc functions below with fixed
 * arguments; none of them is an IFUNC in glibc, so the symbol is the
 * code that runs.
 *   getenv("E2E_VAR")      (the test sets E2E_VAR=e2e-value)
 *   getenv("E2E_UNSET")
 *   strtol("12345", &end, 10), strtol("-0x1f", &end, 16)
 *   qsort of 8 longs, bsearch for 5 of them, atoi("77")
 * bsearch is called through a pointer: with optimisation <stdlib.h>
 * inlines it (and atoi, into a strtol call).
 */
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

int main(void)
{
	long v[8] = { 42, 7, -3, 19, 0, 88, 7, 5 };
	static const long keys[5] = { 7, 88, 6, -3, 100 };
	const char *e = getenv("E2E_VAR"), *u = getenv("E2E_UNSET");
	char *end;
	long a = strtol("12345", &end, 10), b = strtol("-0x1f", &end, 16);
	void *(*volatile bs)(const void *, const void *, size_t, size_t,
			     int (*)(const void *, const void *)) = bsearch;
	int found = 0;

	qsort(v, 8, sizeof(v[0]), cmp);
	for (int i = 0; i < 5; i++)
		found += bs(&keys[i], v, 8, sizeof(v[0]), cmp) != NULL;
	printf("libc: E2E_VAR=%s E2E_UNSET=%s\n", e ? e : "(null)",
	       u ? u : "(null)");
	printf("libc: %ld %ld %d found, atoi %d\n", a, b, found, atoi("77"));
	printf("libc: sorted %ld %ld %ld %ld %ld %ld %ld %ld\n", v[0], v[1],
	       v[2], v[3], v[4], v[5], v[6], v[7]);
	return 0;
}
