// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target that starts children without pause while a tracer comes and
 * goes (agent-spawn): glibc's posix_spawn(), system() and popen() run
 * their child on the parent's memory (clone with CLONE_VM | CLONE_VFORK)
 * with every signal blocked until it execs, and that child calls libc's
 * sigprocmask(): an int3 of a tracer there kills it.
 *
 * Usage: spawner STOPFILE.  Two threads, each counting its rounds:
 *   spawner  starts /bin/true with posix_spawn(), posix_spawnp() with a
 *            mask and default actions (as system() does), system(),
 *            popen() and vfork() + execve(), in turn, and waits for it
 *   ticker   calls tick() (the probed function), checks what it returns
 * Prints "spawner: ready", then "spawner: counters ADDR ADDR" (children,
 * ticks: for the case to read in /proc/PID/mem), and at the end
 * "spawner: ok (every child exited 0, every way ran)", or each way's
 * children and how many did not exit 0; exit status 0 only if all did.
 */
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum { SPAWN, SPAWNP_ATTR, SYSTEM, POPEN, VFORK, NWAYS };

static const char *const way_name[NWAYS] = {
	"posix_spawn", "posix_spawnp", "system", "popen", "vfork"
};

volatile unsigned long children, ticks, errors;
static unsigned long started[NWAYS], failed[NWAYS];
static int last_status[NWAYS];
static volatile int stop;

__attribute__((noipa)) unsigned long tick(unsigned long n)
{
	return n * 5 + 2;
}

static void nap(long ns)
{
	struct timespec ts = { 0, ns };

	nanosleep(&ts, NULL);
}

static void *ticker(void *arg)
{
	for (unsigned long i = 0; !stop; i++) {
		if (tick(i) != i * 5 + 2)
			errors++;
		ticks++;
		nap(100000);
	}
	return arg;
}

static int wait_child(pid_t pid)
{
	int st;

	if (pid <= 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return st;
}

static int by_spawn(char *const argv[])
{
	pid_t pid;

	if (posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ))
		return -1;
	return wait_child(pid);
}

/* with a mask and default actions, the two that run sigprocmask() in
 * the child a second time */
static int by_spawnp_attr(char *const argv[])
{
	posix_spawnattr_t a;
	sigset_t none, dfl;
	pid_t pid;
	int err;

	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGINT);
	sigaddset(&dfl, SIGQUIT);
	posix_spawnattr_init(&a);
	posix_spawnattr_setsigmask(&a, &none);
	posix_spawnattr_setsigdefault(&a, &dfl);
	posix_spawnattr_setflags(&a, POSIX_SPAWN_SETSIGMASK |
				 POSIX_SPAWN_SETSIGDEF);
	err = posix_spawnp(&pid, "true", NULL, &a, argv, environ);
	posix_spawnattr_destroy(&a);
	return err ? -1 : wait_child(pid);
}

static int by_popen(void)
{
	FILE *f = popen("exec /bin/true", "r");

	return f ? pclose(f) : -1;
}

static int by_vfork(char *const argv[])
{
	pid_t pid = vfork();

	if (!pid) {
		execve("/bin/true", argv, environ);
		_exit(127);
	}
	return wait_child(pid);
}

static int one_child(int way)
{
	char *argv[] = { "true", NULL };

	switch (way) {
	case SPAWN: return by_spawn(argv);
	case SPAWNP_ATTR: return by_spawnp_attr(argv);
	case SYSTEM: return system("exec /bin/true");
	case POPEN: return by_popen();
	default: return by_vfork(argv);
	}
}

static void *spawner(void *arg)
{
	for (unsigned long i = 0; !stop; i++) {
		int way = (int)(i % NWAYS), st = one_child(way);

		started[way]++;
		if (st) {
			failed[way]++;
			last_status[way] = st;
		}
		children++;
	}
	return arg;
}

static int report(void)
{
	int bad = errors != 0;

	for (int w = 0; w < NWAYS; w++)
		bad |= failed[w] || !started[w];
	if (!bad) {
		printf("spawner: ok (every child exited 0, every way ran)\n");
		return 0;
	}
	for (int w = 0; w < NWAYS; w++)
		printf("spawner: %s: %lu children, %lu failed (last status 0x%x)\n",
		       way_name[w], started[w], failed[w], last_status[w]);
	if (errors)
		printf("spawner: %lu wrong tick() results\n", errors);
	return 1;
}

int main(int argc, char **argv)
{
	pthread_t t[2];

	if (argc < 2)
		return 2;
	if (pthread_create(&t[0], NULL, spawner, NULL) ||
	    pthread_create(&t[1], NULL, ticker, NULL))
		return 1;
	printf("spawner: ready\nspawner: counters %p %p\n", (void *)&children,
	       (void *)&ticks);
	fflush(stdout);
	while (access(argv[1], F_OK))
		nap(10000000);
	stop = 1;
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	return report();
}
