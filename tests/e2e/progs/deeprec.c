// SPDX-License-Identifier: GPL-2.0
/*
 * Five threads (main and four workers) each recurse 200 calls deep into
 * down() and meet at a barrier at the bottom: 1005 calls of one function
 * in flight at once, more than any pool of return instances a function
 * gets (r10 by default for kprobe_events, 64 for dprobe's tracers before
 * they kept a return stack per thread).  Prints the sum of the depths.
 */
#include <pthread.h>
#include <stdio.h>

#define DEPTH 200
#define WORKERS 4

static pthread_barrier_t bottom;

__attribute__((noipa)) long down(long n)
{
	long r;

	if (n == 0) {
		pthread_barrier_wait(&bottom);
		return 0;
	}
	r = down(n - 1);
	__asm__ volatile("" : "+r"(r));	/* not a tail call, not a loop */
	return r + 1;
}

static void *worker(void *arg)
{
	(void)arg;
	return (void *)down(DEPTH);
}

int main(void)
{
	pthread_t t[WORKERS];
	long sum;
	void *r;

	pthread_barrier_init(&bottom, NULL, WORKERS + 1);
	for (int i = 0; i < WORKERS; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	sum = down(DEPTH);
	for (int i = 0; i < WORKERS; i++) {
		pthread_join(t[i], &r);
		sum += (long)r;
	}
	printf("deeprec: %ld\n", sum);
	return 0;
}
