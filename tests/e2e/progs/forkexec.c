// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target: fork, vfork and exec children.
 *
 *   parent          work(1)
 *   fork child      work(2), then execs this program as "forkexec exec"
 *   exec'd child    work(3), exit 0
 *   parent          waits, work(4)
 *   vfork child     execs this program as "forkexec vexec" at once
 *   exec'd child    work(5), exit 0
 *   parent          waits, work(6)
 *
 * Children exec argv[0] (run it by path), so their comm stays "forkexec".
 * The parent waits for each child before going on, so the order of the
 * calls is fixed.  Each process prints what work() returned (a * 10 + 1)
 * and flushes before forking, so no line is printed twice.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

volatile long sink;

__attribute__((noipa)) long work(long a)
{
	sink = a * 10 + 1;
	return sink;
}

__attribute__((noipa)) static void say(const char *who, long a)
{
	printf("forkexec: %s work(%ld) = %ld\n", who, a, work(a));
	fflush(stdout);
}

static int reap(pid_t pid, const char *who)
{
	int st;

	if (pid < 0 || waitpid(pid, &st, 0) != pid) {
		perror(who);
		return -1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		printf("forkexec: %s child failed, status 0x%x\n", who, st);
		return -1;
	}
	printf("forkexec: %s child ok\n", who);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	char *self = argv[0];
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "exec")) {
		say("exec", 3);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "vexec")) {
		say("vexec", 5);
		return 0;
	}
	say("parent", 1);
	pid = fork();
	if (pid == 0) {
		say("fork", 2);
		execl(self, self, "exec", (char *)NULL);
		_exit(127);
	}
	if (reap(pid, "fork"))
		return 1;
	say("parent", 4);
	pid = vfork();
	if (pid == 0) {
		execl(self, self, "vexec", (char *)NULL);
		_exit(127);
	}
	if (reap(pid, "vfork"))
		return 1;
	say("parent", 6);
	return 0;
}
