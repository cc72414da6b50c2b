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

/* The words of a stack field's data: the count and the frames up to the
 * first 0, DP_SYNTH_STACK_DEPTH at most (trace_stack()). */
static size_t stack_words(const uint64_t *stack)
{
	size_t n = 0;

	while (stack && n < DP_SYNTH_STACK_DEPTH && stack[n])
		n++;
	return n;
}

/* The bytes field @i's dynamic data take after the fixed part. */
static size_t dyn_size(const struct dp_synth_field *sf, unsigned i,
		       unsigned n, const char *const *strs,
		       const uint64_t *const *stacks)
{
	if (sf->is_stack)
		return 8 * stack_words(i < n && stacks ? stacks[i] : NULL);
	/* a string with its NUL */
	return (i < n && strs && strs[i] ?
		strnlen(strs[i], DP_SYNTH_STR_MAX - 1) : 0) + 1;
}

void *dp_synth_record(const struct dp_event *ev, const uint64_t *vals,
		      const char *const *strs,
		      const uint64_t *const *stacks, unsigned n,
		      const struct dp_rec_meta *meta, size_t *len)
{
	const struct dp_synth_def *d = ev->synth;
	size_t size = ev->fixed_size, dyn;
	uint8_t *r;

	if (!d)
		return NULL;
	for (unsigned i = 0; i < d->nfields; i++)
		if (d->fields[i].is_dynamic)
			size += dyn_size(&d->fields[i], i, n, strs, stacks);
	r = calloc(1, size);
	if (!r)
		return NULL;
	store(r + DP_REC_TYPE_OFF, ev->id, 2);
	store(r + DP_REC_PID_OFF, meta ? (uint64_t)(uint32_t)meta->pid : 0, 4);
	dyn = ev->fixed_size;
	for (unsigned i = 0; i < d->nfields && i < ev->nfields; i++) {
		const struct dp_synth_field *sf = &d->fields[i];
		const struct dp_field *f = &ev->fields[i];
		const char *s = i < n && strs ? strs[i] : NULL;

		if (sf->is_stack) {
			const uint64_t *st = i < n && stacks ? stacks[i] : NULL;
			size_t l = 8 * stack_words(st);

			for (size_t w = 0; w < l / 8; w++)
				store(r + dyn + 8 * w, st[w], 8);
			store(r + f->offset, dp_data_loc((unsigned)l,
							 (unsigned)dyn), 4);
			dyn += l;
			continue;
		}
		if (sf->is_dynamic) {
			size_t l = s ? strnlen(s, DP_SYNTH_STR_MAX - 1) : 0;

			/* __data_loc: offset, length with the NUL */
			if (l)
				memcpy(r + dyn, s, l);
			store(r + f->offset, dp_data_loc((unsigned)(l + 1),
							 (unsigned)dyn), 4);
			dyn += l + 1;
			continue;
		}
		if (sf->is_string) {
			if (s && f->size)
				memcpy(r + f->offset, s,
				       strnlen(s, f->size - 1));
			continue;
		}
		if (i < n)
			store(r + f->offset, vals[i], f->size);
	}
	*len = size;
	return r;
}

/* A frame as %pS prints it: name+0xoff/0xsize, else the address. */
static void put_frame(FILE *out, uint64_t ip, const struct dp_symbolizer *sym)
{
	const char *name = NULL;
	uint64_t off = 0, size = 0;

	if (sym && sym->lookup &&
	    !sym->lookup(sym->priv, ip, &name, &off, &size) && name)
		fprintf(out, "=> %s+0x%llx/0x%llx\n", name,
			(unsigned long long)off, (unsigned long long)size);
	else
		fprintf(out, "=> 0x%llx\n", (unsigned long long)ip);
}

/* "NAME=STACK:" and a line per frame, the count word skipped, with no
 * separator after (print_synth_event()). */
static void put_stack(FILE *out, const struct dp_synth_field *sf,
		      const struct dp_field *f, const uint8_t *r, size_t len,
		      const struct dp_symbolizer *sym)
{
	uint32_t loc = (uint32_t)dp_rec_load(r + f->offset, 4);
	size_t off = dp_data_loc_off(loc), l = dp_data_loc_len(loc);

	fprintf(out, "%s=STACK:\n", sf->name);
	if (off > len || l > len - off)
		return;
	for (size_t j = 1; j < l / 8; j++)
		put_frame(out, dp_rec_load(r + off + 8 * j, 8), sym);
}

void dp_synth_print(FILE *out, const struct dp_event *ev, const void *rec,
		    size_t len, const struct dp_symbolizer *sym)
{
	const struct dp_synth_def *d = ev->synth;
	const uint8_t *r = rec;

	for (unsigned i = 0; d && i < d->nfields && i < ev->nfields; i++) {
		const struct dp_synth_field *sf = &d->fields[i];
		const struct dp_field *f = &ev->fields[i];
		const char *sep = i == d->nfields - 1 ? "" : " ";
		const char *fmt = dp_synth_field_fmt(sf->type);
		uint64_t v;

		if (sf->is_stack) {
			put_stack(out, sf, f, r, len, sym);
			continue;
		}
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
