// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target: three allocations too large for the thread cache, so that
 * each goes through glibc's _int_malloc(av, bytes), a static function
 * named only in libc's debug file (libc6-dbg): 5000, 70000 and 300000
 * bytes, each freed; "mallocs: done" at the end.
 */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	static const size_t sizes[] = { 5000, 70000, 300000 };

	for (int i = 0; i < 3; i++) {
		char *p = malloc(sizes[i]);

		if (!p)
			return 1;
		p[0] = 1;
		free(p);
	}
	puts("mallocs: done");
	return 0;
}
