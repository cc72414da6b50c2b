// SPDX-License-Identifier: GPL-2.0
/*
 * agent-setuid's listener: sockwatch CMD [ARGS]... runs CMD with
 * DPROBE_AGENT_SOCK=N and watches whether anything talks to N, whatever
 * form the agent reads it in: descriptor N is inherited, one end of a
 * socket pair whose other end sockwatch holds (the pair is sockwatch's,
 * CMD's parent), and the abstract unix address "@N" listens too.  Waits
 * for CMD to end (10 s at most) and half a second more, then prints
 * "sockwatch: no connection" or what came (then CMD, which would wait
 * for an answer, is killed), and CMD's exit status.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A listener on "@<n>" for some n in [200, 1000) that is a free descriptor. */
static int listen_any(int *n)
{
	srand((unsigned)time(NULL) ^ (unsigned)getpid());
	for (int tries = 0; tries < 100; tries++) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), len;

		*n = 200 + rand() % 800;
		len = snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "%d", *n);
		if (fd >= 0 && fcntl(*n, F_GETFD) < 0 &&
		    !bind(fd, (struct sockaddr *)&sa,
			  (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len)) &&
		    !listen(fd, 8))
			return fd;
		if (fd >= 0)
			close(fd);
	}
	return -1;
}

/* Up to @ms for a connection on @lfd or a message on @mine: 1 if one. */
static int watch(int lfd, int mine, int ms)
{
	struct pollfd p[2] = { { lfd, POLLIN, 0 }, { mine, POLLIN, 0 } };
	char buf[256];
	ssize_t len;

	if (poll(p, 2, ms) <= 0)
		return 0;
	if (p[0].revents & POLLIN) {
		printf("sockwatch: a connection to the abstract address\n");
		return 1;
	}
	len = recv(mine, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	if (len <= 0)
		return 0;
	buf[len] = '\0';
	printf("sockwatch: a message on the inherited socket: %.40s\n", buf);
	return 1;
}

int main(int argc, char **argv)
{
	int sv[2], n, lfd, status = 0, talked = 0;
	char num[16];
	pid_t pid;

	if (argc < 2 || (lfd = listen_any(&n)) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return 2;
	snprintf(num, sizeof(num), "%d", n);
	fflush(stdout);
	pid = fork();
	if (!pid) {
		dup2(sv[1], n);		/* without close-on-exec */
		setenv("DPROBE_AGENT_SOCK", num, 1);
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	close(sv[1]);
	for (int ms = 0; ms < 10000 && !talked; ms += 50) {
		talked = watch(lfd, sv[0], 50);
		if (waitpid(pid, &status, WNOHANG) == pid) {
			talked = talked || watch(lfd, sv[0], 500);
			pid = 0;
			break;
		}
	}
	if (pid > 0) {
		/* an agent that talked waits for an answer: no more */
		if (talked)
			kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	if (!talked)
		printf("sockwatch: no connection\n");
	printf("sockwatch: exit=%d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return 0;
}
