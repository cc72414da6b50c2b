// SPDX-License-Identifier: GPL-2.0
/*
 * Synthetic events firing (synth.h): a record laid out as the registry
 * describes the event (lang/synth.c's 8-byte slots after the common
 * fields), printed as the kernel's print_synth_event() prints one.
 */
#include <stdlib.h>
#include <string.h>

#include "event/synth.h"
#include "lang/layout.h"

static void store(uint8_t *p, uint64_t v, unsigned size)
{
	/* little-endian, as the records are */
	for (unsigned i = 0; i < size && i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

void *dp_synth_record(const struct dp_event *ev, const uint64_t *vals,
		      unsigned n, const struct dp_rec_meta *meta, size_t *len)
{
	const struct dp_synth_def *d = ev->synth;
	size_t size = ev->fixed_size;
	uint8_t *r;

	if (!d)
		return NULL;
	/* a dynamic string field: an empty string after the fixed part */
	for (unsigned i = 0; i < d->nfields; i++)
		size += d->fields[i].is_dynamic ? 1 : 0;
	r = calloc(1, size);
	if (!r)
		return NULL;
	store(r + DP_REC_TYPE_OFF, ev->id, 2);
	store(r + DP_REC_PID_OFF, meta ? (uint64_t)(uint32_t)meta->pid : 0, 4);
	for (unsigned i = 0, dyn = 0; i < d->nfields && i < ev->nfields; i++) {
		const struct dp_synth_field *sf = &d->fields[i];
		const struct dp_field *f = &ev->fields[i];

		if (sf->is_dynamic) {
			uint32_t off = (uint32_t)(ev->fixed_size + dyn++);

			/* __data_loc: offset, length 1 (the NUL) */
			store(r + f->offset, off | (1u << 16), 4);
			continue;
		}
		if (sf->is_string || i >= n)
			continue;
		store(r + f->offset, vals[i], f->size);
	}
	*len = size;
	return r;
}

void dp_synth_print(FILE *out, const struct dp_event *ev, const void *rec,
		    size_t len)
{
	const struct dp_synth_def *d = ev->synth;
	const uint8_t *r = rec;

	for (unsigned i = 0; d && i < d->nfields && i < ev->nfields; i++) {
		const struct dp_synth_field *sf = &d->fields[i];
		const struct dp_field *f = &ev->fields[i];
		const char *sep = i == d->nfields - 1 ? "" : " ";
		const char *fmt = dp_synth_field_fmt(sf->type);
		uint64_t v;

		if (sf->is_string) {
			const char *s = "";
			size_t sl = 0;

			if (sf->is_dynamic) {
				uint32_t loc = (uint32_t)dp_rec_load(r + f->offset,
								     4);
				size_t off = dp_data_loc_off(loc);
				size_t l = dp_data_loc_len(loc);

				if (off <= len && l <= len - off) {
					s = (const char *)r + off;
					sl = strnlen(s, l);
				}
			} else {
				s = (const char *)r + f->offset;
				sl = strnlen(s, f->size);
			}
			fprintf(out, "%s=%.*s%s", sf->name, (int)sl, s, sep);
			continue;
		}
		v = dp_rec_load(r + f->offset, f->size);
		fprintf(out, "%s=", sf->name);
		/* the value cut to its size, printed with the type's
		 * conversion (print_synth_event_num_val()) */
		if (!strcmp(fmt, "%d") || !strcmp(fmt, "%ld") ||
		    !strcmp(fmt, "%lld")) {
			/* a u8 or u16 slot is promoted, never negative */
			int64_t sv = f->size == 4 ? (int32_t)v : (int64_t)v;

			fprintf(out, "%lld", (long long)sv);
		} else if (!strcmp(fmt, "%x") || !strcmp(fmt, "%lx") ||
			   !strcmp(fmt, "%llx")) {
			fprintf(out, "%llx", (unsigned long long)v);
		} else if (!strcmp(fmt, "0x%lx") || !strcmp(fmt, "0x%x")) {
			fprintf(out, "0x%llx", (unsigned long long)v);
		} else {
			fprintf(out, "%llu", (unsigned long long)v);
		}
		fputs(sep, out);
	}
}
