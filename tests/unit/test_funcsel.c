// SPDX-License-Identifier: GPL-2.0
/*
 * sym/funcsel.c: set_ftrace_filter's rules over a program's functions
 * (globs, `!`, :mod:, the order of rules, aliases taken once, the
 * functions never probed and why), on the sym/ unit tests' programs.
 */
#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>

#include "sym/funcsel.h"
#include "test_data.h"

static void rules(struct dp_funcsel *s, const char *line)
{
	char err[256] = "";

	cr_assert_eq(dp_funcsel_add(s, line, err, sizeof(err)), 0,
		     "%s: %s", line, err);
}

/* The names selected, space separated, in address order. */
static void names(const struct dp_funclist *l, char *buf, size_t len)
{
	size_t k = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < l->n && k < len; i++)
		k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? " " : "",
				      l->v[i].name);
}

static void select_ok(const char *prog, const char *filter,
		      const char *notrace, struct dp_funclist *l)
{
	struct dp_funcsel f = { 0 }, n = { 0 };
	const char *path = test_data(prog);
	char err[256] = "";

	if (filter)
		rules(&f, filter);
	if (notrace)
		rules(&n, notrace);
	cr_assert_eq(dp_funcs_select(&path, 1, &f, &n, l, err, sizeof(err)),
		     0, "%s", err);
	dp_funcsel_free(&f);
	dp_funcsel_free(&n);
}

Test(funcsel, glob_selects_in_address_order)
{
	struct dp_funclist l;
	char got[512];

	select_ok("sym_nopie", "sym_wor*", NULL, &l);
	names(&l, got, sizeof(got));
	cr_assert_str_eq(got, "sym_work sym_worker");
	cr_assert_eq(l.matched, 2);
	dp_funclist_free(&l);
}

Test(funcsel, negation_and_rule_order)
{
	struct dp_funclist l;
	char got[512];

	/* `!` takes out what came before; a later rule puts it back */
	select_ok("sym_nopie", "sym_* !sym_work*", NULL, &l);
	names(&l, got, sizeof(got));
	cr_assert_str_eq(got, "sym_loop");
	dp_funclist_free(&l);
	select_ok("sym_nopie", "sym_*,!sym_work*,sym_worker", NULL, &l);
	names(&l, got, sizeof(got));
	cr_assert_str_eq(got, "sym_worker sym_loop");
	dp_funclist_free(&l);
}

Test(funcsel, only_negative_rules_mean_all_but)
{
	struct dp_funclist l;

	select_ok("sym_nopie", "!sym_*", NULL, &l);
	for (size_t i = 0; i < l.n; i++)
		cr_assert(strncmp(l.v[i].name, "sym_", 4), "%s", l.v[i].name);
	cr_assert_gt(l.n, 0);
	dp_funclist_free(&l);
}

Test(funcsel, notrace_is_counted)
{
	struct dp_funclist l;
	char got[512];

	select_ok("sym_nopie", "sym_*", "sym_loop", &l);
	names(&l, got, sizeof(got));
	cr_assert_str_eq(got, "sym_work sym_worker");
	cr_assert_eq(l.skipped[DP_SKIP_NOTRACE], 1);
	dp_funclist_free(&l);
}

Test(funcsel, trampolines_and_sizeless_skipped)
{
	struct dp_funclist l;

	select_ok("sym_nopie", NULL, NULL, &l);
	for (size_t i = 0; i < l.n; i++)
		cr_assert(strcmp(l.v[i].name, "_start"), "_start selected");
	cr_assert_eq(l.skipped[DP_SKIP_TRAMPOLINE], 1);
	cr_assert_gt(l.skipped[DP_SKIP_NOSIZE], 0, "_init has no size");
	dp_funclist_free(&l);
}

Test(funcsel, same_name_twice_is_not_unique)
{
	struct dp_funclist l;

	select_ok("sym_dup", "dup_*", NULL, &l);
	cr_assert_eq(l.n, 4);
	for (size_t i = 0; i < l.n; i++)
		cr_assert_eq(l.v[i].unique, !!strcmp(l.v[i].name, "dup_helper"),
			     "%s", l.v[i].name);
	dp_funclist_free(&l);
}

Test(funcsel, mod_rules_name_their_file)
{
	struct dp_funcsel f = { 0 }, n = { 0 };
	const char *paths[] = { test_data("sym_nopie"), test_data("sym_dup") };
	struct dp_funclist l;
	char err[256], got[512];

	rules(&f, "sym_work :mod:sym_dup !main:mod:sym_dup");
	cr_assert_eq(dp_funcs_select(paths, 2, &f, &n, &l, err, sizeof(err)),
		     0, "%s", err);
	names(&l, got, sizeof(got));
	cr_assert(!strncmp(got, "sym_work ", 9), "%s", got);
	cr_assert(strstr(got, " dup_a "), "%s", got);
	cr_assert(!strstr(got, "main"), "%s", got);
	dp_funclist_free(&l);
	dp_funcsel_free(&f);
}

Test(funcsel, a_glob_without_mod_is_about_every_file)
{
	struct dp_funcsel f = { 0 }, n = { 0 };
	const char *paths[] = { test_data("sym_nopie"), test_data("sym_dup") };
	struct dp_funclist l;
	char err[256], got[512];

	rules(&f, "dup_a sym_loop");
	cr_assert_eq(dp_funcs_select(paths, 2, &f, &n, &l, err, sizeof(err)),
		     0, "%s", err);
	names(&l, got, sizeof(got));
	cr_assert_str_eq(got, "sym_loop dup_a");
	cr_assert_str_eq(l.v[1].path, paths[1]);
	dp_funclist_free(&l);
	dp_funcsel_free(&f);
}

Test(funcsel, bad_rules)
{
	struct dp_funcsel f = { 0 };
	char err[256];

	cr_assert_eq(dp_funcsel_add(&f, "foo:mod:", err, sizeof(err)),
		     -EINVAL);
	cr_assert(strstr(err, "no module"), "%s", err);
	cr_assert_eq(dp_funcsel_add(&f, "a ! b", err, sizeof(err)), -EINVAL);
	dp_funcsel_free(&f);
}

Test(funcsel, module_names)
{
	cr_assert(dp_funcsel_mod_is("libc", "/lib/x86_64-linux-gnu/libc.so.6"));
	cr_assert(dp_funcsel_mod_is("libc.so.6", "/lib/libc.so.6"));
	cr_assert(!dp_funcsel_mod_is("libc", "/lib/libcrypt.so.1"));
	cr_assert(!dp_funcsel_mod_is("lib", "/lib/libc.so.6"));
	cr_assert(dp_is_glob("a*") && dp_is_glob("a?") && !dp_is_glob("ab"));
}
