// SPDX-License-Identifier: GPL-2.0
/*
 * The record seam: records written by the fetch program (lang/layout.h)
 * and read back through event/record.h, for every field type, including
 * the dynamic data behind __data_loc words; malformed records refused;
 * and dp_event_deliver(), the per-hit tail every engine ends in.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event/deliver.h"
#include "event/event.h"
#include "event/filter.h"
#include "event/record.h"
#include "lang/fetch.h"
#include "lang/layout.h"

#define F "/bin/sh"
#include "fake_mem.h"

static struct dp_regs regs;
static struct dp_hit_ctx ctx;
static struct dp_registry reg;

static void setup(void)
{
	uint64_t ptrs[3] = { 0x3000, 0x3100, 0 };
	uint64_t wide = 0x8877665544332211ull;

	memset(mem, 0, sizeof(mem));
	put(0x2000, &wide, 8);
	put(0x2010, "bytes", 6);
	put(0x2020, ptrs, sizeof(ptrs));
	put(0x3000, "hello world", 12);
	put(0x3100, "second", 7);
	memset(&regs, 0, sizeof(regs));
	regs.di = 0x2000;
	regs.si = 0x3000;
	regs.dx = 0x2020;
	regs.cx = 0xfffffff9;
	regs.bx = wide;
	regs.sp = 0x3800;
	ctx = (struct dp_hit_ctx){ .regs = &regs, .read_mem = fake_read,
				   .comm = "target", .pid = 42,
				   .ip = 0x401146, .func = 0x401146,
				   .ret_ip = 0x4011eb };
	dp_registry_init(&reg);
}

static void teardown(void)
{
	dp_registry_free(&reg);
}

TestSuite(record, .init = setup, .fini = teardown);

/* ---- helpers ------------------------------------------------------------ */

struct rec {
	struct dp_probe *pr;
	struct dp_event *ev;
	uint8_t b[8192];
	size_t len;
};

/* Define @def and fire it once on ctx into @r; the record must check. */
static void fire(struct rec *r, const char *def)
{
	struct dp_error e = { 0 };

	cr_assert_eq(dp_registry_apply(&reg, def, &r->pr, &e), 0, "%s: %s",
		     def, dp_err_message(e.code));
	r->ev = r->pr->event;
	r->len = dp_fetch_record(&r->pr->def, r->ev->id, &ctx, r->b,
				 sizeof(r->b));
	cr_assert_gt(r->len, 0);
	cr_assert_geq(r->len, r->ev->fixed_size);
	cr_assert_eq(dp_rec_check(r->ev, r->b, r->len), 0, "%s", def);
}

static struct dp_rec_geom geom(const struct rec *r, const char *name)
{
	const struct dp_field *f = dp_event_field(r->ev, name);
	struct dp_rec_geom g;

	cr_assert_not_null(f, "%s", name);
	cr_assert_eq(dp_rec_geom(f, &g), 0, "%s", name);
	return g;
}

/* Element @i of numeric field @name, zero- or sign-extended. */
static uint64_t num(const struct rec *r, const char *name, unsigned i)
{
	struct dp_rec_geom g = geom(r, name);

	cr_assert(!g.string && i < g.n, "%s", name);
	return dp_rec_load(dp_rec_elem(r->b, &g, i), g.esz);
}

static int64_t snum(const struct rec *r, const char *name)
{
	struct dp_rec_geom g = geom(r, name);

	return dp_rec_sload(dp_rec_elem(r->b, &g, 0), g.esz);
}

/* Element @i of string field @name; NULL for a fault. */
static char *str(const struct rec *r, const char *name, unsigned i)
{
	struct dp_rec_geom g = geom(r, name);
	const uint8_t *slot;
	const char *s;
	uint32_t loc;
	size_t n;

	cr_assert(g.string && i < g.n, "%s", name);
	slot = dp_rec_elem(r->b, &g, i);
	if (!dp_rec_str(r->b, slot, &s, &n)) {
		cr_assert(dp_rec_str_faulted(slot));
		return NULL;
	}
	/* dynamic data: after the fixed part, inside the record */
	loc = (uint32_t)dp_rec_load(slot, 4);
	cr_assert_geq(dp_data_loc_off(loc), r->ev->fixed_size);
	cr_assert_leq(dp_data_loc_off(loc) + dp_data_loc_len(loc), r->len);
	cr_assert_eq(dp_data_loc_len(loc), n + 1, "%s: the NUL counts", name);
	return strndup(s, n);
}

static void expect_str(const struct rec *r, const char *name, unsigned i,
		       const char *want)
{
	char *got = str(r, name, i);

	if (!want)
		cr_assert_null(got, "%s[%u] should be a fault", name, i);
	else
		cr_assert_str_eq(got, want, "%s[%u]", name, i);
	free(got);
}

/* ---- layout ------------------------------------------------------------- */

Test(record, layout_helpers)
{
	uint8_t b[8] = { 0 };
	uint32_t loc = dp_data_loc(12, 0x48);

	cr_assert_eq(loc, 12u << 16 | 0x48);
	cr_assert_eq(dp_data_loc_len(loc), 12);
	cr_assert_eq(dp_data_loc_off(loc), 0x48);
	for (unsigned size = 1; size <= 8; size *= 2) {
		memset(b, 0xee, sizeof(b));
		dp_rec_put(b, 0x8877665544332211ull, size);
		cr_assert_eq(dp_rec_load(b, size),
			     0x8877665544332211ull &
			     (size == 8 ? ~0ull : (1ull << 8 * size) - 1));
		dp_rec_put(b, (uint64_t)-3, size);
		cr_assert_eq(dp_rec_sload(b, size), -3);
	}
	cr_assert_eq(dp_layout_head_size(DP_KIND_UPROBE, false), 16);
	cr_assert_eq(dp_layout_head_size(DP_KIND_KPROBE, true), 24);
	cr_assert_eq(dp_layout_head_size(DP_KIND_TRACEPOINT, false), 8);
}

Test(record, headers)
{
	struct rec r;

	fire(&r, "p:g/ent " F ":0x10 x=%cx:u32");
	cr_assert_eq(dp_rec_load(r.b + DP_REC_TYPE_OFF, 2), r.ev->id);
	cr_assert_eq(dp_rec_load(r.b + DP_REC_PID_OFF, 4), 42);
	cr_assert_eq(dp_rec_load(r.b + DP_REC_IP_OFF, 8), 0x401146);
	cr_assert_eq(dp_rec_head_size(r.ev), DP_ENTRY_HEAD_SIZE);
	cr_assert_eq(r.len, DP_ENTRY_HEAD_SIZE + 4);

	fire(&r, "r:g/ret " F ":0x10 x=%cx:u32");
	cr_assert_eq(dp_rec_load(r.b + DP_REC_FUNC_OFF, 8), 0x401146);
	cr_assert_eq(dp_rec_load(r.b + DP_REC_RET_IP_OFF, 8), 0x4011eb);
	cr_assert_eq(dp_rec_head_size(r.ev), DP_RET_HEAD_SIZE);
	cr_assert_eq(num(&r, "x", 0), 0xfffffff9);
}

/* ---- every field type, written then read -------------------------------- */

Test(record, unsigned_signed_hex)
{
	struct rec r;

	fire(&r, "p:g/n " F ":0x10 u8=%bx:u8 u16=%bx:u16 u32=%bx:u32 "
	     "u64=%bx:u64 s8=%cx:s8 s16=%cx:s16 s32=%cx:s32 s64=%cx:s64 "
	     "x8=%bx:x8 x16=%bx:x16 x32=%bx:x32 x64=%bx:x64");
	cr_assert_eq(num(&r, "u8", 0), 0x11);
	cr_assert_eq(num(&r, "u16", 0), 0x2211);
	cr_assert_eq(num(&r, "u32", 0), 0x44332211);
	cr_assert_eq(num(&r, "u64", 0), 0x8877665544332211ull);
	cr_assert_eq(snum(&r, "s8"), -7);
	cr_assert_eq(snum(&r, "s16"), -7);
	cr_assert_eq(snum(&r, "s32"), -7);
	cr_assert_eq(snum(&r, "s64"), 0xfffffff9);
	cr_assert_eq(num(&r, "x8", 0), 0x11);
	cr_assert_eq(num(&r, "x16", 0), 0x2211);
	cr_assert_eq(num(&r, "x32", 0), 0x44332211);
	cr_assert_eq(num(&r, "x64", 0), 0x8877665544332211ull);
	cr_assert_eq(geom(&r, "u16").esz, 2);
	cr_assert_eq(geom(&r, "x64").esz, 8);
	cr_assert_eq(r.len, r.ev->fixed_size, "no dynamic data");
}

Test(record, char_bitfield_arrays)
{
	struct rec r;

	fire(&r, "p:g/m " F ":0x10 ch=+16(%di):char chs=+16(%di):char[5] "
	     "bf=+0(%di):b4@4/8 bf2=+0(%di):b12@8/32 arr=+0(%di):x8[4] "
	     "u16arr=+0(%di):u16[3] s32arr=+0(%di):s32[2]");
	cr_assert_eq(num(&r, "ch", 0), 'b');
	cr_assert_eq(geom(&r, "chs").n, 5);
	cr_assert(geom(&r, "chs").array);
	for (unsigned i = 0; i < 5; i++)
		cr_assert_eq(num(&r, "chs", i), (uint8_t)"bytes"[i]);
	cr_assert_eq(num(&r, "bf", 0), 0x1);	/* bits 4..7 of 0x11 */
	cr_assert_eq(num(&r, "bf2", 0), 0x322);	/* bits 8..19 of 0x44332211 */
	for (unsigned i = 0; i < 4; i++)
		cr_assert_eq(num(&r, "arr", i), 0x11 + 0x11 * i);
	cr_assert_eq(num(&r, "u16arr", 2), 0x6655);
	cr_assert_eq(geom(&r, "s32arr").esz, 4);
	cr_assert_eq(num(&r, "s32arr", 1), 0x88776655);
}

Test(record, strings_and_dynamic_data)
{
	struct rec r;
	uint32_t a, b;

	fire(&r, "p:g/s " F ":0x10 str=+16(%di):string us=+0(%si):ustring "
	     "p=+0(+0(%dx)):string sarr=+0(%dx):string[3] comm=$comm "
	     "imm=\\\"abc\":string bad=+0(\\0):string");
	expect_str(&r, "str", 0, "bytes");
	expect_str(&r, "us", 0, "hello world");
	expect_str(&r, "p", 0, "hello world");
	cr_assert_eq(geom(&r, "sarr").n, 3);
	expect_str(&r, "sarr", 0, "hello world");
	expect_str(&r, "sarr", 1, "second");
	expect_str(&r, "sarr", 2, NULL);	/* a NULL pointer */
	expect_str(&r, "comm", 0, "target");
	expect_str(&r, "imm", 0, "abc");
	expect_str(&r, "bad", 0, NULL);
	/* the dynamic data follows the fixed part, in field order */
	a = (uint32_t)dp_rec_load(r.b + dp_event_field(r.ev, "str")->offset, 4);
	b = (uint32_t)dp_rec_load(r.b + dp_event_field(r.ev, "us")->offset, 4);
	cr_assert_eq(dp_data_loc_off(a), r.ev->fixed_size);
	cr_assert_eq(dp_data_loc_off(b), r.ev->fixed_size + 6);
	cr_assert_eq(r.len, r.ev->fixed_size + 6 + 12 + 12 + 12 + 7 + 7 + 4);
}

Test(record, symbol_and_symstr)
{
	struct rec r;
	char *s;

	fire(&r, "p:g/k work sym=%si:symbol ss=%si:symstr");
	cr_assert_eq(num(&r, "sym", 0), 0x3000);
	cr_assert_eq(geom(&r, "sym").esz, 8);
	/* no symbolizer: symstr records the address as hex */
	s = str(&r, "ss", 0);
	cr_assert_str_eq(s, "0x3000");
	free(s);
}

Test(record, string_too_long_is_a_fault)
{
	struct rec r;

	memset(mem + 0x1000, 'a', 0x1000);	/* no NUL before the end */
	fire(&r, "p:g/long " F ":0x10 s=+0(%si):string");
	expect_str(&r, "s", 0, NULL);
	cr_assert_eq(r.len, r.ev->fixed_size);
}

/* ---- malformed records -------------------------------------------------- */

Test(record, refuses_malformed)
{
	struct rec r;
	unsigned off;

	fire(&r, "p:g/bad " F ":0x10 x=%cx:u32 s=+0(%si):string");
	off = dp_event_field(r.ev, "s")->offset;
	cr_assert_eq(dp_rec_check(r.ev, NULL, r.len), -1);
	/* shorter than the head, than the fixed part */
	cr_assert_eq(dp_rec_check(r.ev, r.b, DP_ENTRY_HEAD_SIZE - 1), -1);
	cr_assert_eq(dp_rec_check(r.ev, r.b, r.ev->fixed_size - 1), -1);
	/* the string's last byte cut off */
	cr_assert_eq(dp_rec_check(r.ev, r.b, r.len - 1), -1);
	/* a __data_loc pointing past the end, or running past it */
	dp_rec_put(r.b + off, dp_data_loc(4, (unsigned)r.len), 4);
	cr_assert_eq(dp_rec_check(r.ev, r.b, r.len), -1);
	dp_rec_put(r.b + off, dp_data_loc(0x1000, r.ev->fixed_size), 4);
	cr_assert_eq(dp_rec_check(r.ev, r.b, r.len), -1);
	/* length 0 is a fault: accepted, never dereferenced */
	dp_rec_put(r.b + off, dp_data_loc(0, 0xffff), 4);
	cr_assert_eq(dp_rec_check(r.ev, r.b, r.len), 0);
	/* exactly to the end is inside */
	dp_rec_put(r.b + off, dp_data_loc(1, (unsigned)r.len - 1), 4);
	cr_assert_eq(dp_rec_check(r.ev, r.b, r.len), 0);
}

Test(record, refuses_unusable_field)
{
	struct dp_field f = { .name = "x", .fclass = DP_FC_NUM, .size = 3 };
	struct dp_field s = { .name = "s", .fclass = DP_FC_STRING, .size = 8 };
	struct dp_rec_geom g;

	cr_assert_eq(dp_rec_geom(&f, &g), -1);
	cr_assert_eq(dp_rec_geom(&s, &g), -1);
}

/* ---- delivery ----------------------------------------------------------- */

struct seen {
	unsigned emits, losts;
	const void *rec;
	size_t len;
	int cpu;
	unsigned long lost;
};

static void sink_emit(void *priv, const struct dp_event *ev, const void *rec,
		      size_t len, const struct dp_rec_meta *meta,
		      const struct dp_symbolizer *sym)
{
	struct seen *s = priv;

	(void)ev;
	(void)meta;
	(void)sym;
	s->emits++;
	s->rec = rec;
	s->len = len;
}

static void sink_lost(void *priv, int cpu, unsigned long n)
{
	struct seen *s = priv;

	s->losts++;
	s->cpu = cpu;
	s->lost = n;
}

Test(record, deliver_filters_counts_and_emits)
{
	struct seen seen = { 0 };
	struct dp_sink sink = { sink_emit, sink_lost, &seen, NULL };
	struct dp_stats st = { 0 };
	struct dp_deliver d = { &sink, &st, false };
	struct dp_rec_meta meta = { .cpu = 1, .pid = 42, .tgid = 42 };
	struct rec r;

	fire(&r, "p:g/d " F ":0x10 x=%cx:s32");
	cr_assert_not(dp_event_deliver_counted(&d, r.pr));
	cr_assert(dp_event_deliver(&d, r.pr, r.b, r.len, &meta, NULL));
	cr_assert_eq(seen.emits, 1);
	cr_assert_eq(seen.rec, r.b);
	cr_assert_eq(seen.len, r.len);

	cr_assert_eq(dp_event_set_filter(r.ev, "x == -7", NULL), 0);
	cr_assert(dp_event_deliver(&d, r.pr, r.b, r.len, &meta, NULL));
	cr_assert_eq(dp_event_set_filter(r.ev, "x > 0", NULL), 0);
	cr_assert_not(dp_event_deliver(&d, r.pr, r.b, r.len, &meta, NULL));
	cr_assert_eq(seen.emits, 2);
	cr_assert_eq(st.events, 2);
	cr_assert_eq(st.filtered, 1);
	cr_assert_eq(r.pr->nevents, 2);
	cr_assert_eq(r.pr->nhit, 0, "hits are the engine's to count");
}

Test(record, deliver_count_only)
{
	struct seen seen = { 0 };
	struct dp_sink sink = { sink_emit, sink_lost, &seen, NULL };
	struct dp_stats st = { 0 };
	struct dp_deliver d = { &sink, &st, true };
	struct rec r;

	fire(&r, "p:g/c " F ":0x10 x=%cx:s32");
	/* no filter: counted without a record */
	cr_assert(dp_event_deliver_counted(&d, r.pr));
	dp_event_count(&d, r.pr, 5);
	cr_assert_eq(st.events, 6);
	cr_assert_eq(r.pr->nevents, 6);
	/* a filter needs the record; what passes is counted, not emitted */
	cr_assert_eq(dp_event_set_filter(r.ev, "x < 0", NULL), 0);
	cr_assert_not(dp_event_deliver_counted(&d, r.pr));
	cr_assert(dp_event_deliver(&d, r.pr, r.b, r.len, NULL, NULL));
	cr_assert_eq(st.events, 7);
	cr_assert_eq(seen.emits, 0);
	/* losses are counted, not reported */
	dp_event_lost(&d, 0, 3);
	cr_assert_eq(st.lost, 3);
	cr_assert_eq(seen.losts, 0);
}

Test(record, deliver_lost)
{
	struct seen seen = { 0 };
	struct dp_sink sink = { sink_emit, sink_lost, &seen, NULL };
	struct dp_stats st = { 0 };
	struct dp_deliver d = { &sink, &st, false };

	dp_event_lost(&d, 2, 7);
	cr_assert_eq(st.lost, 7);
	cr_assert_eq(seen.losts, 1);
	cr_assert_eq(seen.cpu, 2);
	cr_assert_eq(seen.lost, 7);
	/* an unknown number: reported as such, not counted */
	dp_event_lost(&d, 3, DP_LOST_UNKNOWN);
	cr_assert_eq(st.lost, 7);
	cr_assert_eq(seen.lost, DP_LOST_UNKNOWN);
	dp_event_lost_record(&d);
	cr_assert_eq(st.lost, 8);
	cr_assert_eq(seen.losts, 2);
	/* a sink that takes no losses */
	sink.lost = NULL;
	dp_event_lost(&d, 0, 1);
	cr_assert_eq(st.lost, 9);
}
