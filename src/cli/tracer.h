/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ftrace's tracers on a user process (tracer.c): `--tracer function`
 * and `--tracer function_graph` are probes on every function the
 * filters select (set_ftrace_filter / set_ftrace_notrace), made as
 * events of the `ftrace` group that their renderer prints the way the
 * kernel's tracer does.  A tracer is a row of a table: its events, as
 * definitions with the place left to fill, and its renderer's name.
 */
#ifndef DPROBE_CLI_TRACER_H
#define DPROBE_CLI_TRACER_H

#include <stdbool.h>

#include "cli/named.h"
#include "sym/funcsel.h"

/* The group of the tracers' events (the kernel's is `ftrace` too). */
#define DP_TRACER_GROUP "ftrace"

struct dp_cli_tracer;

/* The tracer called @name ("nop" is none: NULL with 0); -1 if unknown. */
int dp_cli_tracer_by_name(const char *name, const struct dp_cli_tracer **t);
/* "function, function_graph, nop" for messages. */
const char *dp_cli_tracer_names(void);
const char *dp_cli_tracer_name(const struct dp_cli_tracer *t);

/* What the command line says of the functions a tracer is on. */
struct dp_cli_funcopts {
	struct dp_funcsel filter;	/* --filter-func: set_ftrace_filter */
	struct dp_funcsel notrace;	/* --notrace-func: set_ftrace_notrace */
};

/*
 * --filter-func/--notrace-func SPEC: set_ftrace_filter lines, or @FILE
 * of them (one or more a line, `#` comments).  0, or -1 said.
 */
int dp_cli_funcopt_add(struct dp_funcsel *s, const char *spec);
void dp_cli_funcopts_free(struct dp_cli_funcopts *f);

/*
 * The definitions of tracer @t's events over the functions of @objs
 * (@binary first, the program) that @f selects, appended to @out; the
 * functions skipped are said on stderr, by reason.  0, or -errno said.
 */
int dp_cli_tracer_defs(const struct dp_cli_tracer *t, const char *binary,
		       const struct dp_cli_objs *objs,
		       const struct dp_cli_funcopts *f,
		       struct dp_cli_lines *out);

#endif
