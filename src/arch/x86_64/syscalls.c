// SPDX-License-Identifier: GPL-2.0
/* x86-64's system calls (syscalls.h). */
#include <string.h>

#include "arch/x86_64/syscalls.h"

static const struct dp_syscall table[] = {
#include "arch/x86_64/syscall-table.h"
};

#define NSYSCALLS (sizeof(table) / sizeof(table[0]))

size_t dp_syscall_count(void)
{
	return NSYSCALLS;
}

const struct dp_syscall *dp_syscall_at(size_t i)
{
	return i < NSYSCALLS ? &table[i] : NULL;
}

/* The table is sorted by number (gen-syscalls.sh sorts it). */
const struct dp_syscall *dp_syscall_by_nr(long nr)
{
	size_t lo = 0, hi = NSYSCALLS;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (table[mid].nr == nr)
			return &table[mid];
		if (table[mid].nr < nr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct dp_syscall *dp_syscall_by_name(const char *name)
{
	for (size_t i = 0; i < NSYSCALLS; i++)
		if (!strcmp(table[i].name, name))
			return &table[i];
	return NULL;
}

unsigned dp_syscall_nargs(const struct dp_syscall *sc)
{
	unsigned n = 0;

	while (n < DP_SYSCALL_MAX_ARGS && sc->args[n])
		n++;
	return n;
}
