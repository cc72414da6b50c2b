// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target for "detach in the middle": busy threads calling probed
 * functions while the tracer is killed at a random moment.
 *
 * Usage: busy GOFILE NTHREADS NITERS [DONEFILE].  Prints "busy: ready", then waits
 * until GOFILE exists (so the test can attach first), then thread t sums
 * mix(t, i) over i < NITERS; mix() calls step(), both probed.  The sums
 * are fixed numbers (computed below without calling them, for the check),
 * so a lost or repeated call, a corrupted register or a wrong return
 * shows.  Before "ready" it copies the first bytes of step() and mix(),
 * and at the end compares: a breakpoint byte left behind shows as
 * "code CHANGED".  With DONEFILE, the comparison waits until that file
 * exists (the tracer is gone): a fast engine may finish the work while
 * it is still attached.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CODE_BYTES 16

static long niters;
static const char *gofile;
volatile long sink;

__attribute__((noipa)) long step(long t, long i)
{
	sink = i;
	return (i * 7 + t) % 1009;
}

__attribute__((noipa)) long mix(long t, long i)
{
	long r = step(t, i);

	sink = r;
	return r + 1;
}

static void *worker(void *arg)
{
	long t = (long)arg, sum = 0;

	while (access(gofile, F_OK))
		usleep(1000);
	for (long i = 0; i < niters; i++)
		sum += mix(t, i);
	return (void *)sum;
}

int main(int argc, char **argv)
{
	unsigned char before[2][CODE_BYTES];
	const unsigned char *code[2] = { (const void *)step, (const void *)mix };
	pthread_t tids[16];
	int n, bad = 0;

	if (argc < 4)
		return 2;
	gofile = argv[1];
	n = atoi(argv[2]);
	niters = atol(argv[3]);
	if (n < 1 || n > 16)
		return 2;
	for (int k = 0; k < 2; k++)
		memcpy(before[k], code[k], CODE_BYTES);
	printf("busy: ready\n");
	fflush(stdout);
	for (long t = 0; t < n; t++)
		if (pthread_create(&tids[t], NULL, worker, (void *)t))
			return 1;
	for (long t = 0; t < n; t++) {
		void *r;
		long want = 0;

		pthread_join(tids[t], &r);
		for (long i = 0; i < niters; i++)
			want += (i * 7 + t) % 1009 + 1;
		printf("busy: thread %ld sum %s\n", t,
		       (long)r == want ? "ok" : "WRONG");
	}
	while (argc > 4 && access(argv[4], F_OK))
		usleep(1000);
	for (int k = 0; k < 2; k++)
		for (int b = 0; b < CODE_BYTES; b++)
			if (code[k][b] != before[k][b]) {
				printf("busy: code CHANGED: %s+%d is 0x%02x, was 0x%02x\n",
				       k ? "mix" : "step", b, code[k][b],
				       before[k][b]);
				bad = 1;
			}
	if (!bad)
		printf("busy: code intact\n");
	return 0;
}
