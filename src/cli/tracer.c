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
 *   ftrace/funcgraph_entry entry: __probe_ip
 *   ftrace/funcgraph_exit  return: __probe_func, __probe_ret_ip, retval
 *
 * which the tracer's renderer (output/) prints as the kernel's tracer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/tracer.h"

struct dp_cli_tracer {
	const char *name;
	/* the events, "%s" where the place goes; NULL-terminated */
	const char *defs[3];
};

static const struct dp_cli_tracer tracers[] = {
	{ "function",
	  { "p:" DP_TRACER_GROUP "/function %s parent_ip=+0(%%sp):x64" } },
	{ "function_graph",
	  { "p:" DP_TRACER_GROUP "/funcgraph_entry %s",
	    "r:" DP_TRACER_GROUP "/funcgraph_exit %s retval=$retval:x64" } },
};

#define NTRACERS (sizeof(tracers) / sizeof(tracers[0]))

int dp_cli_tracer_by_name(const char *name, const struct dp_cli_tracer **t)
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

const char *dp_cli_tracer_names(void)
{
	return "function, function_graph or nop";
}

const char *dp_cli_tracer_name(const struct dp_cli_tracer *t)
{
	return t ? t->name : "nop";
}

/* The lines of @path, as set_ftrace_filter takes a file written to it. */
static int add_file(struct dp_funcsel *s, const char *path)
{
	char line[4096], err[512];
	FILE *f = fopen(path, "r");
	int ret = 0;

	if (!f) {
		fprintf(stderr, "dprobe: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (!ret && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "#")] = '\0';
		ret = dp_funcsel_add(s, line, err, sizeof(err));
		if (ret)
			fprintf(stderr, "dprobe: %s: %s\n", path, err);
	}
	fclose(f);
	return ret ? -1 : 0;
}

int dp_cli_funcopt_add(struct dp_funcsel *s, const char *spec)
{
	char err[512];

	if (spec[0] == '@')
		return add_file(s, spec + 1);
	if (dp_funcsel_add(s, spec, err, sizeof(err))) {
		fprintf(stderr, "dprobe: %s\n", err);
		return -1;
	}
	return 0;
}

void dp_cli_funcopts_free(struct dp_cli_funcopts *f)
{
	dp_funcsel_free(&f->filter);
	dp_funcsel_free(&f->notrace);
}

/* @binary first: a rule without :mod: is about the program. */
static const char **program_first(const char *binary,
				  const struct dp_cli_objs *objs, size_t *n)
{
	const char **v = malloc((objs->n + 1) * sizeof(*v));

	if (!v)
		return NULL;
	v[0] = binary;
	*n = 1;
	for (size_t i = 0; i < objs->n; i++)
		if (strcmp(objs->paths[i], binary))
			v[(*n)++] = objs->paths[i];
	return v;
}

/* The place of @f in a definition: MOD:NAME outside the program. */
static int place_of(const struct dp_func *f, const char *binary, char *buf,
		    size_t len)
{
	const char *mod = strcmp(f->path, binary) ? f->path : NULL;

	return dp_cli_func_place(f, mod, mod ? strlen(mod) : 0, buf, len);
}

static int make_defs(const struct dp_cli_tracer *t, const char *binary,
		     const struct dp_funclist *l, struct dp_cli_lines *out)
{
	char place[4096];

	for (size_t i = 0; i < l->n; i++) {
		if (place_of(&l->v[i], binary, place, sizeof(place)))
			continue;
		for (size_t k = 0; t->defs[k]; k++) {
			char *line;

			if (asprintf(&line, t->defs[k], place) < 0 ||
			    dp_cli_lines_push(out, line))
				return -ENOMEM;
		}
	}
	return 0;
}

int dp_cli_tracer_defs(const struct dp_cli_tracer *t, const char *binary,
		       const struct dp_cli_objs *objs,
		       const struct dp_cli_funcopts *f,
		       struct dp_cli_lines *out)
{
	struct dp_funclist l;
	const char **paths;
	char err[512];
	size_t n;
	int ret;

	paths = program_first(binary, objs, &n);
	if (!paths)
		return -ENOMEM;
	ret = dp_funcs_select(paths, n, &f->filter, &f->notrace, &l, err,
			      sizeof(err));
	free(paths);
	if (ret) {
		fprintf(stderr, "dprobe: %s\n", err);
		return ret;
	}
	if (!l.n) {
		dp_cli_funcs_summary(t->name, &l);
		fprintf(stderr, "dprobe: --tracer %s: no function to trace "
			"(%zu matched the filters)\n", t->name, l.matched);
		ret = -ENOENT;
	}
	if (!ret)
		ret = dp_cli_funcs_checked(t->name, &l);
	if (!ret)
		ret = make_defs(t, binary, &l, out);
	dp_funclist_free(&l);
	if (ret == -ENOMEM)
		fprintf(stderr, "dprobe: %s\n", strerror(ENOMEM));
	return ret;
}
