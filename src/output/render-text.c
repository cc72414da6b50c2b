// SPDX-License-Identifier: GPL-2.0
/*
 * The text format: each record as the line ftrace's trace_pipe prints
 * for it (dp_trace_line), and the kernel's marker where a buffer lost
 * events (dp_trace_lost).  Like trace_pipe, and unlike the `trace` file,
 * it prints no header and no summary.
 */
#include "output/output.h"
#include "output/renderer.h"

static int text_event(struct dp_renderer *r, const struct dp_event *ev,
		      const void *rec, size_t len,
		      const struct dp_rec_meta *meta,
		      const struct dp_symbolizer *sym)
{
	struct dp_trace_opts o = { .ncpus = r->ncpus, .sym = sym,
				   .ts = (enum dp_ts_mode)r->ts };

	return dp_trace_line(r->out, ev, rec, len, meta, &o);
}

static void text_lost(struct dp_renderer *r, int cpu, unsigned long n)
{
	dp_trace_lost(r->out, cpu, n);
}

const struct dp_renderer_ops dp_render_text = {
	.name = "text",
	.event = text_event,
	.lost = text_lost,
};
