// SPDX-License-Identifier: GPL-2.0
/*
 * Return probes: registration, pools, and the unwinder hooks (rethook.c
 * has the hit path).
 *
 * C++ exceptions and thread cancellation unwind through return addresses.
 * An unwinder that meets the trampoline stops (its CFI says the return
 * address is undefined), so libdprobe puts a kprobe of its own on
 * _Unwind_RaiseException and _Unwind_ForcedUnwind in every loaded object
 * that has them: when a thread starts unwinding, all of its hijacked
 * return addresses are put back first and their instances set aside;
 * a third, on __cxa_begin_catch, hijacks again those whose frames the
 * catch did not unwind (the catching function and its callers), and
 * the others are dropped (counted in nmissed).  An unwinder loaded later (libgcc_s dlopen()ed by
 * the first pthread_cancel) is hooked at the next register_kretprobe().
 * The int3 is in the unwinder's own code, so every way in is covered
 * (__cxa_throw, __cxa_rethrow, pthread_exit...), with or without
 * interposition.
 *
 * A pool whose kretprobe is unregistered while some of its instances are
 * still in flight is kept (get_kretprobe() returns NULL for them) and
 * freed by a later register/unregister once they have all come back: all
 * of them in its free stack (threads' spares were given back when it was
 * unregistered).  Until then other threads may still touch the pool, but
 * only while they own one of its instances.
 */
#include <cpuid.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/agent/agent.h"

static struct kretprobe_holder *dead;
#define MAX_UNWIND_HOOKS 12
static struct kprobe unwind_kps[MAX_UNWIND_HOOKS];
static int n_unwind;

/* ---- unwinding ------------------------------------------------------------ */

static int unwind_pre(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	(void)regs;
	dp_kretprobe_unhijack_thread(false);
	return 0;
}

static int forced_unwind_pre(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	(void)regs;
	dp_kretprobe_unhijack_thread(true);
	return 0;
}

static int catch_pre(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	dp_kretprobe_rehijack_thread(regs->sp);
	return 0;
}

static bool unwind_hooked(uint64_t addr)
{
	for (int i = 0; i < n_unwind; i++)
		if ((uint64_t)(uintptr_t)unwind_kps[i].addr == addr)
			return true;
	return false;
}

/*
 * Best effort: a failure only means exceptions stop at the trampoline.
 * Called without the registration mutex (dp_register() takes it).
 */
static void hook_unwinders(void)
{
	static const struct {
		const char *name;
		kprobe_pre_handler_t pre;
	} hooks[] = {
		{ "_Unwind_RaiseException", unwind_pre },
		{ "_Unwind_ForcedUnwind", forced_unwind_pre },
		/* where a C++ catch handler begins: the unwinding is over */
		{ "__cxa_begin_catch", catch_pre },
	};
	static pthread_mutex_t hook_lock = PTHREAD_MUTEX_INITIALIZER;
	uint64_t addrs[4];
	int n;

	pthread_mutex_lock(&hook_lock);
	for (size_t k = 0; k < sizeof(hooks) / sizeof(hooks[0]); k++) {
		dp_lock();
		n = dp_sym_lookup_all(hooks[k].name, addrs, 4);
		dp_unlock();
		for (int i = 0; i < n && n_unwind < MAX_UNWIND_HOOKS; i++) {
			struct kprobe *kp = &unwind_kps[n_unwind];

			if (unwind_hooked(addrs[i]))
				continue;
			memset(kp, 0, sizeof(*kp));
			kp->addr = (kprobe_opcode_t *)(uintptr_t)addrs[i];
			kp->pre_handler = hooks[k].pre;
			if (!dp_register(kp, false))
				n_unwind++;
		}
	}
	pthread_mutex_unlock(&hook_lock);
}

/* ---- registration -------------------------------------------------------- */

void dp_xsave_setup(void)
{
	static bool done;
	unsigned int a, b, c, d;

	if (done)
		return;
	done = true;
	dp_xsave_size = 512;
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27)))
		return;		/* no OSXSAVE: fxsave */
	__cpuid_count(0xd, 0, a, b, c, d);
	if (b < 576)
		return;
	dp_xsave_size = (b + 63) & ~63ull;
	dp_xsave_mode = 1;
	/*
	 * XSAVEC skips the components in their initial state (the AVX-512
	 * registers of a program that does not use them): much less to
	 * write.  Its compacted area is no larger than the size for every
	 * component XSAVES could save.
	 */
	__cpuid_count(0xd, 1, a, b, c, d);
	if (!(a & 2))
		return;
	if (b > dp_xsave_size)
		dp_xsave_size = (b + 63) & ~63ull;
	dp_xsave_mode = 2;
}

static int default_maxactive(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	return n > 5 ? (int)(2 * n) : 10;
}

/* Holders of KPROBE_FLAG_RP_THREAD kretprobes no longer registered. */
static struct kretprobe_holder *idle;

/* Does @rp get its instances from the threads' return stacks? */
static bool per_thread(const struct kretprobe *rp)
{
	return (rp->kp.flags & KPROBE_FLAG_RP_THREAD) &&
	       rp->data_size <= KRETPROBE_THREAD_DATA && dp_gp_slots();
}

/*
 * A return-stack holder whose kretprobe is gone (under the mutex): calls
 * still in flight find no kretprobe (the gen moves on), and the next
 * registration may take it.
 */
static void holder_idle(struct kretprobe_holder *h)
{
	__atomic_store_n(&h->rp, NULL, __ATOMIC_RELEASE);
	__atomic_add_fetch(&h->gen, 1, __ATOMIC_RELEASE);
	h->next_dead = idle;
	idle = h;
}

/* A holder for @rp with no pool: an idle one, else a new one. */
static struct kretprobe_holder *holder_thread(struct kretprobe *rp)
{
	struct kretprobe_holder *h;

	dp_lock();
	h = idle;
	if (h)
		idle = h->next_dead;
	dp_unlock();
	if (!h) {
		h = calloc(1, sizeof(*h));
		if (!h)
			return NULL;
		h->per_thread = true;
	}
	h->next_dead = NULL;
	/* after the gen (unregister moved it on): see dp_rp_of() */
	__atomic_store_n(&h->rp, rp, __ATOMIC_RELEASE);
	return h;
}

static struct kretprobe_holder *holder_new(struct kretprobe *rp)
{
	struct kretprobe_holder *h = calloc(1, sizeof(*h));
	int n = rp->maxactive > 0 ? rp->maxactive : default_maxactive();

	if (!h)
		return NULL;
	h->n = (uint32_t)n;
	h->isize = (sizeof(struct kretprobe_instance) + rp->data_size + 15) &
		   ~(size_t)15;
	h->inst = aligned_alloc(16, h->isize * h->n);
	if (!h->inst) {
		free(h);
		return NULL;
	}
	memset(h->inst, 0, h->isize * h->n);
	for (uint32_t i = 0; i < h->n; i++) {
		dp_rp_instance(h, i)->rph = h;
		dp_rp_instance(h, i)->__free_next = i + 1 < h->n ? i + 2 : 0;
	}
	h->free_head = 1;
	h->rp = rp;
	return h;
}

/* A pool's holder (a return-stack holder is never freed). */
static void holder_free(struct kretprobe_holder *h)
{
	free(h->inst);
	free(h);
}

/*
 * The instances in @h's free stack.  No thread pops from the pool of an
 * unregistered kretprobe; pushes only prepend, and never change the
 * links of instances already in the stack, so a walk from one value of
 * the head is consistent.
 */
static uint32_t free_count(const struct kretprobe_holder *h)
{
	uint32_t i = (uint32_t)__atomic_load_n(&h->free_head, __ATOMIC_ACQUIRE);
	uint32_t n = 0;

	for (; i && n <= h->n; n++)
		i = __atomic_load_n(&dp_rp_instance((struct kretprobe_holder *)h,
						    i - 1)->__free_next,
				    __ATOMIC_ACQUIRE);
	return n;
}

/* Free the pools of unregistered kretprobes whose instances are back. */
static void reap_dead(void)
{
	struct kretprobe_holder **pp = &dead, *h;

	while ((h = *pp)) {
		if (free_count(h) != h->n) {
			pp = &h->next_dead;
			continue;
		}
		*pp = h->next_dead;
		holder_free(h);
	}
}

DP_EXPORT int register_kretprobe(struct kretprobe *rp)
{
	struct kretprobe_holder *h;
	int err;

	if (!rp || rp->maxactive > KRETPROBE_MAXACTIVE_MAX)
		return !rp ? -EINVAL : -E2BIG;
	if (dp_tls.depth)
		return -EBUSY;
	err = dp_agent_init();
	if (err)
		return err;
	/* before rph is touched: it belongs to the registration */
	if (dp_kprobe_registered(&rp->kp))
		return -EEXIST;
	/* the flag says what is in effect (and is kept by dp_register()) */
	if (!per_thread(rp))
		rp->kp.flags &= ~KPROBE_FLAG_RP_THREAD;
	h = rp->kp.flags & KPROBE_FLAG_RP_THREAD ? holder_thread(rp) :
						   holder_new(rp);
	if (!h)
		return -ENOMEM;
	dp_lock();
	dp_xsave_setup();
	reap_dead();
	dp_unlock();
	rp->kp.pre_handler = dp_kretprobe_pre;
	rp->kp.post_handler = NULL;
	rp->nmissed = 0;
	rp->rph = h;
	err = dp_register(&rp->kp, true);
	if (err) {
		rp->rph = NULL;
		dp_lock();
		if (h->per_thread)
			holder_idle(h);
		else
			holder_free(h);
		dp_unlock();
		return err;
	}
	hook_unwinders();
	return 0;
}

DP_EXPORT void unregister_kretprobes(struct kretprobe **rps, int num)
{
	if (!rps || num <= 0 || dp_in_handler("unregister_kretprobe"))
		return;
	dp_lock();
	for (int i = 0; i < num; i++) {
		if (!rps[i] || !rps[i]->rph || !dp_unregister_top(&rps[i]->kp))
			continue;
		__atomic_store_n(&rps[i]->rph->rp, NULL, __ATOMIC_RELEASE);
	}
	dp_synchronize();
	/* no thread can make a spare of theirs any more */
	dp_kretprobe_spares_return();
	for (int i = 0; i < num; i++) {
		struct kretprobe_holder *h = rps[i] ? rps[i]->rph : NULL;

		if (!h || h->rp)
			continue;	/* not registered */
		dp_unregister_bottom(&rps[i]->kp);
		rps[i]->rph = NULL;
		if (h->per_thread) {
			holder_idle(h);	/* no hit reads its rp any more */
			continue;
		}
		h->next_dead = dead;
		dead = h;
	}
	reap_dead();
	dp_unlock();
}

DP_EXPORT void unregister_kretprobe(struct kretprobe *rp)
{
	unregister_kretprobes(&rp, 1);
}

DP_EXPORT int register_kretprobes(struct kretprobe **rps, int num)
{
	int err;

	if (!rps || num <= 0)
		return -EINVAL;
	for (int i = 0; i < num; i++) {
		err = register_kretprobe(rps[i]);
		if (err) {
			if (i > 0)
				unregister_kretprobes(rps, i);
			return err;
		}
	}
	return 0;
}

DP_EXPORT struct kretprobe *get_kretprobe(struct kretprobe_instance *ri)
{
	return ri && ri->rph ? dp_rp_of(ri) : NULL;
}
