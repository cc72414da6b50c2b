// SPDX-License-Identifier: GPL-2.0
/*
 * 8 threads call a probed function as fast as they can while another
 * thread registers and unregisters its kprobe 1,000 times (then disables
 * and enables it 1,000 times).  Nothing may crash, and the counts must be
 * exact while the probe is in place:
 *
 * The controller moves a phase counter through four states per round:
 * 4k+0 off (unregistered, its byte back), 4k+1 registering, 4k+2 on
 * (register_kprobe() has returned), 4k+3 unregistering.  A hammer thread
 * reads the phase before and after each call, and counts the hits its own
 * calls made (the handler runs on the calling thread, so a thread-local
 * counter tells).  A call that starts and ends in the same "on" phase must
 * have been hit exactly once, one in the same "off" phase never.
 *
 * With jump optimisation on (not DPROBE_NOOPT=1), register_kprobe()
 * optimises the probe while the threads run through it: some rounds must
 * end optimised, and the counts must be exact all the same.
 *
 * AGENT_HAMMER_ROUNDS overrides the number of rounds (default 1000).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <dprobe/kprobes.h>

#include "agent_test.h"

#define NTHREADS 8

static atomic_long phase;
static atomic_int stop;
static atomic_long total_hits;
static __thread volatile long tl_hits;

__attribute__((noipa)) long hot(long x)
{
	return x ^ 0x5a;
}

static int on_hit(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	(void)regs;
	tl_hits++;
	atomic_fetch_add_explicit(&total_hits, 1, memory_order_relaxed);
	return 0;
}

static struct kprobe kp = { .symbol_name = "hot", .pre_handler = on_hit };

struct report {
	long calls, on_checked, off_checked, on_bad, off_bad, hits, wrong;
};

static void *hammer(void *arg)
{
	struct report *r = arg;

	/* a lower priority than the controller's, so the rounds go quickly */
	setpriority(PRIO_PROCESS, (id_t)gettid(), 10);

	while (!atomic_load(&stop)) {
		long e1 = atomic_load(&phase);
		long h0 = tl_hits, h1, e2;

		if (hot(r->calls) != (r->calls ^ 0x5a))
			r->wrong++;
		h1 = tl_hits;
		e2 = atomic_load(&phase);
		r->calls++;
		if (e1 != e2)
			continue;
		if (e1 % 4 == 2) {
			r->on_checked++;
			r->on_bad += h1 - h0 != 1;
		} else if (e1 % 4 == 0) {
			r->off_checked++;
			r->off_bad += h1 != h0;
		}
	}
	r->hits = tl_hits;
	return NULL;
}

/* Let the hammer threads run in the current phase for a moment. */
static void dwell(void)
{
	struct timespec ts = { 0, 100000 };

	nanosleep(&ts, NULL);
}

int main(void)
{
	const char *env = getenv("AGENT_HAMMER_ROUNDS");
	int rounds = env ? atoi(env) : 1000, reg_err = 0, en_err = 0;
	const char *noopt = getenv("DPROBE_NOOPT");
	int opt_reg = 0, opt_en = 0;
	const char *why = NULL;
	struct report rep[NTHREADS];
	pthread_t t[NTHREADS];
	struct report sum = { 0 };

	memset(rep, 0, sizeof(rep));
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, hammer, &rep[i]);

	/* phase 0: register / unregister */
	for (int i = 0; i < rounds; i++) {
		atomic_fetch_add(&phase, 1);
		kp.addr = NULL;
		reg_err += register_kprobe(&kp) != 0;
		atomic_fetch_add(&phase, 1);
		if (kprobe_optimized(&kp))
			opt_reg++;
		else
			why = kprobe_opt_reason(&kp);
		dwell();
		atomic_fetch_add(&phase, 1);
		unregister_kprobe(&kp);
		atomic_fetch_add(&phase, 1);
		dwell();
	}
	/* phase 1: registered once, disabled / enabled */
	kp.addr = NULL;
	kp.flags = KPROBE_FLAG_DISABLED;
	reg_err += register_kprobe(&kp) != 0;
	for (int i = 0; i < rounds; i++) {
		atomic_fetch_add(&phase, 1);
		en_err += enable_kprobe(&kp) != 0;
		atomic_fetch_add(&phase, 1);
		opt_en += kprobe_optimized(&kp);
		dwell();
		atomic_fetch_add(&phase, 1);
		en_err += disable_kprobe(&kp) != 0;
		/* disabling does not wait: let handlers already running end */
		dwell();
		atomic_fetch_add(&phase, 1);
		dwell();
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], NULL);
		sum.calls += rep[i].calls;
		sum.on_checked += rep[i].on_checked;
		sum.off_checked += rep[i].off_checked;
		sum.on_bad += rep[i].on_bad;
		sum.off_bad += rep[i].off_bad;
		sum.hits += rep[i].hits;
		sum.wrong += rep[i].wrong;
	}
	unregister_kprobe(&kp);

	printf("# %d rounds, %ld calls, %ld hits; checked %ld calls while on, "
	       "%ld while off\n", rounds, sum.calls, sum.hits, sum.on_checked,
	       sum.off_checked);
	printf("# optimised in %d register and %d enable rounds%s%s\n",
	       opt_reg, opt_en, why ? "; else: " : "", why ? why : "");
	BEGIN(noopt ? "8 threads vs 1000 register/unregister and enable/disable "
		      "rounds (DPROBE_NOOPT=1)" :
		      "8 threads vs 1000 register/unregister and enable/disable "
		      "rounds, optimising");
	if (noopt)
		CHECK_EQ(opt_reg + opt_en, 0);
	else
		CHECK(opt_reg > 0 && opt_en > 0, "never optimised: %s",
		      why ? why : "?");
	CHECK_EQ(reg_err, 0);
	CHECK_EQ(en_err, 0);
	CHECK_EQ(sum.wrong, 0);
	CHECK_EQ(sum.on_bad, 0);
	CHECK_EQ(sum.off_bad, 0);
	CHECK_EQ(sum.hits, atomic_load(&total_hits));
	CHECK_EQ(kp.nmissed, 0);
	CHECK(sum.on_checked > rounds, "only %ld calls checked while on",
	      sum.on_checked);
	CHECK(sum.off_checked > rounds, "only %ld calls checked while off",
	      sum.off_checked);
	END();
	return t_exit();
}
