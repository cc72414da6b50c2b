// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target for attaching with -p: it waits for the test before doing
 * anything worth tracing.
 *
 * Usage: waiter GOFILE N [GOFILE2 N2]
 *   prints "waiter: ready", waits until GOFILE exists, calls work(i) for
 *   i = 1..N, prints "waiter: phase 1 done"; with GOFILE2, waits for it
 *   and calls work(i) for i = N+1..N+N2.  work(i) = i * i.
 * Usage: waiter --ticks N MS
 *   prints "waiter: ready", then calls work(i) for i = 1..N, sleeping MS
 *   milliseconds before each call.
 * The file polls sleep 2 ms; nothing else depends on time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

volatile long sink;

__attribute__((noipa)) long work(long i)
{
	sink = i * i;
	return sink;
}

static void wait_for(const char *path)
{
	while (access(path, F_OK))
		usleep(2000);
}

__attribute__((noipa)) static long calls(long from, long to)
{
	long sum = 0;

	for (long i = from; i <= to; i++)
		sum += work(i);
	return sum;
}

int main(int argc, char **argv)
{
	long n, sum;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "--ticks")) {
		long ms = atol(argv[3]);

		n = atol(argv[2]);
		printf("waiter: ready\n");
		sum = 0;
		for (long i = 1; i <= n; i++) {
			usleep(ms * 1000);
			sum += work(i);
		}
		printf("waiter: %ld ticks, sum %ld\n", n, sum);
		return 0;
	}
	if (argc != 3 && argc != 5)
		return 2;
	n = atol(argv[2]);
	printf("waiter: ready\n");
	wait_for(argv[1]);
	sum = calls(1, n);
	printf("waiter: phase 1 done, sum %ld\n", sum);
	if (argc == 5) {
		wait_for(argv[3]);
		sum += calls(n + 1, n + atol(argv[4]));
		printf("waiter: phase 2 done, sum %ld\n", sum);
	}
	return 0;
}
