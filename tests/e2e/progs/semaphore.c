// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target for uprobe reference counters: an SDT-style semaphore
 * without <sys/sdt.h>.  The semaphore is an unsigned short in a section
 * ".probes" of the writable data, as SDT semaphores are; a tracer that
 * arms a probe declared with "(REF)" at its file offset adds 1 to it, and
 * takes the 1 back when the probe goes.  work() prints the value it sees,
 * so the output shows what the program saw with and without probes.
 *
 * Usage: semaphore
 *   calls() runs other(i) and work(i) for i = 1..3 (work(i) = i * 10,
 *   other(i) = i + 100) and the sum is printed.
 * Usage: semaphore fork
 *   work(1); a fork child calls work(2) and exits; the parent waits for
 *   it, then calls work(3).
 * Usage: semaphore GOFILE GOFILE2
 *   prints "semaphore: ready sem=N", waits until GOFILE exists, calls
 *   work(1), waits for GOFILE2, calls work(2).
 * The file polls sleep 2 ms; nothing else depends on time.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* what a tracer counts in: read on every use, never cached */
volatile unsigned short semaphore __attribute__((section(".probes"), used));

__attribute__((noipa)) long work(long i)
{
	printf("semaphore: work(%ld) sem=%hu\n", i, semaphore);
	return i * 10;
}

__attribute__((noipa)) long other(long i)
{
	return i + 100;
}

/* the one caller of work() in the default run: its return site */
__attribute__((noipa)) static long calls(long n)
{
	long sum = 0;

	for (long i = 1; i <= n; i++)
		sum += other(i) + work(i);
	return sum;
}

static void wait_for(const char *path)
{
	while (access(path, F_OK))
		usleep(2000);
}

static int forked(void)
{
	int status;
	pid_t pid;

	work(1);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		work(2);
		fflush(stdout);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || status)
		return 1;
	work(3);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "fork"))
		return forked();
	if (argc == 3) {
		printf("semaphore: ready sem=%hu\n", semaphore);
		wait_for(argv[1]);
		work(1);
		wait_for(argv[2]);
		work(2);
		return 0;
	}
	if (argc != 1)
		return 2;
	printf("semaphore: sum %ld\n", calls(3));
	return 0;
}
