// SPDX-License-Identifier: GPL-2.0
/*
 * The `function` tracer (tracer.h): each ftrace/function record as
 * trace_pipe prints the kernel's function tracer, the context then
 * "func <-parent" (trace_fn_trace(), with sym-offset off: names alone,
 * an address no symbol covers as 0x%08lx), and any other event's record
 * as the text format prints it.  Like trace_pipe, no header.
 */
#include "output/render.h"
#include "output/tracer.h"

static int function_line(struct dp_renderer *r, const struct dp_event *ev,
			 const void *rec, const struct dp_rec_meta *meta,
			 const struct dp_trace_opts *o)
{
	uint64_t ip = dp_rec_load((const uint8_t *)rec + DP_REC_IP_OFF, 8);
	uint64_t parent = 0;

	dp_ftrace_u64(ev, rec, "parent_ip", &parent);
	flockfile(r->out);
	dp_trace_context_ts(r->out, meta, o->ts);
	dp_trace_ip_sym(r->out, o, ip, false);
	/* print-parent is on by default; a 0 parent is left out */
	if (parent && (!r->tracer || (r->tracer->flags & DP_TR_PRINT_PARENT))) {
		fputs_unlocked(" <-", r->out);
		dp_trace_ip_sym(r->out, o, parent, false);
	}
	fputc_unlocked('\n', r->out);
	funlockfile(r->out);
	return 0;
}

static int function_event(struct dp_renderer *r, const struct dp_event *ev,
			  const void *rec, size_t len,
			  const struct dp_rec_meta *meta,
			  const struct dp_symbolizer *sym)
{
	struct dp_trace_opts o = { .ncpus = r->ncpus, .sym = sym,
				   .ts = (enum dp_ts_mode)r->ts };

	if (!meta || dp_rec_check(ev, rec, len))
		return -1;
	if (dp_ftrace_rec_kind(ev) == DP_FTRACE_FUNCTION)
		function_line(r, ev, rec, meta, &o);
	else
		dp_trace_line(r->out, ev, rec, len, meta, &o);
	dp_trace_stack(r->out, meta, &o);	/* --stack: the kernel's entry */
	return 0;
}

static void function_lost(struct dp_renderer *r, int cpu, unsigned long n)
{
	dp_trace_lost(r->out, cpu, n);
}

const struct dp_renderer_ops dp_render_function = {
	.name = "function",
	.event = function_event,
	.lost = function_lost,
	.tracer = true,
};
