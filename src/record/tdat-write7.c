// SPDX-License-Identifier: GPL-2.0
/*
 * Writing a trace.dat of version 7 (trace-cmd.dat.v7(5)) compressed with
 * zstd, as trace-cmd 3 reads it: each CPU's full pages gathered into
 * chunks, each chunk compressed as it fills and spilled as a frame of
 * the spill file (so the spill file holds what the recording will, the
 * sizes are known at the end, and a killed recorder's chunks are
 * recovered as its pages are), then the file written in one pass:
 *
 *   header ("7", "zstd" and its version, the options' offset)
 *   options section: where the sections are, the CPU count, the buffer
 *     (the CPUs' data offsets and sizes), dprobe's option, done
 *   header info, ftrace events, event formats, cmdlines: compressed
 *   buffer flyrecord: per CPU, at a page boundary, a chunk count and the
 *     chunks (compressed size, pages' size, zstd frame)
 *   strings: the sections' names
 *
 * The options come first and are not compressed: they hold the offsets
 * of what follows, which a compressed size would move.  A file cut short
 * keeps its header, its options and its metadata: readers read the
 * chunks that are whole.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zstd.h>

#include "record/tdat-writer.h"

/* trace-cmd's ids of sections and options (trace-cmd.dat.v7(5)) */
enum {
	SEC_OPTIONS = 0,
	OPT_BUFFER = 3,
	OPT_CPUCOUNT = 8,
	SEC_STRINGS = 15,
	SEC_HEADER_INFO = 16,
	SEC_FTRACE_EVENTS = 17,
	SEC_EVENT_FORMATS = 18,
	SEC_CMDLINES = 21,
};
#define SEC_COMPRESSED	1

/* The sections' names, in the strings section; a name is its offset. */
static const char strings[] =
	"options\0headers\0ftrace events\0events format\0command lines\0"
	"flyrecord\0strings";
enum {
	NAME_OPTIONS = 0, NAME_HEADERS = 8, NAME_FTRACE = 16, NAME_EVENTS = 30,
	NAME_CMDLINES = 44, NAME_FLYRECORD = 58, NAME_STRINGS = 68,
};

/* the clock dprobe's timestamps count: CLOCK_MONOTONIC */
static const char clock_name[] = "mono";

int dp_tdat_writer_compress(struct dp_tdat_writer *w, int level)
{
	size_t cap = ZSTD_compressBound(DP_TDAT_CHUNK_PAGES * DP_TDAT_PAGE);

	if (w->zc)
		return 0;
	w->zbuf = malloc(cap);
	w->zc = ZSTD_createCCtx();
	if (!w->zbuf || !w->zc) {
		tdat_zfree(w);
		errno = ENOMEM;
		return -1;
	}
	w->zcap = cap;
	w->zlevel = level;
	return 0;
}

void tdat_zfree(struct dp_tdat_writer *w)
{
	ZSTD_freeCCtx(w->zc);
	free(w->zbuf);
	w->zc = NULL;
	w->zbuf = NULL;
	w->zcap = 0;
}

/* @n bytes of @src compressed into w->zbuf: its size, 0 if it fails. */
static size_t zcompress(struct dp_tdat_writer *w, const void *src, size_t n)
{
	size_t bound = ZSTD_compressBound(n), got;

	if (bound > w->zcap) {
		uint8_t *b = realloc(w->zbuf, bound);

		if (!b)
			return 0;
		w->zbuf = b;
		w->zcap = bound;
	}
	got = ZSTD_compressCCtx(w->zc, w->zbuf, w->zcap, src, n, w->zlevel);
	return ZSTD_isError(got) ? 0 : got;
}

static int chunks_grow(struct cpu_pages *c)
{
	size_t cap = c->chunks_cap ? 2 * c->chunks_cap : 16;
	struct zchunk *v;

	if (c->nchunks < c->chunks_cap)
		return 0;
	v = realloc(c->chunks, cap * sizeof(*v));
	if (!v)
		return -1;
	c->chunks = v;
	c->chunks_cap = cap;
	return 0;
}

/* The pages gathered in @c's chunk, compressed and spilled in one
 * write as a chunk frame, after what describes them: kept whole, or not
 * at all (the first error stops the recording, as a full disk does
 * version 6's). */
static void chunk_flush(struct dp_tdat_writer *w, struct cpu_pages *c)
{
	size_t n = c->chunk_pages * DP_TDAT_PAGE, got;
	uint32_t head[4];
	struct iovec iov[2];
	ssize_t wr;

	c->chunk_pages = 0;
	if (!n || w->err)
		return;
	got = zcompress(w, c->chunk, n);
	if (!got || chunks_grow(c)) {
		w->err = ENOMEM;
		return;
	}
	tdat_spill_meta_new(w);
	if (w->err)
		return;
	head[0] = SPILL_CHUNK_MAGIC;
	head[1] = (uint32_t)c->index;
	head[2] = (uint32_t)got;
	head[3] = (uint32_t)n;
	iov[0] = (struct iovec){ head, sizeof(head) };
	iov[1] = (struct iovec){ w->zbuf, got };
	wr = pwritev(w->spill_fd, iov, 2, (off_t)w->spill_off);
	if (wr != (ssize_t)(sizeof(head) + got)) {
		w->err = wr < 0 && errno ? errno : ENOSPC;
		return;
	}
	c->chunks[c->nchunks++] = (struct zchunk){
		w->spill_off + SPILL_CHUNK_HEAD, (uint32_t)got, (uint32_t)n };
	w->spill_off += (uint64_t)wr;
	w->spill_ok = w->spill_off;
}

uint64_t tdat_recover_chunk(struct dp_tdat_writer *w, uint64_t off,
			    uint64_t size)
{
	uint32_t head[4];
	struct cpu_pages *c;

	if (off + SPILL_CHUNK_HEAD > size ||
	    pread(w->spill_fd, head, sizeof(head), (off_t)off) !=
	    (ssize_t)sizeof(head) || head[1] >= DP_TDAT_MAX_CPUS || !head[2] ||
	    head[2] > size - off - SPILL_CHUNK_HEAD || !head[3] ||
	    head[3] % DP_TDAT_PAGE || head[3] > DP_TDAT_CHUNK_MAX * DP_TDAT_PAGE)
		return 0;
	/* the recording a compressed one's pages make is compressed too */
	if (dp_tdat_writer_compress(w, DP_TDAT_ZSTD_LEVEL) ||
	    !(c = tdat_cpu_of(w, (int)head[1])) || chunks_grow(c))
		return 0;
	c->chunks[c->nchunks++] = (struct zchunk){ off + SPILL_CHUNK_HEAD,
		head[2], head[3] };
	return off + SPILL_CHUNK_HEAD + head[2];
}

void tdat_zpage(struct dp_tdat_writer *w, struct cpu_pages *c)
{
	if (!c->chunk) {
		c->chunk = malloc(DP_TDAT_CHUNK_PAGES * DP_TDAT_PAGE);
		if (!c->chunk) {
			w->err = w->err ? w->err : ENOMEM;
			return;
		}
	}
	memcpy(c->chunk + c->chunk_pages * DP_TDAT_PAGE, c->page,
	       DP_TDAT_PAGE);
	if (++c->chunk_pages == DP_TDAT_CHUNK_PAGES)
		chunk_flush(w, c);
}

/* ---- the sections ------------------------------------------------------ */

/* A metadata section: its id, name and content (compression header and
 * zstd frame). */
struct sec {
	uint16_t id;
	uint32_t name;
	uint8_t *data;
	size_t len;
	uint64_t off;			/* in the file */
};

/* What @fill writes, compressed into @s. */
static int sec_make(struct dp_tdat_writer *w, struct sec *s,
		    void (*fill)(struct dp_tdat_writer *w, FILE *f))
{
	char *raw = NULL;
	size_t rlen = 0, got;
	FILE *f = open_memstream(&raw, &rlen);

	if (!f)
		return -1;
	fill(w, f);
	fclose(f);
	got = zcompress(w, raw, rlen);
	s->data = got ? malloc(8 + got) : NULL;
	if (s->data) {
		uint32_t sz[2] = { (uint32_t)got, (uint32_t)rlen };

		memcpy(s->data, sz, 8);
		memcpy(s->data + 8, w->zbuf, got);
		s->len = 8 + got;
	}
	free(raw);
	return s->data ? 0 : -1;
}

static void fill_headers(struct dp_tdat_writer *w, FILE *f)
{
	tdat_out_str(w, f, "header_page");
	tdat_out_sized(w, f, dp_tdat_header_page(), true);
	tdat_out_str(w, f, "header_event");
	tdat_out_sized(w, f, dp_tdat_header_event, true);
}

static void fill_ftrace(struct dp_tdat_writer *w, FILE *f)
{
	tdat_out32(w, f, 0);			/* ftrace's own events */
}

static void fill_cmdlines(struct dp_tdat_writer *w, FILE *f)
{
	tdat_out_sized(w, f, w->cmdlines ? w->cmdlines : "", true);
}

static void sec_head(struct dp_tdat_writer *w, FILE *out, uint16_t id,
		     uint16_t flags, uint32_t name, uint64_t size)
{
	tdat_out_bytes(w, out, &id, 2);
	tdat_out_bytes(w, out, &flags, 2);
	tdat_out32(w, out, name);
	tdat_out64(w, out, size);
}

/* ---- the layout -------------------------------------------------------- */

struct cpu_place {
	uint64_t off, size;		/* size: the chunks, not their count */
};

struct layout {
	struct sec secs[4];
	uint64_t opt_size;
	uint64_t fly_off, fly_size;	/* the flyrecord section's header */
	struct cpu_place *cpu;
};

static uint64_t page_up(uint64_t v)
{
	return (v + DP_TDAT_PAGE - 1) & ~(uint64_t)(DP_TDAT_PAGE - 1);
}

static uint64_t head_size(void)
{
	return 3 + 7 + 2 + 2 + 4 + 5 + strlen(ZSTD_versionString()) + 1 + 8;
}

static uint64_t buffer_opt_size(const struct dp_tdat_writer *w)
{
	return 8 + 1 + sizeof(clock_name) + 4 + 4 + 20 * (uint64_t)w->ncpus;
}

/* Where everything goes, the options right after the header. */
static void layout(struct dp_tdat_writer *w, struct layout *l)
{
	uint64_t at, end;

	l->opt_size = 4 * 14 + (6 + 4) + (6 + buffer_opt_size(w)) +
		      (6 + w->optlen + 1) + 14;
	at = head_size() + 16 + l->opt_size;
	for (int i = 0; i < 4; i++) {
		l->secs[i].off = at;
		at += 16 + l->secs[i].len;
	}
	l->fly_off = at;
	end = at + 16;
	at = page_up(end);
	for (int i = 0; i < w->ncpus; i++) {
		const struct cpu_pages *c = w->cpu[i];
		uint64_t size = 0;

		for (size_t k = 0; c && k < c->nchunks; k++)
			size += 8 + (uint64_t)c->chunks[k].csize;
		l->cpu[i].off = at;
		l->cpu[i].size = size;
		if (size) {
			end = at + 4 + size;
			at = page_up(end);
		}
	}
	l->fly_size = end - (l->fly_off + 16);
}

/* ---- the file ---------------------------------------------------------- */

static void out_head(struct dp_tdat_writer *w, FILE *out)
{
	tdat_out_magic(w, out, "7");
	tdat_out_str(w, out, "zstd");
	tdat_out_str(w, out, ZSTD_versionString());
	tdat_out64(w, out, head_size());	/* the options, next */
}

static void out_opt(struct dp_tdat_writer *w, FILE *out, uint16_t id,
		    uint32_t size)
{
	tdat_out_bytes(w, out, &id, 2);
	tdat_out32(w, out, size);
}

static void out_options(struct dp_tdat_writer *w, FILE *out,
			const struct layout *l)
{
	uint16_t dp = DP_TDAT_OPTION;

	sec_head(w, out, SEC_OPTIONS, 0, NAME_OPTIONS, l->opt_size);
	for (int i = 0; i < 4; i++) {
		out_opt(w, out, l->secs[i].id, 8);
		tdat_out64(w, out, l->secs[i].off);
	}
	out_opt(w, out, OPT_CPUCOUNT, 4);
	tdat_out32(w, out, (uint32_t)w->ncpus);
	out_opt(w, out, OPT_BUFFER, (uint32_t)buffer_opt_size(w));
	tdat_out64(w, out, l->fly_off);
	tdat_out_str(w, out, "");		/* the top instance */
	tdat_out_str(w, out, clock_name);
	tdat_out32(w, out, DP_TDAT_PAGE);
	tdat_out32(w, out, (uint32_t)w->ncpus);
	for (int i = 0; i < w->ncpus; i++) {
		tdat_out32(w, out, (uint32_t)i);
		tdat_out64(w, out, l->cpu[i].off);
		tdat_out64(w, out, l->cpu[i].size);
	}
	tdat_out_bytes(w, out, &dp, 2);
	tdat_out32(w, out, (uint32_t)w->optlen + 1);
	tdat_out_bytes(w, out, w->optbuf, w->optlen + 1);
	out_opt(w, out, SEC_OPTIONS, 8);	/* done: no more options */
	tdat_out64(w, out, 0);
}

static void pad_to(struct dp_tdat_writer *w, FILE *out, uint64_t at)
{
	static const uint8_t zero[DP_TDAT_PAGE];

	while (w->pos < at) {
		uint64_t n = at - w->pos;

		tdat_out_bytes(w, out, zero, n < sizeof(zero) ? n : sizeof(zero));
	}
}

/* A CPU's chunks, copied from the spill file. */
static void out_chunks(struct dp_tdat_writer *w, FILE *out,
		       const struct cpu_pages *c)
{
	tdat_out32(w, out, (uint32_t)c->nchunks);
	for (size_t k = 0; k < c->nchunks; k++) {
		const struct zchunk *z = &c->chunks[k];

		tdat_out32(w, out, z->csize);
		tdat_out32(w, out, z->usize);
		/* a recovered chunk may be larger than this writer's own */
		if (z->csize > w->zcap) {
			uint8_t *b = realloc(w->zbuf, z->csize);

			if (!b) {
				w->err = w->err ? w->err : ENOMEM;
				return;
			}
			w->zbuf = b;
			w->zcap = z->csize;
		}
		if (pread(w->spill_fd, w->zbuf, z->csize, (off_t)z->off) !=
		    (ssize_t)z->csize) {
			w->err = w->err ? w->err : (errno ? errno : EIO);
			memset(w->zbuf, 0, z->csize);
		}
		tdat_out_bytes(w, out, w->zbuf, z->csize);
	}
}

static void out_file(struct dp_tdat_writer *w, FILE *out,
		     const struct layout *l)
{
	out_head(w, out);
	out_options(w, out, l);
	for (int i = 0; i < 4; i++) {
		const struct sec *s = &l->secs[i];

		sec_head(w, out, s->id, SEC_COMPRESSED, s->name, s->len);
		tdat_out_bytes(w, out, s->data, s->len);
	}
	sec_head(w, out, OPT_BUFFER, SEC_COMPRESSED, NAME_FLYRECORD,
		 l->fly_size);
	for (int i = 0; i < w->ncpus; i++) {
		if (!l->cpu[i].size)
			continue;
		pad_to(w, out, l->cpu[i].off);
		out_chunks(w, out, w->cpu[i]);
	}
	sec_head(w, out, SEC_STRINGS, 0, NAME_STRINGS, sizeof(strings));
	tdat_out_bytes(w, out, strings, sizeof(strings));
}

int tdat_finish7(struct dp_tdat_writer *w, FILE *out)
{
	struct layout l = {
		.secs = {
			{ SEC_HEADER_INFO, NAME_HEADERS },
			{ SEC_FTRACE_EVENTS, NAME_FTRACE },
			{ SEC_EVENT_FORMATS, NAME_EVENTS },
			{ SEC_CMDLINES, NAME_CMDLINES },
		},
	};
	void (*fill[4])(struct dp_tdat_writer *, FILE *) = {
		fill_headers, fill_ftrace, tdat_out_formats, fill_cmdlines,
	};
	int ret = 0;

	for (int i = 0; i < w->ncpus; i++)
		if (w->cpu[i])
			chunk_flush(w, w->cpu[i]);
	l.cpu = calloc((size_t)w->ncpus, sizeof(*l.cpu));
	for (int i = 0; i < 4 && !ret; i++)
		ret = sec_make(w, &l.secs[i], fill[i]);
	if (!l.cpu || ret) {
		w->err = w->err ? w->err : ENOMEM;
	} else {
		layout(w, &l);
		w->pos = 0;
		out_file(w, out, &l);
	}
	for (int i = 0; i < 4; i++)
		free(l.secs[i].data);
	free(l.cpu);
	if (fflush(out) && !w->err)
		w->err = errno ? errno : EIO;
	if (w->err) {
		errno = w->err;
		return -1;
	}
	return 0;
}
