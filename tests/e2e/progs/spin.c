// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target for attaching and detaching over and over: threads calling
 * probed functions until told to stop, checking every result.
 *
 * Usage: spin STOPFILE NTHREADS [nocode].  Prints "spin: ready" once its threads
 * run; each thread calls square(i) and twice(i) in a loop, checks each
 * result (a corrupted register or return shows as an error), and every
 * 4096 calls looks for STOPFILE.  Then main compares the first bytes of
 * both functions with a copy taken before: a probe byte left behind
 * shows as "code CHANGED" (not with "nocode": under a tracer that armed
 * its probes before main(), the copy has them).  Exit status 0 only if
 * all is well.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>
#include <unistd.h>

#define CODE_BYTES 16
#define MAX_THREADS 16

static const char *stopfile;
static long calls[MAX_THREADS], errors[MAX_THREADS];
volatile long sink;

__attribute__((noipa)) long square(long i)
{
	sink = i;
	return i * i;
}

__attribute__((noipa)) long twice(long i)
{
	return square(i) + square(i);
}

/*
 * A busy thread runs at the lowest priority (nice 19): it only soaks up
 * CPU time nobody else wants, so the test stages that run beside it on
 * a shared machine are not slowed.  Only the busy threads: the main
 * thread, from which a tracer's injected code starts its own thread,
 * keeps its priority, so attaching and detaching stay as quick.
 */
static void lowest_priority(void)
{
	/* on Linux, "0" is the calling thread alone: a thread has a
	 * nice value of its own */
	setpriority(PRIO_PROCESS, 0, 19);
}

static void *worker(void *arg)
{
	long t = (long)arg;

	lowest_priority();
	for (long i = 0;; i++) {
		long v = i & 0xffff;

		if (square(v) != v * v || twice(v) != 2 * v * v)
			errors[t]++;
		calls[t]++;
		if (!(i & 4095) && !access(stopfile, F_OK))
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const unsigned char *code[2] = { (const void *)square,
					 (const void *)twice };
	unsigned char before[2][CODE_BYTES];
	pthread_t tids[MAX_THREADS];
	long total = 0, bad = 0;
	int n, nocode = argc > 3 && !strcmp(argv[3], "nocode");

	if (argc < 3)
		return 2;
	stopfile = argv[1];
	n = atoi(argv[2]);
	if (n < 1 || n > MAX_THREADS)
		return 2;
	for (int k = 0; k < 2; k++)
		memcpy(before[k], code[k], CODE_BYTES);
	for (long t = 0; t < n; t++)
		if (pthread_create(&tids[t], NULL, worker, (void *)t))
			return 1;
	printf("spin: ready\n");
	fflush(stdout);
	for (long t = 0; t < n; t++) {
		pthread_join(tids[t], NULL);
		total += calls[t];
		bad += errors[t];
	}
	for (int k = 0; k < 2 && !nocode; k++)
		if (memcmp(before[k], code[k], CODE_BYTES)) {
			printf("spin: code CHANGED in %s\n", k ? "twice" : "square");
			bad++;
		}
	printf("spin: %s (%d threads, %s)\n", bad ? "WRONG" : "ok", n,
	       total > 0 ? "calls made" : "no calls");
	return bad ? 1 : 0;
}
