// SPDX-License-Identifier: GPL-2.0
/*
 * available_filter_functions: the functions of the target the function
 * tracers can trace (sym/funcsel.c's rules: a size, not an IFUNC
 * resolver, a .cold part or dprobe's own runtime), every name of each,
 * the executable's first and then each library's in map order, each in
 * address order, as the kernel lists its own: "name" for the
 * executable, "name [module]" for a library, as a module's functions
 * are shown.  set_ftrace_filter lists its selection the same way.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fs/internal.h"
#include "sym/proc.h"
#include "util/util.h"

/* The target's files, the program first: what a rule's :mod: names. */
int dp_fs_target_paths(struct dp_fs *fs, struct dp_proc **p,
		       const char ***paths, size_t *n)
{
	const struct dp_proc_objs *s;
	char why[256];

	if (atomic_load(&fs->target_gone) ||
	    dp_proc_open(fs->o->pid, p, why, sizeof(why)))
		return -ESRCH;
	s = dp_proc_objs(*p);
	*paths = calloc(s->n + 1, sizeof(**paths));
	if (!*paths) {
		dp_proc_close(*p);
		return -ENOMEM;
	}
	*n = 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < s->n; i++)
			if (s->v[i].elf && s->v[i].main == !pass)
				(*paths)[(*n)++] = s->v[i].path;
	return 0;
}

/* The names @sel selects in *@l (the paths given to free after it). */
static int names(struct dp_fs *fs, const struct dp_funcsel *sel,
		 struct dp_funclist *l, struct dp_proc **p,
		 const char ***paths)
{
	char err[256];
	size_t n;

	*l = (struct dp_funclist){ 0 };
	if (dp_fs_target_paths(fs, p, paths, &n))
		return -ESRCH;
	if (n && !dp_funcs_names(*paths, n, sel, l, err, sizeof(err)))
		return 0;
	dp_funclist_free(l);
	free(*paths);
	dp_proc_close(*p);
	return -ENOENT;
}

size_t dp_fs_funcs_count(struct dp_fs *fs, const struct dp_funcsel *sel)
{
	struct dp_funclist l;
	const char **paths;
	struct dp_proc *p;
	size_t n;

	if (names(fs, sel, &l, &p, &paths))
		return 0;
	n = l.n;
	dp_funclist_free(&l);
	free(paths);
	dp_proc_close(p);
	return n;
}

size_t dp_fs_list_selected(struct dp_fs *fs, const struct dp_funcsel *sel,
			   FILE *out)
{
	struct dp_funclist l;
	const char **paths;
	struct dp_proc *p;
	size_t n;

	if (names(fs, sel, &l, &p, &paths))
		return 0;
	for (size_t i = 0; i < l.n; i++) {
		fputs(l.v[i].name, out);
		if (l.v[i].path == paths[0])
			fputc('\n', out);
		else
			fprintf(out, " [%s]\n", dp_base_name(l.v[i].path));
	}
	n = l.n;
	dp_funclist_free(&l);
	free(paths);
	dp_proc_close(p);
	return n;
}

void dp_fs_list_functions(struct dp_fs *fs, FILE *out)
{
	static struct dp_funcrule all = { .glob = "*" };
	const struct dp_funcsel sel = { &all, 1 };

	dp_fs_list_selected(fs, &sel, out);
}
