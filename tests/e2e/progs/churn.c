// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target for attaching and detaching over and over to a process whose
 * threads come and go and block signals, as daemons' do (agent-churn).
 *
 * Usage: churn STOPFILE.  Threads, each counting its rounds in a global:
 *   ticker   calls tick() (the probed function), checks what it returns
 *   churner  creates a short-lived thread and joins it, again and again:
 *            thread ids soon wrap around pid_max, and glibc runs a thread
 *            that starts or ends with every signal blocked for a moment
 *   masker   blocks every signal with pthread_sigmask(), sleeps 50 us and
 *            puts its mask back, again and again: a critical section
 *   main     blocks every signal, as a daemon that leaves them to a
 *            sigwait() thread, and sleeps in 10 ms steps until STOPFILE
 *            exists
 * Prints "churn: ready", then "churn: counters ADDR ADDR ADDR" (ticks,
 * churns, masks: for the case to read in /proc/PID/mem), and at the end
 * "churn: ok" if every call returned what it should and tick()'s first
 * bytes are as they were at the start (a probe byte left behind shows as
 * "code CHANGED"); exit status 0 only then.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CODE_BYTES 16

volatile unsigned long ticks, churns, masks, errors;
static volatile int stop;

__attribute__((noipa)) unsigned long tick(unsigned long n)
{
	return n * 3 + 1;
}

static void nap(long ns)
{
	struct timespec ts = { 0, ns };

	nanosleep(&ts, NULL);
}

static void *ticker(void *arg)
{
	for (unsigned long i = 0; !stop; i++) {
		if (tick(i) != i * 3 + 1)
			errors++;
		ticks++;
		if (!(i & 63))
			nap(20000);
	}
	return arg;
}

static void *short_lived(void *arg)
{
	return arg;
}

static void *churner(void *arg)
{
	while (!stop) {
		pthread_t t;

		if (pthread_create(&t, NULL, short_lived, NULL) ||
		    pthread_join(t, NULL))
			errors++;
		churns++;
	}
	return arg;
}

static void *masker(void *arg)
{
	sigset_t all, old, now;

	sigfillset(&all);
	while (!stop) {
		if (pthread_sigmask(SIG_BLOCK, &all, &old))
			errors++;
		nap(50000);
		if (pthread_sigmask(SIG_SETMASK, &old, NULL))
			errors++;
		/* the mask it had, whatever a tracer did meanwhile */
		pthread_sigmask(SIG_SETMASK, NULL, &now);
		if (sigismember(&now, SIGUSR1))
			errors++;
		masks++;
		nap(50000);
	}
	return arg;
}

int main(int argc, char **argv)
{
	void *(*const fns[])(void *) = { ticker, churner, masker };
	unsigned char before[CODE_BYTES];
	pthread_t tids[3];
	sigset_t all;
	int bad;

	if (argc < 2)
		return 2;
	memcpy(before, (const void *)tick, CODE_BYTES);
	for (int i = 0; i < 3; i++)
		if (pthread_create(&tids[i], NULL, fns[i], NULL))
			return 1;
	/* after the threads: they keep the mask main had */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	printf("churn: ready\nchurn: counters %p %p %p\n", (void *)&ticks,
	       (void *)&churns, (void *)&masks);
	fflush(stdout);
	while (access(argv[1], F_OK))
		nap(10000000);
	stop = 1;
	for (int i = 0; i < 3; i++)
		pthread_join(tids[i], NULL);
	bad = errors != 0;
	if (memcmp(before, (const void *)tick, CODE_BYTES)) {
		printf("churn: code CHANGED in tick\n");
		bad = 1;
	}
	printf("churn: %s (%s)\n", bad ? "WRONG" : "ok",
	       ticks && churns && masks ? "every thread ran" : "a thread never ran");
	return bad;
}
