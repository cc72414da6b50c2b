// SPDX-License-Identifier: GPL-2.0
/*
 * Hist triggers kept in the traced processes (event/agg.h): the session's
 * tables, one memfd every image maps (AGGMEM), a table per trigger the
 * caller asked for (dp_inproc_opts.aggs), and what their entries went up
 * by handed to the sink (sink.agg) at each profile request and at the end.
 *
 * A trigger has a table per slot (a thread's own, or slot 0 shared): its
 * histogram gets the sum of what they went up by.  The slot of a thread
 * that is gone is freed for the next (inproc_agg_reap()).
 *
 * The memory is the traced programs' as much as dprobe's: dprobe writes
 * only the owners' words back to 0, walks each table by the size it
 * made, and takes a count that went down as no news (the shadow keeps
 * the highest seen).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine/agent/protocol.h"
#include "engine/inproc/internal.h"

/* What an entry had at the last look. */
struct shadow {
	uint64_t hits;
	uint64_t val[DP_AGG_NVALS];
};

/* A trigger's tables, one per slot; shadows made at a slot's first use. */
struct agg_table {
	const struct dp_agg_req *req;
	unsigned idx;			/* in req->spec[] */
	struct dp_agg_spec spec;	/* with slot 0's offset */
	struct shadow *sh[DP_AGG_SLOTS];	/* 2 << bits each, or NULL */
	uint64_t drops[DP_AGG_SLOTS];
	uint64_t unread[DP_AGG_SLOTS];	/* hits counted as dropped */
};

int inproc_agg_init(struct dp_inproc *t)
{
	struct inproc_agg *a = &t->agg;
	uint64_t size = DP_AGG_OWNERS_SIZE;
	unsigned n = 0;

	a->fd = -1;
	for (size_t i = 0; i < t->o.naggs; i++)
		n += t->o.aggs[i].n;
	if (!n)
		return 0;
	a->tab = calloc(n, sizeof(*a->tab));
	if (!a->tab)
		return -ENOMEM;
	for (size_t i = 0; i < t->o.naggs; i++)
		for (unsigned k = 0; k < t->o.aggs[i].n; k++) {
			struct agg_table *x = &a->tab[a->ntab++];

			x->req = &t->o.aggs[i];
			x->idx = k;
			x->spec = x->req->spec[k];
			x->spec.off = size;
			size += dp_agg_group_size(x->spec.bits);
		}
	a->fd = memfd_create("dprobe-hist", MFD_CLOEXEC);
	if (a->fd < 0 || ftruncate(a->fd, (off_t)size))
		return -errno;
	a->map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, a->fd, 0);
	if (a->map == MAP_FAILED) {
		a->map = NULL;
		return -errno;
	}
	a->size = size;
	return 0;
}

void inproc_agg_free(struct dp_inproc *t)
{
	struct inproc_agg *a = &t->agg;

	for (unsigned i = 0; i < a->ntab; i++)
		for (unsigned k = 0; k < DP_AGG_SLOTS; k++)
			free(a->tab[i].sh[k]);
	free(a->tab);
	if (a->map)
		munmap(a->map, a->size);
	if (a->fd >= 0)
		close(a->fd);
	*a = (struct inproc_agg){ .fd = -1 };
}

bool inproc_agg_wanted(const struct dp_inproc *t, const struct dp_event *ev)
{
	for (unsigned i = 0; i < t->agg.ntab; i++)
		if (t->agg.tab[i].req->ev == ev)
			return true;
	return false;
}

unsigned inproc_agg_flags(const struct dp_inproc *t, const struct dp_event *ev)
{
	for (unsigned i = 0; i < t->agg.ntab; i++) {
		const struct dp_agg_req *r = t->agg.tab[i].req;

		if (r->ev == ev)
			return DP_AGENT_F_AGG |
			       (r->timed_from ? DP_AGENT_F_LAT : 0);
		/* the entries of a timed return probe: only counted, for
		 * the calls that never returned */
		if (r->timed_from == ev)
			return DP_AGENT_F_COUNT;
	}
	return 0;
}

/*
 * The factor of the agent's clock to nanoseconds (struct dp_agg_owners),
 * from the reader's newest rate: before the first image gets the tables,
 * and again as the rate is refined.
 */
void inproc_agg_clock(struct dp_inproc *t)
{
	struct dp_agg_owners *o = (void *)t->agg.map;
	double mult = (double)(1ull << DP_AGG_MULT_SHIFT);

	if (!o)
		return;
	if (t->clk.tsc && t->clk.nk)
		mult *= t->clk.k[(t->clk.nk - 1) % CLK_KNOTS].ns_per_tick;
	__atomic_store_n(&o->tick_mult, (uint64_t)(mult + 0.5),
			 __ATOMIC_RELAXED);
}

int inproc_agg_send_mem(struct ip_proc *p)
{
	return p->tree->agg.fd < 0 ? 0 : chan_send(p, p->tree->agg.fd, "AGGMEM");
}

static void field_text(char *buf, size_t len, const struct dp_agg_field *f)
{
	snprintf(buf, len, " %u:%u:%u:%u:%llu", f->off, f->size, f->is_signed,
		 f->mode, (unsigned long long)f->arg);
}

int inproc_agg_send(struct ip_proc *p, int slot, const struct dp_event *ev)
{
	const struct inproc_agg *a = &p->tree->agg;

	for (unsigned i = 0; i < a->ntab; i++) {
		const struct dp_agg_spec *s = &a->tab[i].spec;
		char fields[(DP_AGG_MAX_KEYS + DP_AGG_NVALS) * 64] = "";
		size_t used = 0;
		int ret;

		if (a->tab[i].req->ev != ev)
			continue;
		for (unsigned k = 0; k < s->nkeys + s->nvals; k++) {
			field_text(fields + used, sizeof(fields) - used,
				   k < s->nkeys ? &s->key[k] :
				   &s->val[k - s->nkeys]);
			used += strlen(fields + used);
		}
		ret = chan_send(p, -1, "AGG %d %llu %u %u %u %u%s", slot,
				(unsigned long long)s->off, s->bits,
				s->rec_size, s->nkeys, s->nvals, fields);
		if (ret)
			return ret;
	}
	return 0;
}

/* A count that went down is no news; one that went up, the difference. */
static uint64_t delta(uint64_t now, uint64_t *seen)
{
	uint64_t d = now > *seen ? now - *seen : 0;

	if (now > *seen)
		*seen = now;
	return d;
}

/*
 * The hits of a slot's table that no shadow can follow (it could not be
 * allocated) are dropped, as the kernel counts an entry its full table
 * could not take: what they went up by since the last look.
 */
static void count_unread(struct dp_inproc *t, struct agg_table *x,
			 unsigned k, const struct dp_agg_hdr *h)
{
	const struct dp_sink *sink = &t->o.sink;
	const struct dp_agg_entry *e = (const void *)(h + 1);
	uint64_t n = (uint64_t)2 << x->spec.bits, hits = 0, d;

	for (uint64_t i = 0; i < n; i++)
		if (__atomic_load_n(&e[i].tag, __ATOMIC_ACQUIRE) >> 63)
			hits += __atomic_load_n(&e[i].hits, __ATOMIC_RELAXED);
	d = delta(hits, &x->unread[k]);
	if (d)
		sink->agg(sink->priv, x->req->cookie[x->idx], NULL, d, NULL,
			  NULL);
}

/*
 * A value of an entry into *@out: a sum's increase, or a largest or
 * smallest value as it is now (which the sink keeps the extreme of);
 * true if it changed since the last look.
 */
static bool value(const struct dp_agg_field *f, const uint64_t *word,
		  uint64_t *seen, uint64_t *out)
{
	uint64_t now = __atomic_load_n(word, __ATOMIC_RELAXED);
	bool news;

	if (f->mode != DP_AGG_MAX && f->mode != DP_AGG_MIN) {
		*out = delta(now, seen);
		return *out != 0;
	}
	news = now != *seen;
	*seen = now;
	*out = dp_agg_val_of(f, now);
	return news;
}

/* Slot @k's table of @x, or NULL if no hit ever reached it (or none can
 * be read: see count_unread()). */
static const struct dp_agg_hdr *slot_table(struct dp_inproc *t,
					   struct agg_table *x, unsigned k)
{
	const struct dp_agg_hdr *h = (const void *)(t->agg.map + x->spec.off +
						    k * dp_agg_stride(x->spec.bits));

	if (!__atomic_load_n(&h->used, __ATOMIC_RELAXED) &&
	    !__atomic_load_n(&h->drops, __ATOMIC_RELAXED))
		return NULL;
	if (!x->sh[k])
		x->sh[k] = calloc((size_t)2 << x->spec.bits, sizeof(*x->sh[k]));
	return h;
}

static void drain_slot(struct dp_inproc *t, struct agg_table *x, unsigned k)
{
	const struct dp_sink *sink = &t->o.sink;
	const struct dp_agg_hdr *h = slot_table(t, x, k);
	const struct dp_agg_entry *e;
	uint64_t n = (uint64_t)2 << x->spec.bits, d;
	void *cookie = x->req->cookie[x->idx];

	if (!h)
		return;
	e = (const void *)(h + 1);
	d = delta(__atomic_load_n(&h->drops, __ATOMIC_RELAXED), &x->drops[k]);
	if (d)
		sink->agg(sink->priv, cookie, NULL, d, NULL, NULL);
	if (!x->sh[k]) {
		count_unread(t, x, k, h);
		return;
	}
	for (uint64_t i = 0; i < n; i++) {
		uint64_t key[DP_AGG_MAX_KEYS], val[DP_AGG_NVALS] = { 0 };
		char comm[sizeof(e[i].comm) + 1];
		struct shadow *sh = &x->sh[k][i];
		bool news;

		if (!(__atomic_load_n(&e[i].tag, __ATOMIC_ACQUIRE) >> 63))
			continue;
		d = delta(__atomic_load_n(&e[i].hits, __ATOMIC_RELAXED),
			  &sh->hits);
		news = d;
		/* a hit's values are added after its count: what a look
		 * between the two missed comes with the next look */
		for (unsigned v = 0; v < x->spec.nvals; v++)
			news |= value(&x->spec.val[v], &e[i].val[v],
				      &sh->val[v], &val[v]);
		if (!news)
			continue;
		for (unsigned j = 0; j < DP_AGG_MAX_KEYS; j++)
			key[j] = e[i].key[j];
		memcpy(comm, e[i].comm, sizeof(e[i].comm));
		comm[sizeof(e[i].comm)] = '\0';
		sink->agg(sink->priv, cookie, key, d, val, comm);
	}
}

void inproc_agg_drain(struct dp_inproc *t)
{
	if (!t->agg.map || !t->o.sink.agg)
		return;
	for (unsigned i = 0; i < t->agg.ntab; i++)
		for (unsigned k = 0; k < DP_AGG_SLOTS; k++)
			drain_slot(t, &t->agg.tab[i], k);
}

void inproc_agg_reap(struct dp_inproc *t)
{
	struct dp_agg_owners *o = (void *)t->agg.map;

	if (!o)
		return;
	for (unsigned k = 1; k < DP_AGG_SLOTS; k++) {
		uint64_t w = __atomic_load_n(&o->owner[k], __ATOMIC_ACQUIRE);
		char path[64];

		if (!w)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d",
			 (int)(w >> 32), (int)(uint32_t)w);
		/* a dead thread writes no more: its counts stay for the next
		 * owner to add to (a word the program changed meanwhile is
		 * left as it is) */
		if (access(path, F_OK) && errno == ENOENT)
			__atomic_compare_exchange_n(&o->owner[k], &w, 0, false,
						    __ATOMIC_ACQ_REL,
						    __ATOMIC_RELAXED);
	}
}
