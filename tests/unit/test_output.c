// SPDX-License-Identifier: GPL-2.0
/*
 * Renderers: the `trace` header, lines and lost marker, and JSON lines,
 * from events and records built by hand (no parser involved), checked
 * byte for byte against lines a live kernel printed.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event/event.h"
#include "output/output.h"

/* ---- building events and records --------------------------------------- */

#define MAXF 64

struct bld {
	struct dp_event ev;
	struct dp_field f[MAXF];
	struct dp_type t[MAXF];
	uint8_t rec[16384];
	size_t len;		/* fixed part while building, then + data */
};

static void put_le(uint8_t *p, uint64_t v, unsigned size)
{
	memcpy(p, &v, size);	/* x86-64: host order is little-endian */
}

static void add_head(struct bld *b, const char *name, unsigned off)
{
	struct dp_field *f = &b->f[b->ev.nfields++];

	f->name = name;
	f->type = "unsigned long";
	f->fclass = DP_FC_NUM;
	f->offset = off;
	f->size = 8;
	f->elem_size = 8;
}

static void bld_init(struct bld *b, enum dp_probe_kind kind, bool ret,
		     const char *name)
{
	memset(b, 0, sizeof(*b));
	b->ev.id = 2326;
	strcpy(b->ev.group, "grp");
	strcpy(b->ev.name, name);
	b->ev.kind = kind;
	b->ev.is_return = ret;
	b->ev.fields = b->f;
	if (ret) {
		add_head(b, "__probe_func", 8);
		add_head(b, "__probe_ret_ip", 16);
		b->len = DP_RET_HEAD_SIZE;
	} else {
		add_head(b, "__probe_ip", 8);
		b->len = DP_ENTRY_HEAD_SIZE;
	}
	put_le(b->rec, b->ev.id, 2);
	put_le(b->rec + 4, 21548, 4);
	b->ev.fixed_size = b->len;
}

static void set_ip(struct bld *b, uint64_t ip)
{
	put_le(b->rec + 8, ip, 8);
}

/* Return probes: the record holds func first, then the return address. */
static void set_ret(struct bld *b, uint64_t func, uint64_t ret_ip)
{
	put_le(b->rec + 8, func, 8);
	put_le(b->rec + 16, ret_ip, 8);
}

/*
 * An argument of @kind, elements of @size bytes (4 for strings), @count
 * elements (0: a scalar).  Must all be added before any string data.
 */
static struct dp_field *arg(struct bld *b, const char *name,
			    enum dp_type_kind kind, unsigned size,
			    unsigned count)
{
	unsigned i = b->ev.nfields++;
	struct dp_field *f = &b->f[i];
	struct dp_type *t = &b->t[i];
	bool str = kind == DP_T_STRING || kind == DP_T_USTRING ||
		   kind == DP_T_SYMSTR;

	cr_assert_lt(i, MAXF);
	t->kind = kind;
	t->size = size;
	t->count = count;
	f->name = name;
	f->type = "test";
	f->fclass = str ? (count ? DP_FC_STRING_ARRAY : DP_FC_STRING) :
			  (count ? DP_FC_ARRAY : DP_FC_NUM);
	f->offset = b->len;
	f->elem_size = size;
	f->count = count;
	f->size = size * (count ? count : 1);
	f->is_signed = kind == DP_T_S || str;
	f->ptype = t;
	b->len += f->size;
	b->ev.fixed_size = b->len;
	return f;
}

static void setv(struct bld *b, const struct dp_field *f, unsigned idx,
		 uint64_t v)
{
	put_le(b->rec + f->offset + idx * f->elem_size, v, f->elem_size);
}

/* A scalar argument with its value. */
static void num(struct bld *b, const char *name, enum dp_type_kind kind,
		unsigned size, uint64_t v)
{
	setv(b, arg(b, name, kind, size, 0), 0, v);
}

/* String data of @n bytes (give the NUL in @n if wanted) for element @idx. */
static void setsn(struct bld *b, const struct dp_field *f, unsigned idx,
		  const char *s, size_t n)
{
	memcpy(b->rec + b->len, s, n);
	setv(b, f, idx, (uint32_t)(n << 16 | b->len));
	b->len += n;
}

static void sets(struct bld *b, const struct dp_field *f, unsigned idx,
		 const char *s)
{
	setsn(b, f, idx, s, strlen(s) + 1);
}

static void str(struct bld *b, const char *name, enum dp_type_kind kind,
		const char *s)
{
	struct dp_field *f = arg(b, name, kind, 4, 0);

	if (s)
		sets(b, f, 0, s);
	else
		setv(b, f, 0, 0);	/* fault: length 0 */
}

static const struct dp_rec_meta meta_target = {
	.ts_ns = 5592123456789ULL, .cpu = 1, .pid = 21548, .tgid = 21548,
	.comm = "target",
};

#define PREFIX "          target-21548   [001] .....  5592.123457: "

/* ---- capturing output -------------------------------------------------- */

#include "capture.h"

static char *trace_line(struct bld *b, const struct dp_rec_meta *m,
			const struct dp_trace_opts *o, size_t len, int *ret)
{
	struct cap c;

	*ret = dp_trace_line(cap_open(&c), &b->ev, b->rec, len, m, o);
	return cap_close(&c);
}

static char *json_line(struct bld *b, const struct dp_rec_meta *m,
		       const struct dp_trace_opts *o, size_t len, int *ret)
{
	struct cap c;

	*ret = dp_json_line(cap_open(&c), &b->ev, b->rec, len, m, o);
	return cap_close(&c);
}

static void expect_trace_o(struct bld *b, const struct dp_trace_opts *o,
			   const char *want)
{
	int ret;
	char *got = trace_line(b, &meta_target, o, b->len, &ret);

	cr_expect_eq(ret, 0);
	cr_expect_str_eq(got, want);
	free(got);
}

static void expect_trace(struct bld *b, const char *want)
{
	expect_trace_o(b, NULL, want);
}

static void expect_json_o(struct bld *b, const struct dp_trace_opts *o,
			  const char *want)
{
	int ret;
	char *got = json_line(b, &meta_target, o, b->len, &ret);

	cr_expect_eq(ret, 0);
	cr_expect_str_eq(got, want);
	free(got);
}

static void expect_json(struct bld *b, const char *want)
{
	expect_json_o(b, NULL, want);
}

/* A small symbol table for kprobe-kind places. */
struct fsym {
	const char *name;
	uint64_t addr, size;
};

static const struct fsym fsyms[] = {
	{ "do_sys_open", 0x1000, 0xd6 },
	{ "sys_openat", 0x2000, 0xe },
	{ "", 0x3000, 0x10 },		/* an empty name counts as none */
};

static int fsym_lookup(void *priv, uint64_t addr, const char **sym,
		       uint64_t *off, uint64_t *size)
{
	size_t i;

	(void)priv;
	for (i = 0; i < sizeof(fsyms) / sizeof(fsyms[0]); i++) {
		if (addr >= fsyms[i].addr &&
		    addr < fsyms[i].addr + fsyms[i].size) {
			*sym = fsyms[i].name;
			*off = addr - fsyms[i].addr;
			*size = fsyms[i].size;
			return 0;
		}
	}
	return -1;
}

static const struct dp_symbolizer fsym = { fsym_lookup, NULL };
static const struct dp_trace_opts kopts = { 2, &fsym };

/* ---- header and lost marker -------------------------------------------- */

Test(output, trace_header)
{
	struct cap c;
	char *got;

	dp_trace_header(cap_open(&c), 2, 2, 2);
	got = cap_close(&c);
	cr_expect_str_eq(got,
		"# tracer: nop\n"
		"#\n"
		"# entries-in-buffer/entries-written: 2/2   #P:2\n"
		"#\n"
		"#                                _-----=> irqs-off/BH-disabled\n"
		"#                               / _----=> need-resched\n"
		"#                              | / _---=> hardirq/softirq\n"
		"#                              || / _--=> preempt-depth\n"
		"#                              ||| / _-=> migrate-disable\n"
		"#                              |||| /     delay\n"
		"#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
		"#              | |         |   |||||     |         |\n");
	free(got);

	dp_trace_header(cap_open(&c), 4000000000UL, 123456789012UL, 64);
	got = cap_close(&c);
	cr_expect(strstr(got, "\n# entries-in-buffer/entries-written: "
			      "4000000000/123456789012   #P:64\n#\n#  "));
	free(got);
}

Test(output, lost_marker)
{
	struct cap c;
	char *got;

	cap_open(&c);
	dp_trace_lost(c.f, 3, 17);
	dp_trace_lost(c.f, 0, DP_LOST_UNKNOWN);
	dp_trace_lost(c.f, 1, 0);
	got = cap_close(&c);
	cr_expect_str_eq(got, "CPU:3 [LOST 17 EVENTS]\nCPU:0 [LOST EVENTS]\n");
	free(got);
}

/* ---- line prefix ------------------------------------------------------- */

Test(output, prefix_and_timestamp)
{
	struct bld b;
	struct dp_rec_meta m = { .ts_ns = 999999500, .cpu = 12, .pid = 7 };
	int ret;
	char *got;

	bld_init(&b, DP_KIND_UPROBE, false, "e");
	set_ip(&b, 0x401146);
	/* comm unknown -> "<...>"; 999999500 ns rounds up to 1.000000 */
	got = trace_line(&b, &m, NULL, b.len, &ret);
	cr_expect_eq(ret, 0);
	cr_expect_str_eq(got,
		"           <...>-7       [012] .....     1.000000: e: (0x401146)\n");
	free(got);

	/* 499 ns rounds down; a long comm is not cut; 7-digit pid */
	m.ts_ns = 123456000000499ULL;
	m.comm = "a-very-long-command";
	m.pid = 4194304;
	m.cpu = 0;
	got = trace_line(&b, &m, NULL, b.len, &ret);
	cr_expect_str_eq(got,
		"a-very-long-command-4194304 [000] ..... 123456.000000: e: (0x401146)\n");
	free(got);
}

/* ---- lines as a live kernel prints them --------------------------------- */

Test(output, uprobe_entry_t1)
{
	struct bld b;
	struct dp_field *s;

	bld_init(&b, DP_KIND_UPROBE, false, "t1");
	set_ip(&b, 0x401146);
	num(&b, "x", DP_T_X, 8, 0x28);
	s = arg(&b, "s", DP_T_STRING, 4, 0);
	sets(&b, s, 0, "hello world");
	expect_trace(&b, PREFIX "t1: (0x401146) x=0x28 s=\"hello world\"\n");
}

Test(output, uretprobe_rp)
{
	struct bld b;

	bld_init(&b, DP_KIND_UPROBE, true, "rp");
	set_ret(&b, 0x401146, 0x4011eb);
	num(&b, "ret", DP_T_X, 8, 0x4f);
	num(&b, "sret", DP_T_S, 8, 79);
	num(&b, "ip", DP_T_X, 8, 0x4011eb);
	num(&b, "sp", DP_T_X, 8, 0x7ffecd233ef0);
	num(&b, "st", DP_T_X, 8, 0x7ffecd233ef0);
	expect_trace(&b, PREFIX "rp: (0x4011eb <- 0x401146) ret=0x4f sret=79 "
		     "ip=0x4011eb sp=0x7ffecd233ef0 st=0x7ffecd233ef0\n");
}

Test(output, example_types)
{
	struct bld b;
	struct dp_field *chs, *arr, *u16arr, *sarr2;
	const uint64_t cx = 0xfffffff9;

	bld_init(&b, DP_KIND_UPROBE, false, "types");
	set_ip(&b, 0x401146);
	num(&b, "u8", DP_T_U, 1, cx);
	num(&b, "u16", DP_T_U, 2, cx);
	num(&b, "u32", DP_T_U, 4, cx);
	num(&b, "u64", DP_T_U, 8, cx);
	num(&b, "s8", DP_T_S, 1, cx);
	num(&b, "s16", DP_T_S, 2, cx);
	num(&b, "s32", DP_T_S, 4, cx);
	num(&b, "s64", DP_T_S, 8, cx);
	num(&b, "x8", DP_T_X, 1, cx);
	num(&b, "x16", DP_T_X, 2, cx);
	num(&b, "x32", DP_T_X, 4, cx);
	num(&b, "x64", DP_T_X, 8, cx);
	num(&b, "dflt", DP_T_X, 8, cx);
	num(&b, "arg14", DP_T_X, 8, 0x2a);
	num(&b, "arg15", DP_T_X, 8, 0x401146);
	num(&b, "ch", DP_T_CHAR, 1, 's');
	chs = arg(&b, "chs", DP_T_CHAR, 1, 3);
	num(&b, "a", DP_T_S, 4, (uint32_t)-5);
	num(&b, "b", DP_T_X, 2, 0xbeef);
	num(&b, "bf", DP_T_BITFIELD, 2, 14);
	arr = arg(&b, "arr", DP_T_X, 1, 4);
	u16arr = arg(&b, "u16arr", DP_T_U, 2, 2);
	num(&b, "fl", DP_T_X, 1, 0xa5);
	sarr2 = arg(&b, "sarr2", DP_T_S, 1, 2);
	memcpy(b.rec + chs->offset, "str", 3);
	memcpy(b.rec + arr->offset, "stru", 4);
	setv(&b, u16arr, 0, 48879);
	setv(&b, u16arr, 1, 29811);
	setv(&b, sarr2, 0, (uint8_t)-5);
	setv(&b, sarr2, 1, 0xff);
	expect_trace(&b, PREFIX "types: (0x401146) u8=249 u16=65529 "
		"u32=4294967289 u64=4294967289 s8=-7 s16=-7 s32=-7 "
		"s64=4294967289 x8=0xf9 x16=0xfff9 x32=0xfffffff9 "
		"x64=0xfffffff9 dflt=0xfffffff9 arg14=0x2a arg15=0x401146 "
		"ch='s' chs={'s','t','r'} a=-5 b=0xbeef bf=14 "
		"arr={0x73,0x74,0x72,0x75} u16arr={48879,29811} fl=0xa5 "
		"sarr2={-5,-1}\n");
}

Test(output, example_strs)
{
	struct bld b;
	struct dp_field *str_f, *p, *sarr, *us, *comm, *comm2, *imms, *fs,
			*fus, *gs;

	bld_init(&b, DP_KIND_UPROBE, false, "strs");
	set_ip(&b, 0x401146);
	str_f = arg(&b, "str", DP_T_STRING, 4, 0);
	p = arg(&b, "p", DP_T_STRING, 4, 0);
	sarr = arg(&b, "sarr", DP_T_STRING, 4, 1);
	us = arg(&b, "us", DP_T_USTRING, 4, 0);
	comm = arg(&b, "comm", DP_T_STRING, 4, 0);
	comm2 = arg(&b, "COMM", DP_T_STRING, 4, 0);
	num(&b, "imm", DP_T_X, 8, 0x7b);
	num(&b, "immneg", DP_T_S, 8, (uint64_t)-5);
	num(&b, "immhex", DP_T_U, 4, 16);
	imms = arg(&b, "imms", DP_T_STRING, 4, 0);
	fs = arg(&b, "fs", DP_T_STRING, 4, 0);
	num(&b, "fn", DP_T_U, 8, 0);
	fus = arg(&b, "fus", DP_T_USTRING, 4, 0);
	num(&b, "stk", DP_T_X, 8, 0x7ffc1d898e18);
	num(&b, "stk0", DP_T_X, 8, 0x4011eb);
	num(&b, "stk1", DP_T_X, 8, 0x7473beeffffffffb);
	num(&b, "g", DP_T_X, 4, 0x12345678);
	num(&b, "fo", DP_T_X, 1, 0x54);
	num(&b, "fo2", DP_T_X, 4, 0x12345678);
	gs = arg(&b, "gs", DP_T_STRING, 4, 0);
	sets(&b, str_f, 0, "structname");
	sets(&b, p, 0, "ptrstr");
	sets(&b, sarr, 0, "ptrstr");
	sets(&b, us, 0, "hello world");
	sets(&b, comm, 0, "target");
	sets(&b, comm2, 0, "target");
	(void)imms, (void)fs, (void)fus, (void)gs;	/* left 0: faults */
	expect_trace(&b, PREFIX "strs: (0x401146) str=\"structname\" "
		"p=\"ptrstr\" sarr={\"ptrstr\"} us=\"hello world\" "
		"comm=\"target\" COMM=\"target\" imm=0x7b immneg=-5 "
		"immhex=16 imms=(fault) fs=(fault) fn=0 fus=(fault) "
		"stk=0x7ffc1d898e18 stk0=0x4011eb stk1=0x7473beeffffffffb "
		"g=0x12345678 fo=0x54 fo2=0x12345678 gs=(fault)\n");
}

Test(output, example_misc)
{
	struct bld b;

	bld_init(&b, DP_KIND_UPROBE, false, "misc");
	set_ip(&b, 0x401146);
	str(&b, "u", DP_T_USTRING, "hello world");
	num(&b, "neg", DP_T_X, 8, 0x7ff52bdea020);
	str(&b, "hx", DP_T_STRING, "structname");
	num(&b, "oc", DP_T_X, 4, 0x74637572);
	num(&b, "i1", DP_T_X, 8, 0x10);
	num(&b, "i2", DP_T_X, 8, 0xfffffffffffffff0);
	num(&b, "i3", DP_T_X, 8, 5);
	num(&b, "i4", DP_T_U, 8, 8);
	num(&b, "i5", DP_T_U, 1, 255);
	num(&b, "i6", DP_T_X, 8, UINT64_MAX);
	num(&b, "i7", DP_T_S, 8, 0x8000000000000000ULL);
	expect_trace(&b, PREFIX "misc: (0x401146) u=\"hello world\" "
		"neg=0x7ff52bdea020 hx=\"structname\" oc=0x74637572 i1=0x10 "
		"i2=0xfffffffffffffff0 i3=0x5 i4=8 i5=255 "
		"i6=0xffffffffffffffff i7=-9223372036854775808\n");
}

Test(output, example_zero_and_zr)
{
	struct bld b;

	bld_init(&b, DP_KIND_UPROBE, false, "zero");
	set_ip(&b, 0x401146);
	expect_trace(&b, PREFIX "zero: (0x401146)\n");

	bld_init(&b, DP_KIND_UPROBE, true, "zr");
	set_ret(&b, 0x401146, 0x4011eb);
	expect_trace(&b, PREFIX "zr: (0x4011eb <- 0x401146)\n");
}

/* ---- every type, edge values ------------------------------------------- */

Test(output, numeric_edges)
{
	struct bld b;

	bld_init(&b, DP_KIND_UPROBE, false, "n");
	set_ip(&b, 0);
	num(&b, "a", DP_T_U, 8, UINT64_MAX);
	num(&b, "b", DP_T_S, 1, 0x80);
	num(&b, "c", DP_T_S, 2, 0x7fff);
	num(&b, "d", DP_T_S, 4, 0x80000000);
	num(&b, "e", DP_T_X, 1, 0);
	num(&b, "f", DP_T_BITFIELD, 4, 0xfffffff);
	num(&b, "g", DP_T_BITFIELD, 8, 1ULL << 63);
	num(&b, "h", DP_T_BITFIELD, 1, 0xff);
	expect_trace(&b, PREFIX "n: (0x0) a=18446744073709551615 b=-128 "
		"c=32767 d=-2147483648 e=0x0 f=268435455 "
		"g=9223372036854775808 h=255\n");
}

Test(output, char_raw_bytes)
{
	struct bld b;
	struct cap c;
	static const char want[] = PREFIX "c: (0x1) q=''' n='\0' h='\xff'\n";

	bld_init(&b, DP_KIND_UPROBE, false, "c");
	set_ip(&b, 1);
	num(&b, "q", DP_T_CHAR, 1, '\'');
	num(&b, "n", DP_T_CHAR, 1, 0);
	num(&b, "h", DP_T_CHAR, 1, 0xff);
	cr_expect_eq(dp_trace_line(cap_open(&c), &b.ev, b.rec, b.len,
				   &meta_target, NULL), 0);
	cap_close(&c);
	/* the NUL byte is written as is, so compare by length */
	cr_expect_eq(c.len, sizeof(want) - 1);
	if (c.len == sizeof(want) - 1)
		cr_expect_eq(memcmp(c.buf, want, c.len), 0);
	free(c.buf);
}

Test(output, strings_raw_and_cut)
{
	struct bld b;
	struct dp_field *q, *cut, *nonul, *empty, *sa;

	bld_init(&b, DP_KIND_UPROBE, false, "s");
	set_ip(&b, 0x10);
	q = arg(&b, "q", DP_T_STRING, 4, 0);
	cut = arg(&b, "cut", DP_T_STRING, 4, 0);
	nonul = arg(&b, "nonul", DP_T_STRING, 4, 0);
	empty = arg(&b, "empty", DP_T_STRING, 4, 0);
	sa = arg(&b, "sa", DP_T_STRING, 4, 3);
	sets(&b, q, 0, "\"quote\"and\\back\"\t");
	setsn(&b, cut, 0, "ab\0cd", 6);
	setsn(&b, nonul, 0, "xyz", 3);	/* no NUL: stop at the length */
	sets(&b, empty, 0, "");		/* len 1: an empty string, not a fault */
	sets(&b, sa, 0, "a");
	setv(&b, sa, 1, 0);
	sets(&b, sa, 2, "b c");
	expect_trace(&b, PREFIX "s: (0x10) q=\"\"quote\"and\\back\"\t\" "
		"cut=\"ab\" nonul=\"xyz\" empty=\"\" "
		"sa={\"a\",(fault),\"b c\"}\n");
}

Test(output, symbol_type_and_symstr)
{
	struct bld b;

	bld_init(&b, DP_KIND_KPROBE, false, "k");
	set_ip(&b, 0x1000);
	num(&b, "fn", DP_T_SYMBOL, 8, 0x1005);
	num(&b, "unk", DP_T_SYMBOL, 8, 0x9999);
	num(&b, "zero", DP_T_SYMBOL, 8, 0);
	str(&b, "ss", DP_T_SYMSTR, "sys_openat+0x3/0xe");
	expect_trace_o(&b, &kopts, PREFIX "k: (do_sys_open+0x0/0xd6) "
		       "fn=do_sys_open+0x5/0xd6 unk=0x9999 zero=0x0 "
		       "ss=\"sys_openat+0x3/0xe\"\n");
	/* without a symbolizer everything falls back to addresses */
	expect_trace(&b, PREFIX "k: (0x00001000) fn=0x1005 unk=0x9999 "
		     "zero=0x0 ss=\"sys_openat+0x3/0xe\"\n");
}

/* ---- kprobe-kind places ------------------------------------------------ */

Test(output, kprobe_entry)
{
	struct bld b;

	bld_init(&b, DP_KIND_KPROBE, false, "myprobe");
	set_ip(&b, 0x1000);
	num(&b, "dfd", DP_T_U, 4, 3);
	expect_trace_o(&b, &kopts,
		       PREFIX "myprobe: (do_sys_open+0x0/0xd6) dfd=3\n");
	set_ip(&b, 0x1234);	/* no symbol covers it */
	expect_trace_o(&b, &kopts, PREFIX "myprobe: (0x00001234) dfd=3\n");
	set_ip(&b, 0x123456789);
	expect_trace_o(&b, &kopts, PREFIX "myprobe: (0x123456789) dfd=3\n");
	set_ip(&b, 0x3004);	/* empty name: no symbol */
	expect_trace_o(&b, &kopts, PREFIX "myprobe: (0x00003004) dfd=3\n");
	set_ip(&b, 0);
	expect_trace_o(&b, &kopts, PREFIX "myprobe: (0) dfd=3\n");
}

Test(output, kprobe_return)
{
	struct bld b;

	bld_init(&b, DP_KIND_KPROBE, true, "myret");
	set_ret(&b, 0x1000, 0x200c);
	num(&b, "arg1", DP_T_X, 8, 0);
	expect_trace_o(&b, &kopts, PREFIX
		       "myret: (sys_openat+0xc/0xe <- do_sys_open) arg1=0x0\n");
	set_ret(&b, 0x1010, 0x5000);	/* func inside, caller unknown */
	expect_trace_o(&b, &kopts, PREFIX
		       "myret: (0x00005000 <- do_sys_open) arg1=0x0\n");
	set_ret(&b, 0x4000, 0);
	expect_trace_o(&b, &kopts, PREFIX "myret: (0 <- 0x00004000) arg1=0x0\n");
}

/* ---- malformed records --------------------------------------------------- */

static void expect_rejected(struct bld *b, size_t len)
{
	int ret;
	char *got = trace_line(b, &meta_target, &kopts, len, &ret);

	cr_expect_eq(ret, -1);
	cr_expect_str_eq(got, "");	/* nothing written */
	free(got);
	got = json_line(b, &meta_target, &kopts, len, &ret);
	cr_expect_eq(ret, -1);
	cr_expect_str_eq(got, "");
	free(got);
}

Test(output, malformed_records)
{
	struct bld b;
	struct dp_field *s, *sa;
	size_t full;

	bld_init(&b, DP_KIND_UPROBE, false, "m");
	set_ip(&b, 0x401146);
	num(&b, "x", DP_T_U, 8, 1);
	s = arg(&b, "s", DP_T_STRING, 4, 0);
	sa = arg(&b, "sa", DP_T_STRING, 4, 2);
	sets(&b, s, 0, "hello");
	sets(&b, sa, 0, "a");
	sets(&b, sa, 1, "b");
	full = b.len;

	expect_trace(&b, PREFIX "m: (0x401146) x=1 s=\"hello\" "
		     "sa={\"a\",\"b\"}\n");
	expect_rejected(&b, b.ev.fixed_size - 1);	/* short fixed part */
	expect_rejected(&b, 10);			/* short header */
	expect_rejected(&b, 0);
	expect_rejected(&b, full - 1);	/* last string's data cut */

	/* a __data_loc pointing past the end of the record */
	setv(&b, s, 0, 6u << 16 | 0xfff0);
	expect_rejected(&b, full);
	/* ... or with a length running past it */
	setv(&b, s, 0, 0xffffu << 16 | (uint32_t)b.ev.fixed_size);
	expect_rejected(&b, full);
	/* a faulted element in an array is fine, the bad one is not */
	setv(&b, s, 0, 0);
	setv(&b, sa, 0, 0);
	setv(&b, sa, 1, 2u << 16 | 0xffff);
	expect_rejected(&b, full);
	setv(&b, sa, 1, 0x1234);	/* len 0, any offset: a fault */
	expect_trace(&b, PREFIX "m: (0x401146) x=1 s=(fault) "
		     "sa={(fault),(fault)}\n");

	/* return events need their 24-byte header */
	bld_init(&b, DP_KIND_UPROBE, true, "r");
	b.ev.fixed_size = 0;
	expect_rejected(&b, 20);

	/* a field described outside fixed_size is still bounds-checked */
	bld_init(&b, DP_KIND_UPROBE, false, "f");
	num(&b, "x", DP_T_U, 8, 1);
	b.ev.fixed_size = DP_ENTRY_HEAD_SIZE;
	expect_rejected(&b, DP_ENTRY_HEAD_SIZE + 4);

	/* an element size no printer handles */
	bld_init(&b, DP_KIND_UPROBE, false, "g");
	num(&b, "x", DP_T_U, 8, 1);
	b.f[1].size = 3;
	expect_rejected(&b, b.len);
}

Test(output, null_record)
{
	struct bld b;
	struct cap c;

	bld_init(&b, DP_KIND_UPROBE, false, "n");
	cr_expect_eq(dp_trace_line(cap_open(&c), &b.ev, NULL, 100,
				   &meta_target, NULL), -1);
	free(cap_close(&c));
	cr_expect_eq(dp_json_line(cap_open(&c), &b.ev, NULL, 100,
				  &meta_target, NULL), -1);
	free(cap_close(&c));
}

/* ---- JSON ---------------------------------------------------------------- */

Test(output, json_t1)
{
	struct bld b;

	bld_init(&b, DP_KIND_UPROBE, false, "t1");
	set_ip(&b, 0x401146);
	num(&b, "x", DP_T_X, 8, 0x28);
	str(&b, "s", DP_T_STRING, "hello world");
	expect_json(&b, "{\"event\":\"t1\",\"group\":\"grp\",\"id\":2326,"
		"\"ts\":5592.123457,\"cpu\":1,\"pid\":21548,\"tgid\":21548,"
		"\"comm\":\"target\",\"ip\":\"0x401146\","
		"\"args\":{\"x\":\"0x28\",\"s\":\"hello world\"}}\n");
}

Test(output, json_types)
{
	struct bld b;
	struct dp_field *chs, *sa, *u64a;
	struct dp_rec_meta m = { .ts_ns = 1500, .cpu = 0, .pid = 5, .tgid = 4 };
	int ret;
	char *got;

	bld_init(&b, DP_KIND_UPROBE, true, "rp");
	set_ret(&b, 0x401146, 0x4011eb);
	num(&b, "u", DP_T_U, 8, UINT64_MAX);
	num(&b, "s", DP_T_S, 8, 0x8000000000000000ULL);
	num(&b, "s8", DP_T_S, 1, 0xf9);
	num(&b, "x", DP_T_X, 2, 0xbeef);
	num(&b, "bf", DP_T_BITFIELD, 2, 14);
	num(&b, "c", DP_T_CHAR, 1, '"');
	num(&b, "nul", DP_T_CHAR, 1, 0);
	chs = arg(&b, "chs", DP_T_CHAR, 1, 2);
	u64a = arg(&b, "u64a", DP_T_U, 8, 2);
	num(&b, "sym", DP_T_SYMBOL, 8, 0x77);
	str(&b, "f", DP_T_STRING, NULL);
	sa = arg(&b, "sa", DP_T_STRING, 4, 3);
	memcpy(b.rec + chs->offset, "a\\", 2);
	setv(&b, u64a, 0, 9007199254740993ULL);	/* 2^53 + 1, exact */
	setv(&b, u64a, 1, 0);
	sets(&b, sa, 0, "x");
	setv(&b, sa, 1, 0);
	sets(&b, sa, 2, "");
	got = json_line(&b, &m, NULL, b.len, &ret);

	cr_expect_eq(ret, 0);
	cr_expect_str_eq(got, "{\"event\":\"rp\",\"group\":\"grp\",\"id\":2326,"
		"\"ts\":0.000002,\"cpu\":0,\"pid\":5,\"tgid\":4,\"comm\":null,"
		"\"func\":\"0x401146\",\"ret_ip\":\"0x4011eb\",\"args\":{"
		"\"u\":18446744073709551615,\"s\":-9223372036854775808,"
		"\"s8\":-7,\"x\":\"0xbeef\",\"bf\":14,\"c\":\"\\\"\","
		"\"nul\":\"\\u0000\",\"chs\":[\"a\",\"\\\\\"],"
		"\"u64a\":[9007199254740993,0],\"sym\":\"0x77\",\"f\":null,"
		"\"sa\":[\"x\",null,\"\"]},\"faults\":[\"f\",\"sa\"]}\n");
	free(got);
}

Test(output, json_escaping)
{
	struct bld b;
	struct dp_field *s;
	/* quotes, backslash, short escapes, other controls, DEL */
	static const char ctl[] = "q\"b\\n\nt\tr\rb\bf\f\x01\x1f\x7f/";
	/* valid 2/3/4-byte UTF-8, then invalid: lone continuation, overlong,
	 * surrogate, above U+10FFFF, truncated sequence at the end */
	static const char utf[] = "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"
				  "\x80\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80"
				  "\xe2\x82";
	struct dp_rec_meta m = meta_target;
	int ret;
	char *got;

	bld_init(&b, DP_KIND_UPROBE, false, "e\"v");
	strcpy(b.ev.group, "g\\");
	set_ip(&b, 0x1);
	s = arg(&b, "ctl", DP_T_STRING, 4, 0);
	str(&b, "utf", DP_T_USTRING, utf);
	num(&b, "hi", DP_T_CHAR, 1, 0xe9);
	sets(&b, s, 0, ctl);
	m.comm = "a\"b";
	got = json_line(&b, &m, NULL, b.len, &ret);
	cr_expect_eq(ret, 0);
	cr_expect_str_eq(got, "{\"event\":\"e\\\"v\",\"group\":\"g\\\\\","
		"\"id\":2326,\"ts\":5592.123457,\"cpu\":1,\"pid\":21548,"
		"\"tgid\":21548,\"comm\":\"a\\\"b\",\"ip\":\"0x1\",\"args\":{"
		"\"ctl\":\"q\\\"b\\\\n\\nt\\tr\\rb\\bf\\f\\u0001\\u001f\\u007f/\","
		"\"utf\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"
		"\\u0080\\u00c0\\u00af\\u00ed\\u00a0\\u0080"
		"\\u00f4\\u0090\\u0080\\u0080\\u00e2\\u0082\","
		"\"hi\":\"\\u00e9\"}}\n");
	free(got);
}

Test(output, json_kprobe_symbols)
{
	struct bld b;

	bld_init(&b, DP_KIND_KPROBE, false, "k");
	set_ip(&b, 0x1000);
	num(&b, "fn", DP_T_SYMBOL, 8, 0x2001);
	expect_json_o(&b, &kopts, "{\"event\":\"k\",\"group\":\"grp\","
		"\"id\":2326,\"ts\":5592.123457,\"cpu\":1,\"pid\":21548,"
		"\"tgid\":21548,\"comm\":\"target\",\"ip\":\"0x1000\","
		"\"sym\":\"do_sys_open+0x0/0xd6\","
		"\"args\":{\"fn\":\"sys_openat+0x1/0xe\"}}\n");
	set_ip(&b, 0x9000);	/* unknown: no "sym" key */
	expect_json_o(&b, &kopts, "{\"event\":\"k\",\"group\":\"grp\","
		"\"id\":2326,\"ts\":5592.123457,\"cpu\":1,\"pid\":21548,"
		"\"tgid\":21548,\"comm\":\"target\",\"ip\":\"0x9000\","
		"\"args\":{\"fn\":\"sys_openat+0x1/0xe\"}}\n");

	bld_init(&b, DP_KIND_KPROBE, true, "kr");
	set_ret(&b, 0x1000, 0x200c);
	expect_json_o(&b, &kopts, "{\"event\":\"kr\",\"group\":\"grp\","
		"\"id\":2326,\"ts\":5592.123457,\"cpu\":1,\"pid\":21548,"
		"\"tgid\":21548,\"comm\":\"target\",\"func\":\"0x1000\","
		"\"ret_ip\":\"0x200c\",\"sym\":\"do_sys_open\","
		"\"ret_sym\":\"sys_openat+0xc/0xe\",\"args\":{}}\n");

	/* uprobe-kind events are never symbolized */
	bld_init(&b, DP_KIND_UPROBE, false, "u");
	set_ip(&b, 0x1000);
	expect_json_o(&b, &kopts, "{\"event\":\"u\",\"group\":\"grp\","
		"\"id\":2326,\"ts\":5592.123457,\"cpu\":1,\"pid\":21548,"
		"\"tgid\":21548,\"comm\":\"target\",\"ip\":\"0x1000\","
		"\"args\":{}}\n");
	expect_trace_o(&b, &kopts, PREFIX "u: (0x1000)\n");
}
