/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The trace.dat writer's state, shared by its two file versions: version
 * 6 (tdat-write.c: the pages as they are) and version 7 (tdat-write7.c:
 * the pages in zstd chunks, the metadata in compressed sections).
 */
#ifndef DPROBE_RECORD_TDAT_WRITER_H
#define DPROBE_RECORD_TDAT_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "event/event.h"
#include "record/tdat-common.h"
#include "record/tracedat.h"

/* Pages written to the spill file in one go (version 6). */
#define BATCH_PAGES	64

/* A compressed chunk of a CPU's pages, in the spill file. */
struct zchunk {
	uint64_t off;			/* in the spill file */
	uint32_t csize, usize;		/* compressed, and its pages' bytes */
};

struct cpu_pages {
	uint8_t page[DP_TDAT_PAGE];
	size_t used;			/* bytes of data in @page */
	uint64_t last_ts;		/* the newest record's, in @page */
	bool open;			/* @page holds a timestamp */
	/* events lost before the next page (marked on it) */
	bool lost_pending;
	unsigned long lost;
	uint64_t *spilled;		/* its full pages' offsets, in order */
	size_t nspilled, cap;
	int index;			/* the CPU */
	/* version 7: full pages gathered into a chunk, and the chunks
	 * compressed so far (each written whole, or not kept) */
	uint8_t *chunk;
	size_t chunk_pages;
	struct zchunk *chunks;
	size_t nchunks, chunks_cap;
};

/* An event whose definition and format are noted, and what its records
 * need checked (a length alone when @min_ok). */
struct ev_note {
	const struct dp_event *ev;	/* NULL: a free slot */
	unsigned serial;
	bool syms;			/* it has symbol arguments */
	bool min_ok;
	size_t min;
};
#define EV_CACHE	64

/* An address whose symbol is noted (addr 0: a free slot). */
struct addr_note {
	uint64_t addr;
	int mm;
};
#define ADDR_CACHE	8192

struct fmt {
	char system[DP_MAX_EVENT_NAME_LEN];
	char *text;
};

struct dp_tdat_writer {
	struct cpu_pages **cpu;
	int ncpus;
	int spill_fd;
	uint64_t spill_off;
	uint64_t spill_ok;		/* bytes of it written without error */
	uint64_t events, dropped;
	int err;			/* the first spill error */
	/* dprobe's option, as it grows */
	FILE *opt;
	char *optbuf;
	size_t optlen;
	struct fmt *fmts;
	size_t nfmts;
	char *cmdlines;			/* "PID COMM\n" lines */
	size_t cmdlen;
	FILE *cmd;
	struct dp_pairset events_seen, tasks, comms, addrs, syms;
	/* what every record would otherwise look up in the sets above
	 * (function_graph's records alternate between two events and name
	 * two addresses each): the events noted, by serial; the last
	 * record's thread and name; the addresses noted, direct-mapped */
	struct ev_note evc[EV_CACHE];
	int last_pid, last_tgid;
	char last_comm[DP_TASK_COMM_LEN];
	struct addr_note addrc[ADDR_CACHE];
	/* full pages waiting to be written to the spill file together,
	 * each after its frame header (spill_frame_*()) */
	uint8_t *batch;
	int batch_cpu[BATCH_PAGES];	/* each batched page's CPU */
	size_t nbatch;
	/* the spill file's name when it has one (OUTPUT.part: what a
	 * killed recorder leaves, dp_tdat_recover() reads), and how much of
	 * the option, the formats and the names it holds */
	char *spill_path;
	size_t opt_sent, cmd_sent, fmts_sent;
	bool stack_format;
	uint64_t pos;			/* bytes written by finish */
	/* how finish copies pages from the spill file to the output: the
	 * first way that works for the two files */
	enum { COPY_RANGE, COPY_SENDFILE, COPY_USER } copy;
	/* version 7: zstd's context (NULL: version 6), its level, and the
	 * buffer a chunk is compressed into */
	void *zc;
	int zlevel;
	uint8_t *zbuf;
	size_t zcap;
};

/* The spill file's frame of a compressed chunk (version 7): u32
 * SPILL_CHUNK_MAGIC, u32 its CPU, u32 its compressed size, u32 its
 * pages' size, then the zstd frame; beside tdat-write.c's page and
 * metadata frames, so that a killed recorder's chunks are recovered. */
#define SPILL_CHUNK_MAGIC	0x5a535044u	/* "DPSZ" */
#define SPILL_CHUNK_HEAD	16u

struct cpu_pages *tdat_cpu_of(struct dp_tdat_writer *w, int cpu);
void tdat_page_open(struct cpu_pages *c, uint64_t ts);
void tdat_page_close(struct dp_tdat_writer *w, struct cpu_pages *c);

/* Bytes to @out, counted in w->pos; a failed write sets w->err. */
void tdat_out_bytes(struct dp_tdat_writer *w, FILE *out, const void *p,
		    size_t n);
void tdat_out32(struct dp_tdat_writer *w, FILE *out, uint32_t v);
void tdat_out64(struct dp_tdat_writer *w, FILE *out, uint64_t v);
void tdat_out_str(struct dp_tdat_writer *w, FILE *out, const char *s);
void tdat_out_sized(struct dp_tdat_writer *w, FILE *out, const char *s,
		    bool wide);
/* A trace.dat's first bytes, of file @version ("6", "7"): the magic,
 * little endian, 8-byte longs, the page size. */
void tdat_out_magic(struct dp_tdat_writer *w, FILE *out, const char *version);
void tdat_out_formats(struct dp_tdat_writer *w, FILE *out);
/* What describes the pages to come, to the spill file before them. */
void tdat_spill_meta_new(struct dp_tdat_writer *w);

/* ---- version 7 (tdat-write7.c) ---- */

/* The full page of @c into its chunk, the chunk compressed and spilled
 * when it is full. */
void tdat_zpage(struct dp_tdat_writer *w, struct cpu_pages *c);
/* The file, version 7, once every page is closed. */
int tdat_finish7(struct dp_tdat_writer *w, FILE *out);
void tdat_zfree(struct dp_tdat_writer *w);
/* The chunk frame at @off of a killed recorder's spill file of @size
 * bytes, kept under its CPU (the recording is then version 7): the next
 * frame's offset, 0 if this one is torn or not well formed. */
uint64_t tdat_recover_chunk(struct dp_tdat_writer *w, uint64_t off,
			    uint64_t size);

#endif
