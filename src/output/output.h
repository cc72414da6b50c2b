/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Renderers: records to text people and programs read.  ftrace's `trace`
 * format (header and lines exactly as the kernel prints probe events) and
 * JSON lines with typed values.
 */
#ifndef DPROBE_OUTPUT_H
#define DPROBE_OUTPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "event/event.h"
#include "event/sink.h"

/* How a line's timestamp is printed (dprobe trace --ts). */
enum dp_ts_mode {
	DP_TS_US,	/* seconds.microseconds, rounded, as the kernel prints */
	DP_TS_NS,	/* seconds.nanoseconds */
};

struct dp_trace_opts {
	int ncpus;			/* "#P:%d" */
	const struct dp_symbolizer *sym;	/* may be NULL */
	enum dp_ts_mode ts;		/* 0: the kernel's microseconds */
};

/* "SECS.USECS" (rounded to the nearest microsecond, as the kernel's
 * ns2usecs()) or "SECS.NSECS" for @mode, the seconds at least @width
 * wide (0: as they are). */
void dp_put_ts(FILE *out, uint64_t ts_ns, enum dp_ts_mode mode, int width);

/* "# tracer: nop" ... the column legend, as `trace` prints it. */
void dp_trace_header(FILE *out, unsigned long entries, unsigned long written,
		     int ncpus);
/* The same under another tracer's name ("function"). */
void dp_trace_header_of(FILE *out, const char *tracer, unsigned long entries,
			unsigned long written, int ncpus);

/*
 * One `trace` line (with '\n') for a record of @ev.  Returns 0, or -1 if
 * the record is malformed (shorter than its fixed part, a __data_loc
 * outside the record); nothing is written then.  @opts may be NULL (no
 * symbolizer).
 */
int dp_trace_line(FILE *out, const struct dp_event *ev, const void *rec,
		  size_t len, const struct dp_rec_meta *meta,
		  const struct dp_trace_opts *opts);

/* A line's "comm-pid [cpu] flags secs.usecs: " alone, for the entries a
 * mount writes itself (trace_marker, stack traces). */
void dp_trace_context(FILE *out, const struct dp_rec_meta *meta);

/*
 * After a record's line: its user stack, if it has one (meta->stack), as
 * the kernel's `<user stack trace>` entry (options/userstacktrace), one
 * " => sym+0xoff/0xsize" line a frame.  Nothing without a stack.
 */
void dp_trace_stack(FILE *out, const struct dp_rec_meta *meta,
		    const struct dp_trace_opts *opts);

/*
 * The marker the kernel prints before the first entry read from a per-CPU
 * buffer that overran: "CPU:%d [LOST %lu EVENTS]\n", or, when the count is
 * unknown (DP_LOST_UNKNOWN), "CPU:%d [LOST EVENTS]\n".  Prints nothing for
 * @lost == 0, as the kernel only prints it when events were lost.
 */
void dp_trace_lost(FILE *out, int cpu, unsigned long lost);

/*
 * One JSON object per line: {"event","group","id","ts","cpu","pid","tgid",
 * "comm","ip"|"func","ret_ip","sym"?,"args":{name: typed value},
 * "stack"?:[{"ip","sym"?}...]}.
 */
int dp_json_line(FILE *out, const struct dp_event *ev, const void *rec,
		 size_t len, const struct dp_rec_meta *meta,
		 const struct dp_trace_opts *opts);

/* A checked record's fields as dp_json_line()'s "args" object, {...}
 * (the caller holds @out's lock or needs none). */
void dp_json_args(FILE *out, const struct dp_event *ev, const void *rec,
		  const struct dp_trace_opts *opts);

/* The @n bytes at @s as a JSON string literal, escaped as dp_json_string. */
void dp_json_strn(FILE *out, const void *s, size_t n);

/* @s as a JSON string literal (escaped; invalid UTF-8 as \u00XX), or null. */
void dp_json_string(FILE *out, const char *s);

#endif
