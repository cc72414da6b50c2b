// SPDX-License-Identifier: GPL-2.0
/*
 * The registry: multi-probe events, duplicate and conflicting definitions,
 * deletes and their narrowing, ids, the error_log ring, listings and
 * format files (trace_kprobe.c,
 * trace_uprobe.c, trace_events.c).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event/event.h"

#define F "/bin/sh"

static struct dp_registry reg;

static void setup(void)
{
	dp_registry_init(&reg);
}

static void teardown(void)
{
	dp_registry_free(&reg);
}

static int apply(const char *line, enum dp_err_code *code, int *pos)
{
	struct dp_error e = { 0 };
	int ret = dp_registry_apply(&reg, line, NULL, &e);

	if (code)
		*code = e.code;
	if (pos)
		*pos = e.pos;
	dp_error_clear(&e);
	return ret;
}

static char *listing(enum dp_probe_kind kind)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	dp_registry_list(&reg, kind, f);
	fclose(f);
	return buf;
}

TestSuite(event, .init = setup, .fini = teardown);

Test(event, multi_probe_append)
{
	enum dp_err_code code;
	int pos;
	char *l;

	cr_assert_eq(apply("p:g/e " F ":0x10 x=%di:u32", NULL, NULL), 0);
	cr_assert_eq(apply("p:g/e " F ":0x20 x=%si:u32", NULL, NULL), 0);
	/* same place, other expression: appended too */
	cr_assert_eq(apply("p:g/e " F ":16 x=%dx:u32", NULL, NULL), 0);
	cr_assert_eq(apply("p:g/e " F ":0x10 x=%di:u32", &code, NULL), -EEXIST);
	cr_assert_eq(code, DP_ERR_SAME_PROBE);
	cr_assert_eq(apply("p:g/e " F ":0x30 x=%di:u64", &code, &pos), -EEXIST);
	cr_assert_eq(code, DP_ERR_DIFF_ARG_TYPE);
	cr_assert_eq(pos, 19);
	/* more arguments: the caret is at the first extra one */
	cr_assert_eq(apply("p:g/e " F ":0x30 x=%di:u32 y=%si", &code, &pos),
		     -EEXIST);
	cr_assert_eq(code, DP_ERR_DIFF_ARG_TYPE);
	cr_assert_eq(pos, 29);
	/* fewer: just past the end of the command */
	cr_assert_eq(apply("p:g/e " F ":0x30", &code, &pos), -EEXIST);
	cr_assert_eq(code, DP_ERR_DIFF_ARG_TYPE);
	cr_assert_eq(pos, 19);
	cr_assert_eq(apply("r:g/e " F ":0x30 x=%di:u32", &code, &pos), -EEXIST);
	cr_assert_eq(code, DP_ERR_DIFF_PROBE_TYPE);
	cr_assert_eq(pos, 0);
	l = listing(DP_KIND_UPROBE);
	cr_assert_str_eq(l, "p:g/e " F ":0x0000000000000010 x=%di:u32\n"
			    "p:g/e " F ":0x0000000000000020 x=%si:u32\n"
			    "p:g/e " F ":0x0000000000000010 x=%dx:u32\n");
	free(l);
	cr_assert_not_null(dp_registry_find(&reg, "g", "e"));
	cr_assert_null(reg.events->next, "one event fed by three probes");
}

Test(event, bitfield_type_is_its_container)
{
	cr_assert_eq(apply("p:g/e " F ":0x10 x=%di:u16", NULL, NULL), 0);
	cr_assert_eq(apply("p:g/e " F ":0x20 x=%di:b4@4/16", NULL, NULL), 0);
	cr_assert_eq(apply("p:g/e " F ":0x30 x=%di:x16", NULL, NULL), -EEXIST);
}

Test(event, event_exist_across_kinds)
{
	enum dp_err_code code;

	cr_assert_eq(apply("p:g/e " F ":0x10", NULL, NULL), 0);
	cr_assert_eq(apply("p:g/e work", &code, NULL), -EEXIST);
	cr_assert_eq(code, DP_ERR_EVENT_EXIST);
}

Test(event, ref_ctr_mismatch)
{
	enum dp_err_code code;

	cr_assert_eq(apply("p:g/a " F ":0x10(0x40)", NULL, NULL), 0);
	cr_assert_eq(apply("p:g/b " F ":0x10", &code, NULL), -EINVAL);
	cr_assert_eq(code, DP_ERR_REFCTR_MISMATCH);
	cr_assert_eq(reg.nlog, 0, "no error_log entry for this");
	cr_assert_eq(apply("p:g/b " F ":0x10(64)", NULL, NULL), 0);
}

Test(event, ids_lowest_free)
{
	cr_assert_eq(apply("p:g/a " F ":0x10", NULL, NULL), 0);
	cr_assert_eq(apply("p:g/b " F ":0x10", NULL, NULL), 0);
	cr_assert_eq(dp_registry_find(&reg, "g", "b")->id, DP_FIRST_EVENT_ID + 1);
	cr_assert_eq(apply("-:g/a", NULL, NULL), 0);
	cr_assert_eq(apply("p:g/c " F ":0x10", NULL, NULL), 0);
	cr_assert_eq(dp_registry_find(&reg, "g", "c")->id, DP_FIRST_EVENT_ID);
}

Test(event, deletes)
{
	enum dp_err_code code;
	char *l;

	cr_assert_eq(apply("p:g/a " F ":0x10 x=%di", NULL, NULL), 0);
	cr_assert_eq(apply("p:g/a " F ":0x20 x=%si", NULL, NULL), 0);
	cr_assert_eq(apply("p:h/a " F ":0x10", NULL, NULL), 0);
	cr_assert_eq(apply("p:h/b " F ":0x10", NULL, NULL), 0);
	cr_assert_eq(apply("-grp/a", &code, NULL), -EINVAL);
	cr_assert_eq(apply("-:", &code, NULL), -EINVAL);
	cr_assert_eq(apply(" -:g/a", NULL, NULL), -EINVAL, "a create");
	cr_assert_eq(apply("-:g.a", &code, NULL), -ENOENT);
	cr_assert_eq(code, DP_ERR_NO_SUCH_EVENT);
	/* narrowing needs the listing text of the place */
	cr_assert_eq(apply("-:g/a " F ":0x20", NULL, NULL), -ENOENT);
	cr_assert_eq(apply("-:g/a " F ":0x0000000000000020 x=%di", NULL, NULL),
		     -ENOENT);
	cr_assert_eq(apply("-:g/a " F ":0x0000000000000020 x=%si", NULL, NULL), 0);
	l = listing(DP_KIND_UPROBE);
	cr_assert_str_eq(l, "p:g/a " F ":0x0000000000000010 x=%di\n"
			    "p:h/a " F ":0x0000000000000010\n"
			    "p:h/b " F ":0x0000000000000010\n");
	free(l);
	cr_assert_eq(apply("-:a", NULL, NULL), 0, "every group");
	cr_assert_eq(apply("-:h/", NULL, NULL), 0, "every event of h");
	cr_assert_null(reg.events);
	cr_assert_eq(reg.nlog, 0, "deletes never log");
}

Test(event, busy_delete_changes_nothing)
{
	enum dp_err_code code;

	cr_assert_eq(apply("p:g/a " F ":0x10", NULL, NULL), 0);
	cr_assert_eq(apply("p:g/b " F ":0x10", NULL, NULL), 0);
	dp_registry_find(&reg, "g", "b")->enabled = true;
	cr_assert_eq(apply("-:g/", &code, NULL), -EBUSY);
	cr_assert_not_null(dp_registry_find(&reg, "g", "a"));
}

/* A probe with a sibling goes even from an enabled event; the last one
 * is busy (trace_probe_has_sibling()). */
Test(event, busy_only_for_an_enabled_events_last_probe)
{
	struct dp_event *ev;

	cr_assert_eq(apply("p:g/m " F ":0x10", NULL, NULL), 0);
	cr_assert_eq(apply("p:g/m " F ":0x20", NULL, NULL), 0);
	ev = dp_registry_find(&reg, "g", "m");
	ev->enabled = true;
	cr_assert_eq(apply("-:g/m " F ":0x0000000000000020", NULL, NULL), 0);
	cr_assert_not_null(ev->probes);
	cr_assert_null(ev->probes->next, "one probe left");
	cr_assert_eq(apply("-:g/m " F ":0x0000000000000010", NULL, NULL), -EBUSY);
	cr_assert_eq(apply("-:g/m", NULL, NULL), -EBUSY);
	cr_assert_not_null(dp_registry_find(&reg, "g", "m"));
}

Test(event, error_log_keeps_eight)
{
	char line[64];

	for (int i = 0; i < 10; i++) {
		snprintf(line, sizeof(line), "p:g/e%d " F ":0x10 %%bad%d", i, i);
		cr_assert_eq(apply(line, NULL, NULL), -EINVAL);
	}
	cr_assert_eq(reg.nlog, 8);
	cr_assert_str_eq(reg.log[0].command, "p:g/e2 " F ":0x10 %bad2");
	cr_assert_str_eq(reg.log[7].command, "p:g/e9 " F ":0x10 %bad9");
}

Test(event, line_too_long)
{
	char *line = malloc(5000);
	enum dp_err_code code;

	memset(line, 'a', 4999);
	line[4999] = '\0';
	memcpy(line, "p:g/e " F ":0x10 ", 17);
	cr_assert_eq(apply(line, &code, NULL), -EINVAL);
	cr_assert_eq(code, DP_ERR_LINE_TOO_LONG);
	free(line);
}

Test(event, format_file)
{
	const char *want =
		"name: e\n"
		"ID: 1000\n"
		"format:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
		"\n"
		"\tfield:unsigned long __probe_func;\toffset:8;\tsize:8;\tsigned:0;\n"
		"\tfield:unsigned long __probe_ret_ip;\toffset:16;\tsize:8;\tsigned:0;\n"
		"\tfield:u64 ret;\toffset:24;\tsize:8;\tsigned:0;\n"
		"\tfield:s64 sret;\toffset:32;\tsize:8;\tsigned:1;\n"
		"\tfield:s8 sa[];\toffset:40;\tsize:2;\tsigned:1;\n"
		"\tfield:__data_loc char[] s;\toffset:42;\tsize:4;\tsigned:1;\n"
		"\n"
		"print fmt: \"(%lx <- %lx) ret=0x%Lx sret=%Ld sa={%d,%d} s=\\\"%s\\\"\", "
		"REC->__probe_func, REC->__probe_ret_ip, REC->ret, REC->sret, "
		"REC->sa[0], REC->sa[1], __get_str(s)\n";
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	cr_assert_eq(apply("r:g/e " F ":0x10 ret=$retval sret=$retval:s64 "
			   "sa=+0(%sp):s8[2] s=+0(%di):string", NULL, NULL), 0);
	f = open_memstream(&buf, &len);
	dp_event_format(dp_registry_find(&reg, "g", "e"), f);
	fclose(f);
	cr_assert_str_eq(buf, want);
	free(buf);
}

Test(event, profile_lines)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	cr_assert_eq(apply("p:g/t1 " F ":0x10", NULL, NULL), 0);
	cr_assert_eq(apply("p:k1 work", NULL, NULL), 0);
	reg.events->probes->nhit = 3;
	f = open_memstream(&buf, &len);
	dp_registry_profile(&reg, DP_KIND_UPROBE, f);
	dp_registry_profile(&reg, DP_KIND_KPROBE, f);
	fclose(f);
	cr_assert_str_eq(buf, "  " F " t1                                   "
			 "                      3\n"
			 "  k1                                           "
			 "              0               0\n");
	free(buf);
}

Test(event, kretprobe_default_maxactive)
{
	char *l;

	cr_assert_eq(apply("r:k1 work", NULL, NULL), 0);
	cr_assert_eq(apply("r7:k2 work", NULL, NULL), 0);
	cr_assert_eq(apply("r:u " F ":0x10", NULL, NULL), 0);
	l = listing(DP_KIND_KPROBE);
	cr_assert(!strncmp(l, "r10:kprobes/k1 work\n", 20) ||
		  (l[1] >= '1' && l[1] <= '9' && l[2] >= '0'), "%s", l);
	cr_assert_not_null(strstr(l, "r7:kprobes/k2 work\n"));
	free(l);
	l = listing(DP_KIND_UPROBE);
	cr_assert_str_eq(l, "r:uprobes/u " F ":0x0000000000000010\n");
	free(l);
}

/*
 * t: an application tracepoint: its record is the common fields and its
 * own, with no place, and it prints its fields alone, as kernel
 * tracepoints do.
 */
Test(event, tracepoint_format)
{
	const char *want =
		"name: request\n"
		"ID: 1000\n"
		"format:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
		"\n"
		"\tfield:s32 id;\toffset:8;\tsize:4;\tsigned:1;\n"
		"\tfield:__data_loc char[] path;\toffset:12;\tsize:4;\tsigned:1;\n"
		"\n"
		"print fmt: \"id=%d path=\\\"%s\\\"\", REC->id, __get_str(path)\n";
	const struct dp_event *ev;
	char *buf = NULL, *l;
	size_t len = 0;
	FILE *f;

	cr_assert_eq(apply("t:app/request app:request id=$arg1:s32 "
			   "path=+0($arg2):string", NULL, NULL), 0);
	ev = dp_registry_find(&reg, "app", "request");
	cr_assert_not_null(ev);
	cr_assert_eq(ev->kind, DP_KIND_TRACEPOINT);
	cr_assert_eq(ev->fixed_size, 16);
	f = open_memstream(&buf, &len);
	dp_event_format(ev, f);
	fclose(f);
	cr_assert_str_eq(buf, want);
	free(buf);
	/* canonical lines, in no kprobe/uprobe listing */
	l = dp_probe_canonical(&ev->probes->def);
	cr_assert_str_eq(l, "t:app/request app:request id=$arg1:s32 "
			 "path=+0($arg2):string");
	free(l);
	l = listing(DP_KIND_UPROBE);
	cr_assert_str_eq(l, "");
	free(l);
}

/* tp_pid() fields: "pid_t" in t: lines (an s32 the format calls pid_t,
 * as the kernel's sched events do), a bad type elsewhere */
Test(event, tracepoint_pid_t)
{
	const struct dp_event *ev;
	enum dp_err_code code;
	char *buf = NULL, *l;
	size_t len = 0;
	int pos;
	FILE *f;

	cr_assert_eq(apply("t:app/wake app:wake pid=$arg1:pid_t "
			   "prio=$arg2:s32", NULL, NULL), 0);
	ev = dp_registry_find(&reg, "app", "wake");
	cr_assert_not_null(ev);
	f = open_memstream(&buf, &len);
	dp_event_format(ev, f);
	fclose(f);
	cr_assert(strstr(buf, "\tfield:pid_t pid;\toffset:8;\tsize:4;"
			 "\tsigned:1;\n\tfield:s32 prio;"), "%s", buf);
	cr_assert(strstr(buf, "print fmt: \"pid=%d prio=%d\""), "%s", buf);
	free(buf);
	l = dp_probe_canonical(&ev->probes->def);
	cr_assert_str_eq(l, "t:app/wake app:wake pid=$arg1:pid_t "
			 "prio=$arg2:s32");
	free(l);
	cr_assert_eq(apply("p:k do_sys_open pid=%di:pid_t", &code, &pos),
		     -EINVAL);
	cr_assert_eq(code, DP_ERR_BAD_TYPE);
}

Test(event, tracepoint_names)
{
	enum dp_err_code code;
	int pos;

	/* the default group and event name */
	cr_assert_eq(apply("t request", NULL, NULL), 0);
	cr_assert_not_null(dp_registry_find(&reg, "tracepoints", "request"));
	/* the caret on the first character the kernel refuses */
	cr_assert_eq(apply("t:g/e app:bad!name", &code, &pos), -EINVAL);
	cr_assert_eq(code, DP_ERR_BAD_TP_NAME);
	cr_assert_eq(pos, 13);
	cr_assert_eq(apply("t:g/e a.b:name", &code, &pos), -EINVAL);
	cr_assert_eq(code, DP_ERR_BAD_TP_NAME);
	cr_assert_eq(pos, 6);
	cr_assert_eq(apply("t5:g/e app:x", &code, NULL), -EINVAL);
	cr_assert_eq(code, DP_ERR_BAD_MAXACT_TYPE);
	/* $retval belongs to return probes */
	cr_assert_eq(apply("t:g/f app:x v=$retval", &code, NULL), -EINVAL);
	cr_assert_eq(code, DP_ERR_RETVAL_ON_PROBE);
}
