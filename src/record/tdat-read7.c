// SPDX-License-Identifier: GPL-2.0
/*
 * Reading a trace.dat of version 7 that dprobe wrote (tdat-write7.c):
 * the compression header (zstd, the only one dprobe writes), the options
 * sections (where the sections are, the top buffer's CPUs, dprobe's
 * option), the event formats and cmdlines sections decompressed and read
 * as version 6's, and per CPU the list of its chunks, each decompressed
 * when its pages are reached.  A file cut short is read up to its last
 * whole chunk, and what is missing is said.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "record/tdat-common.h"
#include "record/tdat-reader.h"

enum {
	SEC_OPTIONS = 0,
	OPT_BUFFER = 3,
	SEC_EVENT_FORMATS = 18,
	SEC_CMDLINES = 21,
};
#define SEC_COMPRESSED	1
/* options sections followed before one is taken for a loop */
#define MAX_OPTION_SECTIONS	64

/* What the options say. */
struct opts7 {
	uint64_t formats, cmdlines;	/* the sections' offsets (0: none) */
	uint64_t fly;			/* the top buffer's section */
	uint8_t *buf;			/* the top buffer's option */
	uint32_t buf_len;
	int found;			/* dprobe's option: 1, bad: -2 */
};

/* ---- sections ---------------------------------------------------------- */

/* A section's header at @off: its id, flags and size, which the file
 * holds whole (but for the pages' section, which is read up to a cut). */
static int sec_head(struct dp_tdat *t, uint64_t off, uint16_t *id,
		    uint16_t *flags, uint64_t *size, bool whole)
{
	uint32_t name;

	if (off > t->size || fseeko(t->f, (off_t)off, SEEK_SET) ||
	    tdat_rd(t, id, 2) || tdat_rd(t, flags, 2) || tdat_rd32(t, &name) ||
	    tdat_rd64(t, size))
		return -1;
	return whole && *size > t->size - off - 16 ? -1 : 0;
}

/* @n bytes from where the file is, decompressed if @flags say: a
 * malloc'd buffer of *@len bytes and a NUL, NULL if it cannot be. */
static uint8_t *sec_data(struct dp_tdat *t, uint16_t flags, uint64_t n,
			 size_t *len)
{
	uint8_t *raw = n <= t->size ? malloc(n + 1) : NULL, *out;
	uint32_t sz[2];
	size_t got;

	if (!raw || tdat_rd(t, raw, n)) {
		free(raw);
		return NULL;
	}
	raw[n] = 0;
	*len = n;
	if (!(flags & SEC_COMPRESSED))
		return raw;
	/* compressed size, size, then the zstd frame */
	if (n < 8 || (memcpy(sz, raw, 8), sz[0] > n - 8) ||
	    sz[1] > 64u << 20 || !(out = malloc((size_t)sz[1] + 1))) {
		free(raw);
		return NULL;
	}
	got = ZSTD_decompress(out, sz[1], raw + 8, sz[0]);
	free(raw);
	if (ZSTD_isError(got) || got != sz[1]) {
		free(out);
		return NULL;
	}
	out[got] = 0;
	*len = got;
	return out;
}

/* The section at @off, read by @fn as version 6's part is, from its
 * bytes: 0, or -1. */
static int sec_parse(struct dp_tdat *t, uint64_t off,
		     int (*fn)(struct dp_tdat *t))
{
	uint16_t id, flags;
	uint64_t size, fsize = t->size;
	size_t len;
	uint8_t *data;
	FILE *f = t->f, *mem;
	int ret;

	if (!off || sec_head(t, off, &id, &flags, &size, true) ||
	    !(data = sec_data(t, flags, size, &len)))
		return -1;
	mem = fmemopen(data, len ? len : 1, "rb");
	if (!mem) {
		free(data);
		return -1;
	}
	t->f = mem;
	t->size = len;
	ret = fn(t);
	t->f = f;
	t->size = fsize;
	fclose(mem);
	free(data);
	return ret;
}

/* ---- options ----------------------------------------------------------- */

/* One option: 1 for the last of its section (then *@next: the next
 * section, 0 for none), 0 for another, -1 if it is not well formed. */
static int option(struct dp_tdat *t, struct opts7 *o, uint16_t id,
		  uint8_t *p, uint32_t n, uint64_t *next, char *err,
		  size_t errlen)
{
	switch (id) {
	case SEC_OPTIONS:
		if (n < 8)
			return -1;
		*next = tdat_get64(p);
		return 1;
	case SEC_EVENT_FORMATS:
	case SEC_CMDLINES:
		if (n >= 8)
			*(id == SEC_CMDLINES ? &o->cmdlines : &o->formats) =
				tdat_get64(p);
		return 0;
	case OPT_BUFFER:
		/* the top instance's: the offset, then "" */
		if (n > 9 && !p[8] && !o->buf) {
			o->fly = tdat_get64(p);
			o->buf = malloc(n);
			if (!o->buf)
				return -1;
			memcpy(o->buf, p, n);
			o->buf_len = n;
		}
		return 0;
	case DP_TDAT_OPTION:
		if (o->found)
			return 0;
		p[n - 1] = 0;
		o->found = tdat_rd_dprobe_option(t, (char *)p, err, errlen) ?
			   -2 : 1;
		return 0;
	}
	return 0;
}

/* The options section at @off: 0, its next in *@next; -1 cut or not
 * well formed, -2 a message said. */
static int options(struct dp_tdat *t, struct opts7 *o, uint64_t off,
		   uint64_t *next, char *err, size_t errlen)
{
	uint16_t id, flags;
	uint64_t size;
	size_t len, at = 0;
	uint8_t *data;
	int ret = -1;

	*next = 0;
	if (sec_head(t, off, &id, &flags, &size, true) || id != SEC_OPTIONS ||
	    !(data = sec_data(t, flags, size, &len)))
		return -1;
	while (at + 6 <= len) {
		uint16_t oid;
		uint32_t n;

		memcpy(&oid, data + at, 2);
		n = tdat_get32(data + at + 2);
		if (n > len - at - 6 || (!n && oid == DP_TDAT_OPTION))
			break;
		ret = option(t, o, oid, data + at + 6, n, next, err, errlen);
		at += 6 + (size_t)n;
		if (ret || o->found == -2)
			break;
	}
	free(data);
	if (o->found == -2)
		return -2;
	return ret == 1 ? 0 : -1;
}

/* ---- each CPU's chunks ------------------------------------------------- */

static int chunk_add(struct cursor *c, const struct rchunk *k, size_t *cap)
{
	struct rchunk *v;

	if (c->nchunks == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		v = realloc(c->chunks, *cap * sizeof(*v));
		if (!v)
			return -1;
		c->chunks = v;
	}
	c->chunks[c->nchunks++] = *k;
	c->npages += k->usize / DP_TDAT_PAGE;
	return 0;
}

/* The chunks of CPU @cpu, at @off: those the file holds whole. */
static int cpu_chunks(struct dp_tdat *t, struct cursor *c, unsigned cpu,
		      uint64_t off, uint64_t size)
{
	uint64_t at = off + 4;
	uint32_t count, k, sz[2];
	size_t cap = 0;

	if (!size)
		return 0;
	if (off > t->size || fseeko(t->f, (off_t)off, SEEK_SET) ||
	    tdat_rd32(t, &count)) {
		tdat_damage(t, "CPU %u: none of its chunks are in the file "
			    "(it was cut)\n", cpu);
		return 0;
	}
	for (k = 0; k < count; k++) {
		struct rchunk r;

		if (at + 8 > t->size || fseeko(t->f, (off_t)at, SEEK_SET) ||
		    tdat_rd(t, sz, 8) || sz[0] > t->size - at - 8) {
			tdat_damage(t, "CPU %u: %" PRIu32 " of its %" PRIu32
				    " chunks are in the file (it was cut)\n",
				    cpu, k, count);
			break;
		}
		if (!sz[1] || sz[1] % DP_TDAT_PAGE ||
		    sz[1] > DP_TDAT_CHUNK_MAX * DP_TDAT_PAGE) {
			tdat_damage(t, "CPU %u: chunk %" PRIu32 " is not well "
				    "formed: the rest skipped\n", cpu, k);
			break;
		}
		r = (struct rchunk){ at + 8, sz[0], sz[1] };
		if (chunk_add(c, &r, &cap))
			return -1;
		at += 8 + (uint64_t)sz[0];
	}
	return 0;
}

/* The top buffer's option: each CPU's data, after its clock and page
 * size. */
static int rd_buffer(struct dp_tdat *t, const struct opts7 *o)
{
	const uint8_t *p = o->buf + 9, *end = o->buf + o->buf_len;
	uint32_t ncpus;

	p = memchr(p, 0, (size_t)(end - p));	/* the clock */
	if (!p || end - ++p < 8)
		return -1;
	ncpus = tdat_get32(p + 4);
	p += 8;
	if (ncpus > DP_TDAT_MAX_CPUS || (uint64_t)(end - p) < 20ull * ncpus)
		return -1;
	t->cpu = calloc(ncpus ? ncpus : 1, sizeof(*t->cpu));
	if (!t->cpu)
		return -1;
	t->ncpus = 0;
	for (uint32_t i = 0; i < ncpus; i++, p += 20) {
		uint32_t cpu = tdat_get32(p);

		/* CPUs in order, as dprobe writes them */
		if (cpu != i)
			return -1;
		t->ncpus = (int)i + 1;
		if (cpu_chunks(t, &t->cpu[i], i, tdat_get64(p + 4), tdat_get64(p + 12)))
			return -1;
	}
	return 0;
}

/* ---- the header -------------------------------------------------------- */

static int rd_options(struct dp_tdat *t, struct opts7 *o, char *err,
		      size_t errlen)
{
	uint64_t off, next;
	int ret;

	if (tdat_rd64(t, &off))
		return -1;
	for (int i = 0; off && i < MAX_OPTION_SECTIONS; i++) {
		ret = options(t, o, off, &next, err, errlen);
		if (ret)
			return ret;
		off = next;
	}
	return 0;
}

int tdat_head7(struct dp_tdat *t, char *err, size_t errlen)
{
	char name[16], version[32];
	struct opts7 o = { 0 };
	uint16_t id, flags;
	uint64_t size;
	int ret;

	if (tdat_rd_str(t, name, sizeof(name)) ||
	    tdat_rd_str(t, version, sizeof(version)))
		goto cut;
	if (strcmp(name, "zstd")) {
		tdat_say(err, errlen, "a trace.dat of version 7 compressed "
			 "with '%s': not one dprobe wrote; read it with "
			 "trace-cmd report", name);
		return -1;
	}
	ret = rd_options(t, &o, err, errlen);
	if (ret == -2)
		goto fail;
	if (ret)
		goto cut;
	if (o.found != 1) {
		tdat_say(err, errlen, "a trace.dat dprobe did not write (it has "
			 "no dprobe part): read it with trace-cmd report");
		goto fail;
	}
	t->zd = ZSTD_createDCtx();
	if (!o.buf || !t->zd ||
	    sec_parse(t, o.formats, tdat_rd_formats) ||
	    sec_parse(t, o.cmdlines, tdat_rd_cmdlines) ||
	    sec_head(t, o.fly, &id, &flags, &size, false) || id != OPT_BUFFER ||
	    !(flags & SEC_COMPRESSED) || rd_buffer(t, &o))
		goto cut;
	free(o.buf);
	tdat_tasks_index(t);
	return 0;
cut:
	tdat_say(err, errlen, "the file ends inside its header (cut, or not "
		 "a trace.dat): nothing to read");
fail:
	free(o.buf);
	return -1;
}

void tdat_zclose(struct dp_tdat *t)
{
	ZSTD_freeDCtx(t->zd);
	free(t->zin);
}

/* ---- pages ------------------------------------------------------------- */

/* Chunk @c->zi decompressed into c->zbuf: 0, or -1 (said). */
static int chunk_load(struct dp_tdat *t, struct cursor *c, int cpu)
{
	const struct rchunk *k = &c->chunks[c->zi];
	size_t got;

	if (k->csize > t->zin_cap) {
		uint8_t *v = realloc(t->zin, k->csize);

		if (!v)
			goto bad;
		t->zin = v;
		t->zin_cap = k->csize;
	}
	if (k->usize > c->zcap) {
		uint8_t *v = realloc(c->zbuf, k->usize);

		if (!v)
			goto bad;
		c->zbuf = v;
		c->zcap = k->usize;
	}
	if (pread(fileno(t->f), t->zin, k->csize, (off_t)k->off) !=
	    (ssize_t)k->csize)
		goto bad;
	got = ZSTD_decompressDCtx(t->zd, c->zbuf, k->usize, t->zin, k->csize);
	if (!ZSTD_isError(got) && got == k->usize)
		return 0;
bad:
	tdat_damage(t, "CPU %d: chunk %zu could not be read or decompressed: "
		    "its pages skipped\n", cpu, c->zi);
	return -1;
}

int tdat_zpage_read(struct dp_tdat *t, struct cursor *c, int cpu)
{
	/* pages are read in order: the next chunk, when this one is done */
	while (c->next_page >= c->zfirst + c->zpages) {
		if (c->zpages)
			c->zi++;
		if (c->zi >= c->nchunks) {
			c->next_page = c->npages;
			return -1;
		}
		c->zfirst += c->zpages;
		c->zpages = c->chunks[c->zi].usize / DP_TDAT_PAGE;
		if (chunk_load(t, c, cpu)) {
			c->next_page = c->zfirst + c->zpages;
			return -1;
		}
	}
	memcpy(c->page, c->zbuf + (c->next_page - c->zfirst) * DP_TDAT_PAGE,
	       DP_TDAT_PAGE);
	c->next_page++;
	return 0;
}
