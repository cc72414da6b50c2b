// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark target: a loop calling one small function N times.
 *
 *   loop N          prints "<ns for the loop> <N> <checksum>"
 *   loop N floor    the same, each call preceded by the floor's hook
 *                   (floor.h) through a function pointer: the cost of
 *                   recording a hit by hand, in the same loop
 *   loop N workers  a pre-forking server's shape: 4 worker processes
 *                   forked first, each making its share of the N calls;
 *                   each times its loop in CPU time (the workers share
 *                   the CPUs), and the parent prints the sum over them:
 *                   ns per call is per worker, whatever the CPU count
 *
 * Built with -DBENCH_TP (and -ldprobe), work() also fires the application
 * tracepoint bench:hit(a, b) (include/dprobe/tracepoint.h): a nop until
 * something enables it.
 *
 * work() is kept a real call (noipa: not inlined, not specialised), its
 * first instruction an ordinary one (what a probe displaces), and its
 * result used, so the loop cannot be optimised away.  Only the loop is
 * timed (CLOCK_MONOTONIC), not start-up or a tracer's attach, so
 * (probed - unprobed) / N is the cost of one hit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "floor.h"

#ifdef BENCH_TP
#define DP_CREATE_TRACE_POINTS
#include <dprobe/tracepoint.h>

DP_TRACE_EVENT(bench, hit,
	TP_PROTO(int a, long b),
	TP_ARGS(a, b),
	TP_FIELDS(tp_field(int, a) tp_field(long, b)))
#endif

__attribute__((noipa)) long work(int a, long b, const char *s)
{
#ifdef BENCH_TP
	trace_hit(a, b);
#endif
	return a + b + s[a & 3];
}

#define WORKERS 4

static long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Each worker's loop time and checksum, in memory the parent reads. */
static int workers(long n)
{
	long long *ns = mmap(NULL, 2 * WORKERS * sizeof(*ns),
			     PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			     -1, 0);
	long long total = 0, sum = 0;
	int ok = 1;

	if (ns == MAP_FAILED)
		return 1;
	for (int w = 0; w < WORKERS; w++) {
		long calls = n / WORKERS + (w ? 0 : n % WORKERS);
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (!pid) {
			long long t0 = cpu_ns(), s = 0;

			for (long i = 0; i < calls; i++)
				s += work((int)i, i * 3, "bench");
			ns[w] = cpu_ns() - t0;
			ns[WORKERS + w] = s;
			_exit(0);
		}
	}
	for (int w = 0; w < WORKERS; w++) {
		int st;

		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			ok = 0;
	}
	for (int w = 0; w < WORKERS; w++) {
		total += ns[w];
		sum += ns[WORKERS + w];
	}
	printf("%lld %ld %lld\n", total, n, sum);
	return !ok;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	void (*volatile hook)(uint64_t, uint64_t, uint64_t) = floor_hook;
	long sum = 0;
	long long t0, t1;

	if (argc > 2 && !strcmp(argv[2], "workers"))
		return workers(n);
	if (argc > 2 && !strcmp(argv[2], "floor")) {
		t0 = now_ns();
		for (long i = 0; i < n; i++) {
			hook((uint64_t)(uintptr_t)work, (uint64_t)i,
			     (uint64_t)(i * 3));
			sum += work((int)i, i * 3, "bench");
		}
		t1 = now_ns();
		if (floor_hits != n)
			return 1;
		printf("%lld %ld %ld\n", t1 - t0, n, sum);
		return 0;
	}
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		sum += work((int)i, i * 3, "bench");
	t1 = now_ns();
	printf("%lld %ld %ld\n", t1 - t0, n, sum);
	return 0;
}
