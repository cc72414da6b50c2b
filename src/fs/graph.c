// SPDX-License-Identifier: GPL-2.0
/*
 * set_graph_function, set_graph_notrace and max_graph_depth: what the
 * function_graph tracer shows of the calls it traces (the kernel's
 * ftrace.c and trace_functions_graph.c).
 *
 * The two files take set_ftrace_filter's words (GLOB, !GLOB, :mod:),
 * kept as rules; `>` starts them again, `>>` adds.  As the kernel's
 * ftrace_graph_set_hash(), a GLOB that names no function and a !GLOB
 * that takes none out are EINVAL.  Read, they list the functions the
 * rules name now, as set_ftrace_filter does, or the kernel's line for
 * none.  The renderer is told the names at once (globs escaped), as the
 * kernel's hash is swapped in at once; max_graph_depth too.  While
 * set_ftrace_filter names no function, the tracer is on the functions
 * these two name as well (tracer.c), so that one in a library means
 * something: a change there re-arms it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fs/internal.h"
#include "lang/kstrto.h"
#include "sym/proc.h"

static struct dp_funcsel *sel_of(struct dp_fs *fs, bool notrace)
{
	return notrace ? &fs->graph_notrace : &fs->graph_function;
}

/* @name with fnmatch(3)'s special characters escaped. */
static char *escaped(const char *name)
{
	char *e = malloc(2 * strlen(name) + 1), *o = e;

	for (; e && *name; name++) {
		if (strchr("*?[\\", *name))
			*o++ = '\\';
		*o++ = *name;
	}
	if (e)
		*o = '\0';
	return e;
}

static void names_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static int by_place(const void *a, const void *b)
{
	const struct dp_func *x = a, *y = b;

	if (x->path != y->path)
		return x->path < y->path ? -1 : 1;
	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/*
 * Every name of the functions @s selects in @paths (not only the names
 * that matched: the renderer names a function by whichever symbol its
 * address has, `__close` for `close`), as globs that match them alone.
 */
static int alias_globs(const char *const *paths, size_t n,
		       const struct dp_funcsel *s, char ***out, size_t *nout)
{
	static struct dp_funcrule all_rule = { .glob = "*" };
	const struct dp_funcsel all = { &all_rule, 1 };
	struct dp_funclist l = { 0 }, every = { 0 };
	char err[256];
	int ret = dp_funcs_names(paths, n, s, &l, err, sizeof(err));

	if (!ret && l.n)
		ret = dp_funcs_names(paths, n, &all, &every, err, sizeof(err));
	if (!ret && l.n)
		*out = calloc(every.n, sizeof(**out));
	if (*out)
		qsort(l.v, l.n, sizeof(*l.v), by_place);
	for (size_t i = 0; *out && i < every.n; i++) {
		if (!bsearch(&every.v[i], l.v, l.n, sizeof(*l.v), by_place))
			continue;
		(*out)[*nout] = escaped(every.v[i].name);
		if (!(*out)[(*nout)++]) {
			names_free(*out, *nout);
			*out = NULL;
			*nout = 0;
			ret = -ENOMEM;
		}
	}
	dp_funclist_free(&l);
	dp_funclist_free(&every);
	return ret;
}

/* The names @s selects now, as globs that match them alone. */
static int resolve(struct dp_fs *fs, const struct dp_funcsel *s, char ***out,
		   size_t *nout)
{
	const char **paths;
	struct dp_proc *p;
	size_t n;
	int ret;

	*out = NULL;
	*nout = 0;
	if (!dp_fs_sel_some(s) || dp_fs_target_paths(fs, &p, &paths, &n))
		return 0;
	ret = n ? alias_globs(paths, n, s, out, nout) : 0;
	free(paths);
	dp_proc_close(p);
	return ret;
}

void dp_fs_graph_sync(struct dp_fs *fs)
{
	char **v[2];
	size_t n[2];

	for (int i = 0; i < 2; i++)
		resolve(fs, sel_of(fs, i), &v[i], &n[i]);
	pthread_mutex_lock(&fs->buf_lock);
	for (int i = 0; i < 2; i++) {
		names_free(fs->graph_names[i], fs->ngraph_names[i]);
		fs->graph_names[i] = v[i];
		fs->ngraph_names[i] = n[i];
	}
	fs->tr_opts.graph_funcs = (const char *const *)v[0];
	fs->tr_opts.ngraph_funcs = n[0];
	fs->tr_opts.notrace_funcs = (const char *const *)v[1];
	fs->tr_opts.nnotrace_funcs = n[1];
	fs->tr_opts.globs_gen++;
	pthread_mutex_unlock(&fs->buf_lock);
}

/* How many names the first @n rules of @s list (none: none puts any
 * in). */
static size_t count(struct dp_fs *fs, const struct dp_funcsel *s, size_t n)
{
	const struct dp_funcsel part = { s->v, n };

	return dp_fs_sel_some(&part) ? dp_fs_funcs_count(fs, &part) : 0;
}

/* Rule @i of @s names a function, or takes one out of those before. */
static int check_rule(struct dp_fs *fs, const struct dp_funcsel *s, size_t i)
{
	const struct dp_funcsel one = { &s->v[i], 1 };

	if (!s->v[i].neg)
		return dp_fs_funcs_count(fs, &one) ? 0 : -EINVAL;
	return count(fs, s, i + 1) < count(fs, s, i) ? 0 : -EINVAL;
}

static int changed(struct dp_fs *fs)
{
	dp_fs_graph_sync(fs);
	return dp_fs_tracer_graph_changed(fs);
}

int dp_fs_graph_write(struct dp_fs *fs, bool notrace, const char *buf,
		      size_t len)
{
	struct dp_funcsel *s = sel_of(fs, notrace);
	char *text = strndup(buf, len), err[256];
	size_t before = s->n;
	int ret;

	if (!text)
		return -ENOMEM;
	ret = dp_funcsel_add(s, text, err, sizeof(err));
	free(text);
	for (size_t i = before; !ret && i < s->n; i++)
		ret = check_rule(fs, s, i);
	if (!ret && s->n > before)
		ret = changed(fs);
	if (ret && s->n > before) {
		/* the rules as they were */
		dp_funcsel_truncate(s, before);
		dp_fs_graph_sync(fs);
	}
	return ret;
}

int dp_fs_graph_truncate(struct dp_fs *fs, bool notrace)
{
	if (!sel_of(fs, notrace)->n)
		return 0;
	dp_funcsel_free(sel_of(fs, notrace));
	return changed(fs);
}

void dp_fs_graph_print(struct dp_fs *fs, bool notrace, FILE *out)
{
	const struct dp_funcsel *s = sel_of(fs, notrace);

	if (!dp_fs_sel_some(s) || !dp_fs_list_selected(fs, s, out))
		fputs(notrace ? "#### no functions disabled ####\n" :
				"#### all functions enabled ####\n", out);
}

/* max_graph_depth: printed as the kernel's "%d" of an unsigned int */
void dp_fs_graph_depth_print(struct dp_fs *fs, FILE *out)
{
	pthread_mutex_lock(&fs->buf_lock);
	fprintf(out, "%d\n", (int)fs->tr_opts.max_depth);
	pthread_mutex_unlock(&fs->buf_lock);
}

/* A number (kstrtoul(): no sign, one trailing newline), stored in an
 * unsigned int as the kernel's fgraph_max_depth; 0 is no limit. */
int dp_fs_graph_depth_write(struct dp_fs *fs, const char *buf, size_t len)
{
	char tmp[32];
	uint64_t v;
	int ret;

	if (!len || len >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, buf, len);
	tmp[len] = '\0';
	ret = dp_kstrtoull(tmp, 10, &v);
	if (ret)
		return ret;
	pthread_mutex_lock(&fs->buf_lock);
	fs->tr_opts.max_depth = (unsigned)v;
	pthread_mutex_unlock(&fs->buf_lock);
	return 0;
}

void dp_fs_graph_fini(struct dp_fs *fs)
{
	dp_funcsel_free(&fs->graph_function);
	dp_funcsel_free(&fs->graph_notrace);
	for (int i = 0; i < 2; i++) {
		names_free(fs->graph_names[i], fs->ngraph_names[i]);
		fs->graph_names[i] = NULL;
		fs->ngraph_names[i] = 0;
	}
	fs->tr_opts.graph_funcs = fs->tr_opts.notrace_funcs = NULL;
	fs->tr_opts.ngraph_funcs = fs->tr_opts.nnotrace_funcs = 0;
}
