// SPDX-License-Identifier: GPL-2.0
/*
 * Canonical lines: a definition as the kernel lists it back in
 * uprobe_events (trace_uprobe_show) or kprobe_events (trace_kprobe_show).
 */
#include <stdio.h>
#include <stdlib.h>

#include "lang/lang.h"

static void print_place(FILE *f, const struct dp_probe_def *def)
{
	const struct dp_place *pl = &def->place;

	if (def->kind == DP_KIND_UPROBE) {
		fprintf(f, "%s:0x%016lx", pl->path, (unsigned long)pl->offset);
		if (pl->ref_ctr)
			fprintf(f, "(0x%lx)", (unsigned long)pl->ref_ctr);
		return;
	}
	if (def->kind == DP_KIND_TRACEPOINT) {
		fprintf(f, "%s%s%s", pl->module ? pl->module : "",
			pl->module ? ":" : "", pl->symbol);
		return;
	}
	if (def->kind == DP_KIND_EPROBE) {
		/* eprobe_dyn_event_show(): SYSTEM.EVENT */
		fprintf(f, "%s.%s", pl->module, pl->symbol);
		return;
	}
	if (!pl->symbol) {
		fprintf(f, "0x%016lx", (unsigned long)pl->addr);
		return;
	}
	if (pl->module)
		fprintf(f, "%s:", pl->module);
	fputs(pl->symbol, f);
	if (pl->offset)
		fprintf(f, "+%u", (unsigned)pl->offset);
}

char *dp_place_canonical(const struct dp_probe_def *def)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	print_place(f, def);
	fclose(f);
	return buf;
}

static char *canonical(const struct dp_probe_def *def, bool shown)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fputc(def->kind == DP_KIND_TRACEPOINT ? 't' :
	      def->kind == DP_KIND_EPROBE ? 'e' : def->fprobe ? 'f' :
	      def->is_return ? 'r' : 'p', f);
	if (def->is_return && def->maxactive)
		fprintf(f, "%d", def->maxactive);
	fprintf(f, ":%s/%s ", def->group, def->event);
	print_place(f, def);
	/* trace_fprobe_show(): an fprobe names its return in the place */
	if (def->fprobe && def->is_return)
		fputs("%return", f);
	for (unsigned i = 0; i < def->nargs; i++)
		fprintf(f, " %s=%s", def->args[i].name,
			shown && def->args[i].shown ? def->args[i].shown :
			def->args[i].body);
	/* an eprobe's filter is not listed, but a canonical line that
	 * makes the probe again must carry it */
	if (!shown && def->filter)
		fprintf(f, " if %s", def->filter);
	fclose(f);
	return buf;
}

char *dp_probe_canonical(const struct dp_probe_def *def)
{
	return canonical(def, false);
}

char *dp_probe_listing(const struct dp_probe_def *def)
{
	return canonical(def, true);
}
