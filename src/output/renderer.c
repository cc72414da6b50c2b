// SPDX-License-Identifier: GPL-2.0
/*
 * The table of output formats, and the calls that dispatch to a format's
 * hooks (renderer.h).  Adding a format: a render-NAME.c defining its
 * dp_renderer_ops, and its row below.  The tracers (tracer.h) are rows
 * too, marked .tracer, found by dp_renderer_tracer() alone.
 */
#include <string.h>

#include "output/renderer.h"
#include "output/tracer.h"

extern const struct dp_renderer_ops dp_render_text, dp_render_json,
	dp_render_folded, dp_render_flamegraph, dp_render_chrome,
	dp_render_tracedat,
	dp_render_ctf,
	dp_render_otlp,
	dp_render_function, dp_render_fgraph, dp_render_stack;

/* The first row is the default format. */
static const struct dp_renderer_ops *const formats[] = {
	&dp_render_text,
	&dp_render_json,
	&dp_render_folded,
	&dp_render_flamegraph,
	&dp_render_chrome,
	&dp_render_tracedat,
	&dp_render_ctf,
	&dp_render_otlp,
	/* the tracers (.tracer), by --tracer only */
	&dp_render_function,
	&dp_render_fgraph,
	&dp_render_stack,
};

#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

static const struct dp_renderer_ops *by_name(const char *name, bool tracer)
{
	for (size_t i = 0; i < NFORMATS; i++)
		if (formats[i]->tracer == tracer &&
		    !strcmp(formats[i]->name, name))
			return formats[i];
	return NULL;
}

const struct dp_renderer_ops *dp_renderer_by_name(const char *name)
{
	return by_name(name, false);
}

const struct dp_renderer_ops *dp_renderer_tracer(const char *name)
{
	return by_name(name, true);
}

/* "a, b or c": the rows whose .tracer is @tracer. */
static char *names(char *buf, size_t size, bool tracer)
{
	size_t n = 0, k = 0, total = 0;

	if (!size)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < NFORMATS; i++)
		total += formats[i]->tracer == tracer;
	for (size_t i = 0; i < NFORMATS && n < size; i++) {
		const char *sep;
		int w;

		if (formats[i]->tracer != tracer)
			continue;
		sep = !k ? "" : k + 1 < total ? ", " : " or ";
		w = snprintf(buf + n, size - n, "%s%s", sep, formats[i]->name);
		if (w < 0)
			break;
		n += (size_t)w;
		k++;
	}
	return buf;
}

char *dp_renderer_names(char *buf, size_t size)
{
	return names(buf, size, false);
}

char *dp_renderer_tracer_names(char *buf, size_t size)
{
	return names(buf, size, true);
}

void dp_renderer_init(struct dp_renderer *r,
		      const struct dp_renderer_ops *ops, FILE *out, int ncpus)
{
	*r = (struct dp_renderer){ .ops = ops, .out = out, .ncpus = ncpus };
}

void dp_render_begin(struct dp_renderer *r)
{
	if (!r->ops->begin)
		return;
	r->ops->begin(r);
	/* out now: an engine that forks must not leave a copy of the
	 * header in both processes' buffers */
	fflush(r->out);
}

int dp_render_event(struct dp_renderer *r, const struct dp_event *ev,
		    const void *rec, size_t len,
		    const struct dp_rec_meta *meta,
		    const struct dp_symbolizer *sym)
{
	return r->ops->event(r, ev, rec, len, meta, sym);
}

void dp_render_lost(struct dp_renderer *r, int cpu, unsigned long n)
{
	r->ops->lost(r, cpu, n);
}

void dp_render_flush(struct dp_renderer *r)
{
	if (r->ops->flush)
		r->ops->flush(r);
	fflush(r->out);
}

void dp_render_summary(struct dp_renderer *r, const struct dp_stats *st)
{
	if (r->ops->summary)
		r->ops->summary(r, st);
}

void dp_render_end(struct dp_renderer *r)
{
	if (r->ops->end)
		r->ops->end(r);
	fflush(r->out);
}

void dp_render_discard(struct dp_renderer *r)
{
	FILE *out, *null;

	if (r->ops->discard) {
		r->ops->discard(r);
		return;
	}
	out = r->out;
	null = fopen("/dev/null", "w");
	/* end frees what the format holds; its bytes go nowhere */
	if (!r->ops->end || !null) {
		if (null)
			fclose(null);
		return;
	}
	r->out = null;
	r->ops->end(r);
	fclose(null);
	r->out = out;
}
