// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target: ordinary stacks that end where they naturally end, for
 * the no-false-positive side of --stack's bad-frame mark: leaf() called
 * from main through middle() (the main thread's stack, down to the C
 * library's start code), from a thread through middle() (down to the
 * thread's start), from qsort()'s comparison (through the C library's
 * code without frame pointers), from a signal handler (through the
 * signal frame), and 40 calls deep (cut by the deepest stack kept).
 * Built as the e2e programs are: -O0 keeps frame pointers, -O2 not.
 *
 * Usage: stackends  -- prints "stackends: ok".
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

volatile long sink;

__attribute__((noipa)) long leaf(long x)
{
	sink = x;
	return x + 1;
}

__attribute__((noipa)) long middle(long x)
{
	long r = leaf(x * 2);

	sink = r;
	return r + 1;
}

__attribute__((noipa)) long deep(long n)
{
	long r = n ? deep(n - 1) : leaf(n);

	sink = r;
	return r + 1;
}

static int cmp(const void *a, const void *b)
{
	leaf(3);
	return *(const int *)a - *(const int *)b;
}

static void on_usr1(int sig)
{
	sink = leaf(sig);	/* no tail call: the handler's frame stays */
}

static void *thread(void *arg)
{
	middle((long)arg);
	return NULL;
}

int main(void)
{
	int v[2] = { 2, 1 };
	pthread_t t;

	middle(1);
	if (pthread_create(&t, NULL, thread, (void *)2) ||
	    pthread_join(t, NULL))
		return 1;
	qsort(v, 2, sizeof(v[0]), cmp);		/* one comparison */
	signal(SIGUSR1, on_usr1);
	raise(SIGUSR1);
	deep(40);
	printf("stackends: ok\n");
	return v[0] != 1;
}
