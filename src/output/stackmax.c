// SPDX-License-Identifier: GPL-2.0
/*
 * The stack tracer's table (tracer.h): the kernel keeps, for the deepest
 * stack it saw, each return address found on the stack and how far from
 * the stack's top it was found; here the agent measures the same for a
 * user thread (engine/agent/stack.c) and this file keeps the deepest and
 * prints it as trace_stack.c prints its stack_trace file.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/render.h"
#include "output/tracer.h"

void dp_stack_max_clear(struct dp_stack_max *m)
{
	for (unsigned i = 0; i < m->n; i++)
		free(m->where[i]);
	m->n = 0;
}

bool dp_stack_max_take(struct dp_stack_max *m, const uint64_t *depth,
		       const char *const *where, unsigned n)
{
	unsigned k = 0;

	if (!n || depth[0] <= m->max_size)
		return false;
	dp_stack_max_clear(m);
	m->max_size = depth[0];
	for (unsigned i = 0; i < n && k < DP_STACK_MAX; i++) {
		/* a frame not sized, or out of order (a bad frame pointer) */
		if (!depth[i] || (k && depth[i] >= m->depth[k - 1]))
			continue;
		m->where[k] = strdup(where[i]);
		if (!m->where[k])
			break;
		m->depth[k++] = depth[i];
	}
	m->n = k;
	return true;
}

/* %pS: "sym+0xoff/0xsize", or the address where no symbol covers it. */
static char *place(const struct dp_trace_opts *o, uint64_t ip)
{
	const char *name;
	uint64_t off, size;
	char *s;
	int w = dp_out_lookup(o, ip, &name, &off, &size) ?
		asprintf(&s, "%s+0x%" PRIx64 "/0x%" PRIx64, name, off, size) :
		asprintf(&s, "0x%" PRIx64, ip);

	return w < 0 ? NULL : s;
}

bool dp_stack_max_offer(struct dp_stack_max *m, const struct dp_rec_meta *meta,
			const struct dp_symbolizer *sym)
{
	const struct dp_trace_opts o = { .sym = sym };
	char *where[DP_STACK_MAX] = { 0 };
	uint64_t depth[DP_STACK_MAX];
	unsigned n = 0;
	bool taken;

	if (!meta || !meta->stack_depth || !meta->nstack ||
	    meta->stack_depth[0] <= m->max_size)
		return false;
	for (unsigned i = 0; i < meta->nstack && i < DP_STACK_MAX; i++) {
		if (meta->stack[i] == DP_STACK_BAD_FRAME)
			break;
		where[n] = place(&o, meta->stack[i]);
		depth[n] = where[n] ? meta->stack_depth[i] : 0;
		if (!where[n])
			where[n] = (char *)"";
		n++;
	}
	taken = dp_stack_max_take(m, depth, (const char *const *)where, n);
	for (unsigned i = 0; i < n; i++)
		if (where[i][0])
			free(where[i]);
	return taken;
}

void dp_stack_max_print(FILE *out, const struct dp_stack_max *m, bool enabled)
{
	fprintf(out, "        Depth    Size   Location    (%u entries)\n"
		"        -----    ----   --------\n", m->n);
	if (!enabled && !m->max_size)
		fputs("#\n#  Stack tracer disabled\n#\n"
		      "# To enable the stack tracer, either add 'stacktrace' "
		      "to the\n# kernel command line\n"
		      "# or 'echo 1 > /proc/sys/kernel/stack_tracer_enabled'\n"
		      "#\n", out);
	for (unsigned i = 0; i < m->n; i++) {
		uint64_t size = i + 1 == m->n ? m->depth[i] :
			m->depth[i] - m->depth[i + 1];

		fprintf(out, "%3u) %8" PRIu64 "   %5" PRIu64 "   %s\n", i,
			m->depth[i], size, m->where[i]);
	}
}
