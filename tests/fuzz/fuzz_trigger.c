// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for the trigger commands (event/trigger.h): the
 * input, as text, is parsed as a write to a fixed event's `trigger` file
 * (its enable_event targets: that event); what parses is printed, added
 * to a set (or removed from it, for "!..."), and the set is run on a few
 * records, unconditionally, with the record and after it, against a fake
 * of what triggers act on.  Anything odd aborts, so libFuzzer reports it
 * with the input.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event/event.h"
#include "event/trigger.h"

#define F(n, t, c, o, sz, es, cnt, sg) { n, t, c, o, sz, es, cnt, sg, NULL }

static struct dp_field fields[] = {
	F("__probe_ip", "unsigned long", DP_FC_NUM, 8, 8, 8, 0, false),
	F("a", "s32", DP_FC_NUM, 16, 4, 4, 0, true),
	F("b", "u8", DP_FC_NUM, 20, 1, 1, 0, false),
	F("s", "__data_loc char[]", DP_FC_STRING, 21, 4, 4, 0, true),
};

static struct dp_event ev = {
	.id = 1000,
	.group = "fuzz",
	.name = "ev",
	.kind = DP_KIND_UPROBE,
	.fields = fields,
	.nfields = sizeof(fields) / sizeof(fields[0]),
	.fixed_size = 25,
};

static FILE *sink;
static bool on = true, disabled, paused;

static bool f_on(void *p) { (void)p; return on; }
static void f_set(void *p, bool v) { (void)p; on = v; }
static void f_nop(void *p) { (void)p; }
static bool f_sd(void *p, const struct dp_event *e)
{
	(void)p;
	if (e != &ev)
		abort();
	return disabled;
}
static void f_set_sd(void *p, const struct dp_event *e, bool d)
{
	(void)p;
	if (e != &ev)
		abort();
	disabled = d;
}
static void f_pause(void *p, const struct dp_event *e, bool v)
{
	(void)p;
	if (e != &ev)
		abort();
	paused = v;
}

static const struct dp_trigger_ops ops = {
	f_on, f_set, f_nop, f_nop, f_sd, f_set_sd, f_pause,
};

static const struct dp_event *find(void *priv, const char *sys,
				   const char *name)
{
	(void)priv;
	return !strcmp(sys, "fuzz") && !strcmp(name, "ev") ? &ev : NULL;
}

static void run(struct dp_trigger_set *s)
{
	uint8_t rec[64] = { 0 };
	struct dp_rec_meta meta = { .pid = 3, .comm = "fuzz" };
	unsigned tt;

	memcpy(rec + 16, &(int32_t){ 3 }, 4);
	memcpy(rec + 25, "hi", 3);
	memcpy(rec + 21, &(uint32_t){ 3u << 16 | 25 }, 4);
	for (int i = 0; i < 3; i++) {
		dp_trigger_set_call(s, &ev, NULL, 0, &meta, &ops, NULL);
		tt = dp_trigger_set_call(s, &ev, rec, 28, &meta, &ops, NULL);
		dp_trigger_set_post_call(s, tt, &ops, NULL);
		on = !on;
		disabled = !disabled;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dp_trigger_set set = { 0 };
	struct dp_filter_error fe;
	struct dp_trigger *t, *keep;
	char *text, *ft = NULL, word[32];
	bool remove;
	int ret;

	if (!sink)
		sink = fopen("/dev/null", "w");
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	dp_trigger_command(text, word, sizeof(word), NULL);
	/* something there to remove or to clash with */
	if (dp_trigger_parse(&ev, "traceon:2 if a > 1", find, NULL, &keep,
			     &remove, &fe, NULL) ||
	    dp_trigger_set_add(&set, keep))
		abort();
	ret = dp_trigger_parse(&ev, text, find, NULL, &t, &remove, &fe, &ft);
	if (ret) {
		if (ret >= 0 || t)
			abort();
		if (fe.err && !ft)
			abort();
	} else {
		if (!t || (dp_trigger_has_target(t) && t->target != &ev))
			abort();
		dp_trigger_print(t, sink);
		if (remove) {
			dp_trigger_free(dp_trigger_set_remove(&set, t));
			dp_trigger_free(t);
		} else if (dp_trigger_set_add(&set, t)) {
			if (!dp_trigger_same(t, keep))
				abort();
			dp_trigger_free(t);
		}
	}
	free(ft);
	run(&set);
	dp_trigger_set_print(&set, sink);
	dp_trigger_set_clear(&set);
	free(text);
	return 0;
}
