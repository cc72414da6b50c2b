// SPDX-License-Identifier: GPL-2.0
/*
 * Per-hit cost of libdprobe's int3 probes, in process, on bench/loop.c's
 * loop: work(a, b, s) called N times, only the loop timed.
 *
 *   agent_bench MODE N    prints "<ns for the loop> <N> <checksum>"
 *
 *   base      no probe
 *   kprobe    a kprobe on work() with an empty pre_handler
 *   post      the same with an empty post_handler too (a second trap
 *             after the instruction, run out of line)
 *   kretprobe a kretprobe on work() with an empty handler (entry trap +
 *             the return trampoline), KPROBE_FLAG_NOOPT
 *   floor     no probe: the loop calls a hook through a function pointer
 *             that writes a 32-byte record (rdtsc, ip, two arguments) to a
 *             thread-local array, then work(): the floor of the issue
 *   opt       a jump-optimised kprobe on work(), empty pre_handler
 *   optrec    the same, the pre_handler writing the floor's record from
 *             regs (ip, di, si)
 *   optsimd   optrec without KPROBE_FLAG_NOSIMD: the detour saves the
 *             extended (SIMD/x87) state around the handler
 *   optret    an entry+return pair: a kretprobe on work(), its entry
 *             jump-optimised, whose entry_handler writes the floor's record
 *             (ip, di, si) and whose handler writes another (ip, ax, sp)
 *   optrets   optret with KPROBE_FLAG_RP_THREAD: the instance from the
 *             thread's return stack, not the kretprobe's pool
 * (opt, optrec, optret: the handlers are built with general-regs-only
 * and say so with KPROBE_FLAG_NOSIMD.)  A run of an opt mode fails when
 * the probe is not optimised.
 *
 * The handlers count their calls; a count other than N fails the run.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <stdint.h>
#include <x86intrin.h>

#include <dprobe/kprobes.h>

#include "floor.h"

#define GPR_ONLY FLOOR_GPR_ONLY

__attribute__((noipa)) long work(int a, long b, const char *s)
{
	return a + b + s[a & 3];
}

static long hits;

static int on_pre(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	(void)regs;
	hits++;
	return 0;
}

/* The record of the floor (floor.h), as the handlers write it. */
#define record floor_record

static GPR_ONLY void hook(uint64_t ip, uint64_t a, uint64_t b)
{
	record(ip, a, b);
	hits++;
}

static void (*volatile hookp)(uint64_t, uint64_t, uint64_t) = hook;

static GPR_ONLY int on_pre_nosimd(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	(void)regs;
	hits++;
	return 0;
}

static GPR_ONLY int on_record(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	record(regs->ip, regs->di, regs->si);
	hits++;
	return 0;
}

static void on_post(struct kprobe *p, struct pt_regs *regs, unsigned long f)
{
	(void)p;
	(void)regs;
	(void)f;
}

static int on_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	(void)ri;
	(void)regs;
	hits++;
	return 0;
}

static long entries;

static GPR_ONLY int on_entry_record(struct kretprobe_instance *ri,
				    struct pt_regs *regs)
{
	(void)ri;
	record(regs->ip, regs->di, regs->si);
	entries++;
	return 0;
}

static GPR_ONLY int on_ret_record(struct kretprobe_instance *ri,
				  struct pt_regs *regs)
{
	(void)ri;
	record(regs->ip, regs->ax, regs->sp);
	hits++;
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "base";
	long n = argc > 2 ? atol(argv[2]) : 1000000;
	struct kprobe kp = { .symbol_name = "work", .pre_handler = on_pre };
	struct kretprobe rp = { .kp.symbol_name = "work", .handler = on_ret };
	long sum = 0, want = 0;
	long long t0, t1;
	int err = 0;

	bool opt = !strcmp(mode, "opt") || !strcmp(mode, "optrec") ||
		   !strcmp(mode, "optsimd");
	bool optret = !strcmp(mode, "optret") || !strcmp(mode, "optrets");
	bool floor = !strcmp(mode, "floor");

	if (!strcmp(mode, "post"))
		kp.post_handler = on_post;
	if (!strcmp(mode, "opt")) {
		kp.pre_handler = on_pre_nosimd;
		kp.flags = KPROBE_FLAG_NOSIMD;
	} else if (!strcmp(mode, "optrec")) {
		kp.pre_handler = on_record;
		kp.flags = KPROBE_FLAG_NOSIMD;
	} else if (!strcmp(mode, "optsimd")) {
		kp.pre_handler = on_record;
	} else if (!strcmp(mode, "kprobe") || !strcmp(mode, "post")) {
		/* the int3 path, as before jump optimisation existed */
		kp.flags = KPROBE_FLAG_NOOPT;
	}
	if (!strcmp(mode, "kretprobe")) {
		rp.kp.flags = KPROBE_FLAG_NOOPT;
	} else if (optret) {
		rp.entry_handler = on_entry_record;
		rp.handler = on_ret_record;
		rp.kp.flags = KPROBE_FLAG_NOSIMD;
		if (!strcmp(mode, "optrets"))
			rp.kp.flags |= KPROBE_FLAG_RP_THREAD;
	}
	if (!strcmp(mode, "kprobe") || !strcmp(mode, "post") || opt)
		err = register_kprobe(&kp);
	else if (!strcmp(mode, "kretprobe") || optret)
		err = register_kretprobe(&rp);
	else if (strcmp(mode, "base") && !floor)
		err = -1;
	if (!err && (opt || optret) &&
	    !kprobe_optimized(optret ? &rp.kp : &kp)) {
		fprintf(stderr, "agent_bench: %s: not optimised: %s\n", mode,
			kprobe_opt_reason(optret ? &rp.kp : &kp));
		return 2;
	}
	if (err) {
		fprintf(stderr, "agent_bench: %s: cannot register (%d)\n", mode,
			err);
		return 2;
	}
	if (strcmp(mode, "base"))
		want = n;

	t0 = now_ns();
	if (floor) {
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

	if (!strcmp(mode, "kretprobe") || optret)
		unregister_kretprobe(&rp);
	else if (want)
		unregister_kprobe(&kp);
	if (hits != want || (optret && entries != want) || rp.nmissed) {
		fprintf(stderr, "agent_bench: %s: %ld hits, %ld entries, %d "
			"missed for %ld calls\n", mode, hits, entries,
			rp.nmissed, n);
		return 1;
	}
	printf("%lld %ld %ld\n", t1 - t0, n, sum);
	return 0;
}
