// SPDX-License-Identifier: GPL-2.0
/*
 * The library the inject unit tests load into tests/data/inject_target.c.
 * inject_fn() writes "inject_fn N ARG" to the target's stdout (N counts
 * its calls: a second load is the same object) and returns 4200 + N;
 * inject_crash() dereferences NULL.  Built with -DINJECT_SLOW, a
 * constructor first sleeps 600 ms, then writes "slow ctor done".
 */
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static int calls;

int inject_fn(const char *arg)
{
	char buf[300];
	int n = snprintf(buf, sizeof(buf), "inject_fn %d %s\n", ++calls,
			 arg ? arg : "(null)");

	if (write(1, buf, n) != n)
		return -1;
	return 4200 + calls;
}

int inject_crash(const char *arg)
{
	return *(volatile const char *)(uintptr_t)(arg ? 0 : 8);
}

#ifdef INJECT_SLOW
__attribute__((constructor)) static void slow(void)
{
	struct timespec ts = { 0, 600000000 };

	nanosleep(&ts, NULL);
	if (write(1, "slow ctor done\n", 15) != 15)
		calls = -1;
}
#endif
