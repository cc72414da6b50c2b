/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Recordings: trace-cmd's trace.dat (version 6, trace-cmd.dat.v6(5); or
 * version 7, trace-cmd.dat.v7(5), compressed with zstd), written by
 * `dprobe record` and read by `dprobe report`, and by `trace-cmd report`
 * and KernelShark since the layout is theirs.
 *
 * A file is the kernel's own pieces: the ring buffer's page and event
 * headers, each event's `format` text, saved_cmdlines, then per CPU the
 * ring buffer's pages with the records in them byte for byte (the record
 * layout is the kernel's, lang/layout.h).  What a reader needs besides
 * and trace-cmd has no place for goes into one option of the file's
 * options section (DP_TDAT_OPTION), which trace-cmd skips as the format
 * says readers do: each event's definition (the kprobe_events line it
 * was made from, so that `dprobe report` remakes the very same event),
 * the thread groups, and the symbols of the addresses the records hold
 * (a recording is read where the traced files may be gone).
 *
 * The writer holds one page per CPU in memory and spills full pages to
 * an unlinked file beside the output; the file itself is written whole
 * at the end, since trace.dat gives each CPU's data as one offset and
 * size, known only then.
 */
#ifndef DPROBE_RECORD_TRACEDAT_H
#define DPROBE_RECORD_TRACEDAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "event/event.h"
#include "event/sink.h"

/* The page size of dprobe's files (the ring buffer's sub-buffer) and the
 * bytes of it records go in. */
#define DP_TDAT_PAGE		4096u
#define DP_TDAT_PAGE_HEAD	16u
#define DP_TDAT_PAGE_DATA	(DP_TDAT_PAGE - DP_TDAT_PAGE_HEAD)

/* The option holding dprobe's part (an id trace-cmd does not use) and
 * the version of that part's text this dprobe writes and reads. */
#define DP_TDAT_OPTION		0x4450
#define DP_TDAT_VERSION		1

/* The kernel's events/header_page (a printf format: the bytes of data
 * in a page) and events/header_event, x86-64's. */
extern const char dp_tdat_header_page_fmt[];
extern const char dp_tdat_header_event[];

/* The most CPUs a recording has (a record of a CPU past it is lost). */
#define DP_TDAT_MAX_CPUS	4096

/* The id of the event a user stack is written as, after its record. */
#define DP_TDAT_STACK_ID	999

/* Version 7 files (`record --compress`): a CPU's pages are compressed
 * with zstd in chunks of this many (the last one shorter); a reader
 * takes chunks of up to DP_TDAT_CHUNK_MAX pages. */
#define DP_TDAT_CHUNK_PAGES	64
#define DP_TDAT_CHUNK_MAX	1024
/* zstd's level: its fastest ones keep up with a recording */
#define DP_TDAT_ZSTD_LEVEL	1

struct dp_tdat_writer;

/*
 * A writer of the recording that will be @out (NULL: none named), its
 * pages spilled to @out.part until dp_tdat_finish() (an unnamed file in
 * $TMPDIR without @out, or when @out.part exists); NULL with errno set
 * if it cannot.  A recorder killed before it finished leaves @out.part,
 * which dp_tdat_recover() makes a recording of.
 */
struct dp_tdat_writer *dp_tdat_writer_new(const char *out, int ncpus);

/*
 * From now on the file is version 7 (trace-cmd.dat.v7(5)), its sections
 * and pages compressed with zstd at @level: called before the first
 * record.  0, or -1 with errno.
 */
int dp_tdat_writer_compress(struct dp_tdat_writer *w, int level);

/*
 * One record of @ev: copied into @meta->cpu's page, after the event's
 * definition and format the first time @ev is seen, with the symbols of
 * the addresses in it (@sym: NULL, none), and its stack as an event of
 * its own.  0, or -1 if the record cannot be kept (longer than a page,
 * or a CPU past the writer's): it counts as lost.
 */
int dp_tdat_record(struct dp_tdat_writer *w, const struct dp_event *ev,
		   const void *rec, size_t len, const struct dp_rec_meta *meta,
		   const struct dp_symbolizer *sym);

/* @n events lost on @cpu before its next record (DP_LOST_UNKNOWN). */
void dp_tdat_lost(struct dp_tdat_writer *w, int cpu, unsigned long n);

/* Records kept, records not kept (dp_tdat_record() said -1, lost
 * counts), and bytes of pages so far. */
void dp_tdat_counts(const struct dp_tdat_writer *w, uint64_t *events,
		    uint64_t *lost, uint64_t *bytes);

/* The whole file to @out: 0, or -1 with errno (a write that failed:
 * the file is cut). */
int dp_tdat_finish(struct dp_tdat_writer *w, FILE *out);

void dp_tdat_writer_free(struct dp_tdat_writer *w);

/* A recording that never began removed: @out and its spill file. */
void dp_tdat_remove(const char *out);

/*
 * The recording a killed recorder's spill file @part (OUT.part) holds, up
 * to its last whole page, written to @out; @pages its pages.  0, or -1
 * with a message in @err (not such a file, or a write that failed).
 */
int dp_tdat_recover(const char *part, FILE *out, uint64_t *pages,
		    char *err, size_t errlen);

/* ---- reading ---- */

struct dp_tdat;

/* One event as a recording defines it. */
struct dp_tdat_event {
	unsigned id;		/* in the file */
	/* what it was made from: "def" (the definition lines of its
	 * probes, one a line), "synth" (a synthetic_events line) or "ktp"
	 * (a kernel tracepoint, its format alone); "" for an event dprobe
	 * defines itself (a stack) */
	char kind[8];
	char *def;
	char *format;		/* its `format` text */
	char system[64], name[64];
};

/*
 * @path opened and its header read: the events, tasks and symbols.  NULL
 * with a message in @err (a file that is not a trace.dat, one trace-cmd
 * wrote rather than dprobe, one from a newer dprobe, or one cut before
 * its data).
 */
struct dp_tdat *dp_tdat_open(const char *path, char *err, size_t errlen);
void dp_tdat_close(struct dp_tdat *t);

size_t dp_tdat_nevents(const struct dp_tdat *t);
const struct dp_tdat_event *dp_tdat_event(const struct dp_tdat *t, size_t i);
int dp_tdat_ncpus(const struct dp_tdat *t);

/* The thread group and name of thread @pid as recorded (0 and NULL if
 * unknown). */
int dp_tdat_tgid(const struct dp_tdat *t, int pid);
const char *dp_tdat_comm(const struct dp_tdat *t, int pid);

/* A symbolizer of the addresses of process @tgid, from the symbols
 * recorded. */
void dp_tdat_symbolizer(struct dp_tdat *t, int tgid, struct dp_symbolizer *s);

/* What the next call to dp_tdat_next() gives. */
struct dp_tdat_rec {
	unsigned id;		/* the record's event id (its common_type) */
	const uint8_t *data;
	size_t len;
	uint64_t ts_ns;
	int cpu;
	unsigned long lost;	/* events lost on @cpu just before (0: none,
				 * DP_LOST_UNKNOWN: a number not known) */
	const uint64_t *stack;	/* its user stack, if recorded */
	unsigned nstack;
};

/*
 * The next record, in time order across CPUs: 1, 0 at the end, -1 for a
 * page that is not well formed (said in the error, the rest of its CPU
 * skipped).
 */
int dp_tdat_next(struct dp_tdat *t, struct dp_tdat_rec *r);

/* What was cut or skipped, one line a CPU ("" if nothing). */
const char *dp_tdat_damage(const struct dp_tdat *t);

#endif
