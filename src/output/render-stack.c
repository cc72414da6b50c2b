// SPDX-License-Identifier: GPL-2.0
/*
 * The `stack` tracer (tracer.h): the records of ftrace/stack, each a
 * new deepest stack of a process, are kept as the kernel's stack tracer
 * keeps its maximum, and the table is printed once tracing has ended, as
 * the stack_trace file shows it.  Other events' records are printed as
 * the text format prints them, as they come.
 */
#include <stdlib.h>

#include "output/render.h"
#include "output/tracer.h"

static void stack_begin(struct dp_renderer *r)
{
	r->priv = calloc(1, sizeof(struct dp_stack_max));
}

static int stack_event(struct dp_renderer *r, const struct dp_event *ev,
		       const void *rec, size_t len,
		       const struct dp_rec_meta *meta,
		       const struct dp_symbolizer *sym)
{
	struct dp_trace_opts o = { .ncpus = r->ncpus, .sym = sym,
				   .ts = (enum dp_ts_mode)r->ts };

	if (!meta || dp_rec_check(ev, rec, len))
		return -1;
	if (ev->stack_max) {
		if (r->priv)
			dp_stack_max_offer(r->priv, meta, sym);
		return 0;
	}
	dp_trace_line(r->out, ev, rec, len, meta, &o);
	dp_trace_stack(r->out, meta, &o);
	return 0;
}

static void stack_lost(struct dp_renderer *r, int cpu, unsigned long n)
{
	dp_trace_lost(r->out, cpu, n);
}

static void stack_discard(struct dp_renderer *r)
{
	if (r->priv)
		dp_stack_max_clear(r->priv);
	free(r->priv);
	r->priv = NULL;
}

static void stack_end(struct dp_renderer *r)
{
	if (r->priv)
		dp_stack_max_print(r->out, r->priv, true);
	stack_discard(r);
}

const struct dp_renderer_ops dp_render_stack = {
	.name = "stack",
	.begin = stack_begin,
	.event = stack_event,
	.lost = stack_lost,
	.end = stack_end,
	.discard = stack_discard,
	.tracer = true,
};
