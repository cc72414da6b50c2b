/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hit path's clock: a timestamp and the CPU number for every record,
 * without a system call on any CPU model where the kernel gives a way.
 *
 * Timestamps are either TSC ticks (when the TSC is invariant: dprobe maps
 * them to its own CLOCK_MONOTONIC, see src/engine/inproc/reader.c) or
 * CLOCK_MONOTONIC nanoseconds read through the vDSO.  In order of cost:
 *
 *   time                          CPU number
 *   rdtsc                         rdpid (TSC_AUX)
 *   rdtscp                        (the same instruction)
 *   rdtsc                         rseq's cpu_id, else the vDSO's getcpu
 *   vDSO clock_gettime            the same
 *   clock_gettime system call     (only if the vDSO lacks the function)
 *
 * DPROBE_AGENT_CLOCK, a debugging switch read once (never under
 * AT_SECURE), can only take choices away, so it can make the clock
 * slower, never unsafe: a comma-separated list of no-rdtscp, no-rdpid,
 * no-tsc, no-rseq, no-vdso.
 */
#ifndef DPROBE_AGENT_CLOCK_H
#define DPROBE_AGENT_CLOCK_H

#include <stdint.h>
#include <time.h>

#include "engine/agent/agent.h"

/* Zero, the value before dp_clock_setup(), is the one safe anywhere. */
enum dp_clock_time {
	DP_CLOCK_SYSCALL,		/* system call, dp_clock_cpu() */
	DP_CLOCK_TSC_RDPID,		/* rdtsc, CPU from rdpid */
	DP_CLOCK_RDTSCP,		/* both from rdtscp */
	DP_CLOCK_TSC,			/* rdtsc, CPU by dp_clock_cpu() */
	DP_CLOCK_VDSO,			/* vDSO CLOCK_MONOTONIC, dp_clock_cpu() */
};

enum dp_clock_cpu {
	DP_CLOCK_CPU_SYSCALL,
	DP_CLOCK_CPU_RSEQ,		/* the thread's struct rseq */
	DP_CLOCK_CPU_VDSO,		/* __vdso_getcpu (lsl or rdpid) */
};

struct dp_clock {
	uint8_t time, cpu;		/* enum dp_clock_time, _cpu */
	long rseq_cpu;			/* %fs offset of rseq's cpu_id */
	int (*vdso_gettime)(clockid_t, struct timespec *);
	long (*vdso_getcpu)(unsigned *, unsigned *, void *);
};

/* Set by dp_clock_setup(), read-only afterwards. */
extern struct dp_clock dp_clock DP_HIDDEN;

/* Choose the clock (once; any thread). */
DP_HIDDEN void dp_clock_setup(void);

/* "tsc" if stamps are TSC ticks, else "mono" (the HELLO message). */
DP_HIDDEN const char *dp_clock_base(void);

/* The slow ends of the hit path, out of line. */
DP_HIDDEN uint32_t dp_clock_cpu_slow(void);
DP_HIDDEN uint64_t dp_clock_mono(uint32_t *cpu);

/* The CPU we run on: rseq's cpu_id (-1 or -2 when this thread has no
 * rseq area registered), else the vDSO. */
static inline uint32_t dp_clock_cpu(void)
{
	if (__builtin_expect(dp_clock.cpu == DP_CLOCK_CPU_RSEQ, 1)) {
		uint32_t c;

		__asm__ volatile("movl %%fs:(%1), %0"
				 : "=r"(c) : "r"(dp_clock.rseq_cpu));
		if (__builtin_expect(c < 0x80000000u, 1))
			return c;
	}
	return dp_clock_cpu_slow();
}

/* The hit's timestamp, and its CPU in *@cpu. */
static inline uint64_t dp_clock_now(uint32_t *cpu)
{
	uint32_t lo, hi, aux;

	if (__builtin_expect(dp_clock.time == DP_CLOCK_TSC_RDPID, 1)) {
		uint64_t id;

		__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
		__asm__ volatile("rdpid %0" : "=r"(id));
		*cpu = (uint32_t)id & 0xfff;
		return (uint64_t)hi << 32 | lo;
	}
	if (dp_clock.time == DP_CLOCK_RDTSCP) {
		__asm__ volatile("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
		*cpu = aux & 0xfff;
		return (uint64_t)hi << 32 | lo;
	}
	if (__builtin_expect(dp_clock.time != DP_CLOCK_TSC, 0))
		return dp_clock_mono(cpu);
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	*cpu = dp_clock_cpu();
	return (uint64_t)hi << 32 | lo;
}

/* A stamp alone, without the CPU (a call's start, DP_AGENT_F_LAT). */
static inline uint64_t dp_clock_stamp(void)
{
	uint32_t lo, hi, cpu;

	if (__builtin_expect(dp_clock.time == DP_CLOCK_TSC_RDPID ||
			     dp_clock.time == DP_CLOCK_RDTSCP ||
			     dp_clock.time == DP_CLOCK_TSC, 1)) {
		__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
		return (uint64_t)hi << 32 | lo;
	}
	return dp_clock_mono(&cpu);
}

#endif
