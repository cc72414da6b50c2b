// SPDX-License-Identifier: GPL-2.0
/*
 * ftrace's function tracers over a user process (tracer.h).  The kernel
 * patches the compiler's fentry call of every function it traces; here
 * each traced function gets a probe (the agent's jump, or the compiler's
 * entry nop where it made one), and for function_graph a return probe
 * too.  The records are those of ordinary kprobe events of the `ftrace`
 * group, one event with a probe per function:
 *
 *   ftrace/function        entry: __probe_ip, parent_ip (the return address)
 *   ftrace/funcgraph_entry entry: __probe_ip, sp (the stack pointer: calls
 *                          a longjmp or an exception abandoned are closed
 *                          at the next call above them)
 *   ftrace/funcgraph_exit  return: __probe_func, __probe_ret_ip, retval
 *   ftrace/stack           entry: __probe_ip; the stack tracer's, with
 *                          dp_event.stack_max: a record only at a new
 *                          deepest stack, with its frames and depths
 *
 * which the tracer's renderer (output/) prints as the kernel's tracer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event/event.h"
#include "sym/tracer.h"

struct dp_tracer {
	const char *name;
	/* the events, "%s" where the place goes; NULL-terminated */
	const char *defs[3];
	/* not one of current_tracer's: the stack tracer, which the kernel
	 * switches with a sysctl and which runs beside any other */
	bool sysctl;
};

static const struct dp_tracer tracers[] = {
	{ "function_graph",
	  { "p:" DP_TRACER_GROUP "/funcgraph_entry %s sp=%%sp:x64",
	    "r:" DP_TRACER_GROUP "/funcgraph_exit %s retval=$retval:x64" } },
	{ "function",
	  { "p:" DP_TRACER_GROUP "/function %s parent_ip=+0(%%sp):x64" } },
	{ "stack",
	  { "p:" DP_TRACER_GROUP "/" DP_TRACER_STACK_EVENT " %s" }, true },
};

#define NTRACERS (sizeof(tracers) / sizeof(tracers[0]))

int dp_tracer_by_name(const char *name, const struct dp_tracer **t)
{
	*t = NULL;
	if (!strcmp(name, "nop"))
		return 0;
	for (size_t i = 0; i < NTRACERS; i++)
		if (!strcmp(tracers[i].name, name)) {
			*t = &tracers[i];
			return 0;
		}
	return -1;
}

const char *dp_tracer_list(void)
{
	return "function_graph function nop";
}

const char *dp_tracer_name(const struct dp_tracer *t)
{
	return t ? t->name : "nop";
}

bool dp_tracer_is_current(const struct dp_tracer *t)
{
	return !t || !t->sysctl;
}

bool dp_tracer_event_setup(struct dp_event *ev)
{
	if (strcmp(ev->group, DP_TRACER_GROUP) ||
	    strcmp(ev->name, DP_TRACER_STACK_EVENT) || ev->is_return)
		return false;
	ev->stack = ev->stack_max = true;
	ev->stack_dwarf = 0;	/* the depths come from frame pointers */
	return true;
}

static int push(char ***lines, size_t *n, char *line)
{
	char **v;

	if (!line)
		return -ENOMEM;
	/* doubled when n reaches a power of two */
	if (!(*n & (*n - 1))) {
		v = realloc(*lines, (*n ? 2 * *n : 1) * sizeof(*v));
		if (!v) {
			free(line);
			return -ENOMEM;
		}
		*lines = v;
	}
	(*lines)[(*n)++] = line;
	return 0;
}

int dp_tracer_defs(const struct dp_tracer *t, const char *program,
		   struct dp_funclist *l, char ***lines, size_t *n)
{
	char place[4096];

	for (size_t i = 0; i < l->n; i++) {
		const struct dp_func *f = &l->v[i];
		const char *mod = strcmp(f->path, program) ? f->path : NULL;

		if (!f->unique) {
			l->skipped[DP_SKIP_AMBIGUOUS]++;
			continue;
		}
		if (dp_func_place(f, mod, mod ? strlen(mod) : 0, place,
				  sizeof(place)))
			continue;
		for (size_t k = 0; t->defs[k]; k++) {
			char *line;

			if (asprintf(&line, t->defs[k], place) < 0)
				line = NULL;
			if (push(lines, n, line))
				return -ENOMEM;
		}
	}
	return 0;
}
