// SPDX-License-Identifier: GPL-2.0
/*
 * The definition language: every grammar element, limit and error, as
 * table rows of (line, expected canonical line | expected error, errno,
 * caret column).  Uprobe rows use /bin/sh as the file (it exists on every
 * Debian machine); offsets are not checked here (no resolver).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "event/event.h"
#include "lang/lang.h"

struct row {
	const char *line;
	const char *canon;	/* NULL: rejected */
	enum dp_err_code code;
	int err;
	int pos;
};

#define OK(l, c) { l, c, 0, 0, 0 }
#define BAD(l, code, e, p) { l, NULL, DP_ERR_##code, e, p }
#define F "/bin/sh"
#define P "p:g/e " F ":0x10 "	/* arguments start at column 19 */

static const struct row rows[] = {
	/* names, groups and auto names (traceprobe_parse_event_name()) */
	OK("p " F ":0x10", "p:uprobes/p_sh_0x10 " F ":0x0000000000000010"),
	OK("r " F ":16", "r:uprobes/p_sh_0x10 " F ":0x0000000000000010"),
	OK("p:grp.ev " F ":010", "p:grp/ev " F ":0x0000000000000008"),
	OK("p:grp/ " F ":0x10", "p:grp/p_sh_0x10 " F ":0x0000000000000010"),
	OK("p:e " F ":0x10", "p:uprobes/e " F ":0x0000000000000010"),
	OK("p:-g_1/_e1 " F ":0x10", "p:-g_1/_e1 " F ":0x0000000000000010"),
	OK("p " F ":0x10%return", "r:uprobes/p_sh_0x10 " F ":0x0000000000000010"),
	OK("p:g/e " F ":0x10%return(0x20)",
	   "r:g/e " F ":0x0000000000000010(0x20)"),
	OK("r10:g/e " F ":0x10", "r10:g/e " F ":0x0000000000000010"),
	BAD("p10:g/e " F ":0x10", BAD_MAXACT_TYPE, EINVAL, 1),
	BAD("p:/e " F ":0x10", NO_GROUP_NAME, EINVAL, 2),
	BAD("p: " F ":0x10", NO_EVENT_NAME, EINVAL, 2),
	BAD("p:1g/e " F ":0x10", BAD_GROUP_NAME, EINVAL, 2),
	BAD("p:g.r/e " F ":0x10", BAD_GROUP_NAME, EINVAL, 2),
	BAD("p:g/1e " F ":0x10", BAD_EVENT_NAME, EINVAL, 4),
	BAD("p:g/e-2 " F ":0x10", BAD_EVENT_NAME, EINVAL, 4),
	BAD("p:g/e " F ":0x1g", BAD_UPROBE_OFFS, EINVAL, 14),
	BAD("p:g/e " F ":0x10%ret", BAD_ADDR_SUFFIX, EINVAL, 18),
	BAD("p:g/e " F ":0x10(0x20", REFCNT_OPEN_BRACE, EINVAL, 23),
	BAD("p:g/e " F ":0x10(0x20)x", BAD_REFCNT_SUFFIX, EINVAL, 24),
	BAD("p:g/e " F ":0x10(zz)", BAD_REFCNT, EINVAL, 19),
	BAD("p:g/e " F ":0x10(0x20)%return", BAD_REFCNT_SUFFIX, EINVAL, 24),
	BAD("p:g/e /nonexistent/x:0x10", FILE_NOT_FOUND, ENOENT, 6),
	BAD("p:g/e /tmp:0x10", NO_REGULAR_FILE, EINVAL, 6),
	BAD("x:g/e " F ":0x10", NOT_PROBE, EINVAL, 0),
	BAD("p:g/e", NOT_PROBE, EINVAL, 0),
	BAD("p:g/e sh:0x10", BAD_PLACE, EINVAL, 6),
	/* fetch sources (parse_probe_arg()) */
	OK(P "%di %r15 %orig_ax %flags", "p:g/e " F ":0x0000000000000010 "
	   "arg1=%di arg2=%r15 arg3=%orig_ax arg4=%flags"),
	OK(P "a=@0x404028 b=@+0x4034:u32 c=$stack d=$stack007 e=$comm f=$COMM",
	   "p:g/e " F ":0x0000000000000010 a=@0x404028 b=@+0x4034:u32 "
	   "c=$stack d=$stack007 e=$comm f=$COMM"),
	OK(P "i=\\123 j=\\-5:s8 k=\\+16 s=\\\"hi\\\"",
	   "p:g/e " F ":0x0000000000000010 i=\\123 j=\\-5:s8 k=\\+16 s=\\\"hi\\\""),
	BAD(P "%eax", BAD_REG_NAME, EINVAL, 19),
	BAD(P "x=%rax", BAD_REG_NAME, EINVAL, 21),
	BAD(P "$retval", RETVAL_ON_PROBE, EINVAL, 19),
	OK("r:g/e " F ":0x10 $retvalXYZ",
	   "r:g/e " F ":0x0000000000000010 arg1=$retvalXYZ"),
	BAD(P "$stack0x", BAD_VAR, EINVAL, 19),
	BAD(P "$foo", BAD_VAR, EINVAL, 19),
	BAD(P "$arg1", NOFENTRY_ARGS, EINVAL, 19),
	BAD(P "$arg*", BAD_VAR, EINVAL, 19),
	BAD(P "@sym", SYM_ON_UPROBE, EINVAL, 19),
	BAD(P "@0xzz", BAD_MEM_ADDR, EINVAL, 19),
	BAD(P "@+zz", BAD_FILE_OFFS, EINVAL, 19),
	BAD(P "\\abc", BAD_IMM, EINVAL, 20),
	BAD(P "\\99999999999999999999", BAD_IMM, ERANGE, 20),
	BAD(P "\\\"abc", IMMSTR_NO_CLOSE, EINVAL, 24),
	BAD(P "\\\"", IMMSTR_NO_CLOSE, EINVAL, 21),
	BAD(P "*x", BAD_FETCH_ARG, EINVAL, 19),
	BAD(P "a=(%di)", NOSUP_BTFARG, EOPNOTSUPP, 21),
	BAD(P "a=-+1(%di)", BAD_DEREF_OFFS, EINVAL, 21),
	OK(P "a=+-1(%di)", "p:g/e " F ":0x0000000000000010 a=+-1(%di)"),
	BAD("p:g/e " F ":", BAD_PLACE, EINVAL, 6),
	BAD("p:g/e " F, BAD_PLACE, EINVAL, 6),
	BAD("p:g/e " F ":zz%bad", BAD_ADDR_SUFFIX, EINVAL, 16),
	BAD("p:g/e " F ":(0x30)", BAD_PLACE, EINVAL, 6),
	OK("p:g/e " F ":main+4", "p:g/e " F ":main+4"),
	BAD(P "foo", NOSUP_BTFARG, EINVAL, 19),
	/* dereference (parse_probe_arg()), with the kernel's caret quirks */
	OK(P "+0(+8(%di)):u32 -8(%sp) +u4(%si)", "p:g/e " F
	   ":0x0000000000000010 arg1=+0(+8(%di)):u32 arg2=-8(%sp) arg3=+u4(%si)"),
	BAD(P "+0%di", DEREF_NEED_BRACE, EINVAL, 19),
	BAD(P "+zz(%di)", BAD_DEREF_OFFS, EINVAL, 19),
	BAD(P "+0(%di", DEREF_OPEN_BRACE, EINVAL, 25),
	BAD(P "+0($comm)", COMM_CANT_DEREF, EINVAL, 22),
	BAD(P "x=+0(%foo)", BAD_REG_NAME, EINVAL, 24),
	BAD(P "y=+u8(%foo)", BAD_REG_NAME, EINVAL, 24),
	BAD(P "x=+0(%di):b0@0/32", BAD_BITFIELD, EINVAL, 32),
	BAD(P "+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(%ax)))))))))))))))",
	    TOO_MANY_OPS, EINVAL, 22),
	/* types (probe_fetch_types) */
	BAD(P "%di:u128", BAD_TYPE, EINVAL, 23),
	BAD(P "%di:symbol", BAD_TYPE, EINVAL, 23),
	BAD(P "%di:string", BAD_STRING, EINVAL, 23),
	BAD(P "%di:x8[2]", BAD_STRING, EINVAL, 23),
	BAD(P "$comm:u32", NEED_STRING_TYPE, EINVAL, 25),
	BAD(P "$comm:string[2]", NEED_STRING_TYPE, EINVAL, 25),
	BAD(P "+0(%di):u8[0]", BAD_ARRAY_NUM, EINVAL, 30),
	BAD(P "+0(%di):u8[65]", ARRAY_TOO_BIG, EINVAL, 30),
	BAD(P "+0(%di):u8[2", ARRAY_NO_CLOSE, EINVAL, 31),
	BAD(P "+0(%di):u8[2]x", BAD_ARRAY_SUFFIX, EINVAL, 32),
	BAD(P "%di:b3@30/32", BAD_BITFIELD, EINVAL, 23),
	BAD(P "%di:b4@4/16:x8", BAD_TYPE, EINVAL, 23),
	BAD(P "%di:b4@4/12", BAD_TYPE, EINVAL, 23),
	OK(P "%di:b4@4/16 +0(%di):string[2] +0(%si):char[3]", "p:g/e " F
	   ":0x0000000000000010 arg1=%di:b4@4/16 arg2=+0(%di):string[2] "
	   "arg3=+0(%si):char[3]"),
	/* argument names and lengths (traceprobe_parse_probe_arg()) */
	BAD(P "=%di", NO_ARG_NAME, EINVAL, 19),
	BAD(P "1a=%di", BAD_ARG_NAME, EINVAL, 19),
	BAD(P "common_pid=%di", USED_ARG_NAME, EINVAL, 19),
	BAD(P "arg2=%di %si", USED_ARG_NAME, EINVAL, 28),
	BAD(P "a=", NO_ARG_BODY, EINVAL, 21),
	BAD(P "abcdefghijabcdefghijabcdefghijabc=%di", ARG_NAME_TOO_LONG, EINVAL, 19),
	OK(P "abcdefghijabcdefghijabcdefghijab=%di", "p:g/e " F
	   ":0x0000000000000010 abcdefghijabcdefghijabcdefghijab=%di"),
	BAD(P "a=+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(%ax))))))))))))))):u32",
	    ARG_TOO_LONG, E2BIG, 21),
	/* kprobe places (symbol grammar) */
	OK("p:myprobe do_sys_open dfd=%ax filename=%dx flags=%cx mode=+4($stack)",
	   "p:kprobes/myprobe do_sys_open dfd=%ax filename=%dx flags=%cx "
	   "mode=+4($stack)"),
	OK("r:myretprobe do_sys_open $retval",
	   "r:kprobes/myretprobe do_sys_open arg1=$retval"),
	OK("p vfs_read+16", "p:kprobes/p_vfs_read_16 vfs_read+16"),
	OK("r100 libc.so.6:malloc", "r100:kprobes/r_libc_so_6_malloc_0 libc.so.6:malloc"),
	OK("p work%return $arg1", "r:kprobes/r_work_0 work arg1=$arg1"),
	OK("p work $arg1 $arg7 @counter+8 sym=%di:symbol",
	   "p:kprobes/p_work_0 work arg1=$arg1 arg2=$arg7 arg3=@counter+8 "
	   "sym=%di:symbol"),
	OK("p 0x401146 %di", "p:kprobes/p_0x0000000000401146 0x0000000000401146 arg1=%di"),
	OK("p /usr/lib/x86_64-linux-gnu/libc.so.6:malloc",
	   "p:kprobes/p_libc_so_6_malloc_0 /usr/lib/x86_64-linux-gnu/libc.so.6:malloc"),
	BAD("p10:g/e work", BAD_MAXACT_TYPE, EINVAL, 1),
	BAD("r0:g/e work", BAD_MAXACT, EINVAL, 1),
	BAD("r4097:g/e work", MAXACT_TOO_BIG, EINVAL, 1),
	BAD("r work+4", BAD_RETPROBE, EINVAL, 2),
	BAD("p work-4", BAD_PROBE_ADDR, EINVAL, 2),
	BAD("p work%ret", BAD_ADDR_SUFFIX, EINVAL, 6),
	BAD("p work+8 $arg1", NOFENTRY_ARGS, EINVAL, 9),
	BAD("p work @+0x10", FILE_ON_KPROBE, EINVAL, 7),
	BAD("p work $stack2049", BAD_STACK_NUM, EINVAL, 7),
	BAD("p work $arg0", BAD_ARG_NUM, EINVAL, 7),
	BAD("p work +0(%di):symstr[2]", BAD_STRING, EINVAL, 18),
	BAD("p work \\1:symstr", BAD_SYMSTRING, EINVAL, 10),
	/* fprobes (__trace_fprobe_create()) */
	OK("f vfs_read", "f:fprobes/vfs_read__entry vfs_read"),
	OK("f vfs_read%return", "f:fprobes/vfs_read__exit vfs_read%return"),
	OK("f vfs_read $retval", "f:fprobes/vfs_read__exit vfs_read%return "
	   "arg1=$retval"),
	OK("f:g/e libc.so.6:malloc $arg1",
	   "f:g/e libc.so.6:malloc arg1=$arg1"),
	OK("f8 work%return $arg2", "f8:fprobes/work__exit work%return "
	   "arg1=$arg2"),
	BAD("f100 work", BAD_MAXACT_TYPE, EINVAL, 1),
	BAD("f1a1 work%return", BAD_MAXACT, EINVAL, 1),
	BAD("f5000 work%return", MAXACT_TOO_BIG, EINVAL, 1),
	BAD("f work%ret", BAD_ADDR_SUFFIX, EINVAL, 6),
	BAD("f work+10", BAD_PROBE_ADDR, ENOENT, 2),
	BAD("f work %ax", BAD_VAR, EINVAL, 7),
	BAD("f:/e work", NO_GROUP_NAME, EINVAL, 2),
	/* tracepoint probes */
	OK("t sched_switch", "t:tracepoints/sched_switch sched_switch"),
	OK("t:g/e myapp:open_file $arg1", "t:g/e myapp:open_file arg1=$arg1"),
	BAD("t100 kfree", BAD_MAXACT_TYPE, EINVAL, 1),
	BAD("t kfree%return", BAD_ADDR_SUFFIX, EINVAL, 7),
	BAD("t kfree $retval", RETVAL_ON_PROBE, EINVAL, 8),
	BAD("t kfree %di", BAD_VAR, EINVAL, 8),
	BAD("t kfr-ee", BAD_TP_NAME, EINVAL, 5),
	OK("t 9p_client", "t:tracepoints/_9p_client 9p_client"),
};

static void check_row(const struct row *r)
{
	struct dp_probe_def def;
	struct dp_error e = { 0 };
	int ret = dp_parse_probe(r->line, &def, &e);

	if (r->canon) {
		char *c = NULL;

		cr_expect_eq(ret, 0, "%s: rejected: %s (pos %d)", r->line,
			     dp_err_message(e.code), e.pos);
		if (!ret)
			c = dp_probe_canonical(&def);
		if (c)
			cr_expect_str_eq(c, r->canon, "%s", r->line);
		free(c);
		dp_probe_def_free(&def);
	} else {
		cr_expect_eq(ret, -r->err, "%s: ret %d, want %d (%s)", r->line,
			     ret, -r->err, dp_err_message(e.code));
		cr_expect_eq(e.code, r->code, "%s: got '%s', want '%s'", r->line,
			     dp_err_message(e.code), dp_err_message(r->code));
		cr_expect_eq(e.pos, r->pos, "%s: caret %d, want %d", r->line,
			     e.pos, r->pos);
	}
	dp_error_clear(&e);
}

/* One test over the whole table, so every failing row is reported. */
Test(lang, table)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		check_row(&rows[i]);
}

Test(lang, too_many_args)
{
	char line[4096] = P;
	struct dp_probe_def def;
	struct dp_error e = { 0 };

	for (int i = 0; i < 129; i++)
		strcat(line, "%ax ");
	cr_assert_eq(dp_parse_probe(line, &def, &e), -E2BIG);
	cr_assert_eq(e.code, DP_ERR_TOO_MANY_ARGS);
	cr_assert_eq(e.pos, 19);
	dp_error_clear(&e);
	line[strlen(line) - 4] = '\0';	/* 128 is the limit */
	cr_assert_eq(dp_parse_probe(line, &def, &e), 0);
	cr_assert_eq(def.nargs, 128);
	cr_assert_str_eq(def.args[127].name, "arg128");
	dp_probe_def_free(&def);
}

Test(lang, event_too_big)
{
	char line[1024] = P;
	struct dp_probe_def def;
	struct dp_error e = { 0 };

	for (int i = 0; i < 6; i++)
		sprintf(line + strlen(line), "a%d=+0(%%di):u64[64] ", i);
	cr_assert_eq(dp_parse_probe(line, &def, &e), 0, "3072 bytes fit");
	cr_assert_eq(def.args_size, 3072);
	dp_probe_def_free(&def);
	strcat(line, "x=%di:u8");
	cr_assert_eq(dp_parse_probe(line, &def, &e), -E2BIG);
	cr_assert_eq(e.code, DP_ERR_EVENT_TOO_BIG);
	cr_assert_eq(e.pos, (int)strlen(line) - 6);
	dp_error_clear(&e);
}

Test(lang, comments_and_blank)
{
	struct dp_probe_def def;
	struct dp_error e = { 0 };

	cr_assert_eq(dp_parse_probe("   ", &def, &e), -ENODATA);
	cr_assert_eq(dp_parse_probe("# only a comment", &def, &e), -ENODATA);
	cr_assert_eq(dp_parse_probe("p " F ":0x10 %di # why", &def, &e), 0);
	cr_assert_eq(def.nargs, 1);
	dp_probe_def_free(&def);
}

Test(lang, auto_name_from_basename)
{
	char dir[] = "/tmp/dprobe-test-XXXXXX", path[128], line[160];
	struct dp_probe_def def;
	FILE *f;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/my-prog.v2", dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fclose(f);
	snprintf(line, sizeof(line), "p %s:0x1146", path);
	cr_assert_eq(dp_parse_probe(line, &def, NULL), 0);
	cr_assert_str_eq(def.event, "p_my_0x1146");
	cr_assert_str_eq(def.group, "uprobes");
	dp_probe_def_free(&def);
	unlink(path);
	rmdir(dir);
}
