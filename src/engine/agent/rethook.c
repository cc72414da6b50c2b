// SPDX-License-Identifier: GPL-2.0
/*
 * The hit path of return probes (kretprobe.c has their registration).
 *
 * As in the kernel, a kretprobe is a kprobe at a function entry whose pre
 * handler (dp_kretprobe_pre) takes an instance from the kretprobe's pool,
 * saves the return address, and replaces it with the trampoline
 * (trampoline.S); the instance goes on the thread's list of calls in
 * flight (TLS, newest first).  When the function returns to the
 * trampoline, dp_kretprobe_handler() finds the instance whose slot is the
 * one just popped, runs the handler, and gives the real address back.
 *
 * Pools: maxactive instances per kretprobe, allocated at registration,
 * taken and given back with a lock-free stack (index + ABA tag in one
 * 64-bit word), so the hit path never allocates.  A call entered while all
 * are in use is not traced and counts in nmissed.
 *
 * Calls that never return through the trampoline:
 *   - longjmp (or a stack switch) abandons frames.  Their instances are
 *     dropped, and counted in nmissed, when this thread next enters or
 *     returns from a probed function with its stack pointer above them:
 *     everything below the stack pointer on the same stack is dead.
 *     "The same stack": instances remember whether they were made on the
 *     thread's sigaltstack, so a signal handler running there does not
 *     drop the main stack's (nor the reverse).  Coroutine stacks
 *     (makecontext) are not told apart: kretprobes on functions live on
 *     several of them at once are not supported.
 *   - C++ exceptions and thread cancellation unwind through the return
 *     addresses: see dp_kretprobe_unhijack_thread() and kretprobe.c.
 *
 * Like hit.c, nothing here calls a library function.
 */
#include <signal.h>
#include <sys/syscall.h>

#include "engine/agent/agent.h"

/* The extended-state save of trampoline.S, set by kretprobe.c. */
uint64_t dp_xsave_size;
uint8_t dp_xsave_mode;

/* ---- pools ----------------------------------------------------------------- */

static struct kretprobe_instance *pool_get(struct kretprobe_holder *h)
{
	uint64_t head = __atomic_load_n(&h->free_head, __ATOMIC_ACQUIRE), nh;
	struct kretprobe_instance *ri;

	do {
		uint32_t i = (uint32_t)head;

		if (!i)
			return NULL;
		ri = dp_rp_instance(h, i - 1);
		nh = (((head >> 32) + 1) << 32) |
		     __atomic_load_n(&ri->__free_next, __ATOMIC_RELAXED);
	} while (!__atomic_compare_exchange_n(&h->free_head, &head, nh, true,
					      __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	__atomic_fetch_add(&h->outstanding, 1, __ATOMIC_RELAXED);
	ri->rph = h;
	ri->__state = 1;
	return ri;
}

static void pool_put(struct kretprobe_holder *h, struct kretprobe_instance *ri)
{
	uint32_t i = (uint32_t)(((char *)ri - h->inst) / h->isize) + 1;
	uint64_t head = __atomic_load_n(&h->free_head, __ATOMIC_ACQUIRE), nh;

	ri->__state = 0;
	do {
		__atomic_store_n(&ri->__free_next, (uint32_t)head,
				 __ATOMIC_RELAXED);
		nh = (((head >> 32) + 1) << 32) | i;
	} while (!__atomic_compare_exchange_n(&h->free_head, &head, nh, true,
					      __ATOMIC_RELEASE,
					      __ATOMIC_ACQUIRE));
	/* the last access to the pool: unregister may free it after this */
	__atomic_fetch_sub(&h->outstanding, 1, __ATOMIC_RELEASE);
}

/* A call that will never be seen returning: a miss. */
static void drop(struct kretprobe_instance *ri)
{
	struct kretprobe_holder *h = ri->rph;
	struct kretprobe *rp = __atomic_load_n(&h->rp, __ATOMIC_ACQUIRE);

	if (rp)
		__atomic_fetch_add(&rp->nmissed, 1, __ATOMIC_RELAXED);
	pool_put(h, ri);
}

/* 0 for the thread's normal stack, the sigaltstack's base for that. */
static uintptr_t stack_domain(uint64_t sp)
{
	if (sp - dp_tls.alt_lo < dp_tls.alt_hi - dp_tls.alt_lo)
		return dp_tls.alt_lo;
	return 0;
}

/* ---- entry --------------------------------------------------------------- */

/*
 * Frames below @sp on the same stack are gone; a slot at @sp that no
 * longer holds the trampoline was reused by a new call.
 */
static void drop_stale(uint64_t sp, uintptr_t dom, uint64_t ret)
{
	const uint64_t tramp = (uint64_t)(uintptr_t)dp_kretprobe_trampoline;
	struct kretprobe_instance *ri;

	while ((ri = dp_tls.ri) && ri->__domain == dom &&
	       ((uint64_t)(uintptr_t)ri->fp < sp ||
		((uint64_t)(uintptr_t)ri->fp == sp && ret != tramp))) {
		dp_tls.ri = ri->__next;
		drop(ri);
	}
}

static int entry_miss(struct kretprobe *rp, struct kretprobe_instance *ri)
{
	if (ri)
		pool_put(rp->rph, ri);
	__atomic_fetch_add(&rp->nmissed, 1, __ATOMIC_RELAXED);
	return 0;
}

int dp_kretprobe_pre(struct kprobe *kp, struct pt_regs *regs)
{
	const uint64_t tramp = (uint64_t)(uintptr_t)dp_kretprobe_trampoline;
	struct kretprobe *rp = (struct kretprobe *)kp;	/* kp comes first */
	struct kretprobe_instance *ri, *top;
	uintptr_t dom = stack_domain(regs->sp);
	uint64_t sp = regs->sp, ret;
	bool chained = false;

	if (dp_copy_nofault(&ret, (const void *)(uintptr_t)sp, sizeof(ret)))
		return entry_miss(rp, NULL);
	drop_stale(sp, dom, ret);
	ri = pool_get(rp->rph);
	if (!ri)
		return entry_miss(rp, NULL);
	ri->fp = (void *)(uintptr_t)sp;
	ri->__domain = dom;
	ri->ret_addr = (kprobe_opcode_t *)(uintptr_t)ret;
	if (ret == tramp) {
		/* a tail call from a function whose return is hijacked */
		top = dp_tls.ri;
		if (!top || top->fp != ri->fp || top->__domain != dom)
			return entry_miss(rp, ri);
		ri->ret_addr = top->ret_addr;
		chained = true;
	}
	if (rp->entry_handler && rp->entry_handler(ri, regs)) {
		pool_put(rp->rph, ri);
		return 0;
	}
	if (!chained &&
	    dp_copy_nofault((void *)(uintptr_t)sp, &tramp, sizeof(tramp)))
		return entry_miss(rp, ri);
	ri->__next = dp_tls.ri;
	dp_tls.ri = ri;
	return 0;
}

/* ---- return -------------------------------------------------------------- */

/* Nowhere to return to: our bookkeeping lost a call.  Abort. */
static void no_instance(void)
{
	long pid = dp_raw_syscall(SYS_getpid, 0, 0, 0);

	dp_warn("libdprobe: a function returned to the kretprobe trampoline "
		"with no call in flight on this thread; aborting\n");
	dp_raw_syscall(SYS_tgkill, pid, dp_raw_syscall(SYS_gettid, 0, 0, 0),
		       SIGABRT);
	dp_raw_syscall(SYS_exit_group, 134, 0, 0);
}

/* Called by trampoline.S with the registers at the return; see there. */
uint64_t dp_kretprobe_handler(struct pt_regs *regs)
{
	uint64_t fp = regs->sp - 8, ret;
	uintptr_t dom = stack_domain(regs->sp);
	struct kretprobe_instance **pp = &dp_tls.ri, *ri;
	bool busy = dp_tls.depth > 0;
	int idx = dp_gp_enter();

	dp_tls.depth++;
	dp_regs_bases(regs);
	/* instances above ours on the same stack were abandoned */
	while ((ri = *pp) && !(ri->__domain == dom &&
			       (uint64_t)(uintptr_t)ri->fp == fp)) {
		if (ri->__domain == dom && (uint64_t)(uintptr_t)ri->fp < fp) {
			*pp = ri->__next;
			drop(ri);
			continue;
		}
		pp = &ri->__next;
	}
	if (!ri)
		no_instance();
	ret = (uint64_t)(uintptr_t)ri->ret_addr;
	/* before any handler runs: unwinders read it through the CFI */
	*(uint64_t *)(uintptr_t)fp = ret;
	regs->ip = ret;
	/* this call, and those chained to it by tail calls, newest first */
	while ((ri = *pp) && ri->__domain == dom &&
	       (uint64_t)(uintptr_t)ri->fp == fp) {
		struct kretprobe_holder *h = ri->rph;
		struct kretprobe *rp = __atomic_load_n(&h->rp, __ATOMIC_ACQUIRE);

		*pp = ri->__next;
		if (rp && rp->handler && busy) {
			__atomic_fetch_add(&rp->nmissed, 1, __ATOMIC_RELAXED);
		} else if (rp && rp->handler) {
			dp_tls.cur = &rp->kp;
			rp->handler(ri, regs);
			dp_tls.cur = NULL;
		}
		pool_put(h, ri);
	}
	dp_tls.depth--;
	dp_gp_leave(idx);
	return ret;
}

/* ---- unwinding ------------------------------------------------------------ */

void dp_kretprobe_unhijack_thread(void)
{
	const uint64_t tramp = (uint64_t)(uintptr_t)dp_kretprobe_trampoline;
	struct kretprobe_instance *ri;

	while ((ri = dp_tls.ri)) {
		uint64_t cur;

		dp_tls.ri = ri->__next;
		if (!dp_copy_nofault(&cur, ri->fp, sizeof(cur)) && cur == tramp)
			dp_copy_nofault(ri->fp, &ri->ret_addr, sizeof(cur));
		drop(ri);
	}
}
