// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark target: a loop calling one small function N times.
 *
 *   loop N          prints "<ns for the loop> <N> <checksum>"
 *   loop N floor    the same, each call preceded by the floor's hook
 *                   (floor.h) through a function pointer: the cost of
 *                   recording a hit by hand, in the same loop
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
#include <time.h>

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

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	void (*volatile hook)(uint64_t, uint64_t, uint64_t) = floor_hook;
	long sum = 0;
	long long t0, t1;

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
