/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The trace.dat reader's state, shared by the reading of its two file
 * versions: version 6 (tdat-read.c) and version 7's header, sections and
 * chunks (tdat-read7.c).  A recording's records are decoded from pages
 * the same way in both.
 */
#ifndef DPROBE_RECORD_TDAT_READER_H
#define DPROBE_RECORD_TDAT_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "event/event.h"
#include "record/tracedat.h"

/* A compressed chunk of a CPU's pages, in the file. */
struct rchunk {
	uint64_t off;			/* of its zstd frame */
	uint32_t csize, usize;
};

struct task {
	int pid, tgid;
	char comm[DP_TASK_COMM_LEN];
};

struct sym {
	int mm;
	uint64_t start, size;
	char *name;
};

struct cursor {
	uint64_t off;			/* of its data in the file */
	uint64_t npages, next_page;	/* pages in the file, next to load */
	uint8_t page[DP_TDAT_PAGE];
	size_t pos, end;		/* in the page's data */
	bool loaded;
	uint64_t ts;
	unsigned long lost;		/* marked on the page loaded */
	bool lost_pending;
	/* the record decoded and not yet handed out */
	bool have;
	uint64_t rec_ts;
	const uint8_t *rec;
	size_t rec_len;
	/* version 7: the CPU's chunks, and the one decompressed (@zi, its
	 * first page @zfirst; @zbuf holds its pages) */
	struct rchunk *chunks;
	size_t nchunks, zi;
	uint64_t zfirst, zpages;
	uint8_t *zbuf;
	size_t zcap;
};

struct sym_scope {
	struct dp_tdat *t;
	int mm;
};

struct dp_tdat {
	FILE *f;
	uint64_t size;			/* of the file */
	struct dp_tdat_event *events;
	size_t nevents;
	struct task *tasks;
	size_t ntasks, tasks_cap;
	struct sym *syms;
	size_t nsyms;
	struct cursor *cpu;
	int ncpus;
	uint8_t rec[DP_TDAT_PAGE];	/* the record handed out */
	uint64_t stack[DP_STACK_MAX];
	struct sym_scope scope;
	char damage[1024];
	size_t damage_len;
	void *zd;			/* version 7: zstd's context */
	uint8_t *zin;			/* a compressed chunk, as read */
	size_t zin_cap;
};

void tdat_say(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void tdat_damage(struct dp_tdat *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int tdat_rd(struct dp_tdat *t, void *p, size_t n);
int tdat_rd32(struct dp_tdat *t, uint32_t *v);
int tdat_rd64(struct dp_tdat *t, uint64_t *v);
int tdat_rd_str(struct dp_tdat *t, char *buf, size_t n);
int tdat_rd_formats(struct dp_tdat *t);
int tdat_rd_cmdlines(struct dp_tdat *t);
/* dprobe's option's text: 0, or -1 with a message in @err */
int tdat_rd_dprobe_option(struct dp_tdat *t, char *text, char *err,
			  size_t errlen);
void tdat_tasks_index(struct dp_tdat *t);

/* ---- version 7 (tdat-read7.c) ---- */

/* The header after its page size: 0, or -1 with a message in @err. */
int tdat_head7(struct dp_tdat *t, char *err, size_t errlen);
/* Page @c->next_page of @c's chunks into c->page: 0, or -1 if it cannot
 * be had (said in the damage; its chunk skipped). */
int tdat_zpage_read(struct dp_tdat *t, struct cursor *c, int cpu);
void tdat_zclose(struct dp_tdat *t);

#endif
