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
 *             the return trampoline)
 *
 * The handlers count their calls; a count other than N fails the run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dprobe/kprobes.h>

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

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
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

	if (!strcmp(mode, "post"))
		kp.post_handler = on_post;
	if (!strcmp(mode, "kprobe") || !strcmp(mode, "post"))
		err = register_kprobe(&kp);
	else if (!strcmp(mode, "kretprobe"))
		err = register_kretprobe(&rp);
	else if (strcmp(mode, "base"))
		err = -1;
	if (err) {
		fprintf(stderr, "agent_bench: %s: cannot register (%d)\n", mode,
			err);
		return 2;
	}
	if (strcmp(mode, "base"))
		want = n;

	t0 = now_ns();
	for (long i = 0; i < n; i++)
		sum += work((int)i, i * 3, "bench");
	t1 = now_ns();

	if (!strcmp(mode, "kretprobe"))
		unregister_kretprobe(&rp);
	else if (want)
		unregister_kprobe(&kp);
	if (hits != want) {
		fprintf(stderr, "agent_bench: %s: %ld hits for %ld calls\n",
			mode, hits, n);
		return 1;
	}
	printf("%lld %ld %ld\n", t1 - t0, n, sum);
	return 0;
}
