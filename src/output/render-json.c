// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON format: one object per line, a record as dp_json_line writes
 * it, and where events were lost {"lost":N,"cpu":C} ("lost":null when the
 * number is not known).  No header and no summary: every line stands
 * alone, for jq and the like.
 */
#include "output/output.h"
#include "output/renderer.h"

static int json_event(struct dp_renderer *r, const struct dp_event *ev,
		      const void *rec, size_t len,
		      const struct dp_rec_meta *meta,
		      const struct dp_symbolizer *sym)
{
	struct dp_trace_opts o = { .ncpus = r->ncpus, .sym = sym,
				   .ts = (enum dp_ts_mode)r->ts };

	return dp_json_line(r->out, ev, rec, len, meta, &o);
}

static void json_lost(struct dp_renderer *r, int cpu, unsigned long n)
{
	if (n == DP_LOST_UNKNOWN)
		fprintf(r->out, "{\"lost\":null,\"cpu\":%d}\n", cpu);
	else
		fprintf(r->out, "{\"lost\":%lu,\"cpu\":%d}\n", n, cpu);
}

const struct dp_renderer_ops dp_render_json = {
	.name = "json",
	.event = json_event,
	.lost = json_lost,
};
