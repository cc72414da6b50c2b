// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target: a program with its own SIGTRAP, SIGSEGV and other signal
 * handlers.  A tracer that uses int3 and ptrace must deliver every one of
 * these signals to the program unchanged (same signal, same si_code,
 * same si_value), and must tell the program's own int3 from its probes.
 *
 * Each handler calls note(sig, code), the function the case probes, and
 * the program prints what it saw:
 *   raise(SIGTRAP)          SIGTRAP (5),  si_code SI_TKILL (-6)
 *   int3 instruction        SIGTRAP (5),  si_code SI_KERNEL (128)
 *   store to address 16     SIGSEGV (11), si_code SEGV_MAPERR (1), addr 16,
 *                           handler siglongjmps out
 *   kill(self, SIGUSR1) x3  SIGUSR1 (10), si_code SI_USER (0)
 *   sigqueue(SIGRTMIN, 1234)  SIGRTMIN (34), si_code SI_QUEUE (-1), value 1234
 *   a child exiting with 7  SIGCHLD (17), si_code CLD_EXITED (1), status 7
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static sigjmp_buf segv_env;
static volatile int notes;
static volatile int *volatile bad = (volatile int *)16;
volatile long sink;

__attribute__((noipa)) long note(long sig, long code)
{
	notes++;
	sink = sig * 1000 + code;
	return sink;
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	note(sig, si->si_code);
	switch (sig) {
	case SIGSEGV:
		printf("signals: SIGSEGV code=%d addr=%lu\n", si->si_code,
		       (unsigned long)si->si_addr);
		siglongjmp(segv_env, 1);
	case SIGCHLD:
		printf("signals: SIGCHLD code=%d status=%d\n", si->si_code,
		       si->si_status);
		break;
	default:
		if (sig == SIGRTMIN)
			printf("signals: SIGRTMIN code=%d value=%d\n",
			       si->si_code, si->si_value.sival_int);
		else
			printf("signals: signal %d code=%d\n", sig,
			       si->si_code);
	}
}

int main(void)
{
	int sigs[] = { SIGTRAP, SIGSEGV, SIGUSR1, SIGRTMIN, SIGCHLD };
	struct sigaction sa;
	pid_t pid;

	setvbuf(stdout, NULL, _IONBF, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);

	raise(SIGTRAP);
	__asm__ volatile("int3");
	if (!sigsetjmp(segv_env, 1))
		*bad = 1;
	for (int i = 0; i < 3; i++)
		kill(getpid(), SIGUSR1);
	sigqueue(getpid(), SIGRTMIN, (union sigval){ .sival_int = 1234 });

	/* Block SIGCHLD until the child is gone, so it arrives exactly once,
	 * here, whatever the scheduling. */
	sigset_t chld, old;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);
	pid = fork();
	if (pid == 0)
		_exit(7);
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	waitid(P_PID, pid, &si, WEXITED | WNOWAIT);
	sigprocmask(SIG_SETMASK, &old, NULL);
	waitpid(pid, NULL, 0);

	printf("signals: %d notes\n", notes);
	return 0;
}
