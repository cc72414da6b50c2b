/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private to src/output/: what the ftrace and JSON renderers share.  A
 * record is validated once (dp_rec_check, event/record.h) before anything
 * is written, so the printers can read fields without re-checking bounds
 * and a malformed record never leaves half a line in the output.
 */
#ifndef DPROBE_OUTPUT_RENDER_H
#define DPROBE_OUTPUT_RENDER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "event/record.h"
#include "output/output.h"
#include "output/renderer.h"

/* Symbolize @addr through @opts; false if there is no symbol for it. */
bool dp_out_lookup(const struct dp_trace_opts *opts, uint64_t addr,
		   const char **name, uint64_t *off, uint64_t *size);

/* dp_trace_line() without the context and the '\n': "NAME: (place)
 * args", what a tracer's line shows of another event.  -1, writing
 * nothing, for a malformed record. */
int dp_trace_body(FILE *out, const struct dp_event *ev, const void *rec,
		  size_t len, const struct dp_trace_opts *opts);

/* dp_trace_context() with the timestamps of @ts (--ts). */
void dp_trace_context_ts(FILE *out, const struct dp_rec_meta *meta,
			 enum dp_ts_mode ts);

/* seq_print_ip_sym(): "0", "sym" (with @offset "sym+0xoff/0xsize"), or
 * "0x%08lx" when no symbol covers @addr. */
void dp_trace_ip_sym(FILE *out, const struct dp_trace_opts *opts,
		     uint64_t addr, bool offset);

/* What a record of the tracers' `ftrace/` events is (tracer.h). */
enum dp_ftrace_rec {
	DP_FTRACE_OTHER,	/* any other event */
	DP_FTRACE_FUNCTION,	/* ftrace/function: __probe_ip, parent_ip */
	DP_FTRACE_GRAPH_ENTRY,	/* ftrace/funcgraph_entry: __probe_ip */
	DP_FTRACE_GRAPH_EXIT,	/* ftrace/funcgraph_exit: __probe_func,
				 * __probe_ret_ip, retval */
};

enum dp_ftrace_rec dp_ftrace_rec_kind(const struct dp_event *ev);

/* The number field @name of a checked record of @ev in @v; false if
 * the event has no such field. */
bool dp_ftrace_u64(const struct dp_event *ev, const void *rec,
		   const char *name, uint64_t *v);

/*
 * Number printers: the reader prints millions of values, so skip printf's
 * format parsing for the common cases.  Callers hold the FILE lock.
 */
static inline void dp_out_udec(FILE *out, uint64_t v)
{
	char buf[20];
	char *q = buf + sizeof(buf);

	do {
		*--q = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	fwrite_unlocked(q, 1, buf + sizeof(buf) - q, out);
}

static inline void dp_out_sdec(FILE *out, int64_t v)
{
	if (v < 0) {
		fputc_unlocked('-', out);
		/* negate in unsigned space: INT64_MIN has no positive twin */
		dp_out_udec(out, -(uint64_t)v);
		return;
	}
	dp_out_udec(out, (uint64_t)v);
}

/* "0x" + lowercase hex, no padding: the kernel's "0x%Lx". */
static inline void dp_out_hex(FILE *out, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char buf[18];
	char *q = buf + sizeof(buf);

	do {
		*--q = digits[v & 0xf];
		v >>= 4;
	} while (v);
	*--q = 'x';
	*--q = '0';
	fwrite_unlocked(q, 1, buf + sizeof(buf) - q, out);
}

/*
 * The folded format's counting, which the flamegraph format shares
 * (render-folded.c): its event and lost hooks, and at the end each
 * distinct stack ("outer;...;inner") with its count to @fn, sorted by
 * stack, the counts freed after.
 */
int dp_folded_event(struct dp_renderer *r, const struct dp_event *ev,
		    const void *rec, size_t len,
		    const struct dp_rec_meta *meta,
		    const struct dp_symbolizer *sym);
void dp_folded_lost(struct dp_renderer *r, int cpu, unsigned long n);
void dp_folded_drain(struct dp_renderer *r,
		     void (*fn)(void *arg, const char *stack, uint64_t count),
		     void *arg);

#endif
