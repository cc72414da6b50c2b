// SPDX-License-Identifier: GPL-2.0
/*
 * Choosing the hit path's clock (see clock.h), and its out-of-line ends.
 *
 * The choice is made once, on the control thread, from CPUID, the vDSO
 * the kernel mapped and glibc's rseq registration; the hit path then
 * reads one byte to know which instructions to run.  A system call is
 * left only where the kernel offers nothing else, and then said once.
 */
#include <cpuid.h>
#include <linux/rseq.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "engine/agent/clock.h"
#include "engine/agent/vdso.h"

/* glibc >= 2.35 registers an rseq area per thread and says where it is;
 * weak, so that an older or another libc just has none. */
extern const ptrdiff_t __rseq_offset
	__attribute__((weak, visibility("default")));
extern const unsigned int __rseq_size
	__attribute__((weak, visibility("default")));

struct dp_clock dp_clock;

/* What the CPU offers, for the choice and for dprobe_agent_clock();
 * tsc_segv: the program made rdtsc and rdtscp fault (PR_SET_TSC). */
static struct {
	bool rdtscp, rdpid, invariant, tsc_segv;
} cpu_has;

/* Choices DPROBE_AGENT_CLOCK takes away. */
enum {
	NO_RDTSCP = 1, NO_RDPID = 2, NO_TSC = 4, NO_RSEQ = 8, NO_VDSO = 16,
};

static void read_cpuid(void)
{
	unsigned a, b, c, d;

	cpu_has.rdtscp = __get_cpuid(0x80000001, &a, &b, &c, &d) &&
			 (d & (1u << 27));
	/* the same rate on every CPU and in every power state: dprobe
	 * turns ticks into CLOCK_MONOTONIC ns with one scale */
	cpu_has.invariant = __get_cpuid(0x80000007, &a, &b, &c, &d) &&
			    (d & (1u << 8));
	cpu_has.rdpid = __get_cpuid_count(7, 0, &a, &b, &c, &d) &&
			(c & (1u << 22));
}

/* prctl(PR_SET_TSC, PR_TSC_SIGSEGV) made rdtsc and rdtscp raise SIGSEGV
 * in this process (rr does so, and it is inherited across fork and
 * exec): the hit path must not run them.  A raw system call, like every
 * other of the agent's, not libc's prctl() a user may probe. */
static bool tsc_faults(void)
{
	int mode = PR_TSC_ENABLE;

	return !dp_raw_syscall(SYS_prctl, PR_GET_TSC, (long)&mode, 0) &&
	       mode == PR_TSC_SIGSEGV;
}

/* The debugging switch: unknown words are ignored, as is the whole
 * variable in a set-user-ID or set-capability program. */
static unsigned read_switch(void)
{
	static const struct { const char *word; unsigned bit; } words[] = {
		{ "no-rdtscp", NO_RDTSCP }, { "no-rdpid", NO_RDPID },
		{ "no-tsc", NO_TSC }, { "no-rseq", NO_RSEQ },
		{ "no-vdso", NO_VDSO },
	};
	const char *v = secure_getenv("DPROBE_AGENT_CLOCK");
	unsigned off = 0;

	while (v && *v) {
		size_t n = strcspn(v, ",");

		for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
			if (strlen(words[i].word) == n &&
			    !memcmp(words[i].word, v, n))
				off |= words[i].bit;
		v += n + (v[n] == ',');
	}
	return off;
}

/* rseq's cpu_id, if glibc registered an area and this thread's is live. */
static bool rseq_usable(void)
{
	uint32_t c;

	if (!&__rseq_offset || !&__rseq_size ||
	    __rseq_size < offsetof(struct rseq, cpu_id) + sizeof(c))
		return false;
	dp_clock.rseq_cpu = (long)__rseq_offset +
			    (long)offsetof(struct rseq, cpu_id);
	__asm__ volatile("movl %%fs:(%1), %0" : "=r"(c) : "r"(dp_clock.rseq_cpu));
	return c < 0x80000000u;
}

static void choose_cpu(unsigned off)
{
	if (!(off & NO_RSEQ) && rseq_usable())
		dp_clock.cpu = DP_CLOCK_CPU_RSEQ;
	else if (dp_clock.vdso_getcpu)
		dp_clock.cpu = DP_CLOCK_CPU_VDSO;
	else
		dp_clock.cpu = DP_CLOCK_CPU_SYSCALL;
}

static void choose_time(unsigned off)
{
	bool tsc = cpu_has.invariant && !cpu_has.tsc_segv && !(off & NO_TSC);
	bool rdtscp = tsc && cpu_has.rdtscp && !(off & NO_RDTSCP);

	/* rdpid reads TSC_AUX, which Linux sets where rdtscp exists */
	if (rdtscp && cpu_has.rdpid && !(off & NO_RDPID))
		dp_clock.time = DP_CLOCK_TSC_RDPID;
	else if (rdtscp)
		dp_clock.time = DP_CLOCK_RDTSCP;
	else if (tsc)
		dp_clock.time = DP_CLOCK_TSC;
	else if (dp_clock.vdso_gettime)
		dp_clock.time = DP_CLOCK_VDSO;
	else
		dp_clock.time = DP_CLOCK_SYSCALL;
}

static void clock_choose(void)
{
	unsigned off = read_switch();

	read_cpuid();
	cpu_has.tsc_segv = tsc_faults();
	/* the vDSO's clock_gettime reads the TSC too (a tsc or kvm-clock
	 * clocksource): where rdtsc faults it would fault in it */
	if (!(off & NO_VDSO) && !cpu_has.tsc_segv) {
		dp_clock.vdso_gettime = (int (*)(clockid_t, struct timespec *))
			dp_vdso_sym("__vdso_clock_gettime");
		dp_clock.vdso_getcpu = (long (*)(unsigned *, unsigned *, void *))
			dp_vdso_sym("__vdso_getcpu");
	}
	choose_cpu(off);
	choose_time(off);
	/* said once, and only when nothing but our switch forced it */
	if (dp_clock.time == DP_CLOCK_SYSCALL && !(off & NO_VDSO))
		dp_warn(cpu_has.tsc_segv ?
			"libdprobe: rdtsc faults (PR_TSC_SIGSEGV), in the vDSO "
			"too: every hit makes a clock_gettime system call\n" :
			"libdprobe: no invariant TSC and no __vdso_clock_gettime: "
			"every hit makes a clock_gettime system call\n");
	if (dp_clock.cpu == DP_CLOCK_CPU_SYSCALL && !(off & NO_VDSO) &&
	    dp_clock.time != DP_CLOCK_TSC_RDPID &&
	    dp_clock.time != DP_CLOCK_RDTSCP)
		dp_warn("libdprobe: no rseq area and no __vdso_getcpu: "
			"every hit makes a getcpu system call\n");
}

void dp_clock_setup(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, clock_choose);
}

const char *dp_clock_base(void)
{
	dp_clock_setup();
	return dp_clock.time == DP_CLOCK_VDSO ||
	       dp_clock.time == DP_CLOCK_SYSCALL ? "mono" : "tsc";
}

/* ---- the hit path's slow ends -------------------------------------------- */

uint32_t dp_clock_cpu_slow(void)
{
	unsigned c = 0;

	if (dp_clock.vdso_getcpu)
		dp_clock.vdso_getcpu(&c, NULL, NULL);
	else
		dp_raw_syscall(SYS_getcpu, (long)&c, 0, 0);
	return c;
}

uint64_t dp_clock_mono(uint32_t *cpu)
{
	struct timespec ts = { 0 };

	if (dp_clock.time == DP_CLOCK_VDSO)
		dp_clock.vdso_gettime(CLOCK_MONOTONIC, &ts);
	else
		dp_raw_syscall(SYS_clock_gettime, CLOCK_MONOTONIC, (long)&ts, 0);
	*cpu = dp_clock_cpu();
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- what was chosen, for bench/run.sh and the tests --------------------- */

static const char *time_name(void)
{
	switch (dp_clock.time) {
	case DP_CLOCK_TSC_RDPID: return "tsc + rdpid";
	case DP_CLOCK_RDTSCP: return "rdtscp";
	case DP_CLOCK_TSC: return "tsc";
	case DP_CLOCK_VDSO: return "vdso clock_gettime";
	default: return "clock_gettime syscall";
	}
}

static const char *cpu_name(void)
{
	if (dp_clock.time == DP_CLOCK_TSC_RDPID || dp_clock.time == DP_CLOCK_RDTSCP)
		return "";
	switch (dp_clock.cpu) {
	case DP_CLOCK_CPU_RSEQ: return " + rseq cpu_id";
	case DP_CLOCK_CPU_VDSO: return " + vdso getcpu";
	default: return " + getcpu syscall";
	}
}

static char clock_line[160];

static void fill_line(void)
{
	snprintf(clock_line, sizeof(clock_line),
		 "%s%s (rdtscp %s, rdpid %s, invariant tsc %s%s)",
		 time_name(), cpu_name(), cpu_has.rdtscp ? "yes" : "no",
		 cpu_has.rdpid ? "yes" : "no", cpu_has.invariant ? "yes" : "no",
		 cpu_has.tsc_segv ? ", rdtsc faults: PR_TSC_SIGSEGV" : "");
}

/*
 * One line: the clock the hit path uses and the CPU features it was
 * chosen from (bench/run.sh prints it).  Not part of any API.
 */
DP_EXPORT const char *dprobe_agent_clock(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	dp_clock_setup();
	pthread_once(&once, fill_line);
	return clock_line;
}
