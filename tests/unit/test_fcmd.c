// SPDX-License-Identifier: GPL-2.0
/*
 * Function commands (event/fcmd.h): set_ftrace_filter's FUNC:COMMAND
 * words cut as the kernel's ftrace_process_regex() and each command's
 * callback cut them, their errors, the ops rule (a command with and one
 * without a count are two), the listing's order and format, removal by
 * glob, and a call running each ops once with the commands' count rules,
 * on a fake of what they act on.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "event/fcmd.h"
#include "event/event.h"
#include "capture.h"

static struct dp_registry reg;
static struct dp_fcmd_set set;

static void setup(void)
{
	dp_registry_init(&reg);
	cr_assert_eq(dp_registry_apply(&reg, "p:kp/k work", NULL, NULL), 0);
	memset(&set, 0, sizeof(set));
}

static void teardown(void)
{
	dp_fcmd_set_free(&set);
	dp_registry_free(&reg);
}

TestSuite(fcmd, .init = setup, .fini = teardown);

static const struct dp_event *find(void *priv, const char *sys,
				   const char *name)
{
	return dp_registry_find(priv, sys, name);
}

static int parse(const char *word, struct dp_fcmd_req *r)
{
	return dp_fcmd_parse(word, find, &reg, r);
}

/* @word added to @site under @name: dp_fcmd_add()'s answer. */
static int add(const char *word, unsigned site, const char *name)
{
	struct dp_fcmd_req r;
	int ret;

	cr_assert_eq(parse(word, &r), 0, "%s", word);
	ret = dp_fcmd_add(&set, site, NULL, name, NULL, &r);
	dp_fcmd_req_free(&r);
	return ret;
}

static int removed(const char *word)
{
	struct dp_fcmd_req r;
	int ret;

	cr_assert_eq(parse(word, &r), 0, "%s", word);
	cr_assert(r.remove);
	ret = dp_fcmd_remove(&set, &r, NULL, NULL);
	dp_fcmd_req_free(&r);
	return ret;
}

static char *listing(void)
{
	struct cap c;

	dp_fcmd_print(&set, cap_open(&c));
	return cap_close(&c);
}

Test(fcmd, words)
{
	cr_assert(dp_fcmd_is_command("f:traceon"));
	cr_assert(dp_fcmd_is_command("!f:traceon:3"));
	cr_assert(dp_fcmd_is_command("f:"));
	cr_assert_not(dp_fcmd_is_command("f"));
	cr_assert_not(dp_fcmd_is_command("f*:mod:libc"));
	cr_assert(dp_fcmd_is_command("f:model"));
}

Test(fcmd, errors)
{
	static const char *const bad[] = {
		"f:nosuch", "f:", "f:traceon:x", "f:traceoff:1x",
		"f:enable_event", "f:enable_event:kp", "f:enable_event:kp:nosuch",
		"!f:enable_event:kp:nosuch", "f:enable_event:kp:k:",
		"f:disable_event:kp:k:y",
	};
	struct dp_fcmd_req r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(parse(bad[i], &r), -EINVAL, "%s", bad[i]);
	cr_assert_eq(parse("f:traceon:99999999999999999999", &r), -ERANGE);
	/* a removal's count is not looked at */
	cr_assert_eq(parse("!f:traceon:x", &r), 0);
	dp_fcmd_req_free(&r);
}

Test(fcmd, listing_by_ops_newest_first)
{
	cr_assert_eq(add("a:traceoff", 1, "a"), 1);
	cr_assert_eq(add("a:traceoff:3", 1, "a"), 1);
	cr_assert_eq(add("b:traceoff", 2, "b"), 1);
	cr_assert_eq(add("a:enable_event:kp:k:0x10", 1, "a"), 1);
	cr_assert_eq(add("a:dump", 1, "a"), 1);
	cr_assert_eq(add("a:cpudump", 1, "a"), 1);
	cr_assert_eq(add("b:snapshot:", 2, "b"), 1);
	/* there already: the same ops on the same function */
	cr_assert_eq(add("a:traceoff:7", 1, "a"), 0);
	char *s = listing();
	cr_assert_str_eq(s, "b:snapshot:count=-1\n"
			    "a:cpudump:unlimited\n"
			    "a:dump:count=1\n"
			    "a:enable_event:kp:k:count=16\n"
			    "a:traceoff:count=3\n"
			    "a:traceoff:unlimited\n"
			    "b:traceoff:unlimited\n");
	free(s);
}

Test(fcmd, remove_by_glob_and_ops)
{
	cr_assert_eq(removed("!a:traceon"), -ENODEV);
	add("alpha:traceon", 1, "alpha");
	add("beta:traceon", 2, "beta");
	add("alpha:traceon:2", 1, "alpha");
	cr_assert_eq(removed("!gamma:traceon"), -EINVAL);
	/* the ops without a count only */
	cr_assert_eq(removed("!a*:traceon"), 1);
	cr_assert_eq(removed("!*:traceon:0"), 1);
	char *s = listing();
	cr_assert_str_eq(s, "beta:traceon:unlimited\n");
	free(s);
	cr_assert_eq(removed("!:traceon"), 1);
	cr_assert_eq(removed("!beta:traceon"), -ENODEV);
	cr_assert_not(dp_fcmd_on_site(&set, 2));
}

/* ---- running ---------------------------------------------------------- */

static bool on = true;
static int nstack, ndump, nsnap;
static bool soft_off = true;

static bool f_is_on(void *p) { (void)p; return on; }
static void f_set(void *p, bool v) { (void)p; on = v; }
static void f_snap(void *p) { (void)p; nsnap++; }
static void f_stack(void *p) { (void)p; nstack++; }
static bool f_soft(void *p, const struct dp_event *t)
{
	(void)p;
	(void)t;
	return soft_off;
}
static void f_set_soft(void *p, const struct dp_event *t, bool v)
{
	(void)p;
	(void)t;
	soft_off = v;
}
static void f_dump(void *p, bool all) { (void)p; (void)all; ndump++; on = false; }

static const struct dp_trigger_ops ops = {
	.tracing_is_on = f_is_on, .tracing_set = f_set, .snapshot = f_snap,
	.stacktrace = f_stack, .soft_disabled = f_soft,
	.set_soft_disabled = f_set_soft, .dump = f_dump,
};

Test(fcmd, counts)
{
	add("f:traceoff:2", 1, "f");
	add("f:stacktrace:1", 1, "f");
	add("f:enable_event:kp:k:1", 1, "f");
	/* stacktrace's count only while tracing is on: the newer ops
	 * first, so it sees tracing still on */
	on = true;
	dp_fcmd_run(&set, 1, &ops, NULL);
	cr_assert_not(on);
	cr_assert_eq(nstack, 1);
	cr_assert_not(soft_off);
	on = true;
	soft_off = true;
	dp_fcmd_run(&set, 1, &ops, NULL);
	cr_assert_not(on);		/* the second traceoff */
	cr_assert_eq(nstack, 1);	/* its count is out */
	cr_assert(soft_off);		/* so is enable_event's */
	on = true;
	dp_fcmd_run(&set, 1, &ops, NULL);
	cr_assert(on);
	/* another site: nothing */
	dp_fcmd_run(&set, 2, &ops, NULL);
	char *s = listing();
	cr_assert_str_eq(s, "f:enable_event:kp:k:count=0\n"
			    "f:stacktrace:count=0\n"
			    "f:traceoff:count=0\n");
	free(s);
}

Test(fcmd, dump_once_cpudump_always_one_ops_per_call)
{
	add("f:dump", 1, "f");
	add("f:snapshot", 1, "f");
	add("f:snapshot", 1, "f_alias");	/* another name, once a call */
	ndump = nsnap = 0;
	for (int i = 0; i < 3; i++)
		dp_fcmd_run(&set, 1, &ops, NULL);
	cr_assert_eq(ndump, 1);
	cr_assert_eq(nsnap, 3);
	add("g:cpudump", 2, "g");
	for (int i = 0; i < 2; i++)
		dp_fcmd_run(&set, 2, &ops, NULL);
	cr_assert_eq(ndump, 3);
}
