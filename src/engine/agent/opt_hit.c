// SPDX-License-Identifier: GPL-2.0
/*
 * The hit path of jump-optimised sites, and the answer to DP_SIG_WHERE.
 *
 * A detour (arch/x86_64/optprobe.c) saved the general registers as a
 * struct pt_regs and called opt_entry.S, which calls dp_opt_hit(): the
 * pre handlers run as from the int3 (same recursion guard, grace-period
 * read side and nmissed counts), with no signal.  When it returns, the
 * detour restores the registers from the frame, so handlers' changes to
 * them take effect; ip and sp are not taken back (see kprobes.h).
 *
 * Like hit.c, nothing here calls a library function, takes a lock or
 * allocates.
 */
#include <signal.h>

#include "engine/agent/agent.h"

_Static_assert(__builtin_offsetof(struct dp_site, nosimd) == 8,
	       "opt_entry.S reads site->nosimd at offset 8");

struct dp_where dp_where;

static bool enabled(const struct kprobe *p)
{
	return !(__atomic_load_n(&p->flags, __ATOMIC_RELAXED) &
		 (KPROBE_FLAG_DISABLED | KPROBE_FLAG_GONE));
}

/*
 * The segment selectors: constant for a 64-bit Linux process (cs, ss) or
 * in practice (fs, gs are 0, the bases doing the work); read once, at
 * initialisation, since a read of a segment register costs more than the
 * rest of the frame.
 */
unsigned long dp_sel_cs, dp_sel_ss, dp_sel_fs, dp_sel_gs;

void dp_regs_init(void)
{
	unsigned long v;

	__asm__ volatile("mov %%cs, %k0" : "=r"(v));
	dp_sel_cs = v & 0xffff;
	__asm__ volatile("mov %%ss, %k0" : "=r"(v));
	dp_sel_ss = v & 0xffff;
	__asm__ volatile("mov %%fs, %k0" : "=r"(v));
	dp_sel_fs = v & 0xffff;
	__asm__ volatile("mov %%gs, %k0" : "=r"(v));
	dp_sel_gs = v & 0xffff;
}

/* What the int3 path fills and a detour does not save. */
static void regs_complete(struct pt_regs *regs, const struct dp_site *s)
{
	regs->ip = s->addr + 1;		/* as after the int3 */
	/* dead at a function entry: what user code always has, IF set */
	if (!s->flags_live)
		regs->flags = 0x202;
	dp_regs_segments(regs);
}

void dp_opt_hit(struct pt_regs *regs, struct dp_site *s)
{
	dp_gp_t gp = dp_gp_enter();
	struct kprobe *p = __atomic_load_n(&s->probes, __ATOMIC_ACQUIRE);

	if (dp_tls.depth) {
		/* a hit from inside a handler: counted, not handled */
		for (; p; p = __atomic_load_n(&p->__next, __ATOMIC_ACQUIRE))
			if (enabled(p))
				__atomic_fetch_add(&p->nmissed, 1,
						   __ATOMIC_RELAXED);
		dp_gp_leave(gp);
		return;
	}
	dp_tls.depth++;
	regs_complete(regs, s);
	/* as the kernel's optimized_callback: the return value is ignored */
	for (; p; p = __atomic_load_n(&p->__next, __ATOMIC_ACQUIRE)) {
		if (!enabled(p) || !p->pre_handler)
			continue;
		dp_tls.cur = p;
		p->pre_handler(p, regs);
		dp_tls.cur = NULL;
	}
	dp_tls.depth--;
	dp_gp_leave(gp);
}

/* ---- DP_SIG_WHERE ---------------------------------------------------------- */

/* The kernel's rt_sigframe: return address, struct ucontext, siginfo. */
#define FRAME_UC	8
#define FRAME_INFO	(8 + 304)
#define UC_RIP		__builtin_offsetof(ucontext_t, uc_mcontext.gregs[REG_RIP])
#define SCAN_BYTES	(64 * 1024)
#define CHUNK		64

/*
 * The range @ip is inside, or NULL: the last range starting at or before
 * it (a binary search), then back while an earlier one may still reach
 * it (ranges of a batch do not overlap, but that is not relied on).
 */
static const struct dp_where_range *ip_inside(uint64_t ip)
{
	const struct dp_where_range *r = dp_where.r;
	size_t lo = 0, hi = dp_where.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo-- > 0 && r[lo].maxend > ip)
		if (ip < r[lo].end)
			return &r[lo];
	return NULL;
}

/*
 * A context saved in a signal frame at @frame (the word holding the
 * return address into the restorer): inside?  An int3 trap on the probe
 * itself is not: its handler will send the thread to site->step.
 */
static bool frame_inside(uint64_t frame)
{
	const struct dp_where_range *in;
	uint64_t ip;
	int info[3];

	if (dp_copy_nofault(&ip, (const void *)(uintptr_t)(frame + FRAME_UC +
							    UC_RIP), 8))
		return false;
	in = ip_inside(ip);
	if (!in)
		return false;
	if (in->trap && ip == in->trap + 1 &&
	    !dp_copy_nofault(info, (const void *)(uintptr_t)(frame + FRAME_INFO),
			     sizeof(info)) &&
	    info[0] == SIGTRAP && info[2] == SI_KERNEL)
		return false;
	return true;
}

/*
 * A thread interrupted while inside the bytes may be running a signal
 * handler on top of that: the interrupted context is in a signal frame
 * above the stack pointer, found by its return address (the restorer).
 * Stray copies of that address only make us retry later.
 */
static bool frames_inside(uint64_t sp, uint64_t ip)
{
	const uint64_t r = dp_where.restorer;
	uint64_t w[CHUNK / 8];

	if (!r)
		return false;
	/* in the restorer itself, the frame's return address is popped */
	if (ip - r < 16 && frame_inside(sp - 8))
		return true;
	for (uint64_t a = sp & ~7ull; a < sp + SCAN_BYTES; a += CHUNK) {
		if (dp_copy_nofault(w, (const void *)(uintptr_t)a, CHUNK))
			break;	/* the top of this stack */
		for (unsigned int i = 0; i < CHUNK / 8; i++)
			if (w[i] == r && frame_inside(a + 8 * i))
				return true;
	}
	return false;
}

bool dp_opt_where_blocked(uint64_t sp, uint64_t ip)
{
	return ip_inside(ip) || frames_inside(sp, ip);
}

bool dp_opt_where(siginfo_t *si, ucontext_t *uc)
{
	const greg_t *g = uc->uc_mcontext.gregs;
	uint64_t v = (uint64_t)(uintptr_t)si->si_value.sival_ptr;
	bool in;

	if (si->si_code != SI_QUEUE || v >> 32 != DP_WHERE_MAGIC ||
	    si->si_pid != __atomic_load_n(&dp_where.pid, __ATOMIC_RELAXED))
		return false;
	if ((uint32_t)v !=
	    (uint32_t)__atomic_load_n(&dp_where.gen, __ATOMIC_ACQUIRE))
		return true;	/* an earlier round's, already given up */
	in = ip_inside((uint64_t)g[REG_RIP]) ||
	     frames_inside((uint64_t)g[REG_RSP], (uint64_t)g[REG_RIP]);
	if (in)
		__atomic_fetch_add(&dp_where.inside, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&dp_where.answers, 1, __ATOMIC_RELEASE);
	return true;
}
