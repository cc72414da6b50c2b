// SPDX-License-Identifier: GPL-2.0
/*
 * The registry's index (regindex.h): hash tables of events by group and
 * name and by id, of probes by event and place, the last event and each
 * event's last probe, and a bitmap of the ids in use.
 */
#include <stdlib.h>
#include <string.h>

#include "event/regindex.h"
#include "util/ptab.h"

struct dp_reg_index {
	struct dp_event *head;		/* reg->events when built */
	struct dp_event *last;
	struct dp_ptab names;		/* events by group and name */
	struct dp_ptab ids;		/* events by id */
	struct dp_ptab places;		/* probes by event and place */
	struct dp_ptab tails;		/* each event's last probe */
	uint64_t *used;			/* ids in use, a bit each */
	size_t nwords;
	unsigned hint_base, hint;	/* no free id in [hint_base, hint) */
};

static uint64_t name_hash(const char *group, const char *name)
{
	return dp_hash_str(name, dp_hash_str(group, 0));
}

static uint64_t id_hash(unsigned id)
{
	return dp_hash_u64(id);
}

static uint64_t tail_hash(const struct dp_event *ev)
{
	return dp_hash_u64((uint64_t)(uintptr_t)ev);
}

/* What same_place() in registry.c compares, hashed with the event. */
static uint64_t place_hash(const struct dp_event *ev,
			   const struct dp_probe_def *def)
{
	const struct dp_place *x = &def->place;
	uint64_t h = tail_hash(ev);

	if (def->kind == DP_KIND_UPROBE)
		return dp_hash_u64(h ^ dp_hash_u64(x->dev ^
				   dp_hash_u64(x->ino ^ dp_hash_u64(x->offset))));
	if (!x->symbol)
		return dp_hash_u64(h ^ 1 ^ dp_hash_u64(x->addr));
	h = dp_hash_str(x->symbol, h);
	h = dp_hash_str(x->module ? x->module : "", h);
	return dp_hash_u64(h ^ x->offset);
}

static int mark_id(struct dp_reg_index *x, unsigned id)
{
	size_t w = id / 64;

	if (w >= x->nwords) {
		size_t n = 2 * w + 16;
		uint64_t *v = realloc(x->used, n * sizeof(*v));

		if (!v)
			return -1;
		memset(v + x->nwords, 0, (n - x->nwords) * sizeof(*v));
		x->used = v;
		x->nwords = n;
	}
	x->used[w] |= 1ull << (id % 64);
	return 0;
}

static bool id_used(const struct dp_reg_index *x, unsigned id)
{
	return id / 64 < x->nwords && (x->used[id / 64] >> (id % 64) & 1);
}

static int add_probe(struct dp_reg_index *x, struct dp_probe *p)
{
	size_t pos = DP_PTAB_START;
	void **tail = dp_ptab_next(&x->tails, tail_hash(p->event), &pos);

	while (tail && ((struct dp_probe *)*tail)->event != p->event)
		tail = dp_ptab_next(&x->tails, tail_hash(p->event), &pos);
	if (tail)
		*tail = p;
	else if (dp_ptab_add(&x->tails, tail_hash(p->event), p))
		return -1;
	return dp_ptab_add(&x->places, place_hash(p->event, &p->def), p);
}

static int add_event(struct dp_reg_index *x, struct dp_event *ev)
{
	if (dp_ptab_add(&x->names, name_hash(ev->group, ev->name), ev) ||
	    dp_ptab_add(&x->ids, id_hash(ev->id), ev) || mark_id(x, ev->id))
		return -1;
	x->last = ev;
	/* a kernel tracepoint's probe has no place (and no event would
	 * append to it) */
	for (struct dp_probe *p = ev->kernel ? NULL : ev->probes; p; p = p->next)
		if (add_probe(x, p))
			return -1;
	return 0;
}

static void index_free(struct dp_reg_index *x)
{
	dp_ptab_free(&x->names);
	dp_ptab_free(&x->ids);
	dp_ptab_free(&x->places);
	dp_ptab_free(&x->tails);
	free(x->used);
	free(x);
}

void dp_regidx_drop(struct dp_registry *reg)
{
	if (reg->index)
		index_free(reg->index);
	reg->index = NULL;
}

/* The index, built if needed; NULL without memory. */
static struct dp_reg_index *get(struct dp_registry *reg)
{
	struct dp_reg_index *x = reg->index;

	/* a list relinked from outside without saying so */
	if (x && x->head != reg->events)
		dp_regidx_drop(reg);
	if (reg->index)
		return reg->index;
	x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->head = reg->events;
	for (struct dp_event *ev = reg->events; ev; ev = ev->next) {
		if (add_event(x, ev)) {
			index_free(x);
			return NULL;
		}
	}
	reg->index = x;
	return x;
}

void dp_regidx_event_added(struct dp_registry *reg, struct dp_event *ev)
{
	struct dp_reg_index *x = reg->index;

	if (!x)
		return;
	x->head = reg->events;
	if (add_event(x, ev))
		dp_regidx_drop(reg);
}

void dp_regidx_probe_added(struct dp_registry *reg, struct dp_probe *p)
{
	if (reg->index && add_probe(reg->index, p))
		dp_regidx_drop(reg);
}

static bool any(const struct dp_event *ev, const void *arg)
{
	(void)ev;
	(void)arg;
	return true;
}

struct dp_event *dp_regidx_find(struct dp_registry *reg, const char *group,
				const char *name)
{
	return dp_regidx_find_if(reg, group, name, any, NULL);
}

/*
 * Of the events named so, the first in the list (the oldest) that @ok
 * accepts.  The registry makes one event of a name, but the mount's
 * control files relink the list with only one kind of event in it while
 * a line is applied, so another kind may have the name too.
 */
struct dp_event *dp_regidx_find_if(struct dp_registry *reg, const char *group,
				   const char *name,
				   bool (*ok)(const struct dp_event *, const void *),
				   const void *arg)
{
	struct dp_reg_index *x = get(reg);
	uint64_t h = name_hash(group, name);
	size_t pos = DP_PTAB_START;
	struct dp_event *best = NULL;
	void **v;

	if (!x) {
		for (struct dp_event *ev = reg->events; ev; ev = ev->next)
			if (!strcmp(ev->group, group) &&
			    !strcmp(ev->name, name) && ok(ev, arg))
				return ev;
		return NULL;
	}
	while ((v = dp_ptab_next(&x->names, h, &pos))) {
		struct dp_event *ev = *v;

		if (!strcmp(ev->group, group) && !strcmp(ev->name, name) &&
		    ok(ev, arg) && (!best || ev->serial < best->serial))
			best = ev;
	}
	return best;
}

struct dp_event *dp_regidx_find_id(struct dp_registry *reg, unsigned id)
{
	struct dp_reg_index *x = get(reg);
	size_t pos = DP_PTAB_START;
	void **v;

	if (!x) {
		for (struct dp_event *ev = reg->events; ev; ev = ev->next)
			if (ev->id == id)
				return ev;
		return NULL;
	}
	while ((v = dp_ptab_next(&x->ids, id_hash(id), &pos)))
		if (((struct dp_event *)*v)->id == id)
			return *v;
	return NULL;
}

struct dp_event **dp_regidx_events_tail(struct dp_registry *reg)
{
	struct dp_reg_index *x = get(reg);
	struct dp_event **tail = &reg->events;

	if (x && x->last)
		return &x->last->next;
	while (*tail)
		tail = &(*tail)->next;
	return tail;
}

struct dp_probe **dp_regidx_probes_tail(struct dp_registry *reg,
					struct dp_event *ev)
{
	struct dp_reg_index *x = get(reg);
	struct dp_probe **tail = &ev->probes;
	size_t pos = DP_PTAB_START;
	void **v;

	while (x && (v = dp_ptab_next(&x->tails, tail_hash(ev), &pos)))
		if (((struct dp_probe *)*v)->event == ev)
			return &((struct dp_probe *)*v)->next;
	while (*tail)
		tail = &(*tail)->next;
	return tail;
}

unsigned dp_regidx_free_id(struct dp_registry *reg, unsigned base)
{
	struct dp_reg_index *x = get(reg);
	unsigned id = base;

	if (!x) {
		while (dp_regidx_find_id(reg, id))
			id++;
		return id;
	}
	if (x->hint_base == base && x->hint > base)
		id = x->hint;
	while (id_used(x, id)) {
		/* a full word at a time */
		if (id % 64 == 0 && id / 64 < x->nwords &&
		    x->used[id / 64] == ~0ull)
			id += 64;
		else
			id++;
	}
	x->hint_base = base;
	x->hint = id;
	return id;
}

static bool same_args(const struct dp_probe_def *a,
		      const struct dp_probe_def *b)
{
	for (unsigned i = 0; i < b->nargs; i++)
		if (strcmp(a->args[i].body, b->args[i].body))
			return false;
	return true;
}

bool dp_regidx_same_probe(struct dp_registry *reg, const struct dp_event *ev,
			  const struct dp_probe_def *def,
			  bool (*same_place)(const struct dp_probe_def *,
					     const struct dp_probe_def *))
{
	struct dp_reg_index *x = get(reg);
	uint64_t h = place_hash(ev, def);
	size_t pos = DP_PTAB_START;
	void **v;

	if (!x) {
		for (const struct dp_probe *p = ev->probes; p; p = p->next)
			if (same_place(&p->def, def) && same_args(&p->def, def))
				return true;
		return false;
	}
	while ((v = dp_ptab_next(&x->places, h, &pos))) {
		const struct dp_probe *p = *v;

		if (p->event == ev && same_place(&p->def, def) &&
		    same_args(&p->def, def))
			return true;
	}
	return false;
}
