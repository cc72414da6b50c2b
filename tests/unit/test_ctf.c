// SPDX-License-Identifier: GPL-2.0
/*
 * --format ctf (output/render-ctf.c): the bytes of the packets and events
 * in DIR/stream_N, read back here by their offsets as CTF 1.8 and the
 * metadata lay them out, and the metadata's declarations; lost events in
 * the packet context; a packet grown for an event that fills more than
 * one; a record refused writes nothing.  That babeltrace2 reads what is
 * written is tests/e2e/cases/ctf.sh.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "event/event.h"
#include "output/renderer.h"

#define HEAD 68		/* packet header and context */
#define PKT (64 * 1024)

/* ---- an event: ip, u32 x, x16 h, string s, s16 a[2] ------------------- */

struct fixed {
	struct dp_event ev;
	struct dp_field f[5];
	struct dp_type t[5];
	uint8_t rec[70000];
	size_t len;
};

static void put_le(uint8_t *p, uint64_t v, unsigned size)
{
	memcpy(p, &v, size);	/* x86-64: host order is little-endian */
}

static void field(struct fixed *x, unsigned i, const char *name,
		  enum dp_type_kind kind, unsigned off, unsigned esz,
		  unsigned count)
{
	x->t[i] = (struct dp_type){ .kind = kind, .size = esz,
				    .count = count };
	x->f[i] = (struct dp_field){
		.name = name, .type = "test", .offset = off,
		.size = esz * (count ? count : 1), .elem_size = esz,
		.count = count, .ptype = i ? &x->t[i] : NULL,
		.is_signed = kind == DP_T_S,
		.fclass = kind == DP_T_STRING ? DP_FC_STRING :
			  count ? DP_FC_ARRAY : DP_FC_NUM,
	};
}

/* The record with @slen bytes of 'z' as s (and its NUL). */
static void fixed_init(struct fixed *x, size_t slen)
{
	unsigned h = DP_ENTRY_HEAD_SIZE, data = h + 4 + 2 + 4 + 4;

	memset(x, 0, sizeof(*x));
	x->ev.id = 1000;
	strcpy(x->ev.group, "grp");
	strcpy(x->ev.name, "k");
	x->ev.kind = DP_KIND_UPROBE;
	x->ev.fields = x->f;
	x->ev.nfields = 5;
	field(x, 0, "__probe_ip", DP_T_X, 8, 8, 0);
	field(x, 1, "x", DP_T_U, h, 4, 0);
	field(x, 2, "h", DP_T_X, h + 4, 2, 0);
	field(x, 3, "s", DP_T_STRING, h + 6, 4, 0);
	field(x, 4, "a", DP_T_S, h + 10, 2, 2);
	x->ev.fixed_size = data;
	put_le(x->rec, x->ev.id, 2);
	put_le(x->rec + 4, 4242, 4);
	put_le(x->rec + 8, 0x401000, 8);
	put_le(x->rec + h, 40, 4);
	put_le(x->rec + h + 4, 0xbeef, 2);
	put_le(x->rec + h + 6, (uint32_t)((slen + 1) << 16 | data), 4);
	put_le(x->rec + h + 10, (uint16_t)-5, 2);
	put_le(x->rec + h + 12, 7, 2);
	memset(x->rec + data, 'z', slen);
	x->len = data + slen + 1;
}

static const struct dp_rec_meta meta1 = {
	.ts_ns = 5592123456789ULL, .cpu = 1, .pid = 4243, .tgid = 4242,
	.comm = "work",
};

/* ---- a trace directory ------------------------------------------------- */

struct trace {
	char dir[64];
	struct dp_renderer r;
};

static void trace_open(struct trace *t)
{
	strcpy(t->dir, "/tmp/dp-ctf-test-XXXXXX");
	cr_assert_not_null(mkdtemp(t->dir));
	dp_renderer_init(&t->r, dp_renderer_by_name("ctf"), stdout, 2);
	t->r.path = t->dir;
	dp_render_begin(&t->r);
}

/* DIR/@name's bytes (*@n of them), NULL if there is no such file. */
static uint8_t *slurp(const struct trace *t, const char *name, size_t *n)
{
	char path[128];
	uint8_t *p = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", t->dir, name);
	f = fopen(path, "r");
	*n = 0;
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	*n = (size_t)ftell(f);
	rewind(f);
	p = malloc(*n + 1);
	cr_assert_eq(fread(p, 1, *n, f), *n);
	p[*n] = 0;
	fclose(f);
	return p;
}

static void trace_close(struct trace *t)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
	cr_expect_eq(system(cmd), 0);
}

static uint64_t le(const uint8_t *p, unsigned size)
{
	uint64_t v = 0;

	memcpy(&v, p, size);
	return v;
}

/* The packet head at @p: its fields, checked against the arguments. */
static void expect_head(const uint8_t *p, const uint8_t *uuid, size_t size,
			size_t content, uint64_t t0, uint64_t t1,
			uint64_t discarded, unsigned cpu)
{
	cr_expect_eq(le(p, 4), 0xc1fc1fc1u, "magic");
	cr_expect_eq(memcmp(p + 4, uuid, 16), 0, "uuid");
	cr_expect_eq(le(p + 20, 4), 0, "stream_id");
	cr_expect_eq(le(p + 24, 8), t0, "timestamp_begin");
	cr_expect_eq(le(p + 32, 8), t1, "timestamp_end");
	cr_expect_eq(le(p + 40, 8), content * 8, "content_size");
	cr_expect_eq(le(p + 48, 8), size * 8, "packet_size");
	cr_expect_eq(le(p + 56, 8), discarded, "events_discarded");
	cr_expect_eq(le(p + 64, 4), cpu, "cpu_id");
}

/* The trace's uuid as the metadata says it, in bytes. */
static void meta_uuid(const char *md, uint8_t *uuid)
{
	const char *u = strstr(md, "\tuuid = \"");
	unsigned k = 0;

	cr_assert_not_null(u);
	for (u += 9; *u != '"' && k < 16; u++) {
		if (*u == '-')
			continue;
		cr_assert_eq(sscanf(u, "%2hhx", &uuid[k++]), 1);
		u++;
	}
	cr_assert_eq(k, 16);
}

/* ---- tests ------------------------------------------------------------- */

/* One event: the packet head, the event's header, context and fields in
 * their order and sizes, zeros after; the metadata declares them so. */
Test(ctf, event_bytes_and_metadata)
{
	struct fixed *x = malloc(sizeof(*x));
	struct trace t;
	uint8_t uuid[16];
	const uint8_t *e;
	uint8_t *s;
	char *md;
	size_t n, ev;

	fixed_init(x, 3);
	trace_open(&t);
	cr_expect_eq(dp_render_event(&t.r, &x->ev, x->rec, x->len, &meta1,
				     NULL), 0);
	dp_render_end(&t.r);
	md = (char *)slurp(&t, "metadata", &n);
	s = slurp(&t, "stream_1", &n);
	cr_assert_not_null(md);
	cr_assert_not_null(s);
	cr_expect_eq(strncmp(md, "/* CTF 1.8 */\n", 14), 0);
	cr_expect_not_null(strstr(md, "\tmajor = 1;\n\tminor = 8;\n"));
	cr_expect_not_null(strstr(md, "\tbyte_order = le;\n"));
	cr_expect_not_null(strstr(md, "\tdomain = \"ust\";\n"
				  "\ttracer_name = \"dprobe\";\n"));
	cr_expect_not_null(strstr(md, "\tfreq = 1000000000;\n"));
	cr_expect_not_null(strstr(md,
		"event {\n\tname = \"grp:k\";\n\tid = 1000;\n"
		"\tstream_id = 0;\n\tfields := struct {\n"
		"\t\tinteger { size = 64; align = 8; signed = 0; encoding = none; base = 16; } ___probe_ip;\n"
		"\t\tinteger { size = 32; align = 8; signed = 0; encoding = none; base = 10; } _x;\n"
		"\t\tinteger { size = 16; align = 8; signed = 0; encoding = none; base = 16; } _h;\n"
		"\t\tstring _s;\n"
		"\t\tinteger { size = 16; align = 8; signed = 1; encoding = none; base = 10; } _a[2];\n"
		"\t};\n};\n"), "%s", md);
	meta_uuid(md, uuid);
	ev = 4 + 8 + 4 + 4 + 5 + 8 + 4 + 2 + 4 + 4;
	cr_assert_eq(n, PKT);
	expect_head(s, uuid, PKT, HEAD + ev, meta1.ts_ns, meta1.ts_ns, 0, 1);
	e = s + HEAD;
	cr_expect_eq(le(e, 4), 1000, "id");
	cr_expect_eq(le(e + 4, 8), meta1.ts_ns, "timestamp");
	cr_expect_eq(le(e + 12, 4), 4242, "vpid");
	cr_expect_eq(le(e + 16, 4), 4243, "vtid");
	cr_expect_eq(memcmp(e + 20, "work", 5), 0, "procname");
	cr_expect_eq(le(e + 25, 8), 0x401000, "__probe_ip");
	cr_expect_eq(le(e + 33, 4), 40, "x");
	cr_expect_eq(le(e + 37, 2), 0xbeef, "h");
	cr_expect_eq(memcmp(e + 39, "zzz", 4), 0, "s");
	cr_expect_eq((int16_t)le(e + 43, 2), -5, "a[0]");
	cr_expect_eq(le(e + 45, 2), 7, "a[1]");
	for (size_t i = HEAD + ev; i < n; i++)
		cr_assert_eq(s[i], 0, "padding at %zu", i);
	free(md);
	free(s);
	free(x);
	trace_close(&t);
}

/* The clock's offset makes a monotonic time a wall-clock one. */
Test(ctf, clock_offset_is_the_wall_clock)
{
	struct trace t;
	struct timespec mono;
	long long off_s = 0;
	char *md, *p;
	size_t n;

	trace_open(&t);
	dp_render_end(&t.r);
	md = (char *)slurp(&t, "metadata", &n);
	cr_assert_not_null(md);
	p = strstr(md, "\toffset_s = ");
	cr_assert_not_null(p);
	cr_assert_eq(sscanf(p, "\toffset_s = %lld;", &off_s), 1);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	cr_expect(llabs(off_s + mono.tv_sec - (long long)time(NULL)) <= 2,
		  "offset_s %lld", off_s);
	/* no event: one empty packet, so that readers take the trace */
	free(md);
	md = (char *)slurp(&t, "stream_0", &n);
	cr_expect_not_null(md);
	cr_expect_eq(le((uint8_t *)md + 40, 8), HEAD * 8);
	free(md);
	trace_close(&t);
}

/* Losses before a CPU's first packet: an empty packet with none, then the
 * packet with them (readers count a packet's losses from the one before);
 * an unknown number counts one; losses on a CPU with no event. */
Test(ctf, lost_events_in_the_packet_context)
{
	struct fixed *x = malloc(sizeof(*x));
	struct trace t;
	struct dp_rec_meta m = meta1;
	uint8_t uuid[16], *s;
	char *md;
	size_t n;

	fixed_init(x, 0);
	m.cpu = 0;
	trace_open(&t);
	dp_render_lost(&t.r, 0, 5);
	dp_render_lost(&t.r, 0, DP_LOST_UNKNOWN);
	cr_expect_eq(dp_render_event(&t.r, &x->ev, x->rec, x->len, &m, NULL),
		     0);
	dp_render_lost(&t.r, 3, 2);
	dp_render_end(&t.r);
	/* CPU 3 had losses only: told by an empty packet at the end; CPU 2
	 * had nothing: no file */
	s = slurp(&t, "stream_3", &n);
	cr_expect_eq(n, HEAD + PKT);
	cr_expect_eq(n == HEAD + PKT ? le(s + HEAD + 56, 8) : 0, 2);
	free(s);
	cr_expect_null(slurp(&t, "stream_2", &n));
	md = (char *)slurp(&t, "metadata", &n);
	meta_uuid(md, uuid);
	s = slurp(&t, "stream_0", &n);
	cr_assert_eq(n, HEAD + PKT);
	cr_expect_eq(le(s + 56, 8), 0);
	cr_expect_eq(le(s + 40, 8), le(s + 48, 8));
	expect_head(s + HEAD, uuid, PKT, HEAD + 4 + 8 + 4 + 4 + 5 + 8 + 4 +
		    2 + 1 + 4, le(s + 24, 8), m.ts_ns, 6, 0);
	free(md);
	free(s);
	free(x);
	trace_close(&t);
}

/* An event that does not fit in the packet opens the next one; one
 * bigger than a packet gets a packet of its own, grown; a time earlier
 * than the one before it on the same CPU is that one's. */
Test(ctf, packets_follow_and_grow)
{
	struct fixed *x = malloc(sizeof(*x));
	struct dp_rec_meta m = meta1;
	struct trace t;
	uint8_t *s, *p2, *p3;
	size_t n;

	fixed_init(x, 40000);
	trace_open(&t);
	cr_expect_eq(dp_render_event(&t.r, &x->ev, x->rec, x->len, &m, NULL),
		     0);
	m.ts_ns -= 10;
	cr_expect_eq(dp_render_event(&t.r, &x->ev, x->rec, x->len, &m, NULL),
		     0);
	fixed_init(x, 65500);
	m.ts_ns += 20;
	cr_expect_eq(dp_render_event(&t.r, &x->ev, x->rec, x->len, &m, NULL),
		     0);
	dp_render_end(&t.r);
	s = slurp(&t, "stream_1", &n);
	cr_assert_eq(n, PKT + PKT + 2 * PKT);
	p2 = s + PKT;
	p3 = s + 2 * PKT;
	cr_expect_eq(le(s + 40, 8), (HEAD + 43 + 40001) * 8);
	cr_expect_eq(le(p2 + 48, 8), PKT * 8);
	cr_expect_eq(le(p2 + 24, 8), meta1.ts_ns);
	cr_expect_eq(le(p2 + HEAD + 4, 8), meta1.ts_ns);
	cr_expect_eq(le(p3 + 48, 8), 2 * PKT * 8);
	cr_expect_eq(le(p3 + 40, 8), (HEAD + 43 + 65501) * 8);
	cr_expect_eq(le(p3 + HEAD + 4, 8), meta1.ts_ns + 10);
	free(s);
	free(x);
	trace_close(&t);
}

/* A record shorter than its fixed part is refused and leaves no trace of
 * itself: no event in the metadata, no packet with it. */
Test(ctf, malformed_record_writes_nothing)
{
	struct fixed *x = malloc(sizeof(*x));
	struct trace t;
	char *md;
	size_t n;

	fixed_init(x, 3);
	trace_open(&t);
	cr_expect_eq(dp_render_event(&t.r, &x->ev, x->rec, 20, &meta1, NULL),
		     -1);
	dp_render_end(&t.r);
	md = (char *)slurp(&t, "metadata", &n);
	cr_assert_not_null(md);
	cr_expect_null(strstr(md, "grp:k"));
	free(md);
	md = (char *)slurp(&t, "stream_1", &n);
	cr_expect_null(md);
	free(x);
	trace_close(&t);
}

/* Without a directory (no CLI to give one), nothing at all. */
Test(ctf, no_path_no_output)
{
	struct fixed *x = malloc(sizeof(*x));
	struct dp_renderer r;

	fixed_init(x, 3);
	dp_renderer_init(&r, dp_renderer_by_name("ctf"), stdout, 2);
	cr_expect(r.ops->dir);
	dp_render_begin(&r);
	cr_expect_eq(dp_render_event(&r, &x->ev, x->rec, x->len, &meta1,
				     NULL), -1);
	dp_render_end(&r);
	free(x);
}
