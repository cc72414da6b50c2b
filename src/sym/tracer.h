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

#include <stdbool.h>
#include <stddef.h>

#include "event/event.h"		/* DP_TRACER_GROUP */
#include "sym/funcsel.h"
/* The stack tracer's event: ftrace/stack. */
#define DP_TRACER_STACK_EVENT "stack"

struct dp_event;

struct dp_tracer;

/* The tracer called @name ("nop" is none: NULL with 0); -1 if unknown. */
int dp_tracer_by_name(const char *name, const struct dp_tracer **t);
/* The names, as available_tracers lists them: "function_graph ...". */
const char *dp_tracer_list(void);
const char *dp_tracer_name(const struct dp_tracer *t);
/*
 * Whether @t is one current_tracer takes (nop, function, function_graph);
 * not the stack tracer ("stack": only `dprobe trace --tracer stack`, and
 * the mount's stack_tracer_enabled).
 */
bool dp_tracer_is_current(const struct dp_tracer *t);
/*
 * What an event of a tracer needs beyond its definition: the stack
 * tracer's ftrace/stack takes the user stack with each frame's depth
 * (dp_event.stack, .stack_max).  Whether @ev is that event.
 */
bool dp_tracer_event_setup(struct dp_event *ev);

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
