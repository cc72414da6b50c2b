// SPDX-License-Identifier: GPL-2.0
/*
 * What the tracers share with the CLI and the mount (tracer.h): the
 * trace_options names of function_graph, their defaults, and its header.
 */
#include <string.h>

#include "output/render.h"
#include "output/tracer.h"

/* The kernel's trace_opts[] of trace_functions_graph.c, in its order. */
static const struct dp_trace_option options[] = {
	{ "funcgraph-overrun", DP_FG_OVERRUN, true },
	{ "funcgraph-cpu", DP_FG_CPU, false },
	{ "funcgraph-overhead", DP_FG_OVERHEAD, false },
	{ "funcgraph-proc", DP_FG_PROC, false },
	{ "funcgraph-duration", DP_FG_DURATION, false },
	{ "funcgraph-abstime", DP_FG_ABSTIME, false },
	{ "funcgraph-irqs", DP_FG_IRQS, true },
	{ "funcgraph-tail", DP_FG_TAIL, false },
	{ "funcgraph-retval", DP_FG_RETVAL, false },
	{ "funcgraph-retval-hex", DP_FG_RETVAL_HEX, false },
	{ "sleep-time", DP_FG_SLEEP_TIME, true },
	{ "graph-time", DP_FG_GRAPH_TIME, true },
};

const struct dp_trace_option *dp_trace_options(size_t *n)
{
	*n = sizeof(options) / sizeof(options[0]);
	return options;
}

int dp_trace_option_set(unsigned *flags, const char *arg)
{
	bool clear = !strncmp(arg, "no", 2);
	const char *name = clear ? arg + 2 : arg;

	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
		if (strcmp(options[i].name, name))
			continue;
		if (clear)
			*flags &= ~options[i].flag;
		else
			*flags |= options[i].flag;
		return 0;
	}
	return -1;
}

void dp_trace_options_list(FILE *out, unsigned flags)
{
	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++)
		fprintf(out, "%s%s\n", flags & options[i].flag ? "" : "no",
			options[i].name);
}

void dp_tracer_opts_init(struct dp_tracer_opts *o)
{
	*o = (struct dp_tracer_opts){ .flags = DP_FG_DEFAULT };
}

/* __print_graph_headers_flags(): two lines whose columns follow @flags. */
void dp_fgraph_header(FILE *out, unsigned flags)
{
	fputs("# tracer: function_graph\n#\n#", out);
	if (flags & DP_FG_ABSTIME)
		fputs("     TIME       ", out);
	if (flags & DP_FG_CPU)
		fputs(" CPU", out);
	if (flags & DP_FG_PROC)
		fputs("  TASK/PID       ", out);
	if (flags & DP_FG_DURATION)
		fputs("  DURATION   ", out);
	fputs("               FUNCTION CALLS\n#", out);
	if (flags & DP_FG_ABSTIME)
		fputs("      |         ", out);
	if (flags & DP_FG_CPU)
		fputs(" |  ", out);
	if (flags & DP_FG_PROC)
		fputs("   |    |        ", out);
	if (flags & DP_FG_DURATION)
		fputs("   |   |      ", out);
	fputs("               |   |   |   |\n", out);
}

enum dp_ftrace_rec dp_ftrace_rec_kind(const struct dp_event *ev)
{
	static const char *const names[] = {
		[DP_FTRACE_FUNCTION] = "function",
		[DP_FTRACE_GRAPH_ENTRY] = "funcgraph_entry",
		[DP_FTRACE_GRAPH_EXIT] = "funcgraph_exit",
	};

	if (strcmp(ev->group, "ftrace"))
		return DP_FTRACE_OTHER;
	for (unsigned i = DP_FTRACE_FUNCTION; i <= DP_FTRACE_GRAPH_EXIT; i++)
		/* the exit is a return probe, the others entry probes: the
		 * record's head is read at the offsets that kind has */
		if (!strcmp(ev->name, names[i]) &&
		    ev->is_return == (i == DP_FTRACE_GRAPH_EXIT))
			return (enum dp_ftrace_rec)i;
	return DP_FTRACE_OTHER;
}

bool dp_ftrace_u64(const struct dp_event *ev, const void *rec,
		   const char *name, uint64_t *v)
{
	const struct dp_field *f = dp_event_field(ev, name);

	if (!f || f->fclass != DP_FC_NUM || !f->ptype)
		return false;
	*v = dp_rec_load((const uint8_t *)rec + f->offset, f->size);
	return true;
}
