// SPDX-License-Identifier: GPL-2.0
/*
 * dprobe trace --tracer (tracer.h): the functions the options select,
 * the tracer's definitions on them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/tracer.h"

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

int dp_cli_tracer_defs(const struct dp_tracer *t, const char *binary,
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
		dp_cli_funcs_summary(dp_tracer_name(t), &l);
		fprintf(stderr, "dprobe: --tracer %s: no function to trace "
			"(%zu matched the filters)\n", dp_tracer_name(t),
			l.matched);
		ret = -ENOENT;
	}
	if (!ret)
		ret = dp_tracer_defs(t, binary, &l, &out->v, &out->n);
	if (!ret)
		ret = dp_cli_funcs_checked(dp_tracer_name(t), &l);
	dp_funclist_free(&l);
	if (ret == -ENOMEM)
		fprintf(stderr, "dprobe: %s\n", strerror(ENOMEM));
	return ret;
}
