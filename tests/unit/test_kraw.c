// SPDX-License-Identifier: GPL-2.0
/*
 * engine/kernel: the ring-buffer page parser on pages built here (every
 * entry type, time extensions and absolute times, padding, the missed-
 * events flags, a record that ends the page, corrupt and truncated pages
 * refused without a read out of bounds, random pages), the page layout
 * read from header_page/header_event text, private group names, the
 * `format` field reader, and a tracepoint's record conversion (strings
 * that overlap are refused, never copied past the buffer).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "engine/kernel/internal.h"

#define PAGE 4096
#define DATA 16

/* A page under construction: the kernel's layout on x86-64. */
struct pb {
	uint8_t buf[PAGE];
	size_t pos;		/* in the data area */
};

static void pb_u32(struct pb *p, uint32_t v)
{
	cr_assert_leq(DATA + p->pos + 4, PAGE);
	memcpy(p->buf + DATA + p->pos, &v, 4);
	p->pos += 4;
}

static void pb_head(struct pb *p, unsigned type_len, uint32_t delta)
{
	pb_u32(p, type_len | delta << 5);
}

/* A record of @len bytes (a multiple of 4) filled with @fill. */
static void pb_rec(struct pb *p, uint32_t delta, size_t len, uint8_t fill)
{
	if (len && len <= 28 * 4) {
		pb_head(p, (unsigned)(len / 4), delta);
	} else {
		pb_head(p, 0, delta);
		pb_u32(p, (uint32_t)len + 4);
	}
	cr_assert_leq(DATA + p->pos + len, PAGE);
	memset(p->buf + DATA + p->pos, fill, len);
	p->pos += len;
}

static void pb_extend(struct pb *p, uint64_t delta)
{
	pb_head(p, 30, (uint32_t)(delta & ((1u << 27) - 1)));
	pb_u32(p, (uint32_t)(delta >> 27));
}

static void pb_abs(struct pb *p, uint64_t ts)
{
	pb_head(p, 31, (uint32_t)(ts & ((1u << 27) - 1)));
	pb_u32(p, (uint32_t)(ts >> 27));
}

/* Padding of @len bytes in all (header included). */
static void pb_pad(struct pb *p, size_t len)
{
	pb_head(p, 29, 1);
	pb_u32(p, (uint32_t)len - 4);
	p->pos += len - 8;
}

static void pb_finish(struct pb *p, uint64_t ts, uint64_t flags)
{
	uint64_t commit = p->pos | flags;

	memcpy(p->buf, &ts, 8);
	memcpy(p->buf + 8, &commit, 8);
}

static struct dp_kraw_layout L;

static void setup(void)
{
	dp_kraw_layout_default(&L);
}

TestSuite(kraw, .init = setup);

static const char header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
static const char header_event[] =
	"# compressed entry header\n"
	"\ttype_len    :    5 bits\n"
	"\ttime_delta  :   27 bits\n"
	"\tarray       :   32 bits\n\n"
	"\tpadding     : type == 29\n"
	"\ttime_extend : type == 30\n"
	"\ttime_stamp : type == 31\n"
	"\tdata max type_len  == 28\n";

Test(kraw, layout_from_the_kernels_files)
{
	struct dp_kraw_layout l, d;

	dp_kraw_layout_default(&d);
	cr_assert_eq(dp_kraw_layout_parse(&l, header_page, header_event), 0);
	cr_assert_eq(l.ts_off, d.ts_off);
	cr_assert_eq(l.commit_off, d.commit_off);
	cr_assert_eq(l.commit_size, d.commit_size);
	cr_assert_eq(l.delta_bits, d.delta_bits);
	cr_assert_eq(l.max_data, d.max_data);
	cr_assert_eq(l.padding, 29);
	cr_assert_eq(l.time_extend, 30);
	cr_assert_eq(l.time_stamp, 31);
	cr_assert_eq(l.page_size, 4096);
	cr_assert_eq(l.data_off, 16);
	/* a layout this parser does not read is refused */
	cr_assert_neq(dp_kraw_layout_parse(&l, "junk", NULL), 0);
	cr_assert_neq(dp_kraw_layout_parse(&l, NULL,
		"\ttype_len    :    6 bits\n\ttime_delta  :   26 bits\n"
		"\tpadding     : type == 29\n\ttime_extend : type == 30\n"
		"\ttime_stamp : type == 31\n\tdata max type_len  == 28\n"), 0);
}

Test(kraw, short_and_long_records_with_deltas)
{
	struct pb p = { 0 };
	struct dp_kraw_page pg;
	struct dp_kraw_rec r;

	pb_rec(&p, 5, 16, 0xaa);
	pb_rec(&p, 7, 200, 0xbb);	/* too long for type_len: length word */
	pb_rec(&p, 0, 112, 0xcc);	/* the longest short record */
	pb_finish(&p, 1000, 0);
	cr_assert_eq(dp_kraw_page_init(&pg, &L, p.buf, PAGE), 0);
	cr_assert_not(pg.missed);
	cr_assert_eq(dp_kraw_next(&pg, &r), 1);
	cr_assert_eq(r.len, 16);
	cr_assert_eq(r.ts, 1005);
	cr_assert_eq(r.data[0], 0xaa);
	cr_assert_eq(r.data, p.buf + DATA + 4);
	cr_assert_eq(dp_kraw_next(&pg, &r), 1);
	cr_assert_eq(r.len, 200);
	cr_assert_eq(r.ts, 1012);
	cr_assert_eq(r.data[199], 0xbb);
	cr_assert_eq(dp_kraw_next(&pg, &r), 1);
	cr_assert_eq(r.len, 112);
	cr_assert_eq(r.ts, 1012);
	cr_assert_eq(dp_kraw_next(&pg, &r), 0);
	cr_assert_eq(dp_kraw_next(&pg, &r), 0);
}

Test(kraw, time_extend_and_absolute_time)
{
	struct pb p = { 0 };
	struct dp_kraw_page pg;
	struct dp_kraw_rec r;
	uint64_t big = (1ULL << 40) + 12345;

	pb_extend(&p, big);
	pb_rec(&p, 3, 8, 1);
	pb_abs(&p, 5000000000ULL);
	pb_rec(&p, 2, 8, 2);
	pb_finish(&p, 100, 0);
	cr_assert_eq(dp_kraw_page_init(&pg, &L, p.buf, PAGE), 0);
	cr_assert_eq(dp_kraw_next(&pg, &r), 1);
	cr_assert_eq(r.ts, 100 + big + 3);
	cr_assert_eq(dp_kraw_next(&pg, &r), 1);
	cr_assert_eq(r.ts, 5000000002ULL);
	cr_assert_eq(dp_kraw_next(&pg, &r), 0);
}

Test(kraw, padding_is_skipped_and_null_padding_ends_the_page)
{
	struct pb p = { 0 };
	struct dp_kraw_page pg;
	struct dp_kraw_rec r;

	pb_rec(&p, 1, 4, 1);
	pb_pad(&p, 24);			/* a discarded record */
	pb_rec(&p, 1, 4, 2);
	pb_head(&p, 29, 0);		/* the rest is unused */
	pb_u32(&p, 0);
	pb_rec(&p, 1, 4, 3);		/* never seen */
	pb_finish(&p, 0, 0);
	cr_assert_eq(dp_kraw_page_init(&pg, &L, p.buf, PAGE), 0);
	cr_assert_eq(dp_kraw_next(&pg, &r), 1);
	cr_assert_eq(r.data[0], 1);
	cr_assert_eq(dp_kraw_next(&pg, &r), 1);
	cr_assert_eq(r.data[0], 2);
	cr_assert_eq(dp_kraw_next(&pg, &r), 0);
}

Test(kraw, missed_events_flags)
{
	struct pb p = { 0 };
	struct dp_kraw_page pg;
	unsigned long n = 42;

	pb_rec(&p, 1, 4, 1);
	pb_finish(&p, 0, DP_KRAW_MISSED_EVENTS);
	cr_assert_eq(dp_kraw_page_init(&pg, &L, p.buf, PAGE), 0);
	cr_assert(pg.missed);
	cr_assert_not(pg.nmissed_known);

	/* the count follows the last record */
	memcpy(p.buf + DATA + p.pos, &n, sizeof(n));
	pb_finish(&p, 0, DP_KRAW_MISSED_EVENTS | DP_KRAW_MISSED_STORED);
	cr_assert_eq(dp_kraw_page_init(&pg, &L, p.buf, PAGE), 0);
	cr_assert(pg.missed && pg.nmissed_known);
	cr_assert_eq(pg.nmissed, 42);
	cr_assert_eq(pg.size, 8);
}

Test(kraw, a_record_up_to_the_last_byte)
{
	struct pb p = { 0 };
	struct dp_kraw_page pg;
	struct dp_kraw_rec r;
	size_t len = PAGE - DATA - 8 - 8;

	pb_rec(&p, 1, 4, 1);		/* 8 bytes */
	pb_rec(&p, 1, len, 0x5a);	/* header + length word + len */
	cr_assert_eq(p.pos, PAGE - DATA);
	pb_finish(&p, 0, 0);
	cr_assert_eq(dp_kraw_page_init(&pg, &L, p.buf, PAGE), 0);
	cr_assert_eq(dp_kraw_next(&pg, &r), 1);
	cr_assert_eq(dp_kraw_next(&pg, &r), 1);
	cr_assert_eq(r.len, len);
	cr_assert_eq(r.data + r.len, p.buf + PAGE);
	cr_assert_eq(dp_kraw_next(&pg, &r), 0);
	/* one byte short: the record no longer fits and is refused */
	cr_assert_eq(dp_kraw_page_init(&pg, &L, p.buf, PAGE - 4), -EINVAL);
}

Test(kraw, corrupt_pages)
{
	struct pb p = { 0 };
	struct dp_kraw_page pg;
	struct dp_kraw_rec r;
	uint32_t w;

	/* shorter than a header, longer than a page */
	cr_assert_eq(dp_kraw_page_init(&pg, &L, p.buf, 10), -EINVAL);
	cr_assert_eq(dp_kraw_page_init(&pg, &L, p.buf, PAGE + 1), -EINVAL);

	/* commit past the bytes read */
	pb_rec(&p, 1, 16, 1);
	pb_finish(&p, 0, 0);
	cr_assert_eq(dp_kraw_page_init(&pg, &L, p.buf, DATA + 8), -EINVAL);

	/* a record longer than what was committed */
	memset(&p, 0, sizeof(p));
	pb_rec(&p, 1, 16, 1);
	p.pos = 12;
	pb_finish(&p, 0, 0);
	cr_assert_eq(dp_kraw_page_init(&pg, &L, p.buf, PAGE), 0);
	cr_assert_eq(dp_kraw_next(&pg, &r), -EINVAL);

	/* a length word smaller than itself */
	memset(&p, 0, sizeof(p));
	pb_head(&p, 0, 1);
	pb_u32(&p, 2);
	pb_finish(&p, 0, 0);
	cr_assert_eq(dp_kraw_page_init(&pg, &L, p.buf, PAGE), 0);
	cr_assert_eq(dp_kraw_next(&pg, &r), -EINVAL);

	/* a length word that is not a multiple of 4 (the kernel aligns
	 * every record; found by fuzz-kraw) */
	memset(&p, 0, sizeof(p));
	pb_head(&p, 0, 1);
	pb_u32(&p, 33);
	p.pos += 32;
	pb_finish(&p, 0, 0);
	cr_assert_eq(dp_kraw_page_init(&pg, &L, p.buf, PAGE), 0);
	cr_assert_eq(dp_kraw_next(&pg, &r), -EINVAL);

	/* padding running past the end */
	memset(&p, 0, sizeof(p));
	pb_head(&p, 29, 3);
	pb_u32(&p, 4000);
	pb_finish(&p, 0, 0);
	cr_assert_eq(dp_kraw_page_init(&pg, &L, p.buf, PAGE), 0);
	cr_assert_eq(dp_kraw_next(&pg, &r), -EINVAL);

	/* a lone half word, and a time extension cut in two */
	memset(&p, 0, sizeof(p));
	pb_rec(&p, 1, 4, 1);
	w = 30;
	memcpy(p.buf + DATA + p.pos, &w, 4);
	p.pos += 4;
	pb_finish(&p, 0, 0);
	cr_assert_eq(dp_kraw_page_init(&pg, &L, p.buf, PAGE), 0);
	cr_assert_eq(dp_kraw_next(&pg, &r), 1);
	cr_assert_eq(dp_kraw_next(&pg, &r), -EINVAL);
	p.pos = 10;
	pb_finish(&p, 0, 0);
	cr_assert_eq(dp_kraw_page_init(&pg, &L, p.buf, PAGE), 0);
	cr_assert_eq(dp_kraw_next(&pg, &r), 1);
	cr_assert_eq(dp_kraw_next(&pg, &r), -EINVAL);
}

/* Garbage of every length: records stay inside the buffer (ASan watches). */
Test(kraw, random_pages_stay_in_bounds)
{
	unsigned seed = 12345;

	for (int iter = 0; iter < 20000; iter++) {
		size_t len = (size_t)rand_r(&seed) % (PAGE + 1);
		uint8_t *buf = malloc(len ? len : 1);
		struct dp_kraw_page pg;
		struct dp_kraw_rec r;
		uint64_t commit;
		int ret, guard = 0;

		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)rand_r(&seed);
		if (len >= DATA) {
			/* mostly plausible commits, so entries get parsed */
			commit = (uint64_t)rand_r(&seed) % (len - DATA + 8);
			if (rand_r(&seed) & 1)
				commit |= DP_KRAW_MISSED_EVENTS |
					  DP_KRAW_MISSED_STORED;
			memcpy(buf + 8, &commit, 8);
		}
		if (!dp_kraw_page_init(&pg, &L, buf, len)) {
			while ((ret = dp_kraw_next(&pg, &r)) > 0) {
				cr_assert_geq(r.data, buf);
				cr_assert_leq(r.data + r.len, buf + len);
				cr_assert_lt(++guard, PAGE);
			}
		}
		free(buf);
	}
}

Test(kraw, group_names)
{
	char g[DP_MAX_EVENT_NAME_LEN], g2[DP_MAX_EVENT_NAME_LEN];
	char longname[DP_MAX_EVENT_NAME_LEN];

	dp_kgroup_name(1234, "uprobes", g, sizeof(g));
	cr_assert_str_eq(g, "dprobe1234_uprobes");
	cr_assert_eq(dp_kgroup_pid(g), 1234);
	cr_assert_eq(dp_kgroup_pid("dprobe_x"), 0);
	cr_assert_eq(dp_kgroup_pid("dprobe12x"), 0);
	cr_assert_eq(dp_kgroup_pid("kprobes"), 0);
	cr_assert_eq(dp_kinst_pid("dprobe.99"), 99);
	cr_assert_eq(dp_kinst_pid("dprobe.99x"), 0);
	cr_assert_eq(dp_kinst_pid("dprobe."), 0);

	/* 63 characters: shortened the same way every time, still ours */
	memset(longname, 'a', 63);
	longname[63] = '\0';
	dp_kgroup_name(4194304, longname, g, sizeof(g));
	dp_kgroup_name(4194304, longname, g2, sizeof(g2));
	cr_assert_str_eq(g, g2);
	cr_assert_leq(strlen(g), 63);
	cr_assert_eq(dp_kgroup_pid(g), 4194304);
	longname[62] = 'b';
	dp_kgroup_name(4194304, longname, g2, sizeof(g2));
	cr_assert_str_neq(g, g2);
}

Test(kraw, format_fields)
{
	static const char fmt[] =
		"name: sched_process_exec\nID: 365\nformat:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		"\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n"
		"\tfield:char comm[16];\toffset:12;\tsize:16;\tsigned:0;\n"
		"\tfield:pid_t pid;\toffset:28;\tsize:4;\tsigned:1;\n\n"
		"print fmt: \"filename=%s\", __get_str(filename)\n";
	const char *pos = fmt;
	struct dp_kfield f;

	cr_assert_eq(dp_kformat_next(&pos, &f), 1);
	cr_assert_str_eq(f.name, "common_type");
	cr_assert_eq(dp_kformat_next(&pos, &f), 1);
	cr_assert_eq(dp_kformat_next(&pos, &f), 1);
	cr_assert_str_eq(f.type, "__data_loc char[]");
	cr_assert_str_eq(f.name, "filename");
	cr_assert_eq(f.offset, 8);
	cr_assert_eq(dp_kformat_next(&pos, &f), 1);
	cr_assert_str_eq(f.name, "comm");
	cr_assert_eq(f.count, 16);
	cr_assert_eq(dp_kformat_next(&pos, &f), 1);
	cr_assert_str_eq(f.type, "pid_t");
	cr_assert(f.is_signed);
	cr_assert_eq(f.size, 4);
	cr_assert_eq(dp_kformat_next(&pos, &f), 0);
}

/* ---- tracepoint records (tp.c) ------------------------------------------- */

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/kernel/session.h"

static const char tp_format[] =
	"name: two\nID: 900\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:__data_loc char[] a;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:__data_loc char[] b;\toffset:12;\tsize:4;\tsigned:0;\n\n"
	"print fmt: \"%s %s\", __get_str(a), __get_str(b)\n";

/* A tracepoint "g:two" with two strings, from a tracefs made here. */
static void tp_session(struct dp_kernel *k, struct dp_registry *reg,
		       char *dir)
{
	static const char *const names[] = { "g:two" };
	char p[PATH_MAX], why[256];
	FILE *f;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/events", dir);
	cr_assert_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/events/g", dir);
	cr_assert_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/events/g/two", dir);
	cr_assert_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/events/g/two/format", dir);
	f = fopen(p, "w");
	cr_assert_not_null(f);
	fputs(tp_format, f);
	fclose(f);
	dp_registry_init(reg);
	memset(k, 0, sizeof(*k));
	snprintf(k->tfs.root, sizeof(k->tfs.root), "%s", dir);
	k->o.reg = reg;
	k->o.tracepoints = names;
	k->o.ntracepoints = 1;
	cr_assert_eq(dp_ktp_translate(k, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(k->nkevs, 1);
}

static void tp_session_end(struct dp_kernel *k, struct dp_registry *reg,
			   const char *dir)
{
	char cmd[PATH_MAX + 16];

	dp_kev_tp_free(&k->kevs[0]);
	free(k->kevs);
	dp_kread_free(k);
	dp_registry_free(reg);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

Test(kraw, tracepoint_strings_converted_and_overlaps_refused)
{
	char dir[] = "/tmp/dp-kraw-tp.XXXXXX";
	struct dp_registry reg;
	struct dp_kernel k;
	uint8_t rec[16 + 300];
	const uint8_t *out;
	uint32_t loc;
	size_t n;

	tp_session(&k, &reg, dir);
	memset(rec, 0, sizeof(rec));
	memcpy(rec + 16, "hello", 6);
	memcpy(rec + 22, "hi", 3);
	loc = 6u << 16 | 16;
	memcpy(rec + 8, &loc, 4);
	loc = 3u << 16 | 22;
	memcpy(rec + 12, &loc, 4);
	out = dp_ktp_convert(&k, &k.kevs[0], rec, 25, &n);
	cr_assert_not_null(out);
	cr_assert_eq(n, 16 + 6 + 3);
	cr_assert_str_eq((const char *)out + 16, "hello");
	cr_assert_str_eq((const char *)out + 22, "hi");

	/* both strings the same 300 bytes: more than the record holds */
	memset(rec + 16, 'x', 299);
	rec[16 + 299] = '\0';
	loc = 300u << 16 | 16;
	memcpy(rec + 8, &loc, 4);
	memcpy(rec + 12, &loc, 4);
	cr_assert_null(dp_ktp_convert(&k, &k.kevs[0], rec, sizeof(rec), &n));
	tp_session_end(&k, &reg, dir);
}

/* ---- user_stack entries (ustack.c) ---------------------------------------- */

#include "engine/kernel/session.h"

/* The kernel's entry on x86-64: header, tgid, pad, caller[8]. */
static size_t ustack_entry(uint8_t *b, uint16_t type, int32_t pid,
			   const uint64_t *ips, unsigned n)
{
	memset(b, 0, 80);
	memcpy(b, &type, 2);
	memcpy(b + 4, &pid, 4);
	memcpy(b + 8, &pid, 4);
	memcpy(b + 16, ips, 8 * (size_t)n);
	return 80;
}

Test(kustack, frames)
{
	static const uint64_t ips[8] = { 0x1000, 0x2000, 0x3000 };
	static const uint64_t full[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct dp_kernel *k = calloc(1, sizeof(*k));
	uint64_t out[DP_KUSTACK_MAX];
	uint8_t b[80];
	size_t len = ustack_entry(b, 13, 42, ips, 3);

	cr_assert_not_null(k);
	/* not on: nothing, whatever the record */
	cr_expect_eq(dp_kustack_frames(k, b, len, 42, out), 0);
	k->ustack.on = true;
	k->ustack.id = 13;
	k->ustack.off = 16;
	k->ustack.n = 8;
	/* ended by the first 0, as the kernel prints it */
	cr_assert_eq(dp_kustack_frames(k, b, len, 42, out), 3);
	cr_expect_eq(out[0], 0x1000);
	cr_expect_eq(out[2], 0x3000);
	/* another thread's, another entry type, a short record: none */
	cr_expect_eq(dp_kustack_frames(k, b, len, 43, out), 0);
	ustack_entry(b, 12, 42, ips, 3);
	cr_expect_eq(dp_kustack_frames(k, b, len, 42, out), 0);
	ustack_entry(b, 13, 42, full, 8);
	cr_expect_eq(dp_kustack_frames(k, b, 79, 42, out), 0);
	/* all eight */
	cr_expect_eq(dp_kustack_frames(k, b, len, 42, out), 8);
	cr_expect_eq(out[7], 8);
	free(k);
}
