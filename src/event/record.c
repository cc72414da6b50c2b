// SPDX-License-Identifier: GPL-2.0
/*
 * Reading event records: field geometry and the checks done once per
 * record before any field is read (strings are read by record.h's inline
 * dp_rec_str()).  Renderers and engines rely on these; the filter has its
 * own, more lenient, rule for bad locations (the empty string), as the
 * kernel's.
 */
#include "event/event.h"
#include "event/record.h"

int dp_rec_geom(const struct dp_field *f, struct dp_rec_geom *g)
{
	const struct dp_type *t = f->ptype;

	g->off = f->offset;
	g->array = f->count != 0;
	g->n = f->count ? f->count : 1;
	g->esz = f->count ? f->elem_size : f->size;
	if (!g->esz && t)
		g->esz = t->size;
	g->string = (t && dp_type_is_string(t)) ||
		    f->fclass == DP_FC_STRING || f->fclass == DP_FC_STRING_ARRAY;
	if (g->string)
		return g->esz == 4 ? 0 : -1;
	return g->esz == 1 || g->esz == 2 || g->esz == 4 || g->esz == 8 ? 0 : -1;
}

unsigned dp_rec_head_size(const struct dp_event *ev)
{
	return dp_layout_head_size(ev->kind, ev->is_return);
}

/* A non-empty __data_loc must lie inside the record; length 0 is a fault,
 * printed, never dereferenced. */
static int check_loc(const uint8_t *slot, size_t len)
{
	uint32_t loc = (uint32_t)dp_rec_load(slot, 4);
	size_t slen = dp_data_loc_len(loc);

	if (!slen)
		return 0;
	return dp_data_loc_off(loc) + slen <= len ? 0 : -1;
}

static int check_field(const struct dp_field *f, const uint8_t *r, size_t len)
{
	struct dp_rec_geom g;
	unsigned i;

	if (dp_rec_geom(f, &g))
		return -1;
	if ((uint64_t)g.off + (uint64_t)g.n * g.esz > len)
		return -1;
	if (!g.string)
		return 0;
	for (i = 0; i < g.n; i++)
		if (check_loc(dp_rec_elem(r, &g, i), len))
			return -1;
	return 0;
}

int dp_rec_check(const struct dp_event *ev, const void *rec, size_t len)
{
	unsigned i;

	if (!rec || len < dp_rec_head_size(ev) || len < ev->fixed_size)
		return -1;
	for (i = 0; i < ev->nfields; i++) {
		const struct dp_field *f = &ev->fields[i];

		/* header fields sit at fixed offsets, covered by the head */
		if (!f->ptype)
			continue;
		if (check_field(f, rec, len))
			return -1;
	}
	return 0;
}

int dp_rec_check_min(const struct dp_event *ev, size_t *min)
{
	size_t m = dp_rec_head_size(ev);
	struct dp_rec_geom g;

	if (ev->fixed_size > m)
		m = ev->fixed_size;
	for (unsigned i = 0; i < ev->nfields; i++) {
		const struct dp_field *f = &ev->fields[i];
		uint64_t end;

		if (!f->ptype)
			continue;
		if (dp_rec_geom(f, &g) || g.string)
			return -1;
		end = (uint64_t)g.off + (uint64_t)g.n * g.esz;
		if (end > m)
			m = (size_t)end;
	}
	*min = m;
	return 0;
}
