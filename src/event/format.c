// SPDX-License-Identifier: GPL-2.0
/*
 * Text the kernel shows for events: the `format` file (f_show in
 * trace_events.c, __set_print_fmt in trace_probe.c), the *_events listing
 * and the *_profile statistics
 * (probes_profile_seq_show in trace_kprobe.c and trace_uprobe.c).
 */
#include <stdlib.h>
#include <string.h>

#include "event/event.h"

static void field_line(FILE *out, const struct dp_field *f)
{
	const char *bracket = strchr(f->type, '[');

	if (!strncmp(f->type, "__data_loc", 10))
		bracket = NULL;
	if (bracket)
		fprintf(out, "\tfield:%.*s %s[];", (int)(bracket - f->type),
			f->type, f->name);
	else
		fprintf(out, "\tfield:%s %s;", f->type, f->name);
	fprintf(out, "\toffset:%u;\tsize:%u;\tsigned:%d;\n", f->offset, f->size,
		f->is_signed ? 1 : 0);
}

/* __set_synth_event_print_fmt(): "NAME=FMT, ..." and each value. */
static void synth_print_fmt(FILE *f, const struct dp_synth_def *d)
{
	fputc('"', f);
	for (unsigned i = 0; i < d->nfields; i++) {
		const struct dp_synth_field *sf = &d->fields[i];

		fprintf(f, "%s=%s%s", sf->name, dp_synth_field_fmt(sf->type),
			i + 1 < d->nfields ? ", " : "");
	}
	fputc('"', f);
	for (unsigned i = 0; i < d->nfields; i++) {
		const struct dp_synth_field *sf = &d->fields[i];

		if (sf->is_string && sf->is_dynamic)
			fprintf(f, ", __get_str(%s)", sf->name);
		else if (sf->is_stack)
			fprintf(f, ", __get_stacktrace(%s)", sf->name);
		else
			fprintf(f, ", REC->%s", sf->name);
	}
}

static void print_fmt(FILE *f, const struct dp_event *ev)
{
	if (ev->synth) {
		synth_print_fmt(f, ev->synth);
		return;
	}
	if (ev->kprint_fmt) {
		fputs(ev->kprint_fmt, f);	/* a kernel tracepoint's own */
		return;
	}
	const struct dp_probe_def *def = &ev->probes->def;

	bool tp = ev->kind == DP_KIND_TRACEPOINT;
	bool ep = ev->kind == DP_KIND_EPROBE;

	/* a tracepoint prints its fields alone, as kernel tracepoints do;
	 * an eprobe too, each after a space (PROBE_PRINT_EVENT) */
	fprintf(f, "\"%s", tp || ep ? "" : ev->is_return ? "(%lx <- %lx)" :
		"(%lx)");
	for (unsigned i = 0; i < def->nargs; i++) {
		const struct dp_arg *a = &def->args[i];
		const char *spec = dp_type_print_fmt(&a->type);

		fprintf(f, "%s%s=", tp && !i ? "" : " ", a->name);
		if (!a->type.count) {
			fputs(spec, f);
			continue;
		}
		fprintf(f, "{%s", spec);
		for (unsigned j = 1; j < a->type.count; j++)
			fprintf(f, ",%s", spec);
		fputc('}', f);
	}
	fputs(tp || ep ? "\"" : ev->is_return ?
	      "\", REC->__probe_func, REC->__probe_ret_ip" :
	      "\", REC->__probe_ip", f);
	for (unsigned i = 0; i < def->nargs; i++) {
		const struct dp_arg *a = &def->args[i];
		bool str = dp_type_is_string(&a->type);

		if (!a->type.count) {
			fprintf(f, str ? ", __get_str(%s)" : ", REC->%s", a->name);
			continue;
		}
		for (unsigned j = 0; j < a->type.count; j++)
			fprintf(f, str ? ", __get_str(%s[%u])" : ", REC->%s[%u]",
				a->name, j);
	}
}

char *dp_event_print_fmt(const struct dp_event *ev)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	print_fmt(f, ev);
	fclose(f);
	return buf;
}

void dp_event_format(const struct dp_event *ev, FILE *out)
{
	fprintf(out, "name: %s\nID: %u\nformat:\n", ev->name, ev->id);
	for (unsigned i = 0; i < DP_NR_COMMON_FIELDS; i++)
		field_line(out, &dp_common_fields[i]);
	fputc('\n', out);
	for (unsigned i = 0; i < ev->nfields; i++)
		field_line(out, &ev->fields[i]);
	fputs("\nprint fmt: ", out);
	print_fmt(out, ev);
	fputc('\n', out);
}

void dp_registry_list(const struct dp_registry *reg, enum dp_probe_kind kind,
		      FILE *out)
{
	for (const struct dp_event *ev = reg->events; ev; ev = ev->next) {
		/* fprobes are dynamic_events' only */
		if (ev->kind != kind || ev->builtin || !ev->probes ||
		    ev->probes->def.fprobe)
			continue;
		for (const struct dp_probe *p = ev->probes; p; p = p->next) {
			char *line = dp_probe_listing(&p->def);

			if (line)
				fprintf(out, "%s\n", line);
			free(line);
		}
	}
}

void dp_registry_profile(const struct dp_registry *reg,
			 enum dp_probe_kind kind, FILE *out)
{
	for (const struct dp_event *ev = reg->events; ev; ev = ev->next) {
		if (ev->kind != kind || !ev->probes || ev->probes->def.fprobe ||
		    ev->hidden)
			continue;
		for (const struct dp_probe *p = ev->probes; p; p = p->next) {
			if (kind == DP_KIND_UPROBE)
				fprintf(out, "  %s %-44s %15lu\n",
					p->def.place.path, ev->name,
					(unsigned long)p->nhit);
			else
				fprintf(out, "  %-44s %15lu %15lu\n", ev->name,
					(unsigned long)p->nhit,
					(unsigned long)p->nmiss);
		}
	}
}
