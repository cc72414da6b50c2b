// SPDX-License-Identifier: GPL-2.0
/*
 * Event probes (e:): the kernel's eprobe grammar and errors, with the
 * positions of 6.12's eprobes_syntax_errors.tc and more; the events they
 * make (format, listing, deletes); the records they make from the
 * attached event's records, in dp_event_deliver(); and kernel
 * tracepoints described from a `format` file (event/kformat.h).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "event/deliver.h"
#include "event/event.h"
#include "event/kformat.h"
#include "output/output.h"
#include "capture.h"

/* The kernel's sys_enter_openat format (x86-64, 6.x). */
static const char openat_format[] =
	"name: sys_enter_openat\n"
	"ID: 700\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
	"\tfield:int dfd;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:int flags;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:umode_t mode;\toffset:40;\tsize:8;\tsigned:0;\n"
	"\n"
	"print fmt: \"dfd: 0x%08lx, filename: 0x%08lx, flags: 0x%08lx, "
	"mode: 0x%08lx\", ((unsigned long)(REC->dfd)), "
	"((unsigned long)(REC->filename)), ((unsigned long)(REC->flags)), "
	"((unsigned long)(REC->mode))\n";

static struct dp_registry reg;

static void setup(void)
{
	dp_registry_init(&reg);
	cr_assert_not_null(dp_registry_kernel_tp(&reg, "syscalls",
						 "sys_enter_openat",
						 openat_format));
	cr_assert_eq(dp_registry_apply(&reg, "p:kp/k work a=%di:s32 "
				       "s=+0(%si):string c=%dx:u8", NULL, NULL),
		     0);
}

static void teardown(void)
{
	dp_registry_free(&reg);
}

TestSuite(eprobe, .init = setup, .fini = teardown);

struct row {
	const char *line;
	const char *listing;	/* NULL: rejected */
	enum dp_err_code code;
	int err;
	int pos;
};

#define OK(l, c) { l, c, 0, 0, 0 }
#define BAD(l, code, e, p) { l, NULL, DP_ERR_##code, e, p }
#define SYS "syscalls/sys_enter_openat"

static const struct row rows[] = {
	/* 6.12's eprobes_syntax_errors.tc, caret for caret */
	BAD("e a.", NO_EVENT_INFO, EINVAL, 2),
	BAD("e .b", NO_EVENT_INFO, EINVAL, 2),
	BAD("e a.b", BAD_ATTACH_EVENT, ENODEV, 2),
	BAD("e " SYS " foo", NOSUP_BTFARG, EINVAL, 28),
	BAD("e:/bar " SYS, NO_GROUP_NAME, EINVAL, 2),
	BAD("e:12345678901234567890123456789012345678901234567890123456789"
	    "012345/bar " SYS, GROUP_TOO_LONG, EINVAL, 2),
	BAD("e:foo.1/bar " SYS, BAD_GROUP_NAME, EINVAL, 2),
	BAD("e: " SYS, NO_EVENT_NAME, EINVAL, 2),
	BAD("e:foo/1234567890123456789012345678901234567890123456789012345"
	    "6789012345 " SYS, EVENT_TOO_LONG, EINVAL, 6),
	BAD("e:foo/bar.1 " SYS, BAD_EVENT_NAME, EINVAL, 6),
	BAD("e:foo/bar " SYS " arg=dfd", NOSUP_BTFARG, EINVAL, 40),
	BAD("e:foo/bar " SYS " arg=$foo", BAD_VAR, EINVAL, 40),
	BAD("e:foo/bar " SYS " if", NO_EP_FILTER, EINVAL, 39),
	/* no registers, no common fields (trace_get_fields()) */
	BAD("e:foo/bar " SYS " a=%di", BAD_VAR, EINVAL, 38),
	BAD("e:foo/bar " SYS " a=$common_pid", BAD_VAR, EINVAL, 38),
	BAD("e:foo/bar " SYS " a=$retval", BAD_VAR, EINVAL, 38),
	BAD("e:foo/bar " SYS " if nofield == 1", BAD_EP_FILTER, EINVAL, 0),
	BAD("e:foo/bar kp.nothere", BAD_ATTACH_EVENT, ENODEV, 10),
	/* the same name twice: never appended */
	BAD("e:kp/k kp.k", EVENT_EXIST, EEXIST, 0),
	BAD("e:syscalls/sys_enter_openat " SYS, EVENT_EXIST, EEXIST, 0),
	OK("e " SYS, "e:eprobes/sys_enter_openat syscalls.sys_enter_openat"),
	OK("e:mygroup/ " SYS " f=$filename",
	   "e:mygroup/sys_enter_openat syscalls.sys_enter_openat f=$filename"),
	OK("e:g.ev syscalls.sys_enter_openat file=+0($filename):ustring "
	   "c=$comm:string if flags > 0 && mode == 0",
	   "e:g/ev syscalls.sys_enter_openat file=+0($filename):ustring "
	   "c=$comm:string"),
	OK("e:g/k2 kp/k a=$a s=$s:string x=$c:x8",
	   "e:g/k2 kp.k a=$a s=$s:string x=$c:x8"),
};

static void check_row(const struct row *r)
{
	struct dp_error e = { 0 };
	struct dp_probe *p = NULL;
	int ret = dp_registry_apply(&reg, r->line, &p, &e);

	if (r->listing) {
		char *l = NULL;

		cr_expect_eq(ret, 0, "%s: rejected: %s (pos %d)", r->line,
			     dp_err_message(e.code), e.pos);
		if (!ret)
			l = dp_probe_listing(&p->def);
		if (l)
			cr_expect_str_eq(l, r->listing, "%s", r->line);
		free(l);
	} else {
		cr_expect_eq(ret, -r->err, "%s: ret %d, want %d (%s)", r->line,
			     ret, -r->err, dp_err_message(e.code));
		cr_expect_eq(e.code, r->code, "%s: got '%s', want '%s'",
			     r->line, dp_err_message(e.code),
			     dp_err_message(r->code));
		cr_expect_eq(e.pos, r->pos, "%s: caret %d, want %d", r->line,
			     e.pos, r->pos);
		if (e.code == DP_ERR_NO_EVENT_INFO)
			cr_expect_str_eq(e.loc, "event_probe");
	}
	dp_error_clear(&e);
}

Test(eprobe, table)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		check_row(&rows[i]);
}

Test(eprobe, not_without_the_registry)
{
	struct dp_probe_def def;
	struct dp_error e = { 0 };

	/* the plain parser knows no events: an e: line is not its */
	cr_assert_eq(dp_parse_probe("e " SYS, &def, &e), -EINVAL);
	cr_assert_eq(e.code, DP_ERR_NOT_PROBE);
	dp_error_clear(&e);
}

/* @text without its "ID: N" line (malloc'd). */
static char *no_id(const char *text)
{
	char *t = strdup(text), *id = strstr(t, "ID: ");

	memmove(id, strchr(id, '\n') + 1, strlen(strchr(id, '\n') + 1) + 1);
	return t;
}

Test(eprobe, kernel_format_is_the_kernels)
{
	struct dp_event *ev = dp_registry_find(&reg, "syscalls",
					       "sys_enter_openat");
	struct cap c;
	char *text, *mine, *kernel = no_id(openat_format);

	cr_assert(ev && ev->kernel && ev->builtin);
	cr_expect_geq(ev->id, DP_FIRST_KERNEL_TP_ID);
	dp_event_format(ev, cap_open(&c));
	text = cap_close(&c);
	mine = no_id(text);
	cr_expect_str_eq(mine, kernel);	/* byte for byte but the ID */
	free(text);
	free(mine);
	free(kernel);
}

Test(eprobe, format_and_busy)
{
	struct dp_event *ep, *k = dp_registry_find(&reg, "kp", "k");
	struct cap c;
	char *text;

	cr_assert_eq(dp_registry_apply(&reg, "e:g/ep kp.k x=$a s=$s:string",
				       NULL, NULL), 0);
	ep = dp_registry_find(&reg, "g", "ep");
	cr_assert(ep && ep->attached == k && k->neprobes == 1);
	dp_event_format(ep, cap_open(&c));
	text = cap_close(&c);
	cr_expect(strstr(text, "\tfield:u64 x;\toffset:8;\tsize:8;\tsigned:0;\n"
			 "\tfield:__data_loc char[] s;\toffset:16;\tsize:4;"),
		  "%s", text);
	cr_expect(strstr(text, "print fmt: \" x=0x%Lx s=\\\"%s\\\"\", REC->x, "
			 "__get_str(s)\n"), "%s", text);
	free(text);
	/* the attached event stays while an event probe is on it */
	cr_expect_eq(dp_registry_apply(&reg, "-:kp/k", NULL, NULL), -EBUSY);
	cr_expect_not_null(dp_registry_find(&reg, "kp", "k"));
	/* deleted by name, by SYSTEM/EVENT, or with its arguments */
	cr_expect_eq(dp_registry_apply(&reg, "-:g/ep kp/other", NULL, NULL),
		     -ENOENT);
	cr_expect_eq(dp_registry_apply(&reg, "-:g/ep kp.k x=$a", NULL, NULL), 0);
	cr_expect_eq(k->neprobes, 0);
	cr_expect_eq(dp_registry_apply(&reg, "-:kp/k", NULL, NULL), 0);
}

/* ---- firing -------------------------------------------------------------- */

struct seen {
	char text[8][256];
	int n;
};

static void emit(void *priv, const struct dp_event *ev, const void *rec,
		 size_t len, const struct dp_rec_meta *meta,
		 const struct dp_symbolizer *sym)
{
	struct seen *s = priv;
	struct dp_trace_opts o = { .ncpus = 1, .sym = sym };
	FILE *f = fmemopen(s->text[s->n], sizeof(s->text[0]), "w");

	(void)ev;
	dp_trace_line(f, ev, rec, len, meta, &o);
	fclose(f);
	s->n++;
}

/* A record of kp/k: a=-5, s="hi", c=7. */
static size_t kp_record(uint8_t *r, unsigned id)
{
	int32_t a = -5;
	uint32_t loc = (3u << 16) | 25;

	memset(r, 0, 64);
	memcpy(r, &(uint16_t){ (uint16_t)id }, 2);
	memcpy(r + 16, &a, 4);
	memcpy(r + 20, &loc, 4);
	r[24] = 7;
	memcpy(r + 25, "hi", 3);
	return 28;
}

Test(eprobe, fires_on_each_record)
{
	struct dp_event *k = dp_registry_find(&reg, "kp", "k"), *ep;
	struct seen seen = { .n = 0 };
	struct dp_sink sink = { .emit = emit, .priv = &seen };
	struct dp_stats st = { 0 };
	struct dp_deliver d = { .sink = &sink, .stats = &st };
	struct dp_rec_meta meta = { .pid = getpid(), .tgid = getpid(),
				    .comm = "work" };
	uint8_t r[64];
	size_t n;

	cr_assert_eq(k->fixed_size, 25);
	cr_assert_eq(dp_registry_apply(&reg, "e:g/ep kp.k a=$a:s32 s=$s:string "
				       "c=$c cm=$comm:string if a < 0", NULL,
				       NULL), 0);
	ep = dp_registry_find(&reg, "g", "ep");
	n = kp_record(r, k->id);
	/* the event probe alone: the attached event armed soft */
	ep->enabled = true;
	k->soft = true;
	dp_event_deliver(&d, k->probes, r, n, &meta, NULL);
	cr_assert_eq(seen.n, 1);
	cr_expect(strstr(seen.text[0], "ep: (kp.k) a=-5 s=\"hi\" c=0x7 "
			 "cm=\"work\"\n"), "%s", seen.text[0]);
	/* both: the attached event's line first */
	k->soft = false;
	k->enabled = true;
	dp_event_deliver(&d, k->probes, r, n, &meta, NULL);
	cr_assert_eq(seen.n, 3);
	cr_expect(strstr(seen.text[1], " k: ("), "%s", seen.text[1]);
	cr_expect(strstr(seen.text[2], " ep: (kp.k)"), "%s", seen.text[2]);
	/* the "if" filter is on the attached event's fields: its own
	 * line only */
	memcpy(r + 16, &(int32_t){ 5 }, 4);
	dp_event_deliver(&d, k->probes, r, n, &meta, NULL);
	cr_expect_eq(seen.n, 4);
	/* a disabled event probe makes nothing: the attached event's line */
	ep->enabled = false;
	memcpy(r + 16, &(int32_t){ -5 }, 4);
	dp_event_deliver(&d, k->probes, r, n, &meta, NULL);
	cr_expect_eq(seen.n, 5);
}

Test(eprobe, reads_the_threads_memory)
{
	static const char path[] = "/dev/null";
	struct dp_event *sc = dp_registry_find(&reg, "syscalls",
					       "sys_enter_openat"), *ep;
	struct seen seen = { .n = 0 };
	struct dp_sink sink = { .emit = emit, .priv = &seen };
	struct dp_stats st = { 0 };
	struct dp_deliver d = { .sink = &sink, .stats = &st };
	struct dp_rec_meta meta = { .pid = getpid(), .tgid = getpid(),
				    .mm_pid = getpid() };
	uint64_t ptr = (uintptr_t)path, bad = 16;
	uint8_t r[48] = { 0 };

	cr_assert_eq(dp_registry_apply(&reg, "e:g/op syscalls.sys_enter_openat "
				       "file=+0($filename):ustring dfd=$dfd:s32",
				       NULL, NULL), 0);
	ep = dp_registry_find(&reg, "g", "op");
	ep->enabled = true;
	sc->soft = true;
	memcpy(r, &(uint16_t){ (uint16_t)sc->id }, 2);
	memcpy(r + 16, &(int64_t){ -100 }, 8);
	memcpy(r + 24, &ptr, 8);
	dp_event_deliver(&d, sc->probes, r, sizeof(r), &meta, NULL);
	memcpy(r + 24, &bad, 8);
	dp_event_deliver(&d, sc->probes, r, sizeof(r), &meta, NULL);
	cr_assert_eq(seen.n, 2);
	cr_expect(strstr(seen.text[0], "op: (syscalls.sys_enter_openat) "
			 "file=\"/dev/null\" dfd=-100\n"), "%s", seen.text[0]);
	cr_expect(strstr(seen.text[1], "file=(fault)"), "%s", seen.text[1]);
	/* no engine vouched for the memory: nothing is read */
	meta.mm_pid = 0;
	memcpy(r + 24, &ptr, 8);
	dp_event_deliver(&d, sc->probes, r, sizeof(r), &meta, NULL);
	cr_expect(strstr(seen.text[2], "file=(fault)"), "%s", seen.text[2]);
}

Test(eprobe, syscall_lines_are_the_kernels)
{
	struct dp_event *sc = dp_registry_find(&reg, "syscalls",
					       "sys_enter_openat");
	struct seen seen = { .n = 0 };
	struct dp_sink sink = { .emit = emit, .priv = &seen };
	struct dp_stats st = { 0 };
	struct dp_deliver d = { .sink = &sink, .stats = &st };
	struct dp_rec_meta meta = { .pid = 1, .tgid = 1, .comm = "x" };
	uint8_t r[48] = { 0 };

	sc->enabled = true;
	memcpy(r, &(uint16_t){ (uint16_t)sc->id }, 2);
	memcpy(r + 8, &(int32_t){ 257 }, 4);
	memcpy(r + 16, &(int64_t){ -100 }, 8);
	memcpy(r + 24, &(uint64_t){ 0x7ffc1234 }, 8);
	dp_event_deliver(&d, sc->probes, r, sizeof(r), &meta, NULL);
	cr_assert_eq(seen.n, 1);
	cr_expect(strstr(seen.text[0], ": sys_openat(dfd: ffffffffffffff9c, "
			 "filename: 7ffc1234, flags: 0, mode: 0)\n"),
		  "%s", seen.text[0]);
}
