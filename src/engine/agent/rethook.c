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
 * On a jump-optimised entry, dp_kretprobe_call (trampoline.S) then turns
 * the replaced return address into a real call, so that the slot holds
 * dp_kretprobe_trampoline_call instead: either address in a slot means
 * "hijacked" below.
 *
 * Pools: maxactive instances per kretprobe, allocated at registration,
 * taken and given back with a lock-free stack (index + ABA tag in one
 * 64-bit word), so the hit path never allocates.  A call entered while all
 * are in use is not traced and counts in nmissed.
 *
 * Return stacks (KPROBE_FLAG_RP_THREAD, events.c's return probes with
 * no maxactive, the tracers'): no pool; a thread takes the instances of
 * its calls from a stack of its own, as the kernel's uretprobes and
 * function_graph do, with plain loads and stores.  Only the thread and
 * its signal handlers touch it, and a hit inside a handler of ours is
 * not handled (depth), so nothing nests in an update.  Instances are
 * released in about the order they were taken (a call returns, calls
 * abandoned by a longjmp are dropped newest first); one released out of
 * order (the instances an unwinding set aside, dropped while newer calls
 * are in flight) only waits for those above it to go.
 *
 * Spares: a returning call's instance is not pushed back at once but
 * kept in the thread's reader slot (struct dp_gp_reader, core.c), in
 * one of DP_GP_SPARES places chosen by its kretprobe, where the thread's
 * next entry of the same kretprobe finds it with a single exchange
 * instead of a pop and a push: a whole-program tracer enters many
 * kretprobes in turn, and one place would hold another's spare nearly
 * every time.  Only the owner stores a spare there (when the place is
 * empty); anyone may take it with an exchange:
 * the owner, a thread that finds the pool empty (a spare of an exited
 * thread is not lost), and unregister, which gives every spare back.
 * Whoever exchanged an instance out owns it, so it may look at its
 * holder: a holder is freed only when all its instances are in its free
 * stack (kretprobe.c counts them), which no spare is.
 *
 * Calls that never return through the trampoline:
 *   - longjmp (or a stack switch) abandons frames.  Their instances are
 *     dropped, and counted in nmissed, when this thread next enters or
 *     returns from a probed function with its stack pointer above them:
 *     everything below the stack pointer on the same stack is dead.
 *     "The same stack": an instance below the stack pointer may instead
 *     be on the thread's sigaltstack while a signal handler runs on the
 *     main stack (or the reverse); the kernel is asked where the
 *     sigaltstack is (a system call, but only when an instance is below
 *     the stack pointer, which a call in flight normally never is), so
 *     no stale copy of it can drop a call that is still in flight.
 *     Coroutine stacks (makecontext) are not told apart: kretprobes on
 *     functions live on several of them at once are not supported.
 *   - C++ exceptions and thread cancellation unwind through the return
 *     addresses: see dp_kretprobe_unhijack_thread() and kretprobe.c.
 *     The calls a C++ catch did not unwind get their return probes back
 *     when it begins (dp_kretprobe_rehijack_thread()).
 *
 * Like hit.c, nothing here calls a library function.
 */
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "engine/agent/agent.h"

/* The extended-state save of trampoline.S, set by kretprobe.c. */
uint64_t dp_xsave_size;
uint8_t dp_xsave_mode;

/* ---- pools -------------------------------------------------------------- */

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
	return ri;
}

/* The last access to @h: unregister may free it once all are back. */
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
}

/* The place of @h's spares in a reader slot. */
static unsigned int spare_of(const struct kretprobe_holder *h)
{
	return (unsigned int)(((uintptr_t)h >> 4) * 0x9e3779b97f4a7c15ull >>
			      61) & (DP_GP_SPARES - 1);
}

/* Take @r's spare at @k, if any: the caller owns what it gets. */
static struct kretprobe_instance *spare_take(struct dp_gp_reader *r,
					     unsigned int k)
{
	if (!__atomic_load_n(&r->spare[k], __ATOMIC_RELAXED))
		return NULL;
	return __atomic_exchange_n(&r->spare[k], NULL, __ATOMIC_ACQ_REL);
}

struct theft {
	struct kretprobe_holder *h;	/* what is wanted */
	struct kretprobe_instance *ri;	/* what was found */
};

static bool steal(struct dp_gp_reader *r, void *arg)
{
	struct theft *t = arg;
	struct kretprobe_instance *ri = spare_take(r, spare_of(t->h));

	if (!ri)
		return false;
	if (ri->rph == t->h) {
		t->ri = ri;
		return true;
	}
	pool_put(ri->rph, ri);
	return false;
}

/* Not this thread's spare: the pool, or any thread's spare (an exited
 * thread's is not lost).  @ri: a spare of another kretprobe, or NULL. */
static __attribute__((noinline)) struct kretprobe_instance *
inst_get_slow(struct kretprobe_holder *h, struct kretprobe_instance *ri)
{
	struct theft t = { h, NULL };

	if (ri)
		pool_put(ri->rph, ri);
	ri = pool_get(h);
	if (!ri && dp_gp_for_each(steal, &t))
		ri = t.ri;
	if (ri) {
		ri->rph = h;
		ri->__state = 1;
	}
	return ri;
}

/* ---- return stacks -------------------------------------------------------- */

static struct kretprobe_instance *rs_slot(struct dp_rstack *rs, uint32_t i)
{
	return (struct kretprobe_instance *)(void *)rs->slot[i];
}

/* The first call of the slot's thread: mapped (no library call here). */
static __attribute__((noinline, cold)) struct dp_rstack *
rs_map(struct dp_gp_reader *r)
{
	long p = dp_raw_syscall6(SYS_mmap, 0, sizeof(struct dp_rstack),
				 PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				 -1, 0);

	if (p < 0 && p > -4096)
		return NULL;
	r->rstack = (struct dp_rstack *)p;
	return r->rstack;
}

static struct kretprobe_instance *rs_push(struct kretprobe_holder *h)
{
	struct dp_gp_reader *r = dp_tls.gp;
	struct dp_rstack *rs = r ? r->rstack : NULL;
	struct kretprobe_instance *ri;

	/* (a slot's earlier owner left nothing: gp_take() emptied it) */
	if (!rs && (!r || !(rs = rs_map(r))))
		return NULL;
	if (rs->top == KRETPROBE_THREAD_DEPTH)
		return NULL;
	ri = rs_slot(rs, rs->top++);
	ri->rph = h;
	ri->__gen = __atomic_load_n(&h->gen, __ATOMIC_RELAXED);
	ri->__state = 1;
	return ri;
}

static void rs_release(struct kretprobe_instance *ri)
{
	struct dp_rstack *rs = dp_tls.gp->rstack;

	ri->__state = 0;
	while (rs->top && !rs_slot(rs, rs->top - 1)->__state)
		rs->top--;
}

/* ---- instances ------------------------------------------------------------ */

/* An instance of @h for a call, or NULL (all in use). */
static struct kretprobe_instance *inst_get(struct kretprobe_holder *h)
{
	struct dp_gp_reader *r = dp_tls.gp;
	struct kretprobe_instance *ri;

	if (h->per_thread)
		return rs_push(h);
	ri = r ? spare_take(r, spare_of(h)) : NULL;

	if (ri && ri->rph == h) {
		ri->__state = 1;
		return ri;
	}
	return inst_get_slow(h, ri);
}

/* Done with @ri (of @h): kept as this thread's spare while @rp lives. */
static void inst_put(struct kretprobe_holder *h, const struct kretprobe *rp,
		     struct kretprobe_instance *ri)
{
	struct dp_gp_reader *r = dp_tls.gp;
	unsigned int k = spare_of(h);

	if (h->per_thread) {
		rs_release(ri);
		return;
	}
	if (r && rp && !__atomic_load_n(&r->spare[k], __ATOMIC_RELAXED)) {
		ri->__state = 0;
		__atomic_store_n(&r->spare[k], ri, __ATOMIC_RELEASE);
		return;
	}
	pool_put(h, ri);
}

static bool give_back(struct dp_gp_reader *r, void *arg)
{
	(void)arg;
	for (unsigned int k = 0; k < DP_GP_SPARES; k++) {
		struct kretprobe_instance *ri = spare_take(r, k);

		if (ri)
			pool_put(ri->rph, ri);
	}
	return false;
}

void dp_kretprobe_spares_return(void)
{
	dp_gp_for_each(give_back, NULL);
}

/* A call that will never be seen returning: a miss. */
static void drop(struct kretprobe_instance *ri)
{
	struct kretprobe_holder *h = ri->rph;
	struct kretprobe *rp = dp_rp_of(ri);

	if (rp)
		__atomic_fetch_add(&rp->nmissed, 1, __ATOMIC_RELAXED);
	if (h->per_thread)
		rs_release(ri);
	else
		pool_put(h, ri);
}

extern const char dp_word_nofault_begin[], dp_word_nofault_end[],
	dp_word_nofault_efault[] DP_HIDDEN;

uint64_t dp_word_nofault_fixup(uint64_t ip)
{
	if (ip >= (uint64_t)(uintptr_t)dp_word_nofault_begin &&
	    ip < (uint64_t)(uintptr_t)dp_word_nofault_end)
		return (uint64_t)(uintptr_t)dp_word_nofault_efault;
	return 0;
}

static bool hijacked(uint64_t ret)
{
	return ret == (uint64_t)(uintptr_t)dp_kretprobe_trampoline ||
	       ret == (uint64_t)(uintptr_t)dp_kretprobe_trampoline_call;
}

uint64_t dp_kretprobe_real_ret(uint64_t ret, uint64_t slot)
{
	if (!hijacked(ret))
		return ret;
	/* this thread's calls in flight: only it changes the list */
	for (const struct kretprobe_instance *ri = dp_tls.ri; ri;
	     ri = ri->__next)
		if ((uint64_t)(uintptr_t)ri->fp == slot)
			return (uint64_t)(uintptr_t)ri->ret_addr;
	return ret;
}

void dp_kretprobe_real_rets(uint8_t *copy, uint64_t from, size_t len)
{
	for (const struct kretprobe_instance *ri = dp_tls.ri; ri;
	     ri = ri->__next) {
		uint64_t slot = (uint64_t)(uintptr_t)ri->fp, ret;

		if (len < 8 || slot < from || slot - from > len - 8)
			continue;
		__builtin_memcpy(&ret, copy + (slot - from), 8);
		if (hijacked(ret)) {
			ret = (uint64_t)(uintptr_t)ri->ret_addr;
			__builtin_memcpy(copy + (slot - from), &ret, 8);
		}
	}
}

/* ---- stacks ------------------------------------------------------------- */

/* The thread's sigaltstack, asked of the kernel at most once per hit. */
struct altstack {
	uintptr_t lo, hi;
	bool known;
};

/* 0 for the thread's normal stack, the sigaltstack's base for that. */
static uintptr_t stack_domain(struct altstack *a, uint64_t addr)
{
	stack_t ss;

	if (!a->known) {
		a->known = true;
		if (!dp_raw_syscall(SYS_sigaltstack, 0, (long)&ss, 0) &&
		    !(ss.ss_flags & SS_DISABLE)) {
			a->lo = (uintptr_t)ss.ss_sp;
			a->hi = a->lo + ss.ss_size;
		}
	}
	return addr - a->lo < a->hi - a->lo ? a->lo : 0;
}

/* @ri, below @sp, is on the same stack: its frame is gone. */
static bool abandoned(struct altstack *a, const struct kretprobe_instance *ri,
		      uint64_t sp)
{
	uint64_t fp = (uint64_t)(uintptr_t)ri->fp;

	return fp < sp && stack_domain(a, fp) == stack_domain(a, sp);
}

/* ---- entry --------------------------------------------------------------- */

/*
 * Frames below @sp on the same stack are gone; a slot at @sp that no
 * longer holds the trampoline was reused by a new call.  Instances above
 * @sp are calls in flight (when on another stack, left for later too).
 */
static __attribute__((noinline)) void drop_stale_slow(uint64_t sp,
						       uint64_t ret)
{
	struct altstack alt = { 0, 0, false };
	struct kretprobe_instance *ri;

	while ((ri = dp_tls.ri)) {
		uint64_t fp = (uint64_t)(uintptr_t)ri->fp;

		if (fp == sp ? hijacked(ret) : !abandoned(&alt, ri, sp))
			break;
		dp_tls.ri = ri->__next;
		drop(ri);
	}
}

static void drop_stale(uint64_t sp, uint64_t ret)
{
	const struct kretprobe_instance *ri = dp_tls.ri;

	/* the usual: no call in flight, or the caller's, above */
	if (ri && (uint64_t)(uintptr_t)ri->fp <= sp)
		drop_stale_slow(sp, ret);
}

static int entry_miss(struct kretprobe *rp, struct kretprobe_instance *ri)
{
	if (ri)
		inst_put(rp->rph, rp, ri);
	__atomic_fetch_add(&rp->nmissed, 1, __ATOMIC_RELAXED);
	return 0;
}

int dp_kretprobe_pre(struct kprobe *kp, struct pt_regs *regs)
{
	const uint64_t tramp = (uint64_t)(uintptr_t)dp_kretprobe_trampoline;
	struct kretprobe *rp = (struct kretprobe *)kp;	/* kp comes first */
	struct kretprobe_instance *ri, *top;
	uint64_t sp = regs->sp, ret;
	bool chained = false;

	if (dp_load_nofault((const uint64_t *)(uintptr_t)sp, &ret))
		return entry_miss(rp, NULL);
	drop_stale(sp, ret);
	ri = inst_get(rp->rph);
	if (!ri)
		return entry_miss(rp, NULL);
	ri->fp = (void *)(uintptr_t)sp;
	ri->ret_addr = (kprobe_opcode_t *)(uintptr_t)ret;
	if (hijacked(ret)) {
		/* a tail call from a function whose return is hijacked */
		top = dp_tls.ri;
		if (!top || top->fp != ri->fp)
			return entry_miss(rp, ri);
		ri->ret_addr = top->ret_addr;
		chained = true;
	}
	if (rp->entry_handler && rp->entry_handler(ri, regs)) {
		inst_put(rp->rph, rp, ri);
		return 0;
	}
	if (!chained && dp_store_nofault((uint64_t *)(uintptr_t)sp, tramp))
		return entry_miss(rp, ri);
	ri->__next = dp_tls.ri;
	dp_tls.ri = ri;
	return 0;
}

/* ---- return -------------------------------------------------------------- */

/* Nowhere to return to: our bookkeeping lost a call.  Abort. */
static __attribute__((noreturn)) void no_instance(void)
{
	long pid = dp_raw_syscall(SYS_getpid, 0, 0, 0);

	dp_warn("libdprobe: a function returned to the kretprobe trampoline "
		"with no call in flight on this thread; aborting\n");
	dp_raw_syscall(SYS_tgkill, pid, dp_raw_syscall(SYS_gettid, 0, 0, 0),
		       SIGABRT);
	for (;;)
		dp_raw_syscall(SYS_exit_group, 134, 0, 0);
}

/*
 * The link to the instance of the call whose slot is @fp, not the newest:
 * instances above it on the same stack were abandoned.
 */
static __attribute__((noinline)) struct kretprobe_instance **
find_slow(struct kretprobe_instance **pp, uint64_t fp)
{
	struct altstack alt = { 0, 0, false };
	struct kretprobe_instance *ri;

	while ((ri = *pp) && (uint64_t)(uintptr_t)ri->fp != fp) {
		if (abandoned(&alt, ri, fp)) {
			*pp = ri->__next;
			drop(ri);
			continue;
		}
		pp = &ri->__next;
	}
	if (!ri)
		no_instance();
	return pp;
}

/* Called by trampoline.S with the registers at the return; see there. */
uint64_t dp_kretprobe_handler(struct pt_regs *regs)
{
	uint64_t fp = regs->sp - 8, ret;
	struct kretprobe_instance **pp = &dp_tls.ri, *ri;
	bool busy = dp_tls.depth > 0;
	dp_gp_t gp = dp_gp_enter();

	dp_tls.depth++;
	dp_regs_segments(regs);
	ri = *pp;
	if (!ri || (uint64_t)(uintptr_t)ri->fp != fp)
		ri = *(pp = find_slow(pp, fp));
	ret = (uint64_t)(uintptr_t)ri->ret_addr;
	/* before any handler runs: unwinders read it through the CFI */
	*(uint64_t *)(uintptr_t)fp = ret;
	regs->ip = ret;
	/* this call, and those chained to it by tail calls, newest first */
	while ((ri = *pp) && (uint64_t)(uintptr_t)ri->fp == fp) {
		struct kretprobe_holder *h = ri->rph;
		struct kretprobe *rp = dp_rp_of(ri);

		*pp = ri->__next;
		if (rp && rp->handler && busy) {
			__atomic_fetch_add(&rp->nmissed, 1, __ATOMIC_RELAXED);
		} else if (rp && rp->handler) {
			dp_tls.cur = &rp->kp;
			if (rp->kp.flags & KPROBE_FLAG_NOSIMD)
				rp->handler(ri, regs);
			else
				dp_call_xsave((void *)rp->handler, ri, regs);
			dp_tls.cur = NULL;
		}
		inst_put(h, rp, ri);
	}
	dp_tls.depth--;
	dp_gp_leave(gp);
	return ret;
}

/* ---- unwinding ------------------------------------------------------------ */

/* Every instance of @list dropped (counted in nmissed). */
static void drop_all(struct kretprobe_instance **list)
{
	struct kretprobe_instance *ri;

	while ((ri = *list)) {
		*list = ri->__next;
		drop(ri);
	}
}

/*
 * An unwinder starts: it must find the real return addresses, so each is
 * put back.  The instances are kept aside (dp_tls.suspended), newest
 * first, for the catch to take back those whose frames it did not
 * unwind; a forced unwind (thread cancellation, pthread_exit) has no
 * catch that ends it, and an unwinding that begins while another's
 * instances are still aside (a throw inside a destructor run by the
 * unwinding) must not let the inner catch hijack frames that the outer
 * unwinding has still to walk: in both cases the instances aside are
 * dropped.
 */
void dp_kretprobe_unhijack_thread(bool forced)
{
	struct kretprobe_instance *ri, **tail;

	drop_all(&dp_tls.suspended);
	tail = &dp_tls.suspended;
	while ((ri = dp_tls.ri)) {
		uint64_t cur;

		dp_tls.ri = ri->__next;
		if (!dp_copy_nofault(&cur, ri->fp, sizeof(cur)) && hijacked(cur))
			dp_copy_nofault(ri->fp, &ri->ret_addr, sizeof(cur));
		ri->__next = NULL;
		*tail = ri;
		tail = &ri->__next;
	}
	if (forced)
		drop_all(&dp_tls.suspended);
}

/*
 * May @ri, aside since the unwinding began, be hijacked again at a catch
 * whose stack pointer is @sp?  Its frame must be above @sp on the same
 * stack (below it, the unwinding removed it), its slot must still hold
 * the return address put back, and its return probe must still be
 * registered.
 */
static bool resumable(struct altstack *a, const struct kretprobe_instance *ri,
		      uint64_t sp)
{
	uint64_t fp = (uint64_t)(uintptr_t)ri->fp, cur;

	if (fp <= sp || stack_domain(a, fp) != stack_domain(a, sp))
		return false;
	if (dp_copy_nofault(&cur, ri->fp, sizeof(cur)) ||
	    cur != (uint64_t)(uintptr_t)ri->ret_addr)
		return false;
	return dp_rp_of(ri) != NULL;
}

/*
 * A catch handler begins: the unwinding is over, and the calls whose
 * frames are still there (the catching function and its callers) get
 * their return probes back, so that their returns are reported.  Only
 * when no call is in flight below them: calls made since the unwinding
 * began (destructors) have all returned by the time a catch begins, and
 * anything else is left as it was (dropped, as without this).
 */
void dp_kretprobe_rehijack_thread(uint64_t sp)
{
	const uint64_t tramp = (uint64_t)(uintptr_t)dp_kretprobe_trampoline;
	struct altstack alt = { 0, 0, false };
	struct kretprobe_instance *ri, *keep = NULL, **tail = &keep;
	struct kretprobe_instance *last = NULL;

	drop_stale(sp, 0);
	if (dp_tls.ri) {
		drop_all(&dp_tls.suspended);
		return;
	}
	while ((ri = dp_tls.suspended)) {
		bool chained = last && last->fp == ri->fp;

		dp_tls.suspended = ri->__next;
		/* a call chained by a tail call shares its slot, hijacked
		 * already for the newer one */
		if (!chained && (!resumable(&alt, ri, sp) ||
				 dp_store_nofault((uint64_t *)ri->fp, tramp))) {
			drop(ri);
			continue;
		}
		last = ri;
		ri->__next = NULL;
		*tail = ri;
		tail = &ri->__next;
	}
	dp_tls.ri = keep;
}
