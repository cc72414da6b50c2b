// SPDX-License-Identifier: GPL-2.0
/*
 * The supervisor: dprobe as the user sees it, while its child runs the
 * ptrace engine (supervisor.h says why).  The supervisor only forwards
 * signals and passes the child's exit code on; the child prints
 * everything, as a dprobe without the split would.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/supervisor.h"

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGALRM };
#define NFORWARDED (sizeof(forwarded) / sizeof(forwarded[0]))

/* In the child: the supervisor's pid; 0 in a dprobe without a child. */
static pid_t g_sup;
/* In the supervisor: where signals go; 0 once the child is reaped. */
static volatile sig_atomic_t g_child;

pid_t dp_sup_fork(void)
{
	pid_t sup = getpid(), pid;

	/* what is buffered would be written twice */
	fflush(NULL);
	pid = fork();
	if (pid)
		return pid < 0 ? -errno : pid;
	/* the kernel tells the child when the supervisor dies, however */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() != sup)
		_exit(DP_EXIT_REJECTED);	/* already gone: nothing armed */
	g_sup = sup;
	return 0;
}

bool dp_sup_orphaned(void)
{
	return g_sup && getppid() != g_sup;
}

int dp_sup_signal(void)
{
	return SIGRTMIN + 2;
}

bool dp_sup_signal_ours(const siginfo_t *si)
{
	(void)si;
	return !g_sup || dp_sup_orphaned();
}

int dp_sup_forwarded(const siginfo_t *si)
{
	/* si_pid is the sender's only for a kill()/sigqueue() (si_code <= 0) */
	if (!g_sup || si->si_code != SI_QUEUE || si->si_pid != g_sup)
		return 0;
	return si->si_value.sival_int;
}

/*
 * A queued real-time signal carrying the number: a SIGINT the child
 * already has pending (the terminal's, or `timeout`'s to the process
 * group) would swallow a forwarded SIGINT, and the one the child then
 * sees would be the one it must not count.
 */
static void forward(int sig)
{
	int saved = errno;

	if (g_child > 0)
		sigqueue((pid_t)g_child, dp_sup_signal(),
			 (union sigval){ .sival_int = sig });
	errno = saved;
}

/* The child's wait status as dprobe's exit code. */
static int child_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		fprintf(stderr, "dprobe: the tracing process died of signal %d "
			"(%s)\n", WTERMSIG(status), strsignal(WTERMSIG(status)));
	return DP_EXIT_REJECTED;
}

int dp_sup_wait(pid_t child, const sigset_t *mask)
{
	struct sigaction sa = { .sa_handler = forward };
	sigset_t waiting = *mask, held;
	siginfo_t si;
	int status = 0;

	g_child = child;
	sigemptyset(&held);
	for (size_t i = 0; i < NFORWARDED; i++) {
		sigaction(forwarded[i], &sa, NULL);
		sigdelset(&waiting, forwarded[i]);
		sigaddset(&held, forwarded[i]);
	}
	sigprocmask(SIG_SETMASK, &waiting, NULL);
	/* WNOWAIT: the pid stays the child's until the forwarding is over */
	while (waitid(P_PID, (id_t)child, &si, WEXITED | WNOWAIT) < 0 &&
	       errno == EINTR)
		;
	sigprocmask(SIG_BLOCK, &held, NULL);
	g_child = 0;
	if (waitpid(child, &status, 0) != child) {
		fprintf(stderr, "dprobe: waiting for the tracing process: %s\n",
			strerror(errno));
		return DP_EXIT_REJECTED;
	}
	return child_exit_code(status);
}
