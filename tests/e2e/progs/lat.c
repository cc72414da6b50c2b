// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target of `dprobe latency`: functions whose durations are known
 * from below (a sleep never ends early), in one run:
 *
 *   nap(ms)     sleeps ms milliseconds: called 5 times with 3 ms by main
 *               and 3 times by a second thread, after main's
 *   rec(d)      rec(d - 1), then sleeps 3 ms: rec(3) lasts at least
 *               12 ms, rec(2) 9, rec(1) 6 and rec(0) 3 (4 calls)
 *   jumper(i)   odd i: sleeps 40 ms and longjmps back to main, never
 *               returning; even i: returns at once.  8 rounds: 4 calls
 *               return, each in microseconds; a tool that paired a return
 *               with the entry of a call left by longjmp would see 40 ms
 *
 * Usage: lat           all of the above
 *        lat quick     one nap(1)
 *        lat beat N    N calls of beat(k), 10 ms apart, k cycling through
 *                      0 1 1 2 2 2 (for `dprobe top` and `count`: of 240
 *                      calls, 40 with k = 0, 80 with 1, 120 with 2)
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static jmp_buf env;
volatile long sink;

/* not probed: the sleeping itself */
static void zz(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

__attribute__((noipa)) long nap(long ms)
{
	zz(ms);
	return ms;
}

__attribute__((noipa)) long rec(long d)
{
	long r = d > 0 ? rec(d - 1) : 0;

	zz(3);
	sink = r + 1;
	return sink;
}

__attribute__((noipa)) long jumper(long i)
{
	if (i & 1) {
		zz(40);
		longjmp(env, 1);
	}
	sink = i;
	return i;
}

__attribute__((noipa)) long beat(long k)
{
	sink = k;
	return k;
}

static void *napper(void *arg)
{
	(void)arg;
	for (int i = 0; i < 3; i++)
		nap(3);
	return NULL;
}

int main(int argc, char **argv)
{
	volatile int round;
	pthread_t t;

	if (argc > 2 && !strcmp(argv[1], "beat")) {
		static const long cycle[] = { 0, 1, 1, 2, 2, 2 };
		long n = atol(argv[2]);

		for (long i = 0; i < n; i++) {
			beat(cycle[i % 6]);
			zz(10);
		}
		printf("lat: %ld beats\n", n);
		return 0;
	}
	if (argc > 1) {
		nap(1);
		printf("lat: quick\n");
		return 0;
	}
	for (int i = 0; i < 5; i++)
		nap(3);
	if (pthread_create(&t, NULL, napper, NULL) || pthread_join(t, NULL))
		return 1;
	rec(3);
	for (round = 0; round < 8; round++)
		if (!setjmp(env))
			jumper(round);
	printf("lat: done\n");
	return 0;
}
