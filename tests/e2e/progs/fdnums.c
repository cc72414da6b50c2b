// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target for "the tracer takes no descriptor number in the traced
 * process": a thread opening and closing a file without pause, checking
 * that each open() returns the lowest free number, while other threads
 * call probed functions.  The kernel's uprobes take no descriptor in the
 * process they trace; a tracer that opens one in it, even for an instant
 * (a socket, a received descriptor, a /proc file it reads), makes an
 * open() of the program that runs at that moment get the next number.
 *
 * Usage: fdnums STOPFILE NTHREADS.  Notes the lowest free number (what
 * open() returns now), starts NTHREADS threads calling square() and
 * twice() in a loop and one thread that opens /dev/null, compares the
 * number with it and closes it, over and over; prints "fdnums: ready".
 * Every thread looks for STOPFILE every 4096 rounds.  Then it prints
 * "fdnums: ok (...)" and exits 0 if every open() got that number and
 * every result was right, else what went wrong and exit status 1.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#define MAX_THREADS 8

static const char *stopfile;
static int lowest;
static long opens, shifted, failed;
static int shifted_to = -1;
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

static void *opener(void *arg)
{
	(void)arg;
	lowest_priority();
	for (long i = 0;; i++) {
		int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			failed++;
		} else {
			if (fd != lowest) {
				shifted++;
				shifted_to = fd;
			}
			close(fd);
		}
		opens++;
		if (!(i & 4095) && !access(stopfile, F_OK))
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t tids[MAX_THREADS + 1];
	long total = 0, bad = 0;
	int n;

	if (argc < 3)
		return 2;
	stopfile = argv[1];
	n = atoi(argv[2]);
	if (n < 1 || n > MAX_THREADS)
		return 2;
	lowest = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (lowest < 0)
		return 1;
	close(lowest);
	for (long t = 0; t < n; t++)
		if (pthread_create(&tids[t], NULL, worker, (void *)t))
			return 1;
	if (pthread_create(&tids[n], NULL, opener, NULL))
		return 1;
	printf("fdnums: ready\n");
	fflush(stdout);
	for (long t = 0; t <= n; t++)
		pthread_join(tids[t], NULL);
	for (long t = 0; t < n; t++) {
		total += calls[t];
		bad += errors[t];
	}
	if (!shifted && !failed && !bad && total && opens) {
		printf("fdnums: ok (%d threads, calls made, every open at the "
		       "lowest free number)\n", n);
		return 0;
	}
	printf("fdnums: %ld of %ld opens not at fd %d (one at %d), %ld "
	       "failed; %ld of %ld results wrong\n", shifted, opens, lowest,
	       shifted_to, failed, bad, total);
	return 1;
}
