// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target: the ways a program starts another, one after the other.
 *
 *   launch          parent      work(1)
 *                   vfork, execl of "launch child vfork 2"         work(2)
 *                   posix_spawn of "launch child spawn 3"          work(3)
 *                   system("'SELF' child system 4")  (via sh -c)   work(4)
 *                   popen("'SELF' child popen 5", "r") (sh -c)     work(5)
 *                   parent      work(6)
 *
 *   launch shared   children that run in the parent's memory until
 *                   their exec:
 *                   parent      work(1)
 *                   vfork child work(2) (from shared(), no stdio), then
 *                               execl of "launch child vexec 3"    work(3)
 *                   parent      work(4)
 *                   posix_spawn of "launch child spawn 5" (glibc's
 *                               child calls execve() in the
 *                               parent's memory)                   work(5)
 *                   parent      work(6)
 *
 *   launch env      parent      work(1)
 *                   fork child  work(2), then execve of
 *                               "launch child noenv 3" with an empty
 *                               environment                       work(3)
 *                   parent      work(4)
 *                   fork child  execlp of "env -i SELF child envi 5"
 *                               (env(1) runs SELF with an empty
 *                               environment)                      work(5)
 *                   parent      work(6)
 *
 *   launch static ST  ST is this program, statically linked:
 *                   parent      work(1)
 *                   fork child  execv of "ST child static 2"       work(2)
 *                   system("'ST' child system 3")  (via sh -c)     work(3)
 *                   posix_spawn of "ST child late 4": glibc's child
 *                               execs out of the agent's sight; it
 *                               waits (at most 5 s) until a tracer
 *                               has it (TracerPid), then           work(4)
 *                   parent      work(5)
 *
 *   launch child NAME A   say(NAME, A), and "(empty environment)" if so
 *
 * The parent waits for each child before going on (pclose() for popen),
 * so the calls come in the order of their arguments; it prints
 * "launch: NAME child ok" after each, and what it read from popen as
 * "launch: popen gave: LINE".  SELF is argv[0] (run the program by an
 * absolute path), so every process that calls work() is "launch".
 * work(a) returns a * 10 + 1; say() prints it (for every call but the
 * vfork child's work(2)).  Output is flushed before every fork or
 * spawn, so no line is printed twice.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

volatile long sink;

__attribute__((noipa)) long work(long a)
{
	sink = a * 10 + 1;
	return sink;
}

__attribute__((noipa)) static void say(const char *who, long a)
{
	long r = work(a);

	printf("launch: %s work(%ld) = %ld%s\n", who, a, r,
	       environ && environ[0] ? "" : " (empty environment)");
	fflush(stdout);
}

static int status_ok(const char *who, int st)
{
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		printf("launch: %s child failed, status 0x%x\n", who, st);
		return -1;
	}
	printf("launch: %s child ok\n", who);
	fflush(stdout);
	return 0;
}

static int reap(pid_t pid, const char *who)
{
	int st;

	if (pid < 0 || waitpid(pid, &st, 0) != pid) {
		perror(who);
		return -1;
	}
	return status_ok(who, st);
}

__attribute__((noipa)) static int ways(const char *self)
{
	char *sargv[] = { (char *)self, "child", "spawn", "3", NULL };
	char cmd[8192], line[256];
	FILE *f;
	pid_t pid;

	say("parent", 1);
	pid = vfork();
	if (pid == 0) {
		execl(self, self, "child", "vfork", "2", (char *)NULL);
		_exit(127);
	}
	if (reap(pid, "vfork"))
		return 1;
	if (posix_spawn(&pid, self, NULL, NULL, sargv, environ))
		pid = -1;
	if (reap(pid, "posix_spawn"))
		return 1;
	snprintf(cmd, sizeof(cmd), "'%s' child system 4", self);
	if (status_ok("system", system(cmd)))
		return 1;
	snprintf(cmd, sizeof(cmd), "'%s' child popen 5", self);
	f = popen(cmd, "r");
	if (!f) {
		perror("popen");
		return 1;
	}
	while (fgets(line, sizeof(line), f))
		printf("launch: popen gave: %s", line);
	if (status_ok("popen", pclose(f)))
		return 1;
	say("parent", 6);
	return 0;
}

__attribute__((noipa)) static int shared(const char *self)
{
	char *sargv[] = { (char *)self, "child", "spawn", "5", NULL };
	pid_t pid;

	say("parent", 1);
	pid = vfork();
	if (pid == 0) {
		/* a call, no stdio, while it borrows the parent's memory */
		work(2);
		execl(self, self, "child", "vexec", "3", (char *)NULL);
		_exit(127);
	}
	if (reap(pid, "vfork"))
		return 1;
	say("parent", 4);
	if (posix_spawn(&pid, self, NULL, NULL, sargv, environ))
		pid = -1;
	if (reap(pid, "posix_spawn"))
		return 1;
	say("parent", 6);
	return 0;
}

__attribute__((noipa)) static int envless(const char *self)
{
	char *eargv[] = { (char *)self, "child", "noenv", "3", NULL };
	char *empty[] = { NULL };
	pid_t pid;

	say("parent", 1);
	pid = fork();
	if (pid == 0) {
		say("fork", 2);
		execve(self, eargv, empty);
		_exit(127);
	}
	if (reap(pid, "fork"))
		return 1;
	say("parent", 4);
	pid = fork();
	if (pid == 0) {
		execlp("env", "env", "-i", self, "child", "envi", "5",
		       (char *)NULL);
		_exit(127);
	}
	if (reap(pid, "env -i"))
		return 1;
	say("parent", 6);
	return 0;
}

__attribute__((noipa)) static int statics(const char *st)
{
	char *fargv[] = { (char *)st, "child", "static", "2", NULL };
	char *sargv[] = { (char *)st, "child", "late", "4", NULL };
	char cmd[8192];
	pid_t pid;

	say("parent", 1);
	pid = fork();
	if (pid == 0) {
		execv(st, fargv);
		_exit(127);
	}
	if (reap(pid, "fork"))
		return 1;
	snprintf(cmd, sizeof(cmd), "'%s' child system 3", st);
	if (status_ok("system", system(cmd)))
		return 1;
	if (posix_spawn(&pid, st, NULL, NULL, sargv, environ))
		pid = -1;
	if (reap(pid, "posix_spawn"))
		return 1;
	say("parent", 5);
	return 0;
}

/* Whether a tracer has this process (TracerPid in /proc/self/status). */
static int traced(void)
{
	char line[256];
	int pid = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "TracerPid: %d", &pid) == 1)
			break;
	fclose(f);
	return pid != 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "child") &&
	    !strcmp(argv[2], "late")) {
		for (int i = 0; i < 500 && !traced(); i++)
			usleep(10000);
		say(argv[2], strtol(argv[3], NULL, 10));
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "child")) {
		say(argv[2], strtol(argv[3], NULL, 10));
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "shared"))
		return shared(argv[0]);
	if (argc == 2 && !strcmp(argv[1], "env"))
		return envless(argv[0]);
	if (argc == 3 && !strcmp(argv[1], "static"))
		return statics(argv[2]);
	if (argc == 1)
		return ways(argv[0]);
	fprintf(stderr, "usage: launch [shared | env | static ST | child NAME A]\n");
	return 2;
}
