// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target: a pre-forking server.
 *
 *   prefork [SCALE]
 *
 * The parent calls handle(0) once ("listening"), prints "prefork: 4
 * workers" and forks 4 workers.  They wait on a pipe until the parent
 * has forked all of them and closed its end, so they run at the same
 * time; worker k (1..4) then calls handle(k) SCALE * k times (SCALE
 * defaults to 1000) and exits 0 only if the returns add up to
 * SCALE * k * k (handle(k) returns k).  The parent waits for the
 * workers in order and prints "prefork: worker k: ok" for each (or what
 * went wrong, exit 1).  Only the parent prints, so the output is fixed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define WORKERS 4

volatile long sink;

__attribute__((noipa)) long handle(long k)
{
	sink = k;
	return sink;
}

__attribute__((noipa)) static int worker(int go, long k, long scale)
{
	long i, sum = 0;
	char c;

	while (read(go, &c, 1) > 0)
		;
	for (i = 0; i < scale * k; i++)
		sum += handle(k);
	return sum == scale * k * k ? 0 : 1;
}

int main(int argc, char **argv)
{
	long scale = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
	pid_t pids[WORKERS];
	int go[2], k, st, bad = 0;

	handle(0);
	printf("prefork: %d workers\n", WORKERS);
	fflush(stdout);
	if (pipe(go)) {
		perror("pipe");
		return 1;
	}
	for (k = 1; k <= WORKERS; k++) {
		pids[k - 1] = fork();
		if (pids[k - 1] == 0) {
			close(go[1]);
			_exit(worker(go[0], k, scale));
		}
		if (pids[k - 1] < 0) {
			perror("fork");
			return 1;
		}
	}
	close(go[0]);
	close(go[1]);
	for (k = 1; k <= WORKERS; k++) {
		if (waitpid(pids[k - 1], &st, 0) != pids[k - 1]) {
			perror("waitpid");
			return 1;
		}
		if (WIFEXITED(st) && !WEXITSTATUS(st)) {
			printf("prefork: worker %d: ok\n", k);
		} else {
			printf("prefork: worker %d: failed, status 0x%x\n", k, st);
			bad = 1;
		}
	}
	return bad;
}
