// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target: threads calling a probed function concurrently.
 *
 * Usage: threads NTHREADS NCALLS [named].  Thread t (0-based) calls
 * tick(t) NCALLS times; tick(t) returns t + 1, so the total printed is
 * NCALLS * NTHREADS * (NTHREADS + 1) / 2.  With "named", thread t names
 * itself "worker-<t>" before its first call (its comm in trace lines).
 * All threads start together at a barrier.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

volatile long sink;
static long ncalls;
static int named;
static pthread_barrier_t start;

__attribute__((noipa)) long tick(long t)
{
	sink = t;
	return t + 1;
}

static void *worker(void *arg)
{
	long t = (long)arg, sum = 0;

	if (named) {
		char name[16];

		snprintf(name, sizeof(name), "worker-%ld", t);
		pthread_setname_np(pthread_self(), name);
	}
	pthread_barrier_wait(&start);
	for (long i = 0; i < ncalls; i++)
		sum += tick(t);
	return (void *)sum;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 8;
	pthread_t tids[64];
	long total = 0;

	ncalls = argc > 2 ? atol(argv[2]) : 100000;
	named = argc > 3 && !strcmp(argv[3], "named");
	if (n < 1 || n > 64)
		return 2;
	pthread_barrier_init(&start, NULL, n);
	for (long t = 0; t < n; t++)
		if (pthread_create(&tids[t], NULL, worker, (void *)t))
			return 1;
	for (int t = 0; t < n; t++) {
		void *r;

		pthread_join(tids[t], &r);
		total += (long)r;
	}
	printf("threads: %d x %ld calls, total %ld\n", n, ncalls, total);
	return 0;
}
