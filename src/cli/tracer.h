/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `dprobe trace --tracer function|function_graph` (tracer.c): the
 * tracer's events (sym/tracer.h) on every function of the program that
 * --filter-func and --notrace-func select, in the words of ftrace's
 * set_ftrace_filter and set_ftrace_notrace.
 */
#ifndef DPROBE_CLI_TRACER_H
#define DPROBE_CLI_TRACER_H

#include <stdbool.h>

#include "cli/named.h"
#include "sym/funcsel.h"
#include "sym/tracer.h"

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
int dp_cli_tracer_defs(const struct dp_tracer *t, const char *binary,
		       const struct dp_cli_objs *objs,
		       const struct dp_cli_funcopts *f,
		       struct dp_cli_lines *out);

#endif
