// SPDX-License-Identifier: GPL-2.0
/*
 * Synthetic event definitions (lang/synth.h) and their events in the
 * registry: the kernel's field types, sizes and slots, listings, format
 * text, and its "synthetic_events" errors with their carets.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event/event.h"
#include "event/synth.h"
#include "lang/synth.h"

static char *format_of(const struct dp_event *ev)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	dp_event_format(ev, f);
	fclose(f);
	return buf;
}

Test(synth, fields_and_listing)
{
	struct dp_synth_def d;
	char *l;

	cr_assert_eq(dp_parse_synth("s:synthetic/lat u64 lat; pid_t pid;",
				    true, &d, NULL), 0);
	cr_assert_str_eq(d.name, "lat");
	cr_assert_eq(d.nfields, 2);
	cr_assert_eq(d.fields[1].offset, 8);
	cr_assert_eq(d.fields[1].size, 4);
	cr_assert(d.fields[1].is_signed);
	l = dp_synth_listing(&d);
	cr_assert_str_eq(l, "lat\tu64 lat; pid_t pid");
	free(l);
	dp_synth_def_free(&d);

	/* the old form without ';', unsigned types, strings, stacks */
	cr_assert_eq(dp_parse_synth("w unsigned int x char comm[16] char s[] "
				    "unsigned long st[]", false, &d, NULL), 0);
	cr_assert_eq(d.nfields, 4);
	cr_assert_str_eq(d.fields[0].type, "unsigned int");
	cr_assert(!d.fields[0].is_signed);
	cr_assert_str_eq(d.fields[1].type, "char[16]");
	cr_assert_eq(d.fields[2].offset, 8 + 256);
	cr_assert_str_eq(d.fields[2].type, "__data_loc char[]");
	cr_assert(d.fields[3].is_stack);
	l = dp_synth_listing(&d);
	cr_assert_str_eq(l, "w\tunsigned int x; char[16] comm; char[] s; "
			 "unsigned long[] st");
	free(l);
	dp_synth_def_free(&d);
}

static void bad(const char *line, bool dyn, enum dp_err_code code, int pos)
{
	struct dp_synth_def d;
	struct dp_error e = { 0 };

	cr_assert_lt(dp_parse_synth(line, dyn, &d, &e), 0, "%s", line);
	cr_assert_eq(e.code, code, "%s: code %d", line, e.code);
	cr_assert_eq(e.pos, pos, "%s: caret %d", line, e.pos);
	cr_assert_str_eq(e.loc, "synthetic_events");
	dp_error_clear(&e);
}

Test(synth, errors)
{
	struct dp_synth_def d;

	cr_assert_eq(dp_parse_synth("p:x work", true, &d, NULL), -ECANCELED);
	cr_assert_eq(dp_parse_synth("  ", false, &d, NULL), -ENODATA);
	bad("s:other/x u64 a", true, DP_ERR_SYNTH_INVALID_DYN_CMD, 0);
	bad("s:x u64", true, DP_ERR_SYNTH_INVALID_CMD, 0);
	bad("s:9x u64 a", true, DP_ERR_SYNTH_BAD_NAME, 2);
	bad("x u64 a b", false, DP_ERR_SYNTH_INVALID_FIELD, 8);
	bad("x unsigned a", false, DP_ERR_SYNTH_INCOMPLETE_TYPE, 2);
	bad("x u65 a", false, DP_ERR_SYNTH_INVALID_TYPE, 2);
	bad("x u64 a; char b[1000]", false, DP_ERR_SYNTH_INVALID_ARRAY_SPEC,
	    14);
	bad("x u64 a; u64 1b", false, DP_ERR_SYNTH_BAD_NAME, 13);
}

Test(synth, registry)
{
	struct dp_registry reg;
	struct dp_error e = { 0 };
	struct dp_event *ev;
	char *fmt;

	dp_registry_init(&reg);
	cr_assert_eq(dp_registry_apply(&reg, "s:lat u64 lat; pid_t pid;", NULL,
				       &e), 0);
	ev = dp_registry_find(&reg, "synthetic", "lat");
	cr_assert_not_null(ev);
	cr_assert_eq(ev->kind, DP_KIND_SYNTH);
	fmt = format_of(ev);
	cr_assert(strstr(fmt, "\tfield:pid_t pid;\toffset:16;\tsize:4;"
			 "\tsigned:1;\n"), "%s", fmt);
	cr_assert(strstr(fmt, "print fmt: \"lat=%llu, pid=%d\", REC->lat, "
			 "REC->pid\n"), "%s", fmt);
	free(fmt);
	/* the same name again: the kernel's EVENT_EXISTS at the name */
	cr_assert_eq(dp_registry_synth(&reg, "lat u64 x", false, &e), -EEXIST);
	cr_assert_eq(e.code, DP_ERR_SYNTH_EVENT_EXISTS);
	cr_assert_eq(e.pos, 0);
	/* busy while enabled; deleted by name, the rest not looked at */
	ev->enabled = true;
	cr_assert_eq(dp_registry_apply(&reg, "-:synthetic/lat", NULL, &e),
		     -EBUSY);
	ev->enabled = false;
	cr_assert_eq(dp_registry_apply(&reg, "-:lat u64 whatever", NULL, &e),
		     0);
	cr_assert_null(dp_registry_find(&reg, "synthetic", "lat"));
	dp_error_clear(&e);
	dp_registry_free(&reg);
}

/* A record made for a hist action, and its trace line's fields as the
 * kernel's print_synth_event() prints them. */
Test(synth, fired_record_and_its_fields)
{
	struct dp_registry reg;
	struct dp_rec_meta meta = { .pid = 77 };
	uint64_t vals[] = { 77, 1234, (uint64_t)-5, 250 };
	const struct dp_event *ev;
	char buf[256] = "";
	size_t len = 0;
	void *rec;
	FILE *f;

	dp_registry_init(&reg);
	cr_assert_eq(dp_registry_synth(&reg, "s:lat pid_t pid; u64 lat; "
				       "int delta; u8 small", true, NULL), 0);
	ev = dp_registry_find(&reg, "synthetic", "lat");
	rec = dp_synth_record(ev, vals, NULL, NULL, 4, &meta, &len);
	cr_assert_not_null(rec);
	cr_assert_eq(len, ev->fixed_size);
	cr_assert_eq(dp_rec_check(ev, rec, len), 0);
	f = fmemopen(buf, sizeof(buf), "w");
	dp_synth_print(f, ev, rec, len, NULL);
	fclose(f);
	cr_assert_str_eq(buf, "pid=77 lat=1234 delta=-5 small=250");
	free(rec);
	dp_registry_free(&reg);
}

/* String params: a char[] after the fixed part, a char[N] cut. */
Test(synth, fired_record_strings)
{
	struct dp_registry reg;
	uint64_t vals[] = { 0, 9, 0 };
	const char *strs[] = { "a long name", NULL, "truncated" };
	const struct dp_event *ev;
	char buf[256] = "";
	size_t len = 0;
	void *rec;
	FILE *f;

	dp_registry_init(&reg);
	cr_assert_eq(dp_registry_synth(&reg, "s:st char name[]; u32 n; "
				       "char c[4]", true, NULL), 0);
	ev = dp_registry_find(&reg, "synthetic", "st");
	rec = dp_synth_record(ev, vals, strs, NULL, 3, NULL, &len);
	cr_assert_not_null(rec);
	cr_assert_eq(len, ev->fixed_size + strlen(strs[0]) + 1);
	cr_assert_eq(dp_rec_check(ev, rec, len), 0);
	f = fmemopen(buf, sizeof(buf), "w");
	dp_synth_print(f, ev, rec, len, NULL);
	fclose(f);
	cr_assert_str_eq(buf, "name=a long name n=9 c=tru");
	free(rec);
	dp_registry_free(&reg);
}

static int lookup_work(void *priv, uint64_t addr, const char **sym,
		       uint64_t *off, uint64_t *size)
{
	(void)priv;
	if (addr < 0x1000 || addr >= 0x1100)
		return -1;
	*sym = "work";
	*off = addr - 0x1000;
	*size = 0x100;
	return 0;
}

/*
 * A stack field ('unsigned long[]'), as the kernel's
 * trigger-synthetic-event-stack test makes one: its format line (a
 * __data_loc, signed as synth_field_signed() finds the type with it),
 * its data the frame count then the frames (trace_stack(): 16 words at
 * most), printed "stack=STACK:" then "=> %pS" a frame, with no
 * separator after it (print_synth_event()).
 */
Test(synth, fired_record_stack)
{
	uint64_t frames[1 + 20] = { 2, 0x1010, 0x2000 }, vals[] = { 7, 0, 3 };
	const uint64_t *stacks[] = { NULL, frames, NULL };
	struct dp_symbolizer sym = { lookup_work, NULL };
	const struct dp_event *ev;
	struct dp_registry reg;
	char buf[1024] = "", *fmt;
	size_t len = 0;
	void *rec;
	FILE *f;

	dp_registry_init(&reg);
	cr_assert_eq(dp_registry_synth(&reg, "s:wake_lat pid_t pid; "
				       "unsigned long[] stack; u64 delta;",
				       true, NULL), 0);
	ev = dp_registry_find(&reg, "synthetic", "wake_lat");
	fmt = format_of(ev);
	cr_assert(strstr(fmt, "\tfield:__data_loc unsigned long[] stack;"
			 "\toffset:16;\tsize:8;\tsigned:1;\n"), "%s", fmt);
	cr_assert(strstr(fmt, "print fmt: \"pid=%d, stack=%s, delta=%llu\", "
			 "REC->pid, __get_stacktrace(stack), REC->delta\n"),
		  "%s", fmt);
	free(fmt);
	rec = dp_synth_record(ev, vals, NULL, stacks, 3, NULL, &len);
	cr_assert_eq(len, ev->fixed_size + 3 * 8);
	f = fmemopen(buf, sizeof(buf), "w");
	dp_synth_print(f, ev, rec, len, &sym);
	fclose(f);
	cr_assert_str_eq(buf, "pid=7 stack=STACK:\n=> work+0x10/0x100\n"
			 "=> 0x2000\ndelta=3");
	free(rec);
	/* 20 frames: the count and 15 of them */
	frames[0] = 20;
	for (unsigned i = 1; i <= 20; i++)
		frames[i] = 0x1000 + i;
	rec = dp_synth_record(ev, vals, NULL, stacks, 3, NULL, &len);
	cr_assert_eq(len, ev->fixed_size + 16 * 8);
	f = fmemopen(buf, sizeof(buf), "w");
	dp_synth_print(f, ev, rec, len, NULL);
	fclose(f);
	cr_assert(strstr(buf, "=> 0x100f\ndelta=3"), "%s", buf);
	cr_assert_null(strstr(buf, "0x1010"), "%s", buf);
	free(rec);
	dp_registry_free(&reg);
}
