// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target: a make-like tree of processes, each running its children
 * through `sh -c`, as make runs recipes.
 *
 *   spawntree              the root: id 1, level 0
 *   spawntree LEVEL ID     a node at LEVEL with id ID
 *
 * Each node first calls job(ID, n) for n = 1..LEVEL+1, from do_jobs()
 * (job's only call site; job returns ID * 10 + n), and prints
 * "spawntree: ID: K jobs, sum S"; then it runs its children one after
 * the other, waiting for each:
 *
 *   level 0 (id 1)   fork + exec of /bin/sh -c "'SELF' 1 11", then the
 *                    same for 12 (one shell per child, as make -j1 runs
 *                    one recipe line per shell)
 *   level 1 (id X)   posix_spawn of /bin/sh -c "'SELF' 2 X1 && 'SELF' 2 X2"
 *                    (one shell runs both grandchildren, in sequence)
 *   level 2          no children
 *
 * and prints "spawntree: ID: children ok" (or what failed, exit 1).  So
 * the jobs run in pre-order, 1, 11, 111, 112, 12, 121, 122, never two at
 * once: 1 + 2 * 2 + 4 * 3 = 17 calls of job.  SELF is argv[0] (run the
 * program by an absolute path), so every node's comm is "spawntree".
 * Output is flushed before every spawn, so no line is printed twice.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

volatile long sink;

__attribute__((noipa)) long job(long id, long n)
{
	sink = id * 10 + n;
	return sink;
}

/* the only call site of job() */
__attribute__((noipa)) static long do_jobs(long id, long count)
{
	long n, sum = 0;

	for (n = 1; n <= count; n++)
		sum += job(id, n);
	return sum;
}

static int reap(pid_t pid, long id, const char *cmd)
{
	int st;

	if (pid < 0 || waitpid(pid, &st, 0) != pid) {
		printf("spawntree: %ld: cannot run %s\n", id, cmd);
		return -1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		printf("spawntree: %ld: %s failed, status 0x%x\n", id, cmd, st);
		return -1;
	}
	return 0;
}

/* sh -c CMD through fork and exec */
static int run_fork(long id, const char *cmd)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return reap(pid, id, cmd);
}

/* sh -c CMD through posix_spawn */
static int run_spawn(long id, const char *cmd)
{
	char *argv[] = { "sh", "-c", (char *)cmd, NULL };
	pid_t pid;

	fflush(stdout);
	if (posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ))
		pid = -1;
	return reap(pid, id, cmd);
}

int main(int argc, char **argv)
{
	const char *self = argv[0];
	long level = 0, id = 1, n, sum;
	char cmd[8192];
	int bad = 0;

	if (argc == 3) {
		level = strtol(argv[1], NULL, 10);
		id = strtol(argv[2], NULL, 10);
	}
	sum = do_jobs(id, level + 1);
	printf("spawntree: %ld: %ld jobs, sum %ld\n", id, level + 1, sum);
	if (level == 0) {
		for (n = 1; n <= 2 && !bad; n++) {
			snprintf(cmd, sizeof(cmd), "'%s' 1 %ld", self, id * 10 + n);
			bad = run_fork(id, cmd);
		}
	} else if (level == 1) {
		snprintf(cmd, sizeof(cmd), "'%s' 2 %ld && '%s' 2 %ld",
			 self, id * 10 + 1, self, id * 10 + 2);
		bad = run_spawn(id, cmd);
	}
	if (level < 2)
		printf("spawntree: %ld: children %s\n", id, bad ? "failed" : "ok");
	return bad ? 1 : 0;
}
