// SPDX-License-Identifier: GPL-2.0
/*
 * Probed addresses ("sites"): what the int3 displaced, its slots, and the
 * kprobes on it.
 *
 * The table is a fixed array of hash chains that readers (the SIGTRAP
 * handler) walk with no lock.  A site is inserted at the head of its chain
 * with a release store after it is fully built, and is never unlinked or
 * freed: a thread may trap on an int3 an instant before it is removed and
 * reach the handler after, and must still find the site to be sent back
 * to the original instruction.  A site that loses its probes stays,
 * disarmed, and is reused when its address is probed again with the same
 * code there; if the code has changed (another library mapped there), a
 * new site is inserted in front of the old one.
 *
 * States seen by the handler, and the order of the writes that make them:
 *   arm:    armed = 1 (release), then the int3 is written;
 *   disarm: the original byte is written back, then armed = 0 (release).
 * So a trap on a site whose armed is 0 finds either our byte gone (it was
 * removed meanwhile: rerun the original instruction) or an int3 that is
 * not ours (passed on to the program).
 *
 * The guards of signal.c (int3s on libc's sigaction() and mask functions,
 * when the library was dlopen()ed, or jumps on the mask functions:
 * maskguard.c, whose byte a probe's int3 covers and gives back when it
 * goes) are there for the other probes: they
 * are armed before the first site with another enabled probe is, and
 * disarmed after the last such site is (armed_users), so that nothing of
 * ours stays in the code when nothing is probed (dprobe detached).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/agent/agent.h"
#include "util/ptab.h"

#define HASH_BITS 12
/* sites by the 64-byte chunk their address is in, and by pointer (under
 * the mutex: registering, not the hit path, looks there) */
#define CHUNK_SHIFT 6
/* the furthest an optimised site's replaced bytes reach past its address:
 * an endbr64, then the region */
#define REGION_REACH (4 + sizeof(((struct dp_site *)0)->orig))

static struct dp_site *buckets[1u << HASH_BITS];
static struct dp_site *all_sites;
static struct dp_ptab by_chunk, by_ptr;
/* sites with ->counted set (under the mutex) */
static int armed_users;

static unsigned int site_hash(uint64_t addr)
{
	return (unsigned int)((addr * 0x9e3779b97f4a7c15ull) >> (64 - HASH_BITS));
}

struct dp_site *dp_site_lookup(uint64_t addr)
{
	struct dp_site *s;

	s = __atomic_load_n(&buckets[site_hash(addr)], __ATOMIC_ACQUIRE);
	for (; s; s = s->hnext)
		if (s->addr == addr)
			return s;
	return NULL;
}

struct dp_site *dp_sites_first(void)
{
	return all_sites;
}

bool dp_site_known(const struct dp_site *s)
{
	uint64_t h = dp_hash_u64((uint64_t)(uintptr_t)s);
	size_t pos = DP_PTAB_START;
	void **v;

	while ((v = dp_ptab_next(&by_ptr, h, &pos)))
		if (*v == s)
			return true;
	return false;
}

/*
 * @fn on each site whose address is in [@lo, @hi), until it returns
 * true; O(sites there + chunks), not O(all sites).
 */
bool dp_sites_in(uint64_t lo, uint64_t hi,
		 bool (*fn)(struct dp_site *s, void *arg), void *arg)
{
	if (lo >= hi)
		return false;
	for (uint64_t c = lo >> CHUNK_SHIFT; c <= (hi - 1) >> CHUNK_SHIFT; c++) {
		uint64_t h = dp_hash_u64(c);
		size_t pos = DP_PTAB_START;
		void **v;

		while ((v = dp_ptab_next(&by_chunk, h, &pos))) {
			struct dp_site *s = *v;

			if (s->addr >= lo && s->addr < hi && fn(s, arg))
				return true;
		}
	}
	return false;
}

struct recover_buf {
	uint64_t addr;
	uint8_t *buf;
	size_t len;
};

static bool recover_one(struct dp_site *s, void *arg)
{
	struct recover_buf *r = arg;

	if (s->armed && s->addr - r->addr < r->len)
		r->buf[s->addr - r->addr] = s->insn.bytes[0];
	/* a short site's jmp before the symbol: over one-byte nops */
	for (unsigned int i = 0; s->pre_in && i < DP_ENTRY_PRE_LEN; i++)
		if (s->pre + i - r->addr < r->len)
			r->buf[s->pre + i - r->addr] = 0x90;
	if (!s->optimized)
		return false;
	/* the jmp of an optimised site: its replaced bytes */
	for (unsigned int i = 0; i < s->nbytes; i++)
		if (s->patch + i - r->addr < r->len)
			r->buf[s->patch + i - r->addr] = s->orig[i];
	return false;
}

void dp_site_recover(uint64_t addr, uint8_t *buf, size_t len)
{
	struct recover_buf r = { addr, buf, len };
	uint64_t lo = addr > REGION_REACH ? addr - REGION_REACH : 0;

	memcpy(buf, (const void *)(uintptr_t)addr, len);
	dp_maskguard_recover(addr, buf, len);
	/* (a site up to 5 bytes past: its jmp before the symbol) */
	dp_sites_in(lo, addr + len + DP_ENTRY_PRE_LEN, recover_one, &r);
}

/*
 * Some probe on @s is enabled (a guard counts only while the guards are
 * to be armed, and not where a jump does its work: maskguard.c); *@user:
 * one that is not a guard.  A guard whose jump an int3 covers still runs
 * from the int3.
 */
static bool wants_arming(const struct dp_site *s, bool *user)
{
	bool want = false;

	*user = false;
	for (const struct kprobe *p = s->probes; p; p = p->__next) {
		if (kprobe_disabled(p))
			continue;
		if (!dp_signals_is_guard(p))
			*user = true;
		else if (!dp_signals_guard_armed() ||
			 dp_maskguard_has(s->addr))
			continue;
		want = true;
	}
	return want;
}

/*
 * The guards go with the last counted site.  Set before the recursion
 * of dp_signals_guard_set() into the guards' own sites, which are never
 * counted unless another probe shares one: then it is counted already.
 */
static void count(struct dp_site *s)
{
	s->counted = true;
	if (armed_users++ == 0)
		dp_signals_guard_set(true);
}

static void uncount(struct dp_site *s)
{
	s->counted = false;
	if (--armed_users == 0)
		dp_signals_guard_set(false);
}

/* What the code has at @s->addr while our int3 is not there. */
static uint8_t resting_byte(const struct dp_site *s)
{
	uint8_t b = s->insn.bytes[0];

	dp_maskguard_resting(s->addr, &b);
	return b;
}

int dp_site_update(struct dp_site *s)
{
	const uint8_t int3 = DP_INT3;
	bool user, want = wants_arming(s, &user);
	uint8_t rest;
	int err;

	/* the guards are in before this int3 */
	if (user && !s->counted)
		count(s);
	/* (after them: their jump may be the byte this int3 replaces) */
	rest = resting_byte(s);
	if (want && !s->armed) {
		dp_opt_make_room(s->addr);
		__atomic_store_n(&s->armed, 1, __ATOMIC_RELEASE);
		/* in a batch, its end syncs the cores once for all */
		err = dp_opt_batching() ?
			dp_text_queue(s->addr, &int3, 1, &rest) :
			dp_text_write(s->addr, &int3, 1, &rest);
		if (err) {
			__atomic_store_n(&s->armed, 0, __ATOMIC_RELEASE);
			if (s->counted)
				uncount(s);
			return err == -EBUSY ? -EOPNOTSUPP : err;
		}
	} else if (!want && s->armed) {
		dp_opt_unoptimize(s);
		/* not our int3 any more (the code was replaced): leave it */
		if (dp_opt_batching())
			dp_text_write_lazy(s->addr, &rest, 1, &int3);
		else
			dp_text_write(s->addr, &rest, 1, &int3);
		__atomic_store_n(&s->armed, 0, __ATOMIC_RELEASE);
	}
	/* ...and out after it */
	if (!user && s->counted)
		uncount(s);
	dp_opt_update(s);
	return 0;
}

/* The optimised sites' jumps out, all together; false: no memory. */
static bool unoptimize_all(void)
{
	struct dp_site **v;
	size_t n = 0;

	for (struct dp_site *s = all_sites; s; s = s->all_next)
		n += s->optimized;
	v = malloc(n * sizeof(*v) + 1);
	if (!v)
		return false;
	n = 0;
	for (struct dp_site *s = all_sites; s; s = s->all_next)
		if (s->optimized)
			v[n++] = s;
	dp_opt_unoptimize_many(v, n);
	free(v);
	return true;
}

void dp_sites_disarm_all(void)
{
	const uint8_t int3 = DP_INT3;
	bool batch = unoptimize_all();

	for (struct dp_site *s = all_sites; s; s = s->all_next) {
		uint8_t rest = resting_byte(s);

		s->counted = false;
		if (!s->armed)
			continue;
		dp_opt_unoptimize(s);
		/* single bytes: one sync after them all */
		if (batch)
			dp_text_write_lazy(s->addr, &rest, 1, &int3);
		else
			dp_text_write(s->addr, &rest, 1, &int3);
		__atomic_store_n(&s->armed, 0, __ATOMIC_RELEASE);
	}
	dp_text_sync();
	/* the guards' sites went above with the rest: none is wanted now */
	armed_users = 0;
	dp_signals_guard_forget();
}

/*
 * Decide how the instruction at @addr (bytes @code, @avail of them) is
 * handled and build its slots.
 */
static int site_make(uint64_t addr, const uint8_t *code, size_t avail,
		     struct dp_site **out)
{
	struct dp_site *s = calloc(1, sizeof(*s));
	unsigned int h = site_hash(addr);
	int err;

	if (!s)
		return -ENOMEM;
	s->addr = addr;
	err = dp_insn_analyze(code, avail, addr, &s->insn, NULL);
	/* an int3 we do not own: another debugger's, or the program's */
	if (err == -EEXIST)
		err = -EOPNOTSUPP;
	/* %gs operands need gs_base, which only rdgsbase gives cheaply */
	if (!err && s->insn.rm.seg == DP_SEG_GS && !dp_have_fsgsbase &&
	    (s->insn.op == DP_OP_CALL_IND || s->insn.op == DP_OP_JMP_IND))
		err = -EOPNOTSUPP;
	if (!err)
		err = dp_slots_build(s);
	if (!err && dp_ptab_grow(&by_chunk) + dp_ptab_grow(&by_ptr))
		err = -ENOMEM;
	if (err) {
		free(s);
		return err;
	}
	/* (room made above: these cannot fail) */
	dp_ptab_add(&by_chunk, dp_hash_u64(addr >> CHUNK_SHIFT), s);
	dp_ptab_add(&by_ptr, dp_hash_u64((uint64_t)(uintptr_t)s), s);
	s->hnext = buckets[h];
	__atomic_store_n(&buckets[h], s, __ATOMIC_RELEASE);
	s->all_next = all_sites;
	all_sites = s;
	*out = s;
	return 0;
}

int dp_site_get(uint64_t addr, struct dp_site **out)
{
	struct dp_code_range r;
	uint8_t code[DP_INSN_MAX_LEN];
	struct dp_site *s;
	size_t avail;
	int err = dp_sym_code_range(addr, &r);

	if (err)
		return err;
	avail = r.end - addr < sizeof(code) ? r.end - addr : sizeof(code);
	dp_site_recover(addr, code, avail);
	s = dp_site_lookup(addr);
	if (s && s->insn.len <= avail && !memcmp(s->insn.bytes, code, s->insn.len)) {
		*out = s;
		return 0;
	}
	return site_make(addr, code, avail, out);
}
