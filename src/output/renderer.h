/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The renderer interface: how a session's records become its output.  A
 * format is an ops table in a file of its own (render-text.c: the lines
 * ftrace's trace_pipe prints; render-json.c: JSON lines; render-folded.c:
 * stacks counted for flame graphs; render-ctf.c: a CTF directory;
 * render-otlp.c: OpenTelemetry log records) and one row of
 * the table in renderer.c; `dprobe trace --format NAME` picks it by name.
 * The CLI hands engines a dp_sink whose callbacks call the renderer, so
 * neither an engine nor the CLI knows which format is running.
 *
 * The calls, in order: begin once, then event and lost as records come
 * (flush whenever the engine has nothing more to read for now), summary
 * once tracing has stopped, end last.
 */
#ifndef DPROBE_OUTPUT_RENDERER_H
#define DPROBE_OUTPUT_RENDERER_H

#include <stddef.h>
#include <stdio.h>

#include "event/event.h"
#include "event/sink.h"

struct dp_renderer;
struct dp_tracer_opts;

/* A format.  Any hook but event and lost may be NULL: nothing to do. */
struct dp_renderer_ops {
	const char *name;		/* what --format takes */
	/* Before the first record: a header. */
	void (*begin)(struct dp_renderer *r);
	/* One record (as dp_sink.emit gets it).  0, or -1 if the record is
	 * malformed: nothing is written then. */
	int (*event)(struct dp_renderer *r, const struct dp_event *ev,
		     const void *rec, size_t len,
		     const struct dp_rec_meta *meta,
		     const struct dp_symbolizer *sym);
	/* @n events lost on @cpu before its next record (DP_LOST_UNKNOWN:
	 * a number not known). */
	void (*lost)(struct dp_renderer *r, int cpu, unsigned long n);
	/* Tracing has stopped: what the format says of the whole session. */
	void (*summary)(struct dp_renderer *r, const struct dp_stats *st);
	/* The last call: close what begin opened. */
	void (*end)(struct dp_renderer *r);
	/* The engine has nothing more to read for now: write what the
	 * format holds back (before the stream is flushed), update a
	 * status line. */
	void (*flush)(struct dp_renderer *r);
	/* Free what begin made and write nothing, in a process that is not
	 * the one to end the output (a supervised engine's parent: its
	 * child ends it).  NULL: end runs with its bytes going nowhere, for
	 * a format that writes only to its stream. */
	void (*discard)(struct dp_renderer *r);
	/* The format is made of the records' user stacks (folded): the
	 * CLI captures them for every event when --stack names none. */
	bool stacks;
	/* It writes bytes, not text (a recording): the CLI refuses a
	 * terminal as its output. */
	bool binary;
	/* The format writes a directory of files, not a stream: the CLI
	 * makes it (or takes an empty one) from -o, which it requires, and
	 * hands its path in dp_renderer.path; out is then stdout. */
	bool dir;
	/* One of ftrace's tracers (output/tracer.h): chosen by --tracer
	 * NAME (dp_renderer_tracer), not among the --format names. */
	bool tracer;
};

/* A format writing to a stream. */
struct dp_renderer {
	const struct dp_renderer_ops *ops;
	FILE *out;
	int ncpus;			/* CPUs of the machine, for headers */
	int ts;				/* enum dp_ts_mode (output.h): 0, us */
	void *priv;			/* the format's own state, if any */
	const char *path;		/* a dir format's directory */
	/* record --compress: a recording's file compressed (tracedat: its
	 * version 7 with zstd).  A flag of the output rather than a format
	 * of its own: --format names what a file is, not how it is packed,
	 * and a format that has no compressed form ignores it. */
	bool compress;
	/* A tracer's options (output/tracer.h), set before begin; NULL:
	 * the kernel's defaults.  Formats ignore it. */
	const struct dp_tracer_opts *tracer;
};

/* The format called @name; NULL if there is none (a tracer's name too:
 * output/tracer.h has dp_renderer_tracer). */
const struct dp_renderer_ops *dp_renderer_by_name(const char *name);

/*
 * The names of the formats for a message, "text or json", in @buf of
 * @size bytes (cut short if too small).  Returns @buf.
 */
char *dp_renderer_names(char *buf, size_t size);

void dp_renderer_init(struct dp_renderer *r,
		      const struct dp_renderer_ops *ops, FILE *out, int ncpus);

/* The calls engines and the CLI make; each skips a NULL hook. */
void dp_render_begin(struct dp_renderer *r);
int dp_render_event(struct dp_renderer *r, const struct dp_event *ev,
		    const void *rec, size_t len,
		    const struct dp_rec_meta *meta,
		    const struct dp_symbolizer *sym);
void dp_render_lost(struct dp_renderer *r, int cpu, unsigned long n);
/* What was written so far goes out (a file or a pipe shows it now). */
void dp_render_flush(struct dp_renderer *r);
void dp_render_summary(struct dp_renderer *r, const struct dp_stats *st);
void dp_render_end(struct dp_renderer *r);
/* What begin made, freed without a byte written (a process that hands
 * the session to a forked child keeps a copy it must not end). */
void dp_render_discard(struct dp_renderer *r);

#endif
