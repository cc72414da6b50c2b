// SPDX-License-Identifier: GPL-2.0
/*
 * src/engine/agent/vdso.c on this kernel's vDSO, built into this program
 * by tests/agent/hit_syscalls.sh:
 *
 *   found NAME yes|no        dp_vdso_sym(NAME) found a usable function
 *   named NAME yes|no        the image holds the name at all
 *
 * The agent calls __vdso_clock_gettime and __vdso_getcpu; getrandom
 * (6.11 and later) uses SSE registers and must be refused.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "engine/agent/vdso.h"

/* The [vdso] mapping holds @name's bytes (the dynamic string table). */
static int named(const char *name)
{
	char line[256];
	unsigned long lo, hi;
	FILE *f = fopen("/proc/self/maps", "r");
	int hit = 0;

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") &&
		    sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			hit = memmem((void *)lo, hi - lo, name, strlen(name) + 1) != NULL;
	if (f)
		fclose(f);
	return hit;
}

int main(void)
{
	static const char *names[] = {
		"__vdso_clock_gettime", "__vdso_getcpu", "__vdso_getrandom",
	};

	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		printf("found %s %s\nnamed %s %s\n", names[i],
		       dp_vdso_sym(names[i]) ? "yes" : "no", names[i],
		       named(names[i]) ? "yes" : "no");
	return 0;
}
