// SPDX-License-Identifier: GPL-2.0
/*
 * Probes on every function a glob names: `p:grp/ sqlite3_*` is one
 * definition per function that matches, each with the name the kernel
 * would give it alone (p_sqlite3_open_0), as `perf probe 'func*'` does;
 * `p:grp/evt sqlite3_*` is one event with a probe on each (the way
 * kprobe_events appends probes to an event).  `r`, `f` and `%return`
 * work the same.  The functions are chosen by sym/funcsel.c, which also
 * leaves out, and counts, the ones that cannot be probed safely.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/named.h"
#include "sym/elf.h"
#include "sym/funcsel.h"
#include "util/util.h"

bool dp_cli_glob_force;

/* The parts of a definition line with a glob place. */
struct globdef {
	const char *head;	/* "p:grp/" up to the blank */
	size_t head_len;
	const char *mod;	/* MOD: before the glob, or NULL */
	size_t mod_len;
	const char *glob;
	size_t glob_len;
	const char *suffix;	/* "%return" or "" */
	const char *rest;	/* the arguments, from the blank before them */
};

static bool is_probe_head(const char *s, size_t len)
{
	size_t i = 1;

	if (!len || !strchr("prf", s[0]))
		return false;
	while (i < len && s[0] == 'r' && s[i] >= '0' && s[i] <= '9')
		i++;
	return i == len || s[i] == ':';
}

static bool split_glob(const char *def, struct globdef *g)
{
	const char *p, *end, *colon, *pct;

	memset(g, 0, sizeof(*g));
	g->head = def + strspn(def, " \t");
	g->head_len = strcspn(g->head, " \t");
	if (!is_probe_head(g->head, g->head_len))
		return false;
	p = g->head + g->head_len;
	p += strspn(p, " \t");
	end = p + strcspn(p, " \t");
	g->rest = end;
	pct = memchr(p, '%', (size_t)(end - p));
	g->suffix = pct ? pct : "";
	if (pct && (size_t)(end - pct) != strlen("%return"))
		return false;
	if (pct)
		end = pct;
	colon = memchr(p, ':', (size_t)(end - p));
	if (colon) {
		g->mod = p;
		g->mod_len = (size_t)(colon - p);
		p = colon + 1;
	}
	g->glob = p;
	g->glob_len = (size_t)(end - p);
	return g->glob_len && strcspn(p, "*?[") < g->glob_len;
}

bool dp_cli_names_glob(const char *def)
{
	struct globdef g;

	return split_glob(def, &g);
}

/* The program's file, or the one MOD names; NULL if none. */
static const char *file_named(const struct dp_cli_objs *objs,
			      const struct globdef *g)
{
	char mod[256];

	if (!g->mod)
		return objs->n ? objs->paths[0] : NULL;
	snprintf(mod, sizeof(mod), "%.*s", (int)g->mod_len, g->mod);
	for (size_t i = 0; i < objs->n; i++)
		if (dp_funcsel_mod_is(mod, objs->paths[i]))
			return objs->paths[i];
	return NULL;
}

/* "no function matches": with the closest names, as a lookup says. */
static void no_match(const char *path, const struct globdef *g)
{
	char lit[256];
	const char *near[4];
	struct dp_elf *e;
	size_t n = 0, k = 0;

	for (size_t i = 0; i < g->glob_len && k + 1 < sizeof(lit); i++)
		if (!strchr("*?[]", g->glob[i]))
			lit[k++] = g->glob[i];
	lit[k] = '\0';
	fprintf(stderr, "dprobe: %.*s: no function of %s matches",
		(int)g->glob_len, g->glob, dp_base_name(path));
	if (*lit && !dp_elf_open(path, &e)) {
		n = dp_elf_suggest(e, lit, near, 4);
		for (size_t i = 0; i < n; i++)
			fprintf(stderr, "%s%s", i ? ", " : " (closest: ",
				near[i]);
		fprintf(stderr, "%s", n ? ")" : "");
		dp_elf_close(e);
	}
	fputc('\n', stderr);
}

void dp_cli_funcs_summary(const char *what, const struct dp_funclist *l)
{
	size_t skipped = 0;

	for (int i = 0; i < DP_SKIP_N; i++)
		skipped += l->skipped[i];
	if (!skipped)
		return;
	fprintf(stderr, "dprobe: %s: %zu function%s, %zu skipped (", what,
		l->n, l->n == 1 ? "" : "s", skipped);
	for (int i = 0, first = 1; i < DP_SKIP_N; i++)
		if (l->skipped[i]) {
			fprintf(stderr, "%s%zu %s", first ? "" : ", ",
				l->skipped[i], dp_func_skip_name(i));
			first = 0;
		}
	fprintf(stderr, ")\n");
}

int dp_cli_funcs_checked(const char *what, const struct dp_funclist *l)
{
	if (l->n > DP_FUNCSEL_LIMIT && !dp_cli_glob_force) {
		fprintf(stderr, "dprobe: %s: %zu functions match, more than "
			"%d: give --force to probe them all\n", what, l->n,
			DP_FUNCSEL_LIMIT);
		return -E2BIG;
	}
	dp_cli_funcs_summary(what, l);
	return 0;
}

/* The head names its event ("p:grp/evt"), rather than leaving the name
 * to be made ("p", "p:grp/"): then every probe goes to that event. */
static bool names_event(const struct globdef *g)
{
	const char *colon = memchr(g->head, ':', g->head_len);
	const char *end = g->head + g->head_len, *slash;

	if (!colon)
		return false;
	slash = memchr(colon, '/', (size_t)(end - colon));
	return (slash ? slash : colon) + 1 < end;
}

static int expand(const struct globdef *g, struct dp_funclist *l,
		  struct dp_cli_lines *out)
{
	bool one_event = names_event(g);
	char place[4096];

	for (size_t i = 0; i < l->n; i++) {
		char *line;

		/* an event's probes are placed alike: by symbol */
		if (one_event && !l->v[i].unique) {
			l->skipped[DP_SKIP_AMBIGUOUS]++;
			continue;
		}
		if (dp_func_place(&l->v[i], g->mod, g->mod_len, place,
				      sizeof(place)))
			continue;
		if (asprintf(&line, "%.*s %s%s%s", (int)g->head_len, g->head,
			     place, g->suffix, g->rest) < 0)
			return -ENOMEM;
		if (dp_cli_lines_push(out, line))
			return -ENOMEM;
	}
	return 0;
}

int dp_cli_expand_glob(const char *def, const struct dp_cli_objs *objs,
		       struct dp_cli_lines *out)
{
	struct dp_funcsel sel = { 0 }, none = { 0 };
	struct dp_funclist l;
	const char *path;
	char rule[512], err[512];
	struct globdef g;
	int ret;

	if (!split_glob(def, &g))
		return -EINVAL;
	path = file_named(objs, &g);
	if (!path) {
		fprintf(stderr, "dprobe: %.*s: no such file in the program\n",
			(int)g.mod_len, g.mod);
		return -ENOENT;
	}
	snprintf(rule, sizeof(rule), "%.*s:mod:%s", (int)g.glob_len, g.glob,
		 path);
	ret = dp_funcsel_add(&sel, rule, err, sizeof(err));
	if (!ret)
		ret = dp_funcs_select((const char *const *)&path, 1, &sel,
				      &none, &l, err, sizeof(err));
	dp_funcsel_free(&sel);
	if (ret) {
		fprintf(stderr, "dprobe: %s\n", err);
		return ret;
	}
	snprintf(rule, sizeof(rule), "%.*s", (int)g.glob_len, g.glob);
	if (!l.n && !l.matched)
		no_match(path, &g);
	else if (!l.n)
		dp_cli_funcs_summary(rule, &l);
	ret = !l.n ? -ENOENT : expand(&g, &l, out);
	if (!ret)
		ret = dp_cli_funcs_checked(rule, &l);
	dp_funclist_free(&l);
	return ret;
}
