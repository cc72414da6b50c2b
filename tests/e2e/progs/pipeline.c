// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target: a stage of a shell pipeline, run as
 *
 *   sh -c 'pipeline gen N | pipeline sq | cat'
 *
 *   pipeline gen N   for i = 1..N: step(1, i), which returns i; prints it
 *   pipeline sq      for each number v read from stdin: step(2, v), which
 *                    returns v * v; prints it
 *
 * Every call goes through emit(), so step() has one call site (its return
 * probe's place).  Both stages run at the same time, so only the calls of
 * one stage are in a fixed order; what reaches cat is fixed: the squares
 * of 1..N, one a line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

volatile long sink;

__attribute__((noipa)) long step(long stage, long v)
{
	sink = stage == 2 ? v * v : v;
	return sink;
}

__attribute__((noipa)) static void emit(long stage, long v)
{
	printf("%ld\n", step(stage, v));
}

int main(int argc, char **argv)
{
	char line[64];
	long i, n;

	if (argc == 3 && !strcmp(argv[1], "gen")) {
		n = strtol(argv[2], NULL, 10);
		for (i = 1; i <= n; i++)
			emit(1, i);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "sq")) {
		while (fgets(line, sizeof(line), stdin))
			emit(2, strtol(line, NULL, 10));
		return 0;
	}
	fprintf(stderr, "usage: pipeline gen N | pipeline sq\n");
	return 2;
}
