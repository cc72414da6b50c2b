// SPDX-License-Identifier: GPL-2.0
/*
 * The ring buffer's binary pages, as per_cpu/cpuN/trace_pipe_raw gives
 * them: a header (timestamp, commit word with the missed-events flags),
 * then entries, each a 32-bit word (type_len:5, time_delta:27) and its
 * payload.  type_len 1..28 is a record of type_len * 4 bytes, 0 a record
 * whose length is in the next word, 29 padding, 30 a time extension,
 * 31 an absolute timestamp.  Every length is checked against the page:
 * a corrupt page stops the parse, it is never read past.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/kernel/internal.h"

void dp_kraw_layout_default(struct dp_kraw_layout *l)
{
	*l = (struct dp_kraw_layout){
		.ts_off = 0, .ts_size = 8, .commit_off = 8, .commit_size = 8,
		.data_off = 16, .page_size = 4096, .delta_bits = 27,
		.max_data = 28, .padding = 29, .time_extend = 30,
		.time_stamp = 31,
	};
}

/* "field: TYPE NAME;\toffset:N;\tsize:N;" for @name: 0 or -1. */
static int page_field(const char *text, const char *name, unsigned *off,
		      unsigned *size)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), " %s;", name);
	p = strstr(text, pat);
	if (!p || sscanf(p + strlen(pat), " offset:%u; size:%u;", off,
			 size) != 2)
		return -1;
	return 0;
}

/* "KEY ... == N" or "KEY : N bits" in header_event. */
static int event_value(const char *text, const char *key, unsigned *v)
{
	const char *p = strstr(text, key), *q;

	if (!p)
		return -1;
	q = p + strcspn(p, "0123456789\n");
	if (*q == '\n' || !*q)
		return -1;
	*v = (unsigned)strtoul(q, NULL, 10);
	return 0;
}

int dp_kraw_layout_parse(struct dp_kraw_layout *l, const char *header_page,
			 const char *header_event)
{
	unsigned data_size, type_bits;

	dp_kraw_layout_default(l);
	if (header_page) {
		if (page_field(header_page, "timestamp", &l->ts_off, &l->ts_size) ||
		    page_field(header_page, "commit", &l->commit_off,
			       &l->commit_size) ||
		    page_field(header_page, "data", &l->data_off, &data_size))
			return -EINVAL;
		l->page_size = (size_t)l->data_off + data_size;
	}
	if (header_event) {
		if (event_value(header_event, "type_len", &type_bits) ||
		    event_value(header_event, "time_delta", &l->delta_bits) ||
		    event_value(header_event, "padding", &l->padding) ||
		    event_value(header_event, "time_extend", &l->time_extend) ||
		    event_value(header_event, "time_stamp", &l->time_stamp) ||
		    event_value(header_event, "data max type_len", &l->max_data))
			return -EINVAL;
		/* the 32-bit word this parser reads */
		if (type_bits + l->delta_bits != 32 || type_bits != 5)
			return -EINVAL;
	}
	if ((l->ts_size != 8) || (l->commit_size != 4 && l->commit_size != 8) ||
	    l->data_off < l->commit_off + l->commit_size ||
	    l->page_size > (1u << 20))
		return -EINVAL;
	return 0;
}

static uint64_t load(const uint8_t *p, unsigned size)
{
	uint32_t v32;
	uint64_t v64;

	if (size == 4) {
		memcpy(&v32, p, 4);
		return v32;
	}
	memcpy(&v64, p, 8);
	return v64;
}

int dp_kraw_page_init(struct dp_kraw_page *pg, const struct dp_kraw_layout *l,
		      const void *buf, size_t len)
{
	const uint8_t *b = buf;
	uint64_t commit, size;

	memset(pg, 0, sizeof(*pg));
	if (len < l->data_off || len > l->page_size)
		return -EINVAL;
	pg->l = l;
	pg->ts = load(b + l->ts_off, 8);
	commit = load(b + l->commit_off, l->commit_size);
	size = commit & DP_KRAW_COMMIT_MASK;
	if (size > len - l->data_off)
		return -EINVAL;
	pg->data = b + l->data_off;
	pg->size = (size_t)size;
	pg->missed = commit & DP_KRAW_MISSED_EVENTS;
	/* the count, when stored, follows the last record */
	if (pg->missed && (commit & DP_KRAW_MISSED_STORED) &&
	    len - l->data_off - size >= sizeof(unsigned long)) {
		pg->nmissed = (unsigned long)load(pg->data + size, 8);
		pg->nmissed_known = true;
	}
	return 0;
}

int dp_kraw_next(struct dp_kraw_page *pg, struct dp_kraw_rec *r)
{
	const struct dp_kraw_layout *l = pg->l;
	uint32_t word, type_len, delta, arr;
	size_t left, need;

	for (;;) {
		left = pg->size - pg->pos;
		if (!left)
			return 0;
		if (left < 4)
			return -EINVAL;
		word = (uint32_t)load(pg->data + pg->pos, 4);
		type_len = word & ((1u << (32 - l->delta_bits)) - 1);
		delta = word >> (32 - l->delta_bits);
		/* every type but a short record carries one more word */
		if (type_len == 0 || type_len > l->max_data) {
			if (left < 8) {
				/* a null padding may be just its header */
				if (type_len == l->padding && !delta)
					return 0;
				return -EINVAL;
			}
			arr = (uint32_t)load(pg->data + pg->pos + 4, 4);
		} else {
			arr = 0;
		}
		if (type_len == l->padding) {
			/* delta 0: the rest of the page is unused */
			if (!delta)
				return 0;
			need = 4 + (size_t)arr;
			if (need > left || need < 8)
				return -EINVAL;
			pg->pos += need;
			continue;
		}
		if (type_len == l->time_extend) {
			pg->ts += ((uint64_t)arr << l->delta_bits) + delta;
			pg->pos += 8;
			continue;
		}
		if (type_len == l->time_stamp) {
			/* the absolute time's top bits are those of the page */
			uint64_t abs = ((uint64_t)arr << l->delta_bits) | delta;

			pg->ts = abs | (pg->ts & (0xf8ULL << 56));
			pg->pos += 8;
			continue;
		}
		if (type_len > l->max_data)
			return -EINVAL;
		if (type_len) {
			r->len = (size_t)type_len * 4;
			r->data = pg->data + pg->pos + 4;
			need = 4 + r->len;
		} else {
			/* the length word counts itself, and the kernel
			 * aligns every record to 4 bytes: anything else is
			 * a corrupt page */
			if (arr < 4 || arr % 4)
				return -EINVAL;
			r->len = arr - 4;
			r->data = pg->data + pg->pos + 8;
			need = 8 + (size_t)r->len;
		}
		if (need > left)
			return -EINVAL;
		pg->ts += delta;
		r->ts = pg->ts;
		pg->pos += need;
		return 1;
	}
}
