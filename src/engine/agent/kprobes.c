// SPDX-License-Identifier: GPL-2.0
/*
 * The kprobes API (include/dprobe/kprobes.h) over the sites of site.c.
 *
 * Registration, under the mutex:
 *   1. the address: symbol_name (+ offset) or addr (+ offset), never both;
 *   2. it must be in the code of a loaded object, not in libdprobe.so nor
 *      in the signal return trampoline (our own handlers run through it);
 *   3. the kernel's can_probe(): decode from the function's start (our
 *      int3s recovered) and require the address to start an instruction;
 *   4. the site: the instruction analysed (XOL or emulation), its slots;
 *   5. the kprobe is appended to the site's list with a release store and
 *      the site is armed if it was not.
 * Unregistration unlinks the kprobe, disarms the site if no enabled probe
 * is left, then waits for a grace period: after it no handler can still
 * be reading the struct, which the caller may then free.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "engine/agent/agent.h"

static bool in_list(const struct dp_site *s, const struct kprobe *p)
{
	for (const struct kprobe *q = s->probes; q; q = q->__next)
		if (q == p)
			return true;
	return false;
}

/* A kprobe counts as registered only if its site really lists it. */
static bool is_registered(const struct kprobe *p)
{
	const struct dp_site *s = p->__site;

	return s && dp_site_known(s) && in_list(s, p);
}

bool dp_kprobe_registered(const struct kprobe *p)
{
	bool r;

	dp_lock();
	r = p && is_registered(p);
	dp_unlock();
	return r;
}

static int probe_address(const struct kprobe *p, uint64_t *addr)
{
	int err;

	if ((p->symbol_name && p->addr) || (!p->symbol_name && !p->addr))
		return -EINVAL;
	if (p->symbol_name) {
		err = dp_sym_lookup(p->symbol_name, addr);
		if (err)
			return err;
	} else {
		*addr = (uint64_t)(uintptr_t)p->addr;
	}
	*addr += p->offset;
	return 0;
}

/* The kernel's can_probe(): @addr is on an instruction boundary. */
static int check_boundary(uint64_t addr, const struct dp_code_range *r)
{
	size_t len = addr - r->start + DP_INSN_MAX_LEN;
	uint8_t *code;
	int err;

	if (addr == r->start)
		return 0;
	if (r->start + len > r->end)
		len = r->end - r->start;
	code = malloc(len);
	if (!code)
		return -ENOMEM;
	dp_site_recover(r->start, code, len);
	err = dp_insn_boundary(code, len, r->start, addr);
	free(code);
	return err ? -EILSEQ : 0;
}

static int check_place(uint64_t addr, bool func_entry, struct dp_code_range *r)
{
	uint64_t ret = dp_sigreturn_addr();
	int err;

	if (ret && addr >= ret - 16 && addr < ret + 16)
		return -EINVAL;
	err = dp_sym_code_range(addr, r);
	if (err)
		return err;
	if (func_entry && !r->func_entry)
		return -EINVAL;
	return check_boundary(addr, r);
}

static void list_append(struct dp_site *s, struct kprobe *p)
{
	struct kprobe **pp = &s->probes;

	while (*pp)
		pp = &(*pp)->__next;
	p->__next = NULL;
	__atomic_store_n(pp, p, __ATOMIC_RELEASE);
}

/* Readers already on @p go on to p->__next, which stays as it is. */
static void list_remove(struct dp_site *s, struct kprobe *p)
{
	struct kprobe **pp = &s->probes;

	while (*pp && *pp != p)
		pp = &(*pp)->__next;
	if (*pp)
		__atomic_store_n(pp, p->__next, __ATOMIC_RELEASE);
}

int dp_register(struct kprobe *p, bool func_entry)
{
	struct dp_code_range r;
	struct dp_site *s;
	uint64_t addr;
	int err;

	if (!p)
		return -EINVAL;
	if (dp_tls.depth)
		return -EBUSY;
	err = dp_agent_init();
	if (err)
		return err;
	dp_lock();
	if (is_registered(p)) {
		err = -EEXIST;
		goto out;
	}
	err = probe_address(p, &addr);
	if (!err)
		err = check_place(addr, func_entry, &r);
	if (!err)
		err = dp_site_get(addr, &s);
	if (err)
		goto out;
	p->addr = (kprobe_opcode_t *)(uintptr_t)addr;
	p->flags &= KPROBE_FLAG_DISABLED | KPROBE_FLAG_NOOPT |
		    KPROBE_FLAG_NOSIMD | KPROBE_FLAG_RP_THREAD;
	if (r.func_entry)
		p->flags |= KPROBE_FLAG_ON_FUNC_ENTRY;
	p->nmissed = 0;
	p->opcode = s->insn.bytes[0];
	p->__site = s;
	/* before a detour's thread can see it: save the SIMD state for it */
	if (!(p->flags & KPROBE_FLAG_NOSIMD))
		__atomic_store_n(&s->nosimd, false, __ATOMIC_RELEASE);
	/* a probe an optimised hit cannot serve: the int3 back first */
	if (p->post_handler || (p->flags & KPROBE_FLAG_NOOPT) ||
	    p->pre_handler == dp_kretprobe_pre)
		dp_opt_unoptimize(s);
	list_append(s, p);
	err = dp_site_update(s);
	if (err) {
		/* not armed by us: no thread can have seen it in the list */
		list_remove(s, p);
		p->__site = NULL;
	}
out:
	dp_unlock();
	return err;
}

bool dp_unregister_top(struct kprobe *p)
{
	struct dp_site *s;

	if (!p || !is_registered(p))
		return false;
	s = p->__site;
	list_remove(s, p);
	dp_site_update(s);
	return true;
}

void dp_unregister_bottom(struct kprobe *p)
{
	p->__site = NULL;
	p->__next = NULL;
}

DP_EXPORT int register_kprobe(struct kprobe *p)
{
	return dp_register(p, false);
}

/*
 * From a handler, unregistering could wait forever for the grace period
 * (this thread holds a read side, another may hold the mutex and wait for
 * it): refused with a message, as a bug the kernel would also reject.
 */
DP_HIDDEN bool dp_in_handler(const char *what)
{
	if (!dp_tls.depth)
		return false;
	dp_warn("libdprobe: ");
	dp_warn(what);
	dp_warn(" called from a probe handler: ignored\n");
	return true;
}

/*
 * The jumps of the sites that lose their only probe, out together before
 * the probes are unregistered one by one (which then write single int3
 * bytes only).  Under the mutex.
 */
static void unoptimize_leaving(struct kprobe **kps, int num)
{
	struct dp_site **v = malloc((size_t)num * sizeof(*v));
	size_t n = 0;

	if (!v)
		return;
	for (int i = 0; i < num; i++) {
		struct dp_site *s;

		if (!kps[i] || !is_registered(kps[i]))
			continue;
		s = kps[i]->__site;
		if (s->optimized && s->probes == kps[i] && !kps[i]->__next)
			v[n++] = s;
	}
	dp_opt_unoptimize_many(v, n);
	free(v);
}

DP_EXPORT void unregister_kprobes(struct kprobe **kps, int num)
{
	bool *done;

	if (!kps || num <= 0 || dp_in_handler("unregister_kprobe"))
		return;
	done = calloc((size_t)num, sizeof(*done));
	/* the int3s go with one core sync at the end */
	dp_opt_batch_begin();
	dp_lock();
	if (num > 1)
		unoptimize_leaving(kps, num);
	for (int i = 0; i < num; i++) {
		bool d = dp_unregister_top(kps[i]);

		if (done)
			done[i] = d;
	}
	dp_synchronize();
	for (int i = 0; i < num; i++)
		if (!done || done[i])
			dp_unregister_bottom(kps[i]);
	dp_unlock();
	dp_opt_batch_end();
	free(done);
}

DP_EXPORT void unregister_kprobe(struct kprobe *p)
{
	unregister_kprobes(&p, 1);
}

DP_EXPORT int register_kprobes(struct kprobe **kps, int num)
{
	int err;

	if (!kps || num <= 0)
		return -EINVAL;
	/* every int3 first, then the jumps of all at once (opt.c) */
	dp_opt_batch_begin();
	for (int i = 0; i < num; i++) {
		err = register_kprobe(kps[i]);
		if (err) {
			dp_opt_batch_end();
			if (i > 0)
				unregister_kprobes(kps, i);
			return err;
		}
	}
	dp_opt_batch_end();
	return 0;
}

static int set_disabled(struct kprobe *p, bool disable)
{
	int err = 0;

	if (!p)
		return -EINVAL;
	if (dp_tls.depth)
		return -EBUSY;
	dp_lock();
	if (!is_registered(p)) {
		err = -EINVAL;
	} else {
		if (disable)
			__atomic_fetch_or(&p->flags, KPROBE_FLAG_DISABLED,
					  __ATOMIC_RELEASE);
		else
			__atomic_fetch_and(&p->flags, ~KPROBE_FLAG_DISABLED,
					   __ATOMIC_RELEASE);
		err = dp_site_update(p->__site);
		if (err && !disable)
			__atomic_fetch_or(&p->flags, KPROBE_FLAG_DISABLED,
					  __ATOMIC_RELEASE);
	}
	dp_unlock();
	return err;
}

DP_EXPORT int enable_kprobe(struct kprobe *p)
{
	return set_disabled(p, false);
}

DP_EXPORT int disable_kprobe(struct kprobe *p)
{
	return set_disabled(p, true);
}

DP_EXPORT struct kprobe *kprobe_running(void)
{
	return dp_tls.cur;
}

const char *dp_kprobe_strategy(const struct kprobe *p)
{
	const struct dp_site *s = p ? p->__site : NULL;

	if (s && s->optimized)
		return "optimized";
	return s ? dp_insn_strategy(&s->insn) : NULL;
}

DP_EXPORT int kprobe_optimized(const struct kprobe *p)
{
	int r;

	dp_lock();
	r = p && is_registered(p) && ((struct dp_site *)p->__site)->optimized;
	dp_unlock();
	return r;
}

DP_EXPORT const char *kprobe_opt_reason(const struct kprobe *p)
{
	const struct dp_site *s;
	const char *r = NULL;

	dp_lock();
	if (p && is_registered(p)) {
		s = p->__site;
		if (s->optimized)
			r = "";
		else if (kprobe_disabled(p))
			r = "disabled";
		else
			r = s->why ? s->why : "not tried";
	}
	dp_unlock();
	return r;
}

/* The detour and its tail exist once analysed, optimised now or not. */
static void view_of(const struct dp_site *s, struct dp_site_view *v)
{
	uint64_t end = s->addr + s->insn.len;

	*v = (struct dp_site_view){
		.addr = s->addr, .armed = s->armed, .optimized = s->optimized,
		.emulated = !dp_insn_needs_slot(&s->insn), .slot = s->slot,
	};
	if (s->detour) {
		v->patch = s->patch;
		v->nbytes = s->nbytes;
		v->detour = s->detour;
		v->detour_len = s->detour_len;
		v->tail = s->tail;
		if (s->patch + s->nbytes > end)
			end = s->patch + s->nbytes;
	}
	v->orig_len = (unsigned int)(end - s->addr);
	if (v->orig_len > sizeof(v->orig))
		v->orig_len = sizeof(v->orig);
	dp_site_recover(s->addr, v->orig, v->orig_len);
}

int dp_kprobe_view(const struct kprobe *p, struct dp_site_view *v)
{
	int err = -ENOENT;

	dp_lock();
	if (p && is_registered(p)) {
		view_of(p->__site, v);
		err = 0;
	}
	dp_unlock();
	return err;
}

void dp_agent_disarm_all(void)
{
	dp_lock();
	dp_sites_disarm_all();
	dp_unlock();
}

/* ---- registers ---------------------------------------------------------- */

/* The kernel's regoffset_table names, for struct pt_regs. */
static const struct {
	const char *name;
	unsigned int off;
} reg_names[] = {
#define R(n) { #n, __builtin_offsetof(struct pt_regs, n) }
	R(r15), R(r14), R(r13), R(r12), R(r11), R(r10), R(r9), R(r8),
	R(bx), R(cx), R(dx), R(si), R(di), R(bp), R(ax), R(orig_ax),
	R(ip), R(cs), R(flags), R(sp), R(ss),
#undef R
};

DP_EXPORT int regs_query_register_offset(const char *name)
{
	for (size_t i = 0; name && i < sizeof(reg_names) / sizeof(reg_names[0]); i++)
		if (!strcmp(reg_names[i].name, name))
			return (int)reg_names[i].off;
	return -EINVAL;
}

DP_EXPORT const char *regs_query_register_name(unsigned int offset)
{
	for (size_t i = 0; i < sizeof(reg_names) / sizeof(reg_names[0]); i++)
		if (reg_names[i].off == offset)
			return reg_names[i].name;
	return NULL;
}

DP_EXPORT unsigned long regs_get_kernel_stack_nth(const struct pt_regs *regs,
						  unsigned int n)
{
	unsigned long v;

	if (dp_probe_read(&v, (const void *)(regs->sp + 8ul * n), sizeof(v)))
		return 0;
	return v;
}

DP_EXPORT unsigned long regs_get_kernel_argument(const struct pt_regs *regs,
						 unsigned int n)
{
	static const unsigned int args[] = {
		__builtin_offsetof(struct pt_regs, di),
		__builtin_offsetof(struct pt_regs, si),
		__builtin_offsetof(struct pt_regs, dx),
		__builtin_offsetof(struct pt_regs, cx),
		__builtin_offsetof(struct pt_regs, r8),
		__builtin_offsetof(struct pt_regs, r9),
	};

	if (n < 6)
		return regs_get_register(regs, args[n]);
	/* word 0 above sp at an entry is the return address */
	return regs_get_kernel_stack_nth(regs, n - 5);
}
