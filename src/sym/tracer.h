/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ftrace's function tracers on a user process (tracer.c): `function` and
 * `function_graph` are probes on every function a selection holds
 * (funcsel.h), made as events of the `ftrace` group that the tracer's
 * renderer prints the way the kernel's tracer does.  A tracer is a row
 * of a table: its events, as definitions with the place left to fill.
 * `dprobe trace --tracer` and the mount's current_tracer both use it.
 */
#ifndef DPROBE_SYM_TRACER_H
#define DPROBE_SYM_TRACER_H

#include <stddef.h>

#include "sym/funcsel.h"

/* The group of the tracers' events (the kernel's is `ftrace` too). */
#define DP_TRACER_GROUP "ftrace"

struct dp_tracer;

/* The tracer called @name ("nop" is none: NULL with 0); -1 if unknown. */
int dp_tracer_by_name(const char *name, const struct dp_tracer **t);
/* The names, as available_tracers lists them: "function_graph ...". */
const char *dp_tracer_list(void);
const char *dp_tracer_name(const struct dp_tracer *t);

/*
 * The definitions of @t's events over the functions of @l (those of
 * @program named by their symbol alone, the others as LIBRARY:SYMBOL),
 * appended to *@lines (*@n of them, grown with realloc).  A function
 * whose name is several of its file is left out (an event's probes are
 * all placed by symbol) and counted in @l.  0 or -ENOMEM.
 */
int dp_tracer_defs(const struct dp_tracer *t, const char *program,
		   struct dp_funclist *l, char ***lines, size_t *n);

#endif
