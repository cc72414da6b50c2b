// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target for a detach while a signal handler interrupted code running
 * out of line: the handler's frame on the stack holds an address in the
 * ptrace engine's slot page, so that page must stay mapped after the
 * detach, or the handler's return would crash the program.
 *
 * Usage: sigslot HELDFILE RELEASEFILE.  Prints "sigslot: ready", then the
 * main thread calls hop(i) in a loop that calls nothing else while a
 * second thread sends it SIGUSR1 every 100 us (from when the loop runs:
 * before, the thread may be in the C library, outside the program).  The
 * handler looks at the interrupted %rip: outside the program's code
 * (hop's first instruction running in a slot, the tracer having resumed
 * the thread there with the signal pending) it creates HELDFILE and waits
 * in the handler until RELEASEFILE exists, then returns into the slot.
 * The loop then runs 100,000 more calls and the program prints
 * "sigslot: ok" if every result was right ("sigslot: WRONG" otherwise).
 * If that never happens within 60 s it prints "sigslot: never held" and
 * exits 1.
 */
#define _GNU_SOURCE	/* REG_RIP */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

extern const char __executable_start[], etext[];

static const char *heldfile, *releasefile;
static volatile sig_atomic_t held, looping, gave_up;
static pthread_t main_thread;
volatile long sink;

__attribute__((noipa)) long hop(long i)
{
	sink = i;
	return i * 5;
}

static void on_usr1(int sig, siginfo_t *si, void *uc_)
{
	uintptr_t ip = ((ucontext_t *)uc_)->uc_mcontext.gregs[REG_RIP];
	int fd;

	(void)sig;
	(void)si;
	/* in the loop, the thread runs nothing but main() and hop() */
	if (!looping || held || gave_up ||
	    (ip >= (uintptr_t)__executable_start && ip < (uintptr_t)etext))
		return;
	held = 1;
	fd = open(heldfile, O_WRONLY | O_CREAT, 0644);
	if (fd >= 0)
		close(fd);
	while (access(releasefile, F_OK))
		usleep(1000);
}

static void *sender(void *arg)
{
	time_t start = time(NULL);

	(void)arg;
	while (!looping)
		usleep(100);
	while (!held) {
		/* the time is read here: main's loop calls nothing outside */
		if (time(NULL) > start + 60) {
			gave_up = 1;
			break;
		}
		pthread_kill(main_thread, SIGUSR1);
		usleep(100);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO };
	long bad = 0, after = 0;
	pthread_t t;

	if (argc != 3)
		return 2;
	heldfile = argv[1];
	releasefile = argv[2];
	main_thread = pthread_self();
	sigaction(SIGUSR1, &sa, NULL);
	printf("sigslot: ready\n");
	fflush(stdout);
	if (pthread_create(&t, NULL, sender, NULL))
		return 1;
	looping = 1;
	for (long i = 0; after < 100000; i++) {
		if (hop(i & 0xffff) != (i & 0xffff) * 5)
			bad++;
		if (held)
			after++;
		else if (gave_up)
			break;
	}
	pthread_join(t, NULL);
	if (!held) {
		printf("sigslot: never held\n");
		return 1;
	}
	printf("sigslot: %s\n", bad ? "WRONG" : "ok");
	return bad ? 1 : 0;
}
