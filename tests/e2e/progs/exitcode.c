// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target: exit statuses.  Usage: exitcode CODE | exitcode -SIG.
 * Calls work(CODE or SIG) once, then exits with CODE or kills itself
 * with SIG (default action restored first).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

volatile long sink;

__attribute__((noipa)) long work(long a)
{
	sink = a;
	return a;
}

int main(int argc, char **argv)
{
	long v = argc > 1 ? atol(argv[1]) : 0;

	if (v < 0) {
		work(-v);
		fflush(stdout);
		signal((int)-v, SIG_DFL);
		raise((int)-v);
		return 99;
	}
	work(v);
	return (int)v;
}
