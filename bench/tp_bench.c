// SPDX-License-Identifier: GPL-2.0
/*
 * Per-call cost of an application tracepoint (include/dprobe/tracepoint.h)
 * on agent_bench's loop: work(a, b, s) called N times, only the loop timed.
 *
 *   tp_bench MODE N    prints "<ns for the loop> <N> <checksum>"
 *
 *   base      work() without a tracepoint
 *   disabled  work_tp(), the same with trace_bench_hit(a, b) first, no probe
 *   enabled   work_tp() with a probe that writes the floor's 32-byte record
 *             (rdtsc, an address, the two arguments) to a thread-local ring
 *   empty     work_tp() with a probe that only counts: what the dispatch
 *             costs (the jump, the read side in libdprobe, the call)
 *   floor     work() preceded by the floor's hook through a function
 *             pointer writing the same record (bench/floor.h)
 *
 * Built as tp_bench_nojl with -DDP_TP_NO_JUMP_LABEL, the tracepoint is a
 * load and a branch instead of the patched nop.  The probe counts its
 * calls; a count other than N fails the run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "floor.h"

#define DP_CREATE_TRACE_POINTS
#include <dprobe/tracepoint.h>

DP_TRACE_EVENT(bench, bench_hit,
	TP_PROTO(int a, long b),
	TP_ARGS(a, b),
	TP_FIELDS(tp_field(int, a) tp_field(long, b)))

__attribute__((noipa)) long work(int a, long b, const char *s)
{
	return a + b + s[a & 3];
}

__attribute__((noipa)) long work_tp(int a, long b, const char *s)
{
	trace_bench_hit(a, b);
	return a + b + s[a & 3];
}

static long hits;

static FLOOR_GPR_ONLY void hook(uint64_t ip, uint64_t a, uint64_t b)
{
	floor_record(ip, a, b);
	hits++;
}

static void (*volatile hookp)(uint64_t, uint64_t, uint64_t) = hook;

/* The tracepoint's probe: the same record, the address from its data. */
static FLOOR_GPR_ONLY void record_probe(void *data, int a, long b)
{
	floor_record((uint64_t)(uintptr_t)data, (uint64_t)a, (uint64_t)b);
	hits++;
}

static void count_probe(void *data, int a, long b)
{
	(void)data;
	(void)a;
	(void)b;
	hits++;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "base";
	long n = argc > 2 ? atol(argv[2]) : 1000000, sum = 0, want = 0;
	bool enabled = !strcmp(mode, "enabled"), empty = !strcmp(mode, "empty");
	bool tp = enabled || empty || !strcmp(mode, "disabled");
	bool floor = !strcmp(mode, "floor");
	void (*probe)(void *, int, long) = empty ? count_probe : record_probe;
	long long t0, t1;

	if (!tp && !floor && strcmp(mode, "base")) {
		fprintf(stderr, "tp_bench: unknown mode %s\n", mode);
		return 2;
	}
	if (enabled || empty) {
		int err = register_trace_bench_hit(probe, (void *)work_tp);

		if (err) {
			fprintf(stderr, "tp_bench: cannot register (%d)\n", err);
			return 2;
		}
		want = n;
	} else if (floor) {
		want = n;
	}

	t0 = now_ns();
	if (tp) {
		for (long i = 0; i < n; i++)
			sum += work_tp((int)i, i * 3, "bench");
	} else if (floor) {
		for (long i = 0; i < n; i++) {
			hookp((uint64_t)(uintptr_t)work, (uint64_t)i,
			      (uint64_t)i * 3);
			sum += work((int)i, i * 3, "bench");
		}
	} else {
		for (long i = 0; i < n; i++)
			sum += work((int)i, i * 3, "bench");
	}
	t1 = now_ns();

	if (want && !floor)
		unregister_trace_bench_hit(probe, (void *)work_tp);
	if (hits != want) {
		fprintf(stderr, "tp_bench: %s: %ld hits for %ld calls\n", mode,
			hits, n);
		return 1;
	}
	printf("%lld %ld %ld\n", t1 - t0, n, sum);
	return 0;
}
