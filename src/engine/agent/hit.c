// SPDX-License-Identifier: GPL-2.0
/*
 * The hit path: a thread executed one of our int3s and the kernel
 * delivered SIGTRAP to it.  From the ucontext we make a struct pt_regs,
 * run the pre handlers, and let the displaced instruction take effect:
 *
 *   XOL       the signal returns into the site's slot (a copy of the
 *             instruction and a jump back), or into its post form when a
 *             post handler must run, which traps once more right after the
 *             copy (post_hit());
 *   emulated  the instruction is applied to the registers here and the
 *             post handlers run at once.  If its memory access faults
 *             (call *(%rax) through a bad pointer, a full stack), the
 *             thread is sent to the fault slot, which performs the same
 *             access so that the program gets the genuine SIGSEGV.
 *
 * Nothing here calls a library function, allocates, or takes a lock; the
 * file is built with -mgeneral-regs-only like the rest of the library.
 * The registers written back are those the handlers left in pt_regs.
 */
#include <errno.h>
#include <signal.h>

#include "engine/agent/agent.h"

_Static_assert(sizeof(struct pt_regs) == sizeof(struct dp_regs),
	       "struct pt_regs must have struct dp_regs' layout");
_Static_assert(__builtin_offsetof(struct pt_regs, gs) ==
	       __builtin_offsetof(struct dp_regs, gs), "pt_regs layout");

#define SIGBIT(s) (1ul << ((s) - 1))

/* ---- registers ---------------------------------------------------------- */

/*
 * fs_base is the thread pointer, which the x86-64 TLS ABI also stores at
 * %fs:0 (our own TLS accesses rely on it too): a load, cheaper than
 * rdfsbase.  gs_base has no such copy.
 */
void dp_regs_bases(struct pt_regs *r)
{
	unsigned long v;

	__asm__("mov %%fs:0, %0" : "=r"(v));
	r->fs_base = v;
	r->gs_base = 0;
	if (dp_have_fsgsbase) {
		__asm__ volatile("rdgsbase %0" : "=r"(v));
		r->gs_base = v;
	}
}

void dp_regs_from_uc(const ucontext_t *uc, struct pt_regs *r)
{
	const greg_t *g = uc->uc_mcontext.gregs;
	unsigned long seg = (unsigned long)g[REG_CSGSFS];

	r->r15 = g[REG_R15];
	r->r14 = g[REG_R14];
	r->r13 = g[REG_R13];
	r->r12 = g[REG_R12];
	r->bp = g[REG_RBP];
	r->bx = g[REG_RBX];
	r->r11 = g[REG_R11];
	r->r10 = g[REG_R10];
	r->r9 = g[REG_R9];
	r->r8 = g[REG_R8];
	r->ax = g[REG_RAX];
	r->cx = g[REG_RCX];
	r->dx = g[REG_RDX];
	r->si = g[REG_RSI];
	r->di = g[REG_RDI];
	r->orig_ax = -1ul;
	r->ip = g[REG_RIP];
	r->flags = g[REG_EFL];
	r->sp = g[REG_RSP];
	/* sigcontext packs cs, gs, fs and ss in 16 bits each */
	r->cs = seg & 0xffff;
	r->gs = (seg >> 16) & 0xffff;
	r->fs = (seg >> 32) & 0xffff;
	r->ss = seg >> 48;
	r->ds = r->es = 0;
	dp_regs_bases(r);
}

void dp_regs_to_uc(const struct pt_regs *r, ucontext_t *uc)
{
	greg_t *g = uc->uc_mcontext.gregs;

	g[REG_R15] = r->r15;
	g[REG_R14] = r->r14;
	g[REG_R13] = r->r13;
	g[REG_R12] = r->r12;
	g[REG_RBP] = r->bp;
	g[REG_RBX] = r->bx;
	g[REG_R11] = r->r11;
	g[REG_R10] = r->r10;
	g[REG_R9] = r->r9;
	g[REG_R8] = r->r8;
	g[REG_RAX] = r->ax;
	g[REG_RCX] = r->cx;
	g[REG_RDX] = r->dx;
	g[REG_RSI] = r->si;
	g[REG_RDI] = r->di;
	g[REG_RIP] = r->ip;
	/* sigreturn keeps only the flags user code may change */
	g[REG_EFL] = r->flags;
	g[REG_RSP] = r->sp;
}

/* Copies pt_regs field by field: a struct copy could become a memcpy(). */
static void regs_copy(struct pt_regs *dst, const struct pt_regs *src)
{
	const unsigned long *s = (const unsigned long *)src;
	unsigned long *d = (unsigned long *)dst;

	for (unsigned int i = 0; i < sizeof(*src) / sizeof(*s); i++)
		d[i] = s[i];
}

/* ---- memory for the emulation, without faulting -------------------------- */

static int mem_read(void *priv, uint64_t addr, void *dst, size_t len)
{
	(void)priv;
	return dp_copy_nofault(dst, (const void *)(uintptr_t)addr, len) ?
	       -EFAULT : 0;
}

static int mem_write(void *priv, uint64_t addr, const void *src, size_t len)
{
	(void)priv;
	return dp_copy_nofault((void *)(uintptr_t)addr, src, len) ? -EFAULT : 0;
}

static const struct dp_insn_mem nofault_mem = { mem_read, mem_write, NULL };

/* ---- handlers ------------------------------------------------------------ */

static bool enabled(const struct kprobe *p)
{
	return !(__atomic_load_n(&p->flags, __ATOMIC_RELAXED) &
		 (KPROBE_FLAG_DISABLED | KPROBE_FLAG_GONE));
}

static struct kprobe *first(const struct dp_site *s)
{
	return __atomic_load_n(&s->probes, __ATOMIC_ACQUIRE);
}

static struct kprobe *next(const struct kprobe *p)
{
	return __atomic_load_n(&p->__next, __ATOMIC_ACQUIRE);
}

/*
 * The kernel's aggregate pre handler: each enabled probe's pre_handler in
 * turn; the first that returns non-zero ends the walk and the single-step.
 * *@post: some enabled probe has a post handler.
 */
static int run_pre(const struct dp_site *s, struct pt_regs *regs, bool *post)
{
	for (struct kprobe *p = first(s); p; p = next(p)) {
		int r;

		if (!enabled(p))
			continue;
		if (p->post_handler)
			*post = true;
		if (!p->pre_handler)
			continue;
		dp_tls.cur = p;
		r = p->pre_handler(p, regs);
		dp_tls.cur = NULL;
		if (r)
			return r;
	}
	return 0;
}

static void run_post(const struct dp_site *s, struct pt_regs *regs)
{
	for (struct kprobe *p = first(s); p; p = next(p)) {
		if (!enabled(p) || !p->post_handler)
			continue;
		dp_tls.cur = p;
		p->post_handler(p, regs, 0);
		dp_tls.cur = NULL;
	}
}

static void count_missed(const struct dp_site *s)
{
	for (struct kprobe *p = first(s); p; p = next(p))
		if (enabled(p))
			__atomic_fetch_add(&p->nmissed, 1, __ATOMIC_RELAXED);
}

/*
 * Let the displaced instruction take effect: @regs->ip becomes the slot
 * to resume in, or the instruction is emulated on @regs (then post
 * handlers run here).  @blocked: the thread blocks SIGSEGV or SIGBUS, so a
 * fault in our own memory accesses would kill it; the fault slot then
 * performs the access as the real instruction would.
 */
static void step(const struct dp_site *s, struct pt_regs *regs, bool post,
		 bool blocked)
{
	const struct dp_insn *in = &s->insn;
	uint64_t tail = __atomic_load_n(&s->step, __ATOMIC_ACQUIRE);
	struct pt_regs r;

	/*
	 * Optimised, or being optimised: skip the whole replaced region.  Or
	 * a tracepoint's jump site whose nop or jmp is being exchanged
	 * (tracepoint.c): where it goes, as if emulated, and then the post
	 * handlers, which no optimised site has.
	 */
	if (tail) {
		regs->ip = tail;
		if (post)
			run_post(s, regs);
		return;
	}
	if (dp_insn_needs_slot(in)) {
		regs->ip = s->slot + (post ? DP_SLOT_POST : 0);
		return;
	}
	if (dp_insn_may_fault(in) && blocked) {
		regs->ip = s->slot;
		return;
	}
	regs_copy(&r, regs);
	if (dp_insn_emulate(in, (struct dp_regs *)&r, &nofault_mem)) {
		regs->ip = s->slot;
		return;
	}
	regs_copy(regs, &r);
	if (post)
		run_post(s, regs);
}

static bool fault_sigs_blocked(const ucontext_t *uc)
{
	return uc->uc_sigmask.__val[0] & (SIGBIT(SIGSEGV) | SIGBIT(SIGBUS));
}

static bool site_hit(struct dp_site *s, ucontext_t *uc)
{
	bool post = false, blocked = fault_sigs_blocked(uc);
	struct pt_regs regs;
	dp_gp_t gp;

	if (!__atomic_load_n(&s->armed, __ATOMIC_ACQUIRE)) {
		if (*(volatile const uint8_t *)(uintptr_t)s->addr == DP_INT3)
			return false;
		/* removed after the trap: run the original instruction */
		uc->uc_mcontext.gregs[REG_RIP] = (greg_t)s->addr;
		return true;
	}
	gp = dp_gp_enter();
	dp_regs_from_uc(uc, &regs);
	if (dp_tls.depth) {
		/* a hit from inside a handler: counted, not handled */
		count_missed(s);
		step(s, &regs, false, blocked);
	} else {
		dp_tls.depth++;
		dp_tls.segv_blocked = blocked;
		dp_tls.uc = uc;
		regs.ip = s->addr + 1;	/* as the kernel: after the int3 */
		if (!run_pre(s, &regs, &post))
			step(s, &regs, post, blocked);
		dp_tls.uc = NULL;
		dp_tls.segv_blocked = false;
		dp_tls.depth--;
	}
	dp_regs_to_uc(&regs, uc);
	dp_gp_leave(gp);
	return true;
}

/* The int3 after the copy in a post slot: the instruction has run. */
static bool post_hit(struct dp_site *s, ucontext_t *uc)
{
	struct pt_regs regs;
	dp_gp_t gp = dp_gp_enter();

	dp_regs_from_uc(uc, &regs);
	regs.ip = s->addr + s->insn.len;
	if (!dp_tls.depth && __atomic_load_n(&s->armed, __ATOMIC_ACQUIRE)) {
		dp_tls.depth++;
		dp_tls.segv_blocked = fault_sigs_blocked(uc);
		run_post(s, &regs);
		dp_tls.segv_blocked = false;
		dp_tls.depth--;
	}
	dp_regs_to_uc(&regs, uc);
	dp_gp_leave(gp);
	return true;
}

/*
 * The int3 of dp_text_poke(): while the poke is in progress, resume where
 * the caller said; after it (the trap came an instant before the int3
 * went), run what is there now.  An int3 there that no poke put (a
 * kprobe's, armed after the poke) is left to the probe-site lookup.  The
 * sequence count tells a poke that started or ended while we looked.
 */
static bool poke_hit(ucontext_t *uc, uint64_t addr)
{
	const struct dp_poke *p = dp_poke_lookup(addr);
	greg_t *ip = &uc->uc_mcontext.gregs[REG_RIP];

	if (!p)
		return false;
	for (;;) {
		unsigned int seq = __atomic_load_n(&p->seq, __ATOMIC_ACQUIRE);
		uint64_t dest = __atomic_load_n(&p->dest, __ATOMIC_RELAXED);
		uint8_t byte = *(volatile const uint8_t *)(uintptr_t)addr;

		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&p->seq, __ATOMIC_RELAXED) != seq)
			continue;
		if (seq & 1) {
			*ip = (greg_t)dest;
			return true;
		}
		if (byte != DP_INT3) {
			*ip = (greg_t)addr;
			return true;
		}
		return false;
	}
}

bool dp_hit_trap(ucontext_t *uc)
{
	uint64_t addr = (uint64_t)uc->uc_mcontext.gregs[REG_RIP] - 1, pair;
	struct dp_site *s;

	if (poke_hit(uc, addr))
		return true;
	s = dp_site_lookup(addr);
	if (s)
		return site_hit(s, uc);
	s = dp_slot_site(addr, &pair);
	if (s && s->slot == pair && dp_insn_needs_slot(&s->insn) &&
	    addr == pair + DP_SLOT_POST + s->insn.len)
		return post_hit(s, uc);
	return false;
}
