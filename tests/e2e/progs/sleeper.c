// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target: a process dprobe attaches to while it sleeps, and which
 * then runs another program.
 *
 *   sleeper         prints "sleeper: ready", sleeps 2 s (a relative
 *                   clock_nanosleep, timed), says whether it slept in
 *                   full, then execs itself as "sleeper child" with
 *                   execv() (the environment as it is then)
 *   sleeper child   work(7), prints what it returned (71)
 *
 * Attaching must not cut the sleep short: a sleep interrupted by a
 * signal handler, or resumed through a restart block the tracer's work
 * reset, returns early with the time left.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

volatile long sink;

__attribute__((noipa)) long work(long a)
{
	sink = a * 10 + 1;
	return sink;
}

static long long ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	struct timespec req = { 2, 0 }, rem = { 0, 0 };
	long long t0;
	int r;

	if (argc > 1 && !strcmp(argv[1], "child")) {
		printf("sleeper: child work(7) = %ld\n", work(7));
		return 0;
	}
	printf("sleeper: ready\n");
	fflush(stdout);
	t0 = ms();
	r = clock_nanosleep(CLOCK_MONOTONIC, 0, &req, &rem);
	if (!r && ms() - t0 >= 1990)
		printf("sleeper: slept in full\n");
	else
		printf("sleeper: woken early (%d) after %lld ms\n", r, ms() - t0);
	fflush(stdout);
	execv(argv[0], (char *[]){ argv[0], "child", NULL });
	perror("sleeper: execv");
	return 1;
}
