/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Aggregation tables: hist triggers kept inside the traced processes.
 *
 * A hist trigger whose keys and values are numbers of a fixed-size record
 * (event/hist.c decides, dp_hist_agg_spec()) need not have its records
 * made at all: the agent adds each hit into a table in memory shared with
 * dprobe, which reads what the entries went up by (inproc/agg.c) and adds
 * that to the trigger's histogram.  No event is lost to a full ring, and
 * a hit costs a lookup and two or three atomic adds.
 *
 * One memfd per session, mapped by every agent of it (a fork child keeps
 * its parent's mapping, an exec'd image is sent it again), so the tables
 * hold no pointers.  It starts with the owners' page, then each trigger's
 * DP_AGG_SLOTS tables.  A thread claims a slot of its own the first time
 * it aggregates (the owner word: its pid and tid, by compare-and-swap)
 * and adds into that slot's tables with plain read-modify-write
 * instructions: one writer, and a signal handler on the same thread runs
 * between two instructions, never inside one.  A thread that finds every
 * slot taken shares slot 0, whose adds are atomic.  dprobe sums the slots
 * and frees the slot of a thread that is gone (its owner word back to 0):
 * the next owner adds on top of what is there.
 *
 * A table is a header and 2 << bits entries, of which at most 1 << bits
 * are used, as the kernel's tracing_map: a new key that finds the table
 * full is dropped and counted.  Entries are claimed with a
 * compare-and-swap of their tag (0: free, DP_AGG_TAG_BUSY: being filled,
 * else the key's hash with the top bit set, published after the key)
 * and never freed while the session runs.
 *
 * Like ring/ring_api.h, this is header-only and calls nothing (no libc, no
 * floating point): the agent runs it inside probe handlers.  The memory
 * is the traced process's too: dprobe reads it as hostile, bounding every
 * loop by the size it made, never by what the table says.
 */
#ifndef DPROBE_EVENT_AGG_H
#define DPROBE_EVENT_AGG_H

#include <stdbool.h>
#include <stdint.h>

#define DP_AGG_MAX_KEYS		3
#define DP_AGG_MAX_VALS		2	/* a hist trigger's, besides the hit count */
#define DP_AGG_NVALS		3	/* an entry's: latency's sum, max and min */
#define DP_AGG_PER_PROBE	4	/* tables one probe feeds */
#define DP_AGG_REC_MAX		512	/* record bytes a hit is fetched into */
#define DP_AGG_BITS_MIN		7
#define DP_AGG_BITS_MAX		17
#define DP_AGG_TAG_BUSY		1ull
#define DP_AGG_SPIN		256	/* waits for a busy entry, then drop */
#define DP_AGG_SLOTS		32	/* tables per trigger: slot 0 shared */
#define DP_AGG_OWNERS_SIZE	4096	/* the memfd's first page: owners */

enum dp_agg_mode {
	DP_AGG_RAW,		/* a key as it is; a value summed */
	DP_AGG_LOG2,		/* .log2: the kernel's ilog2(roundup_pow_of_two),
				 * of the value divided by arg first if arg > 1
				 * (dprobe latency --us) */
	DP_AGG_BUCKET,		/* .buckets=N: rounded down to a multiple */
	/* values only: the entry keeps the largest, or the smallest (as the
	 * largest of its complement, so that 0 still means "none yet") */
	DP_AGG_MAX,
	DP_AGG_MIN,
};

/* A key or value: @size bytes at @off of the record. */
struct dp_agg_field {
	uint16_t off;
	uint8_t size;		/* 1, 2, 4 or 8 */
	uint8_t is_signed;
	uint8_t mode;		/* enum dp_agg_mode */
	uint64_t arg;		/* DP_AGG_BUCKET: the bucket size, > 0;
				 * DP_AGG_LOG2: a divisor, or 0 */
};

/* What one table aggregates, and where it lies in the shared memory. */
struct dp_agg_spec {
	uint32_t nkeys, nvals;
	struct dp_agg_field key[DP_AGG_MAX_KEYS];
	struct dp_agg_field val[DP_AGG_NVALS];
	uint32_t bits;		/* 2 << bits entries, 1 << bits used at most */
	uint32_t rec_size;	/* the fields lie in this many bytes */
	uint64_t off;		/* slot 0's table in the shared memory; slot
				 * k's lies k * dp_agg_stride(bits) after */
};

struct dp_agg_hdr {
	uint64_t used;		/* entries claimed */
	uint64_t drops;		/* hits whose key found no entry */
	uint64_t pad[6];
};

struct dp_agg_entry {
	uint64_t tag;
	uint64_t key[DP_AGG_MAX_KEYS];
	uint64_t hits;
	uint64_t val[DP_AGG_NVALS];
	char comm[16];		/* the first hit's thread (.execname) */
};

/*
 * Slot k's owner: (pid << 32 | tid), 0 while free; slot 0 has none.  Then
 * what turns the agent's clock into nanoseconds (timed return probes,
 * DP_AGENT_F_LAT): ns = ticks * tick_mult >> 32, written by dprobe before
 * any agent gets the tables (1 << 32 when the stamps are ns already).
 */
struct dp_agg_owners {
	uint64_t owner[DP_AGG_SLOTS];
	uint64_t tick_mult;
};

#define DP_AGG_MULT_SHIFT	32

/*
 * The record of a return probe timed in the process (dprobe latency; the
 * agent's DP_AGENT_F_LAT): the return probe's header (common fields,
 * __probe_func, __probe_ret_ip), then the call's duration in ns, from the
 * stamp its entry handler put in the return instance to the return, then
 * the process id: the event's first two fields, u64 each.
 */
#define DP_AGG_LAT_NS_OFF	24
#define DP_AGG_LAT_PID_OFF	32
#define DP_AGG_LAT_SIZE		40

/* @ticks of the agent's clock in nanoseconds (struct dp_agg_owners). */
static inline uint64_t dp_agg_ticks_ns(uint64_t ticks, uint64_t mult)
{
	unsigned __int128 ns = (unsigned __int128)ticks * mult;

	ns >>= DP_AGG_MULT_SHIFT;
	return ns >> 64 ? UINT64_MAX : (uint64_t)ns;
}

static inline uint64_t dp_agg_table_size(uint32_t bits)
{
	return sizeof(struct dp_agg_hdr) +
	       ((uint64_t)2 << bits) * sizeof(struct dp_agg_entry);
}

/* From one slot's table to the next: whole cache lines, so that two
 * threads' tables never share one. */
static inline uint64_t dp_agg_stride(uint32_t bits)
{
	return (dp_agg_table_size(bits) + 63) & ~63ull;
}

/* A trigger's tables, every slot's. */
static inline uint64_t dp_agg_group_size(uint32_t bits)
{
	return DP_AGG_SLOTS * dp_agg_stride(bits);
}

static inline uint64_t dp_agg_owner_word(int32_t pid, int32_t tid)
{
	return (uint64_t)(uint32_t)pid << 32 | (uint32_t)tid;
}

/*
 * *@p += @v: atomic in a shared table; in a table of the thread's own, one
 * read-modify-write instruction without the bus lock (a tenth of the cost
 * or less), which no signal handler of the thread can cut in two.
 */
static inline void dp_agg_inc(uint64_t *p, uint64_t v, bool own)
{
#if defined(__x86_64__)
	if (own) {
		__asm__ volatile("addq %1, %0" : "+m"(*p) : "er"(v));
		return;
	}
#else
	(void)own;
#endif
	__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

/* A field's value, sign-extended from its size. */
static inline uint64_t dp_agg_load(const struct dp_agg_field *f,
				   const uint8_t *rec)
{
	uint64_t v = 0;

	switch (f->size) {
	case 1: v = rec[f->off]; break;
	case 2: __builtin_memcpy(&v, rec + f->off, 2); break;
	case 4: __builtin_memcpy(&v, rec + f->off, 4); break;
	default: __builtin_memcpy(&v, rec + f->off, 8); break;
	}
	if (f->is_signed && f->size < 8 && (v >> (f->size * 8 - 1)) & 1)
		v |= ~0ull << (f->size * 8);
	return v;
}

/* A key as the histogram keys it (event/hist.c's key_num()). */
static inline uint64_t dp_agg_key(const struct dp_agg_field *f,
				  const uint8_t *rec)
{
	uint64_t v = dp_agg_load(f, rec);

	if (f->mode == DP_AGG_BUCKET)
		return f->arg ? v / f->arg * f->arg : v;
	if (f->mode != DP_AGG_LOG2)
		return v;
	if (f->arg > 1)
		v /= f->arg;
	/* the smallest b with 2^b >= v; past 2^63 the kernel's shift
	 * wraps to 2^0 */
	if (v <= 1 || v > 1ull << 63)
		return 0;
	return 64 - (uint64_t)__builtin_clzll(v - 1);
}

/*
 * *@p = max(*@p, @v): a compare-and-swap, even in a table of the thread's
 * own (a signal handler of the thread may raise it between a plain load
 * and store); but only when @v is larger, which soon is rare.
 */
static inline void dp_agg_max(uint64_t *p, uint64_t v)
{
	uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);

	while (v > cur && !__atomic_compare_exchange_n(p, &cur, v, true,
						       __ATOMIC_RELAXED,
						       __ATOMIC_RELAXED))
		;
}

/* A value @v of field @f into the entry's word @p, as @f's mode says. */
static inline void dp_agg_val_add(uint64_t *p, const struct dp_agg_field *f,
				  uint64_t v, bool own)
{
	if (f->mode == DP_AGG_MAX)
		dp_agg_max(p, v);
	else if (f->mode == DP_AGG_MIN)
		dp_agg_max(p, ~v);
	else
		dp_agg_inc(p, v, own);
}

/* What an entry's word of a DP_AGG_MIN value says: the smallest value,
 * UINT64_MAX while none came.  Other values are the word itself. */
static inline uint64_t dp_agg_val_of(const struct dp_agg_field *f,
				     uint64_t word)
{
	if (f->mode != DP_AGG_MIN)
		return word;
	return word ? ~word : UINT64_MAX;
}

static inline uint64_t dp_agg_hash(const uint64_t *key, unsigned n)
{
	uint64_t x = 0xcbf29ce484222325ull;

	for (unsigned k = 0; k < n; k++)
		x = (x ^ key[k]) * 0x100000001b3ull;
	return (x ^ (x >> 29)) | 1ull << 63;
}

/*
 * The slot of the thread @me (dp_agg_owner_word()) in the owners' page at
 * @base: the one it holds, else a free one it takes, else 0 (shared).
 * Once per thread and session: a scan of DP_AGG_SLOTS words.
 */
static inline unsigned dp_agg_claim(void *base, uint64_t me)
{
	struct dp_agg_owners *o = (struct dp_agg_owners *)base;
	unsigned k, n = DP_AGG_SLOTS - 1;

	for (k = 1; k < DP_AGG_SLOTS; k++)
		if (__atomic_load_n(&o->owner[k], __ATOMIC_RELAXED) == me)
			return k;
	for (unsigned i = 0; i < n; i++) {
		uint64_t free_word = 0;

		k = 1 + (unsigned)((me + i) % n);
		if (__atomic_load_n(&o->owner[k], __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&o->owner[k], &free_word, me,
						false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return k;
	}
	return 0;
}

/*
 * Add one hit of the record @rec (at least s->rec_size bytes) to the table
 * at @table, by a thread called @comm; @own: the thread is the table's
 * only writer.  Bounded: a busy entry is waited for DP_AGG_SPIN times (a
 * signal handler may have interrupted its filler on this very thread),
 * then the hit is dropped and counted.
 */
static inline void dp_agg_add(void *table, const struct dp_agg_spec *s,
			      const uint8_t *rec, const char *comm, bool own)
{
	struct dp_agg_hdr *h = (struct dp_agg_hdr *)table;
	struct dp_agg_entry *e = (struct dp_agg_entry *)(h + 1);
	uint64_t key[DP_AGG_MAX_KEYS] = { 0 }, mask = ((uint64_t)2 << s->bits) - 1;
	uint64_t tag, i;
	unsigned nk = s->nkeys < DP_AGG_MAX_KEYS ? s->nkeys : DP_AGG_MAX_KEYS;
	unsigned nv = s->nvals < DP_AGG_NVALS ? s->nvals : DP_AGG_NVALS;

	for (unsigned k = 0; k < nk; k++)
		key[k] = dp_agg_key(&s->key[k], rec);
	tag = dp_agg_hash(key, nk);
	i = tag & mask;
	for (uint64_t n = 0; n <= mask; n++, i = (i + 1) & mask) {
		struct dp_agg_entry *x = &e[i];
		uint64_t t = __atomic_load_n(&x->tag, __ATOMIC_ACQUIRE);
		unsigned k;

		if (!t) {
			if (__atomic_load_n(&h->used, __ATOMIC_RELAXED) >=
			    (uint64_t)1 << s->bits)
				break;
			if (__atomic_compare_exchange_n(&x->tag, &t,
							DP_AGG_TAG_BUSY, false,
							__ATOMIC_ACQUIRE,
							__ATOMIC_ACQUIRE)) {
				__atomic_fetch_add(&h->used, 1, __ATOMIC_RELAXED);
				for (k = 0; k < DP_AGG_MAX_KEYS; k++)
					x->key[k] = key[k];
				for (k = 0; k < 15 && comm && comm[k]; k++)
					x->comm[k] = comm[k];
				x->comm[k] = '\0';
				__atomic_store_n(&x->tag, tag, __ATOMIC_RELEASE);
				t = tag;
			}
		}
		for (unsigned spin = 0; t == DP_AGG_TAG_BUSY; spin++) {
			if (spin == DP_AGG_SPIN)
				goto drop;
			__builtin_ia32_pause();
			t = __atomic_load_n(&x->tag, __ATOMIC_ACQUIRE);
		}
		if (t != tag)
			continue;
		for (k = 0; k < nk && x->key[k] == key[k]; k++)
			;
		if (k < nk)
			continue;
		dp_agg_inc(&x->hits, 1, own);
		for (unsigned v = 0; v < nv; v++)
			dp_agg_val_add(&x->val[v], &s->val[v],
				       dp_agg_load(&s->val[v], rec), own);
		return;
	}
drop:
	__atomic_fetch_add(&h->drops, 1, __ATOMIC_RELAXED);
}

#endif
