// SPDX-License-Identifier: GPL-2.0
/*
 * Trigger commands (event/trigger.h): how the kernel's
 * trace_events_trigger.c cuts a write into command, count and filter, its
 * errors, the `trigger` file lines, the one-per-type rule, and the two
 * calls with the commands' count rules, on a fake of what they act on.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "event/trigger.h"
#include "capture.h"

static struct dp_registry reg;
static struct dp_event *kp, *other;

static void setup(void)
{
	dp_registry_init(&reg);
	cr_assert_eq(dp_registry_apply(&reg, "p:kp/k work a=%di:s32", NULL,
				       NULL), 0);
	cr_assert_eq(dp_registry_apply(&reg, "p:kp/o work", NULL, NULL), 0);
	kp = dp_registry_find(&reg, "kp", "k");
	other = dp_registry_find(&reg, "kp", "o");
	cr_assert(kp && other);
}

static void teardown(void)
{
	dp_registry_free(&reg);
}

TestSuite(trigger, .init = setup, .fini = teardown);

static const struct dp_event *find(void *priv, const char *sys,
				   const char *name)
{
	return dp_registry_find(priv, sys, name);
}

static struct dp_trigger *parse(const char *text, bool *remove)
{
	struct dp_filter_error fe;
	struct dp_trigger *t = NULL;
	bool rm = false;

	cr_assert_eq(dp_trigger_parse(kp, text, find, &reg, &t, &rm, &fe,
				      NULL), 0, "%s", text);
	if (remove)
		*remove = rm;
	return t;
}

static int parse_err(const char *text)
{
	struct dp_filter_error fe;
	struct dp_trigger *t = NULL;
	bool rm;
	int ret = dp_trigger_parse(kp, text, find, &reg, &t, &rm, &fe, NULL);

	cr_assert_null(t);
	return ret;
}

static void expect_line(const char *text, const char *want)
{
	struct dp_trigger *t = parse(text, NULL);
	struct cap c;
	char *got;

	dp_trigger_print(t, cap_open(&c));
	got = cap_close(&c);
	cr_expect_str_eq(got, want, "%s", text);
	free(got);
	dp_trigger_free(t);
}

Test(trigger, lines)
{
	expect_line("traceon", "traceon:unlimited\n");
	expect_line("traceoff:5", "traceoff:count=5\n");
	expect_line("traceon:0x10 if a > 3", "traceon:count=16 if a > 3\n");
	expect_line("traceon if a > 3", "traceon:unlimited if a > 3\n");
	expect_line("traceon:", "traceon:unlimited\n");
	expect_line("snapshot:1", "snapshot:count=1\n");
	expect_line("stacktrace", "stacktrace:unlimited\n");
	expect_line("enable_event:kp:o", "enable_event:kp:o:unlimited\n");
	expect_line("disable_event:kp:o:3 if a == 1",
		    "disable_event:kp:o:count=3 if a == 1\n");
	expect_line("enable_hist:kp:o:2", "enable_hist:kp:o:count=2\n");
	expect_line("disable_hist:kp:k", "disable_hist:kp:k:unlimited\n");
	/* kstrtoul: (unsigned long)-1 is "unlimited" */
	expect_line("traceon:18446744073709551615", "traceon:unlimited\n");
}

Test(trigger, errors)
{
	char word[16];
	enum dp_trig_cmd cmd;

	cr_expect_eq(parse_err("traceoff:badparam"), -EINVAL);
	cr_expect_eq(parse_err("traceoff+0"), -EINVAL);
	cr_expect_eq(parse_err("traceon:unlimited"), -EINVAL);
	cr_expect_eq(parse_err("stacktrace:foo"), -EINVAL);
	cr_expect_eq(parse_err("traceon if"), -EINVAL);
	cr_expect_eq(parse_err("traceon:5x"), -EINVAL);
	cr_expect_eq(parse_err("traceon::"), -EINVAL);
	cr_expect_eq(parse_err("enable_event"), -EINVAL);
	cr_expect_eq(parse_err("enable_event:kp"), -EINVAL);
	cr_expect_eq(parse_err("enable_event:nogroup:noevent"), -EINVAL);
	cr_expect_eq(parse_err("disable_event+1"), -EINVAL);
	cr_expect_eq(parse_err("nosuch"), -EINVAL);
	/* a bad filter: its errno, and what the error log shows */
	{
		struct dp_filter_error fe;
		struct dp_trigger *t;
		bool rm;
		char *ft = NULL;

		cr_expect_eq(dp_trigger_parse(kp, "traceon if nosuch == 1",
					      find, &reg, &t, &rm, &fe, &ft),
			     -EINVAL);
		cr_expect_neq(fe.err, 0);
		cr_expect_str_eq(ft, "nosuch == 1");
		free(ft);
	}
	cr_expect(dp_trigger_command("!traceon:3", word, sizeof(word), &cmd));
	cr_expect_eq(cmd, DP_TRIG_TRACEON);
	cr_expect_not(dp_trigger_command("hist:keys=a", word, sizeof(word),
					 &cmd));
	cr_expect_str_eq(word, "hist");
}

Test(trigger, removal_ignores_count_and_filter)
{
	bool rm = false;
	struct dp_trigger *t = parse("!traceoff:count=3 if x", &rm);

	cr_expect(rm);
	cr_expect_eq(t->cmd, DP_TRIG_TRACEOFF);
	dp_trigger_free(t);
	t = parse("!enable_event:kp:o:unlimited", &rm);
	cr_expect(rm && t->target == other);
	dp_trigger_free(t);
}

Test(trigger, one_of_a_type)
{
	struct dp_trigger_set s = { 0 };
	struct dp_trigger *t;
	struct cap c;
	char *got;

	cr_assert_eq(dp_trigger_set_add(&s, parse("traceon", NULL)), 0);
	t = parse("traceoff", NULL);
	cr_expect_eq(dp_trigger_set_add(&s, t), -EEXIST);
	dp_trigger_free(t);
	cr_assert_eq(dp_trigger_set_add(&s, parse("enable_event:kp:o", NULL)), 0);
	t = parse("disable_event:kp:o", NULL);
	cr_expect_eq(dp_trigger_set_add(&s, t), -EEXIST);
	dp_trigger_free(t);
	cr_assert_eq(dp_trigger_set_add(&s, parse("enable_event:kp:k", NULL)), 0);
	cr_assert_eq(dp_trigger_set_add(&s, parse("enable_hist:kp:o", NULL)), 0);
	cr_expect_not(dp_trigger_set_cond(&s));
	cr_assert_eq(dp_trigger_set_add(&s, parse("stacktrace", NULL)), 0);
	cr_expect(dp_trigger_set_cond(&s));
	/* newest first */
	dp_trigger_set_print(&s, cap_open(&c));
	got = cap_close(&c);
	cr_expect_str_eq(got, "stacktrace:unlimited\n"
			 "enable_hist:kp:o:unlimited\n"
			 "enable_event:kp:k:unlimited\n"
			 "enable_event:kp:o:unlimited\n"
			 "traceon:unlimited\n");
	free(got);
	/* "!traceoff" takes traceon: the same type */
	t = parse("traceoff", NULL);
	dp_trigger_free(dp_trigger_set_remove(&s, t));
	cr_expect_null(dp_trigger_set_remove(&s, t));
	dp_trigger_free(t);
	dp_trigger_set_clear(&s);
	cr_expect_null(s.head);
}

/* ---- running, on a fake --------------------------------------------------- */

static struct {
	bool on, soft_disabled, paused;
	int snapshots, stacks;
} st;

static bool f_on(void *p) { (void)p; return st.on; }
static void f_set(void *p, bool on) { (void)p; st.on = on; }
static void f_snap(void *p) { (void)p; st.snapshots++; }
static void f_stack(void *p) { (void)p; st.stacks++; }
static bool f_sd(void *p, const struct dp_event *e)
{
	(void)p;
	(void)e;
	return st.soft_disabled;
}
static void f_set_sd(void *p, const struct dp_event *e, bool d)
{
	(void)p;
	(void)e;
	st.soft_disabled = d;
}
static void f_pause(void *p, const struct dp_event *e, bool paused)
{
	(void)p;
	(void)e;
	st.paused = paused;
}

static const struct dp_trigger_ops ops = {
	f_on, f_set, f_snap, f_stack, f_sd, f_set_sd, f_pause,
};

/* a record of kp/k with a = @a */
static unsigned call(struct dp_trigger_set *s, int a, bool unconditional)
{
	uint8_t rec[24] = { 0 };
	struct dp_rec_meta meta = { .pid = 1 };

	memcpy(rec + 16, &a, 4);
	return dp_trigger_set_call(s, kp, unconditional ? NULL : rec,
				   sizeof(rec), &meta, &ops, NULL);
}

Test(trigger, counts_go_down_when_fired)
{
	struct dp_trigger_set s = { 0 };
	struct dp_trigger *t = parse("traceon:2", NULL);

	memset(&st, 0, sizeof(st));
	cr_assert_eq(dp_trigger_set_add(&s, t), 0);
	st.on = true;
	call(&s, 0, true);		/* already on: not counted */
	cr_expect_eq(t->count, 2);
	st.on = false;
	call(&s, 0, true);
	cr_expect(st.on);
	cr_expect_eq(t->count, 1);
	st.on = false;
	call(&s, 0, true);
	st.on = false;
	call(&s, 0, true);		/* count 0: no more */
	cr_expect_not(st.on);
	cr_expect_eq(t->count, 0);
	dp_trigger_set_clear(&s);
}

Test(trigger, filters_and_post_triggers)
{
	struct dp_trigger_set s = { 0 };
	unsigned tt;

	memset(&st, 0, sizeof(st));
	st.on = true;
	cr_assert_eq(dp_trigger_set_add(&s, parse("traceoff if a == 3", NULL)), 0);
	cr_assert_eq(dp_trigger_set_add(&s, parse("snapshot if a > 1", NULL)), 0);
	cr_assert_eq(dp_trigger_set_add(&s, parse("stacktrace:1", NULL)), 0);
	cr_assert_eq(dp_trigger_set_add(&s, parse("disable_event:kp:o:1", NULL)), 0);
	cr_assert_eq(dp_trigger_set_add(&s, parse("disable_hist:kp:o", NULL)), 0);
	tt = call(&s, 2, false);
	/* snapshot ran, traceoff's filter failed, stacktrace waits */
	cr_expect_eq(st.snapshots, 1);
	cr_expect_eq(tt, DP_ETT_STACKTRACE);
	cr_expect(st.soft_disabled);
	cr_expect(st.paused);
	dp_trigger_set_post_call(&s, tt, &ops, NULL);
	cr_expect_eq(st.stacks, 1);
	cr_expect(st.on);
	tt = call(&s, 3, false);
	cr_expect_eq(tt, DP_ETT_TRACE_ONOFF | DP_ETT_STACKTRACE);
	cr_expect(st.on);		/* not yet: after the record */
	dp_trigger_set_post_call(&s, tt, &ops, NULL);
	cr_expect_not(st.on);
	cr_expect_eq(st.stacks, 1);	/* its count is spent */
	cr_expect_eq(st.snapshots, 2);
	dp_trigger_set_clear(&s);
}

Test(trigger, enable_event_counts_only_real_changes)
{
	struct dp_trigger_set s = { 0 };
	struct dp_trigger *t = parse("enable_event:kp:o:1", NULL);

	memset(&st, 0, sizeof(st));
	cr_assert_eq(dp_trigger_set_add(&s, t), 0);
	call(&s, 0, true);		/* enabled already: no count spent */
	cr_expect_eq(t->count, 1);
	st.soft_disabled = true;
	call(&s, 0, true);
	cr_expect_not(st.soft_disabled);
	cr_expect_eq(t->count, 0);
	st.soft_disabled = true;
	call(&s, 0, true);
	cr_expect(st.soft_disabled);
	dp_trigger_set_clear(&s);
}
