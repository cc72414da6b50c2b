/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ftrace's tracers as output formats: `function` (render-function.c)
 * and `function_graph` (render-fgraph.c) print the records of the
 * `ftrace/` events a tracer arms (ftrace/function, ftrace/funcgraph_entry,
 * ftrace/funcgraph_exit) as the kernel's tracers print theirs.  They are
 * renderers with dp_renderer_ops.tracer set: chosen by `--tracer NAME`
 * (dp_renderer_tracer), never listed among the --format names.
 *
 * What the CLI (and the mount) set for them: the trace_options flags
 * (one table, so `--trace-option NAME`/`noNAME` and a trace_options file
 * take the same names), max_graph_depth, set_graph_function and
 * set_graph_notrace, in a struct dp_tracer_opts handed to the renderer
 * through dp_renderer.tracer before begin.  The renderer reads the struct
 * again at each record, so that a caller may change it between records
 * (the mount does, under the lock its records come under, as the kernel
 * applies these options at once); it and the glob arrays it points to
 * must live as long as the session.
 */
#ifndef DPROBE_OUTPUT_TRACER_H
#define DPROBE_OUTPUT_TRACER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "event/record.h"
#include "output/renderer.h"

/* The function_graph tracer's options (TRACE_GRAPH_PRINT_* and the two
 * time options of trace_functions_graph.c). */
enum dp_fg_flag {
	DP_FG_OVERRUN = 1u << 0,
	DP_FG_CPU = 1u << 1,
	DP_FG_OVERHEAD = 1u << 2,
	DP_FG_PROC = 1u << 3,
	DP_FG_DURATION = 1u << 4,
	DP_FG_ABSTIME = 1u << 5,
	DP_FG_IRQS = 1u << 6,
	DP_FG_TAIL = 1u << 7,
	DP_FG_RETVAL = 1u << 8,
	DP_FG_RETVAL_HEX = 1u << 9,
	DP_FG_SLEEP_TIME = 1u << 10,
	DP_FG_GRAPH_TIME = 1u << 11,
	/* the general option print-parent (trace_options' first): the
	 * function tracer's " <-caller" */
	DP_TR_PRINT_PARENT = 1u << 12,
};

/* The kernel's defaults: cpu, overhead, duration, irqs, sleep-time and
 * graph-time on, and print-parent. */
#define DP_FG_DEFAULT (DP_FG_CPU | DP_FG_OVERHEAD | DP_FG_DURATION | \
		       DP_FG_IRQS | DP_FG_SLEEP_TIME | DP_FG_GRAPH_TIME | \
		       DP_TR_PRINT_PARENT)

/* One trace_options name. */
struct dp_trace_option {
	const char *name;	/* "funcgraph-proc" */
	unsigned flag;		/* enum dp_fg_flag */
	/* Accepted and listed as the kernel lists it, with nothing to do
	 * in a user process (no interrupts, no overruns of a shadow stack,
	 * durations are wall-clock times either way). */
	bool noop;
};

/* The table, in the kernel's order; @n its rows. */
const struct dp_trace_option *dp_trace_options(size_t *n);

/*
 * Apply "NAME" (set) or "noNAME" (clear) to @flags, as a write to
 * trace_options does.  0, or -1 for a name not in the table.
 */
int dp_trace_option_set(unsigned *flags, const char *arg);

/* The tracer's lines of a trace_options file: "NAME" or "noNAME" as
 * @flags has it on or off, one a line, in the table's order (what the
 * kernel lists after its general options while function_graph is the
 * current tracer). */
void dp_trace_options_list(FILE *out, unsigned flags);

/* What the tracers are told, the defaults from dp_tracer_opts_init(). */
struct dp_tracer_opts {
	unsigned flags;			/* enum dp_fg_flag */
	unsigned max_depth;		/* max_graph_depth; 0: no limit */
	/* set_graph_function: only calls made inside a function whose
	 * name matches one of these globs (and that function); none: all */
	const char *const *graph_funcs;
	size_t ngraph_funcs;
	/* set_graph_notrace: functions not shown, nor what they call */
	const char *const *notrace_funcs;
	size_t nnotrace_funcs;
	/* changed with the globs: the renderer forgets which functions
	 * they matched */
	unsigned long globs_gen;
};

void dp_tracer_opts_init(struct dp_tracer_opts *o);

/* The tracer called @name ("function", "function_graph"); NULL if none. */
const struct dp_renderer_ops *dp_renderer_tracer(const char *name);

/* Their names for a message, as dp_renderer_names() lists formats. */
char *dp_renderer_tracer_names(char *buf, size_t size);

/*
 * "# tracer: function_graph", "#", and the two column lines the kernel
 * prints with @flags (what begin writes; the mount's `trace` file).
 */
void dp_fgraph_header(FILE *out, unsigned flags);

/*
 * The stack tracer's table (stackmax.c), what its `stack_trace` file
 * shows: the deepest stack seen, each entry's depth (bytes from the top
 * of the thread's stack to the entry's frame) and place.  Kept by the
 * `stack` tracer's renderer (render-stack.c: the table once tracing
 * ends) and by the mount's stack_* files.
 */
struct dp_stack_max {
	uint64_t max_size;		/* stack_max_size */
	unsigned n;			/* entries */
	uint64_t depth[DP_STACK_MAX];
	char *where[DP_STACK_MAX];	/* "func+0x0/0x24", named when taken */
};

/*
 * A record of ftrace/stack (@meta with stack_depth): its stack becomes
 * the table if it is deeper than max_size, which it then is.  Entries
 * whose depth is unknown, or not below the one before, are left out (as
 * the kernel leaves out a return address it cannot find on the stack).
 * Whether it was taken.
 */
bool dp_stack_max_offer(struct dp_stack_max *m, const struct dp_rec_meta *meta,
			const struct dp_symbolizer *sym);
/* Entries from depths and places (what dp_stack_max_offer() keeps). */
bool dp_stack_max_take(struct dp_stack_max *m, const uint64_t *depth,
		       const char *const *where, unsigned n);
/*
 * The stack_trace file: the kernel's header, then "%3d) %8d   %5d   "
 * and the place for each entry; an entry's size is its depth less the
 * next one's, the last one's its depth.  With no maximum while the
 * tracer is off (!@enabled), the kernel's lines saying how to start it.
 */
void dp_stack_max_print(FILE *out, const struct dp_stack_max *m, bool enabled);
/* No entry left (stack_max_size is the caller's to set). */
void dp_stack_max_clear(struct dp_stack_max *m);

#endif
