// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for the event filter language: the input, as text, is
 * compiled for a fixed event with numeric, string, array and string-array
 * fields; when it compiles it is matched against a few records (plain,
 * faulted strings, bad string locations, a truncated record) and CPU/comm
 * metadata.  It also goes through the `filter` file write path and the
 * error printers, and, as a hist trigger (event/hist.h; "hist:" put
 * before it unless it starts so), through the trigger parser, the records
 * and the `hist` text.  Anything odd the filter or hist code does aborts,
 * so libFuzzer reports it with the input.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event/event.h"
#include "event/filter.h"
#include "event/hist.h"

#define F(n, t, c, o, sz, es, cnt, sg) { n, t, c, o, sz, es, cnt, sg, NULL }

static struct dp_field fields[] = {
	F("__probe_ip", "unsigned long", DP_FC_NUM, 8, 8, 8, 0, false),
	F("a", "s32", DP_FC_NUM, 16, 4, 4, 0, true),
	F("b", "u8", DP_FC_NUM, 20, 1, 1, 0, false),
	F("s", "__data_loc char[]", DP_FC_STRING, 21, 4, 4, 0, true),
	F("u64", "u64", DP_FC_NUM, 25, 8, 8, 0, false),
	F("s64", "s64", DP_FC_NUM, 33, 8, 8, 0, true),
	F("s16", "s16", DP_FC_NUM, 41, 2, 2, 0, true),
	F("u16", "u16", DP_FC_NUM, 43, 2, 2, 0, false),
	F("arr", "u8[4]", DP_FC_ARRAY, 45, 4, 1, 4, false),
	F("arr3", "u8[3]", DP_FC_ARRAY, 49, 3, 1, 3, false),
	F("sarr", "__data_loc char[][2]", DP_FC_STRING_ARRAY, 52, 8, 4, 2,
	  true),
	F("name", "char[8]", DP_FC_ARRAY, 60, 8, 1, 8, false),
	F("rs", "__rel_loc char[]", DP_FC_NUM, 68, 4, 4, 0, true),
	F("p", "char *", DP_FC_NUM, 72, 8, 8, 0, false),
	F("cpu", "u32", DP_FC_NUM, 80, 4, 4, 0, false),
};

#define FIXED	84
#define NREC	4

static struct dp_event ev = {
	.id = 2326,
	.group = "fuzz",
	.name = "ev",
	.kind = DP_KIND_UPROBE,
	.fields = fields,
	.nfields = sizeof(fields) / sizeof(fields[0]),
	.fixed_size = FIXED,
};

static uint8_t recs[NREC][256];
static size_t rec_len[NREC];
static FILE *sink;

static void put(uint8_t *rec, unsigned off, uint64_t v, unsigned size)
{
	memcpy(rec + off, &v, size);
}

/* Append @s at *@len and point the __data_loc word at @off to it. */
static void put_str(uint8_t *rec, size_t *len, unsigned off, const char *s)
{
	size_t n = strlen(s) + 1;

	memcpy(rec + *len, s, n);
	put(rec, off, n << 16 | *len, 4);
	*len += n;
}

static void build_records(void)
{
	size_t len;

	/* 0: ordinary values */
	len = FIXED;
	put(recs[0], 0, 2326, 2);
	put(recs[0], 4, 1234, 4);
	put(recs[0], 8, 0x1010, 8);
	put(recs[0], 16, (uint32_t)-7, 4);
	put(recs[0], 20, 1, 1);
	put(recs[0], 25, UINT64_MAX, 8);
	put(recs[0], 33, 1ULL << 63, 8);
	put(recs[0], 41, (uint16_t)-300, 2);
	put(recs[0], 43, 65535, 2);
	put(recs[0], 45, 0x04030201, 4);
	memcpy(recs[0] + 60, "abcdefgh", 8);
	put(recs[0], 80, 1, 4);
	put_str(recs[0], &len, 21, "hello world");
	put_str(recs[0], &len, 52, "first");
	put_str(recs[0], &len, 56, "second");
	memcpy(recs[0] + len, "rel", 4);
	put(recs[0], 68, 4u << 16 | (len - 72), 4);
	len += 4;
	rec_len[0] = len;

	/* 1: faulted strings (length 0) and empty ones */
	len = FIXED;
	memset(recs[1], 0xff, FIXED);
	put(recs[1], 21, 0, 4);
	put_str(recs[1], &len, 52, "");
	put(recs[1], 56, 0, 4);
	put(recs[1], 68, 0, 4);
	rec_len[1] = len;

	/* 2: locations and lengths pointing past the record */
	len = FIXED;
	put(recs[2], 21, 0xffffffffu, 4);
	put(recs[2], 52, 200u << 16 | (FIXED - 2), 4);
	put(recs[2], 68, 0xffff0000u | 0xfff0, 4);
	memset(recs[2] + 60, 'z', 8);
	rec_len[2] = len;

	/* 3: shorter than the fixed part */
	memcpy(recs[3], recs[0], sizeof(recs[3]));
	rec_len[3] = 30;
}

static bool lookup(void *priv, const char *name, uint64_t addr,
		   uint64_t *start, uint64_t *size)
{
	(void)priv;
	if (name ? strcmp(name, "main") : addr < 0x1000 || addr >= 0x2000)
		return false;
	*start = 0x1000;
	*size = 0x1000;
	return true;
}

static void check_error(const char *text, const struct dp_filter_error *e)
{
	if (e->err <= 0)
		abort();
	if (e->has_code &&
	    (e->code <= DP_FERR_NONE || e->code > DP_FERR_NO_FILTER ||
	     e->pos < 0 || (size_t)e->pos > strlen(text) + 2))
		abort();
	dp_filter_error_print(text, e, sink);
	dp_filter_error_log_print(text, e, sink);
}

static int sym_lookup(void *priv, uint64_t addr, const char **name,
		      uint64_t *off, uint64_t *size)
{
	(void)priv;
	if (addr < 0x1000 || addr >= 0x2000)
		return -1;
	*name = "main";
	*off = addr - 0x1000;
	*size = 0x1000;
	return 0;
}

/* A trigger with variables the fuzzed ones may refer to. */
static struct dp_hist *base;

static struct dp_hist *env_each(void *priv, size_t i)
{
	(void)priv;
	return i == 0 ? base : NULL;
}

static void env_snapshot(void *priv)
{
	(void)priv;
}

/* snapshot() actions are taken (there is a snapshot buffer) */
static const struct dp_hist_env env = { NULL, env_each, NULL, NULL, NULL,
					env_snapshot };

/* @text as a hist trigger: parsed, fed every record, printed. */
static void run_hist(const char *text)
{
	/* a user stack for common_stacktrace keys: frames in and out of
	 * main, one of them 0 (where a stack ends) */
	static const uint64_t stack[] = { 0x1010, 0x3000, 0x1fff, 0, 0x1004 };
	static const struct dp_rec_meta meta = { .pid = 7, .comm = "bash",
						 .stack = stack, .nstack = 5 };
	struct dp_symbolizer sym = { sym_lookup, NULL };
	struct dp_hist_error e;
	struct dp_hist *h = NULL;
	char *t = NULL;
	int ret;

	if (strncmp(text, "hist", 4) && asprintf(&t, "hist:%s", text) < 0)
		return;
	if (!base && dp_hist_new_in(&env, &ev, "hist:keys=a:ts0=common_"
				    "timestamp.usecs,v=u64,c=common_cpu", false,
				    &base, &e))
		abort();
	ret = dp_hist_new_in(&env, &ev, t ? t : text, false, &h, &e);
	if (ret) {
		if (h || ret > 0 || (e.msg && e.pos > strlen(t ? t : text)))
			abort();
		dp_hist_error_print(&ev, t ? t : text, ret, &e, sink);
	} else {
		for (int round = 0; round < 3; round++)
			for (unsigned r = 0; r < NREC; r++) {
				dp_hist_add(base, recs[r], rec_len[r], &meta,
					    &sym);
				dp_hist_add(h, recs[r], rec_len[r], &meta, &sym);
			}
		dp_hist_print_trigger(h, sink);
		dp_hist_print(h, 0, sink);
		dp_hist_clear(h);
		dp_hist_print(h, 1, sink);
		dp_hist_free(h);
	}
	free(t);
}

static void run_records(const struct dp_filter *f)
{
	static const struct dp_rec_meta metas[] = {
		{ .cpu = 0, .pid = 1, .tgid = 1, .comm = "bash" },
		{ .cpu = 1, .pid = 2, .tgid = 1, .comm = "averylongcommandname" },
		{ .cpu = -1, .pid = 3, .tgid = 3, .comm = NULL },
	};
	unsigned r, m;

	for (r = 0; r < NREC; r++)
		for (m = 0; m < sizeof(metas) / sizeof(metas[0]); m++)
			dp_filter_match(f, &ev, recs[r], rec_len[r], &metas[m]);
	dp_filter_match(f, &ev, recs[0], rec_len[0], NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dp_event wev = ev;
	struct dp_filter_error e;
	struct dp_filter *f;
	char *text;
	int ret;

	if (!sink) {
		sink = fopen("/dev/null", "w");
		if (!sink)
			abort();
		build_records();
		dp_filter_set_func_lookup(lookup, NULL);
	}
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	f = dp_filter_compile(&ev, text, &e);
	if (f) {
		if (e.err)
			abort();
		run_records(f);
		dp_filter_free(f);
	} else {
		check_error(text, &e);
	}

	/* the `filter` file: set, show, match through the event, clear */
	ret = dp_event_set_filter(&wev, text, &e);
	if (ret != -e.err || (ret && wev.filter) ||
	    (!ret && !wev.filter && wev.filter_text))
		abort();
	dp_event_filter_print(&wev, sink);
	run_records(wev.filter);
	if (dp_event_set_filter(&wev, "0", NULL) || wev.filter ||
	    wev.filter_text)
		abort();

	run_hist(text);
	free(text);
	return 0;
}
