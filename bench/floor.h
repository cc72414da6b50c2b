/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The in-process floor of issue 4: what any probe that records must at
 * least do, done by hand.  A hook called through a function pointer
 * writes a 32-byte record (rdtsc, ip, two arguments) into a thread-local
 * ring; a dynamic probe that records the same is measured against it.
 */
#ifndef DPROBE_BENCH_FLOOR_H
#define DPROBE_BENCH_FLOOR_H

#include <stdint.h>
#include <time.h>
#include <x86intrin.h>

#define FLOOR_GPR_ONLY __attribute__((target("general-regs-only")))

struct floor_rec {
	uint64_t ts, ip, a, b;
};

#define FLOOR_RING 4096
static __thread struct floor_rec floor_ring[FLOOR_RING];
static __thread unsigned int floor_head;
static long floor_hits;

static inline FLOOR_GPR_ONLY void floor_record(uint64_t ip, uint64_t a,
					       uint64_t b)
{
	struct floor_rec *r = &floor_ring[floor_head++ & (FLOOR_RING - 1)];

	r->ts = __rdtsc();
	r->ip = ip;
	r->a = a;
	r->b = b;
}

static __attribute__((noinline, unused)) FLOOR_GPR_ONLY void
floor_hook(uint64_t ip, uint64_t a, uint64_t b)
{
	floor_record(ip, a, b);
	floor_hits++;
}

/* CLOCK_MONOTONIC in nanoseconds: what the benchmarks time loops with. */
static inline long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#endif
