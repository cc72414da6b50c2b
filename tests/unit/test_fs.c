// SPDX-License-Identifier: GPL-2.0
/*
 * dprobe mount's files without FUSE: paths, writes to kprobe_events /
 * uprobe_events / dynamic_events / set_event / enable / trigger, their
 * errnos and error_log, and the trace buffer (overwrite, trace_pipe's
 * consuming read, tracing_on, traceoff).  The target is taken as gone,
 * so enabling never starts a session child.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs/internal.h"

static struct dp_fs_opts opts;
static struct dp_fs fs;

/* the main buffer (the other one is the snapshot's) */
#define LIVE (fs.ring[fs.live])

static void setup(void)
{
	opts = (struct dp_fs_opts){ .mountpoint = "/nowhere", .pid = getpid() };
	dp_fs_init(&fs, &opts);
	/* nothing to attach to: enable flags change, no child is started */
	atomic_store(&fs.target_gone, true);
	fs.res.no_elf = true;	/* places are not looked up in files here */
	cr_assert_eq(dp_fs_session_start(&fs), 0);
}

static void teardown(void)
{
	dp_fs_session_end(&fs);
	dp_fs_fini(&fs);
}

static struct dp_fs_path path(const char *p)
{
	struct dp_fs_path r;

	cr_assert_eq(dp_fs_lookup(&fs, p, &r), 0, "no %s", p);
	return r;
}

static int wr(const char *p, const char *text)
{
	struct dp_fs_path r = path(p);
	int ret = dp_fs_write_file(dp_fs_of(&fs, &r), &r, text, strlen(text));

	return ret < 0 ? ret : 0;
}

/* '>': open with O_TRUNC, then the write */
static int trunc_wr(const char *p, const char *text)
{
	struct dp_fs_path r = path(p);
	int ret = dp_fs_truncate_file(dp_fs_of(&fs, &r), &r);

	return ret ? ret : wr(p, text);
}

static char *rd(const char *p)
{
	struct dp_fs_path r = path(p);
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	cr_assert_eq(dp_fs_read_file(dp_fs_of(&fs, &r), &r, f), 0);
	fclose(f);
	return buf;
}

/* error_log without the "[secs.micros] " of each entry */
static char *rd_log(void)
{
	char *log = rd("/error_log"), *q = log, *p = log;

	while (*p) {
		if (*p == '[' && (p == log || p[-1] == '\n')) {
			char *end = strstr(p, "] ");

			cr_assert_not_null(end);
			p = end + 2;
			continue;
		}
		*q++ = *p++;
	}
	*q = '\0';
	return log;
}

static void expect(const char *p, const char *want)
{
	char *got = rd(p);

	cr_expect_str_eq(got, want, "%s", p);
	free(got);
}

TestSuite(fs, .init = setup, .fini = teardown);

Test(fs, layout)
{
	struct dp_fs_path r;

	cr_expect_eq(path("/").kind, F_ROOT_DIR);
	cr_expect_eq(path("/kprobe_events").kind, F_KPROBE_EVENTS);
	cr_expect_eq(path("/events/enable").kind, F_ALL_ENABLE);
	cr_expect_eq(dp_fs_lookup(&fs, "/events/kprobes", &r), -ENOENT);
	cr_expect_eq(dp_fs_lookup(&fs, "/nosuchfile", &r), -ENOENT);
	cr_assert_eq(wr("/kprobe_events", "p:myprobe do_sys_open\n"), 0);
	cr_expect_eq(path("/events/kprobes").kind, F_GROUP_DIR);
	cr_expect_eq(path("/events/kprobes/myprobe").kind, F_EVENT_DIR);
	cr_expect_eq(path("/events/kprobes/myprobe/format").kind, F_EV_FORMAT);
	cr_expect_eq(path("/events/kprobes/myprobe/hist").kind, F_EV_HIST);
	cr_expect(!dp_fs_is_writable(F_EV_HIST));
	cr_expect_eq(dp_fs_lookup(&fs, "/events/kprobes/myprobe/snapshot", &r),
		     -ENOENT);
	expect("/events/kprobes/myprobe/id", "1000\n");
	expect("/available_events", "kprobes:myprobe\n");
}

Test(fs, definitions_by_file)
{
	cr_assert_eq(wr("/kprobe_events",
			"p:myprobe do_sys_open dfd=%di:s32\n"
			"r:myretprobe do_sys_open $retval\n"), 0);
	cr_assert_eq(wr("/uprobe_events", "p:up /bin/sh:0x10\n"), 0);
	expect("/kprobe_events",
	       "p:kprobes/myprobe do_sys_open dfd=%di:s32\n"
	       "r10:kprobes/myretprobe do_sys_open arg1=$retval\n");
	expect("/uprobe_events", "p:uprobes/up /bin/sh:0x0000000000000010\n");
	/* each file takes its own kind only */
	cr_expect_eq(wr("/kprobe_events", "p:x /bin/sh:0x10\n"), -EINVAL);
	cr_expect_eq(wr("/uprobe_events", "p:x do_sys_open\n"), -EINVAL);
	/* a delete through one file never sees the other kind */
	cr_expect_eq(wr("/kprobe_events", "-:up\n"), -ENOENT);
	cr_expect_eq(wr("/dynamic_events", "!:up\n"), 0);
	/* '>' clears its own kind */
	cr_expect_eq(dp_fs_truncate_file(&fs, &(struct dp_fs_path){ .kind = F_KPROBE_EVENTS }), 0);
	expect("/dynamic_events", "");
}

Test(fs, first_bad_line_ends_write)
{
	char *log;

	cr_expect_eq(wr("/kprobe_events",
			"p:a do_sys_open\np:b do_sys_open %foo\np:c do_sys_open\n"),
		     -EINVAL);
	expect("/kprobe_events", "p:kprobes/a do_sys_open\n");
	log = rd_log();
	cr_expect_str_eq(log, "trace_kprobe: error: Invalid register name\n"
			      "  Command: p:b do_sys_open %foo\n"
			      "                           ^\n");
	free(log);
	/* EEXIST and ENOENT leave no entry, as in the kernel */
	cr_expect_eq(wr("/kprobe_events", "p:a do_sys_open\n"), -EEXIST);
	cr_expect_eq(wr("/kprobe_events", "-:nosuch\n"), -ENOENT);
	cr_expect_eq(dp_fs_truncate_file(&fs, &(struct dp_fs_path){ .kind = F_ERROR_LOG }), 0);
	expect("/error_log", "");
}

Test(fs, error_log_keeps_eight)
{
	char line[64], *log;

	for (int i = 0; i < 10; i++) {
		snprintf(line, sizeof(line), "p:e%d do_sys_open %%bad%d\n", i, i);
		cr_expect_eq(wr("/kprobe_events", line), -EINVAL);
	}
	log = rd_log();
	cr_expect_null(strstr(log, "%bad1\n"));
	cr_expect_not_null(strstr(log, "%bad2\n"));
	cr_expect_not_null(strstr(log, "%bad9\n"));
	free(log);
}

Test(fs, busy_rules)
{
	cr_assert_eq(wr("/kprobe_events", "p:a do_sys_open\np:b vfs_read\n"), 0);
	cr_assert_eq(wr("/events/kprobes/a/enable", "1\n"), 0);
	expect("/events/kprobes/a/enable", "1\n");
	expect("/events/kprobes/enable", "X\n");
	expect("/events/enable", "X\n");
	cr_expect_eq(wr("/kprobe_events", "-:a\n"), -EBUSY);
	cr_expect_eq(dp_fs_truncate_file(&fs, &(struct dp_fs_path){ .kind = F_KPROBE_EVENTS }), -EBUSY);
	expect("/kprobe_events", "p:kprobes/a do_sys_open\np:kprobes/b vfs_read\n");
	/* only 0 and 1 */
	cr_expect_eq(wr("/events/kprobes/a/enable", "2\n"), -EINVAL);
	cr_expect_eq(wr("/events/kprobes/enable", "X\n"), -EINVAL);
	cr_expect_eq(wr("/events/kprobes/a/enable", "0x1\n"), -EINVAL);
	/* a trigger makes it busy too */
	cr_assert_eq(wr("/events/kprobes/a/enable", "0\n"), 0);
	cr_assert_eq(wr("/events/kprobes/b/trigger", "traceoff\n"), 0);
	expect("/events/kprobes/b/trigger", "traceoff:unlimited\n");
	expect("/events/kprobes/b/enable", "0*\n");
	cr_expect_eq(wr("/kprobe_events", "-:b\n"), -EBUSY);
	cr_expect_eq(wr("/events/kprobes/b/trigger", "!traceoff\n"), 0);
	cr_expect_eq(wr("/kprobe_events", "-:b\n"), 0);
	cr_expect_eq(wr("/events/kprobes/a/trigger", "stacktrace:foo\n"), -EINVAL);
}

/* instances/: mkdir and rmdir and their errors, an instance's own files
 * and its own enable, filter and tracing_on for the top level's events */
Test(fs, instances)
{
	struct dp_fs_path r;

	cr_assert_eq(wr("/kprobe_events", "p:a do_sys_open x=%di:s32\n"), 0);
	cr_assert_eq(dp_fs_inst_mkdir(&fs, "/instances/foo"), 0);
	cr_expect_eq(dp_fs_inst_mkdir(&fs, "/instances/foo"), -EEXIST);
	cr_expect_eq(dp_fs_inst_mkdir(&fs, "/instances"), -EEXIST);
	cr_expect_eq(dp_fs_inst_mkdir(&fs, "/events/x"), -EPERM);
	cr_expect_eq(dp_fs_inst_mkdir(&fs, "/instances/foo/x"), -EPERM);
	cr_expect_eq(dp_fs_inst_rmdir(&fs, "/events"), -EPERM);
	cr_expect_eq(dp_fs_inst_rmdir(&fs, "/instances"), -EPERM);
	cr_expect_eq(dp_fs_inst_rmdir(&fs, "/instances/foo/events"), -EPERM);
	cr_expect_eq(dp_fs_inst_rmdir(&fs, "/instances/foo/trace"), -ENOTDIR);
	cr_expect_eq(dp_fs_inst_rmdir(&fs, "/instances/nosuch"), -ENOENT);
	/* the top level's definitions and profiles are not there */
	cr_expect_eq(dp_fs_lookup(&fs, "/instances/foo/kprobe_events", &r), -ENOENT);
	cr_expect_eq(dp_fs_lookup(&fs, "/instances/foo/instances", &r), -ENOENT);
	cr_expect_eq(dp_fs_lookup(&fs, "/instances/foo/README", &r), -ENOENT);
	r = path("/instances/foo/events/kprobes/a/trigger");
	cr_expect_not_null(r.tr);
	cr_assert_eq(wr("/instances/foo/events/kprobes/a/enable", "1\n"), 0);
	cr_assert_eq(wr("/instances/foo/events/kprobes/a/filter", "x == 3\n"), 0);
	expect("/instances/foo/events/kprobes/a/enable", "1\n");
	expect("/instances/foo/events/kprobes/a/filter", "x == 3\n");
	expect("/instances/foo/set_event", "kprobes:a\n");
	expect("/events/kprobes/a/enable", "0\n");
	expect("/events/kprobes/a/filter", "none\n");
	expect("/set_event", "");
	/* enabled there: busy */
	cr_expect_eq(wr("/kprobe_events", "-:a\n"), -EBUSY);
	cr_assert_eq(wr("/instances/foo/tracing_on", "0\n"), 0);
	expect("/instances/foo/tracing_on", "0\n");
	expect("/tracing_on", "1\n");
	expect("/instances/foo/trace_clock", "[local]\n");
	cr_expect_eq(wr("/instances/foo/trace_clock", "global\n"), -EINVAL);
	cr_expect_eq(wr("/instances/foo/trace_clock", " local\n"), 0);
	/* an open file holds it */
	r.tr->inst_refs++;
	cr_expect_eq(dp_fs_inst_rmdir(&fs, "/instances/foo"), -EBUSY);
	r.tr->inst_refs--;
	cr_expect_eq(dp_fs_inst_rmdir(&fs, "/instances/foo"), 0);
	cr_expect_eq(dp_fs_lookup(&fs, "/instances/foo", &r), -ENOENT);
	cr_expect_eq(wr("/kprobe_events", "-:a\n"), 0);
}

Test(fs, set_event)
{
	cr_assert_eq(wr("/kprobe_events",
			"p:a do_sys_open\np:b vfs_read\np:grp/c do_filp_open\n"), 0);
	cr_expect_eq(trunc_wr("/set_event", "kprobes:*\n"), 0);
	expect("/set_event", "kprobes:b\nkprobes:a\n");
	cr_expect_eq(wr("/set_event", "grp:c !kprobes:a\n"), 0);
	expect("/set_event", "grp:c\nkprobes:b\n");
	cr_expect_eq(trunc_wr("/set_event", "a\n"), 0);
	expect("/set_event", "kprobes:a\n");
	cr_expect_eq(wr("/set_event", "kprobes:a*\n"), -EINVAL);
	cr_expect_eq(wr("/set_event", "nosuch:event\n"), -EINVAL);
	expect("/events/grp/enable", "0\n");
}

Test(fs, filters)
{
	char *log;

	cr_assert_eq(wr("/kprobe_events", "p:a do_sys_open x=%di:s32\n"), 0);
	cr_expect_eq(wr("/events/kprobes/a/filter", "x == 3\n"), 0);
	expect("/events/kprobes/a/filter", "x == 3\n");
	cr_expect_eq(wr("/events/kprobes/a/filter", "nofield == 1\n"), -EINVAL);
	log = rd_log();
	cr_expect_str_eq(log, "event filter parse error: error: Field not found\n"
			      "  Command: nofield == 1\n"
			      "                   ^\n");
	free(log);
	cr_expect_eq(wr("/events/kprobes/a/filter", "0\n"), 0);
	expect("/events/kprobes/a/filter", "none\n");
	cr_expect_eq(wr("/events/kprobes/filter", "x > 1\n"), 0);
	expect("/events/kprobes/a/filter", "x > 1\n");
}

Test(fs, buffer)
{
	char buf[64];

	dp_fs_buf_add(&fs, 1000, -1, "one\n", 4);
	dp_fs_buf_add(&fs, 1000, -1, "two\n", 4);
	cr_expect_eq(LIVE.entries, 2);
	/* trace_pipe takes whole lines and consumes them */
	cr_expect_eq(dp_fs_buf_consume(&fs, buf, 6, NULL, NULL), 4);
	cr_expect_eq(memcmp(buf, "one\n", 4), 0);
	cr_expect_eq(LIVE.entries, 1);
	cr_expect_eq(LIVE.written, 2);
	/* a line longer than the read comes in parts */
	cr_expect_eq(dp_fs_buf_consume(&fs, buf, 2, NULL, NULL), 2);
	cr_expect_eq(dp_fs_buf_consume(&fs, buf, 10, NULL, NULL), 2);
	cr_expect_eq(memcmp(buf, "o\n", 2), 0);
	/* the oldest go when it is full */
	dp_fs_buf_set_limit(&fs, 8);
	dp_fs_buf_add(&fs, 1000, -1, "aaa\n", 4);
	dp_fs_buf_add(&fs, 1000, -1, "bbb\n", 4);
	dp_fs_buf_add(&fs, 1000, -1, "ccc\n", 4);
	cr_expect_eq(LIVE.entries, 2);
	cr_expect_str_eq(LIVE.head->text[0] == 'b' ? "b" : "?", "b");
	/* tracing_on 0: nothing recorded */
	cr_assert_eq(wr("/tracing_on", "0\n"), 0);
	dp_fs_buf_add(&fs, 1000, -1, "ddd\n", 4);
	cr_expect_eq(LIVE.entries, 2);
	expect("/tracing_on", "0\n");
	cr_assert_eq(wr("/tracing_on", "1\n"), 0);
	cr_expect_eq(wr("/buffer_size_kb", "0\n"), -EINVAL);
	cr_expect_eq(wr("/buffer_size_kb", "4\n"), 0);
	expect("/buffer_size_kb", "4\n");
	cr_expect_eq(dp_fs_truncate_file(&fs, &(struct dp_fs_path){ .kind = F_TRACE }), 0);
	cr_expect_eq(LIVE.entries, 0);
	cr_expect_eq(LIVE.written, 0);
}

static bool stop_now(void *priv)
{
	(void)priv;
	return true;
}

/* A record of a kprobe event: header and __probe_ip, then @extra. */
static void hit(unsigned id, int pid)
{
	uint8_t rec[16] = { 0 };
	struct dp_rec_meta meta = { .ts_ns = 1000, .pid = pid, .tgid = pid,
				    .comm = "t" };

	memcpy(rec, &id, 2);
	memcpy(rec + 4, &pid, 4);
	dp_fs_trigger_record(&fs, id, rec, sizeof(rec), &meta);
}

Test(fs, traceoff_and_empty_pipe)
{
	char buf[16];
	unsigned id;

	cr_assert_eq(wr("/kprobe_events", "p:a do_sys_open\n"), 0);
	id = dp_registry_find(&fs.reg, "kprobes", "a")->id;
	cr_assert_eq(wr("/events/kprobes/a/trigger", "traceoff\n"), 0);
	cr_assert_eq(wr("/events/kprobes/a/enable", "1\n"), 0);
	expect("/events/kprobes/a/enable", "1*\n");
	hit(id, 7);
	/* 6.12's traceoff runs after the record: its own event is in */
	cr_expect_eq(LIVE.entries, 1);
	expect("/tracing_on", "0\n");
	hit(id, 7);
	cr_expect_eq(LIVE.entries, 1);
	/* an empty trace_pipe waits until told to stop */
	cr_expect_eq(dp_fs_truncate_file(&fs, &(struct dp_fs_path){ .kind = F_TRACE }), 0);
	cr_expect_eq(dp_fs_buf_consume(&fs, buf, sizeof(buf), stop_now, NULL),
		     -EINTR);
}

Test(fs, trigger_counts_filters_and_soft_mode)
{
	unsigned a, b;

	cr_assert_eq(wr("/kprobe_events", "p:a do_sys_open\np:b vfs_read\n"), 0);
	a = dp_registry_find(&fs.reg, "kprobes", "a")->id;
	b = dp_registry_find(&fs.reg, "kprobes", "b")->id;
	cr_assert_eq(wr("/tracing_on", "0\n"), 0);
	cr_assert_eq(wr("/events/kprobes/a/trigger", "traceon:1 if common_pid == 5\n"), 0);
	cr_assert_eq(wr("/events/kprobes/a/trigger", "enable_event:kprobes:b:1\n"), 0);
	expect("/events/kprobes/a/trigger",
	       "enable_event:kprobes:b:count=1\ntraceon:count=1 if common_pid == 5\n");
	expect("/events/kprobes/b/enable", "0*\n");
	expect("/events/kprobes/b/trigger",
	       "# Available triggers:\n# traceon traceoff snapshot stacktrace "
	       "enable_event disable_event enable_hist disable_hist hist\n");
	/* busy: in soft mode */
	cr_expect_eq(wr("/kprobe_events", "-:b\n"), -EBUSY);
	hit(a, 4);
	expect("/tracing_on", "0\n");
	expect("/events/kprobes/b/enable", "1*\n");
	hit(a, 5);
	expect("/tracing_on", "1\n");
	/* soft-disabled a: its triggers ran, its line is not there */
	cr_expect_eq(LIVE.entries, 0);
	expect("/events/kprobes/a/trigger",
	       "enable_event:kprobes:b:count=0\ntraceon:count=0 if common_pid == 5\n");
	hit(b, 9);
	cr_expect_eq(LIVE.entries, 1);
	/* the same type again: EEXIST; a removal ignores count and filter */
	cr_expect_eq(wr("/events/kprobes/a/trigger", "traceoff\n"), -EEXIST);
	cr_expect_eq(wr("/events/kprobes/a/trigger", "disable_event:kprobes:b\n"), -EEXIST);
	cr_expect_eq(wr("/events/kprobes/a/trigger", "!traceoff:count=3 if x\n"), 0);
	cr_expect_eq(wr("/events/kprobes/a/trigger", "!enable_event:kprobes:b\n"), 0);
	expect("/events/kprobes/a/trigger",
	       "# Available triggers:\n# traceon traceoff snapshot stacktrace "
	       "enable_event disable_event enable_hist disable_hist hist\n");
	/* b leaves soft mode enabled, as its soft bit said */
	expect("/events/kprobes/b/enable", "1\n");
	expect("/events/kprobes/a/enable", "0\n");
	cr_expect_eq(wr("/events/kprobes/a/trigger", "enable_event:nosuch:b\n"), -EINVAL);
	cr_expect_eq(wr("/events/kprobes/a/trigger", "traceon:bad\n"), -EINVAL);
}

/* The kernel's order: unconditional triggers before the record is made,
 * conditional ones on it. */
Test(fs, trigger_order)
{
	unsigned a;
	char *snap;

	cr_assert_eq(wr("/kprobe_events", "p:a do_sys_open\n"), 0);
	a = dp_registry_find(&fs.reg, "kprobes", "a")->id;
	cr_assert_eq(wr("/events/kprobes/a/enable", "1\n"), 0);
	/* snapshot first: each hit lands in the new main buffer */
	cr_assert_eq(wr("/events/kprobes/a/trigger", "snapshot\n"), 0);
	hit(a, 1);
	cr_expect_eq(LIVE.entries, 1);
	hit(a, 2);
	cr_expect_eq(LIVE.entries, 1);
	cr_expect(strstr(LIVE.head->text, "t-2 "));
	snap = rd("/snapshot");
	cr_expect(strstr(snap, "t-1 "));
	free(snap);
	cr_assert_eq(wr("/events/kprobes/a/trigger", "!snapshot\n"), 0);
	cr_assert_eq(wr("/snapshot", "0\n"), 0);
	cr_expect_eq(trunc_wr("/trace", ""), 0);
	/* traceon without a filter: its own event is recorded */
	cr_assert_eq(wr("/tracing_on", "0\n"), 0);
	cr_assert_eq(wr("/events/kprobes/a/trigger", "traceon\n"), 0);
	hit(a, 3);
	expect("/tracing_on", "1\n");
	cr_expect_eq(LIVE.entries, 1);
	/* with one: the record was not reserved, tracing being off */
	cr_assert_eq(wr("/events/kprobes/a/trigger", "!traceon\n"), 0);
	cr_assert_eq(wr("/events/kprobes/a/trigger", "traceon if common_pid == 4\n"), 0);
	cr_assert_eq(wr("/tracing_on", "0\n"), 0);
	hit(a, 4);
	expect("/tracing_on", "1\n");
	cr_expect_eq(LIVE.entries, 1);
	hit(a, 4);
	cr_expect_eq(LIVE.entries, 2);
}

Test(fs, snapshot_and_marker)
{
	char *s;

	s = rd("/snapshot");
	cr_expect(strstr(s, "# * Snapshot is freed *\n"));
	free(s);
	cr_assert_eq(wr("/trace_marker", "hello\n"), 0);
	cr_expect_eq(LIVE.entries, 1);
	cr_expect(strstr(LIVE.head->text, ": tracing_mark_write: hello\n"));
	cr_assert_eq(wr("/snapshot", "1\n"), 0);
	cr_expect_eq(LIVE.entries, 0);
	s = rd("/snapshot");
	cr_expect(strstr(s, "# entries-in-buffer/entries-written: 1/1"));
	cr_expect(strstr(s, "tracing_mark_write: hello\n"));
	free(s);
	cr_assert_eq(wr("/snapshot", "2\n"), 0);
	s = rd("/snapshot");
	cr_expect(strstr(s, "# * Snapshot is allocated *\n"));
	free(s);
	cr_assert_eq(wr("/snapshot", "0\n"), 0);
	cr_expect_eq(wr("/snapshot", "x\n"), -EINVAL);
	/* the print event: triggers, no enable */
	cr_assert_eq(wr("/events/ftrace/print/trigger", "traceoff if buf == \"b\"\n"), 0);
	cr_assert_eq(wr("/trace_marker", "a"), 0);
	expect("/tracing_on", "1\n");
	cr_assert_eq(wr("/trace_marker", "b"), 0);
	expect("/tracing_on", "0\n");
	cr_expect_eq(LIVE.entries, 2);
	cr_expect_eq(wr("/trace_marker", "c"), -EBADF);
	cr_assert_eq(wr("/tracing_on", "1\n"), 0);
	cr_expect_eq(wr("/trace_marker_raw", "ab"), -EINVAL);
	cr_assert_eq(wr("/trace_marker_raw", "AAAAab"), 0);
	cr_expect(strstr(LIVE.tail->text, ": # 41414141 buf: 61 62 00 00 00 00 "
			 "00 00 00 00 00 00 00 00 00 00\n"));
	expect("/events/ftrace/print/id", "5\n");
	struct dp_fs_path p;

	cr_expect_eq(dp_fs_lookup(&fs, "/events/ftrace/print/enable", &p), -ENOENT);
}

/* buffer_subbuf_size_kb: rounded up as the kernel's, 4 to 512 KiB; the
 * largest entry follows it (header_page, where a marker write is cut) */
Test(fs, subbuf_size_sets_the_largest_entry)
{
	struct dp_fs_path r = path("/trace_marker");
	char *big = malloc(9000), *s;

	cr_assert_not_null(big);
	memset(big, 'x', 9000);
	expect("/buffer_subbuf_size_kb", "4\n");
	s = rd("/events/header_page");
	cr_expect(strstr(s, "\tfield: char data;\toffset:16;\tsize:4080;"), "%s", s);
	free(s);
	cr_expect_eq(dp_fs_write_file(&fs, &r, big, 9000), 4054);
	cr_assert_eq(wr("/buffer_subbuf_size_kb", "5\n"), 0);
	expect("/buffer_subbuf_size_kb", "8\n");
	s = rd("/events/header_page");
	cr_expect(strstr(s, "\tsize:8176;"), "%s", s);
	free(s);
	cr_expect_eq(dp_fs_write_file(&fs, &r, big, 9000), 8192 - 24 - 18);
	cr_expect_eq(wr("/buffer_subbuf_size_kb", "0\n"), -EINVAL);
	cr_expect_eq(wr("/buffer_subbuf_size_kb", "513\n"), -EINVAL);
	cr_assert_eq(wr("/buffer_subbuf_size_kb", "512\n"), 0);
	expect("/buffer_subbuf_size_kb", "512\n");
	cr_expect_eq(dp_fs_write_file(&fs, &r, big, 9000), 9000);
	free(big);
}

/* tracing_cpumask: the kernel's bitmap_parse() and "%*pb" */
Test(fs, cpumask_parse_and_print)
{
	uint64_t m[DP_FS_CPUMASK_WORDS];
	char *buf = NULL;
	size_t n = 0;
	FILE *f;

	cr_expect_eq(dp_fs_cpumask_parse("3\n", 2, m, 2), 0);
	cr_expect_eq(m[0], 3);
	cr_expect_eq(dp_fs_cpumask_parse("7", 1, m, 2), -EOVERFLOW);
	cr_expect_eq(dp_fs_cpumask_parse("", 0, m, 2), 0);
	cr_expect_eq(m[0], 0);
	cr_expect_eq(dp_fs_cpumask_parse("x", 1, m, 2), -EINVAL);
	cr_expect_eq(dp_fs_cpumask_parse("1,0", 3, m, 2), -EOVERFLOW);
	cr_expect_eq(dp_fs_cpumask_parse("f,0000000f", 10, m, 36), 0);
	cr_expect_eq(m[0], 0xf0000000full);
	cr_expect_eq(dp_fs_cpumask_parse("100000000", 9, m, 64), -EOVERFLOW);
	cr_expect_eq(dp_fs_cpumask_parse(" 5 , 1 ", 7, m, 64), 0);
	cr_expect_eq(m[0], 0x500000001ull);
	f = open_memstream(&buf, &n);
	m[0] = 3;
	dp_fs_cpumask_print(f, m, 2);
	m[0] = 0xf0000000full;
	dp_fs_cpumask_print(f, m, 36);
	m[0] = 1;
	dp_fs_cpumask_print(f, m, 64);
	fclose(f);
	cr_expect_str_eq(buf, "3\nf,0000000f\n00000000,00000001\n");
	free(buf);
}

/* a line of a CPU tracing_cpumask leaves out is not recorded */
Test(fs, cpumask_leaves_lines_out)
{
	char *all = rd("/tracing_cpumask"), *none;

	cr_assert_eq(wr("/tracing_cpumask", "0\n"), 0);
	none = rd("/tracing_cpumask");
	cr_expect_eq(strspn(none, "0,"), strlen(none) - 1, "%s", none);
	free(none);
	dp_fs_buf_add(&fs, 1000, 0, "cpu0\n", 5);
	dp_fs_buf_add(&fs, 1000, -1, "mine\n", 5);
	cr_expect_eq(LIVE.entries, 1);
	cr_assert_eq(wr("/tracing_cpumask", all), 0);
	dp_fs_buf_add(&fs, 1000, 0, "cpu0\n", 5);
	cr_expect_eq(LIVE.entries, 2);
	free(all);
}

Test(fs, deleting_an_enabled_event_clears_the_buffer)
{
	cr_assert_eq(wr("/kprobe_events", "p:a do_sys_open\np:b vfs_read\n"), 0);
	cr_assert_eq(wr("/events/kprobes/a/enable", "1\n"), 0);
	cr_assert_eq(wr("/events/kprobes/a/enable", "0\n"), 0);
	dp_fs_buf_add(&fs, 1001, -1, "line\n", 5);
	cr_expect_eq(wr("/kprobe_events", "-:b\n"), 0);
	cr_expect_eq(LIVE.entries, 1);	/* b was never enabled */
	cr_expect_eq(wr("/kprobe_events", "-:a\n"), 0);
	cr_expect_eq(LIVE.entries, 0);
}
