// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target: a program that talks on both its outputs.  Calls work(7)
 * once, between a line on stdout and a line on stderr, so that
 * --quiet-target can be seen to take both away (quiet-target).
 */
#include <stdio.h>

volatile long sink;

__attribute__((noipa)) long work(long a)
{
	sink = a;
	return a;
}

int main(void)
{
	printf("noisy: to stdout\n");
	fflush(stdout);
	work(7);
	fprintf(stderr, "noisy: to stderr\n");
	return 0;
}
