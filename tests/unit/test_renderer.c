// SPDX-License-Identifier: GPL-2.0
/*
 * The renderer interface (output/renderer.h): formats found by name, the
 * names listed for messages, and the text and JSON renderers writing
 * exactly what dp_trace_line, dp_trace_lost and dp_json_line write, so
 * that `--format` changed no byte of dprobe's output.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "event/event.h"
#include "output/output.h"
#include "output/renderer.h"
#include "util/util.h"

/* ---- a fixed event and record ------------------------------------------ */

/*
 * A kprobe-kind entry event "k" (so the symbolizer is used) with a u32
 * "x" and a string "s": header word, then x, then s's __data_loc, then
 * the string's bytes.
 */
struct fixed {
	struct dp_event ev;
	struct dp_field f[3];
	struct dp_type t[3];
	uint8_t rec[64];
	size_t len;
};

static void put_le(uint8_t *p, uint64_t v, unsigned size)
{
	memcpy(p, &v, size);	/* x86-64: host order is little-endian */
}

static void field(struct fixed *x, unsigned i, const char *name,
		  enum dp_field_class fc, enum dp_type_kind kind,
		  unsigned off, unsigned size)
{
	x->t[i] = (struct dp_type){ .kind = kind, .size = size };
	x->f[i] = (struct dp_field){
		.name = name, .type = "test", .fclass = fc, .offset = off,
		.size = size, .elem_size = size, .ptype = i ? &x->t[i] : NULL,
		.is_signed = kind == DP_T_STRING,
	};
}

static void fixed_init(struct fixed *x)
{
	static const char s[] = "etc";
	unsigned data = DP_ENTRY_HEAD_SIZE + 4 + 4;

	memset(x, 0, sizeof(*x));
	x->ev.id = 1000;
	strcpy(x->ev.group, "grp");
	strcpy(x->ev.name, "k");
	x->ev.kind = DP_KIND_KPROBE;
	x->ev.fields = x->f;
	x->ev.nfields = 3;
	field(x, 0, "__probe_ip", DP_FC_NUM, DP_T_X, 8, 8);
	x->f[0].type = "unsigned long";
	field(x, 1, "x", DP_FC_NUM, DP_T_U, DP_ENTRY_HEAD_SIZE, 4);
	field(x, 2, "s", DP_FC_STRING, DP_T_STRING, DP_ENTRY_HEAD_SIZE + 4, 4);
	x->ev.fixed_size = data;

	put_le(x->rec, x->ev.id, 2);
	put_le(x->rec + 4, 4242, 4);
	put_le(x->rec + 8, 0x1004, 8);
	put_le(x->rec + DP_ENTRY_HEAD_SIZE, 40, 4);
	put_le(x->rec + DP_ENTRY_HEAD_SIZE + 4,
	       (uint32_t)(sizeof(s) << 16 | data), 4);
	memcpy(x->rec + data, s, sizeof(s));
	x->len = data + sizeof(s);
}

static const struct dp_rec_meta meta = {
	.ts_ns = 5592123456789ULL, .cpu = 1, .pid = 4242, .tgid = 4242,
	.comm = "work",
};

static int lookup(void *priv, uint64_t addr, const char **sym,
		  uint64_t *off, uint64_t *size)
{
	(void)priv;
	if (addr < 0x1000 || addr >= 0x1024)
		return -1;
	*sym = "work";
	*off = addr - 0x1000;
	*size = 0x24;
	return 0;
}

static const struct dp_symbolizer syms = { lookup, NULL };

/* ---- capturing output -------------------------------------------------- */

#include "capture.h"

/* A renderer of format @name on a fresh capture. */
static void open_renderer(struct dp_renderer *r, struct cap *c,
			  const char *name)
{
	const struct dp_renderer_ops *ops = dp_renderer_by_name(name);

	cr_assert_not_null(ops, "no format %s", name);
	dp_renderer_init(r, ops, cap_open(c), 2);
}

typedef int (*line_fn)(FILE *out, const struct dp_event *ev, const void *rec,
		       size_t len, const struct dp_rec_meta *m,
		       const struct dp_trace_opts *o);

/* What @fn writes for the fixed record cut at @len. */
static char *direct(line_fn fn, const struct fixed *x, size_t len,
		    int *ret)
{
	struct dp_trace_opts o = { .ncpus = 2, .sym = &syms };
	struct cap c;

	*ret = fn(cap_open(&c), &x->ev, x->rec, len, &meta, &o);
	return cap_close(&c);
}

/* The whole session of renderer @name on the fixed record cut at @len. */
static char *rendered(const char *name, const struct fixed *x, size_t len,
		      int *ret)
{
	struct dp_stats st = { .events = 1 };
	struct dp_renderer r;
	struct cap c;

	open_renderer(&r, &c, name);
	dp_render_begin(&r);
	*ret = dp_render_event(&r, &x->ev, x->rec, len, &meta, &syms);
	dp_render_flush(&r);
	dp_render_summary(&r, &st);
	dp_render_end(&r);
	return cap_close(&c);
}

static void expect_same(const char *name, line_fn fn, size_t cut)
{
	struct fixed x;
	int want_ret, got_ret;
	char *want, *got;

	fixed_init(&x);
	want = direct(fn, &x, x.len - cut, &want_ret);
	got = rendered(name, &x, x.len - cut, &got_ret);
	cr_expect_eq(got_ret, want_ret, "%s: returned %d, not %d", name,
		     got_ret, want_ret);
	cr_expect_str_eq(got, want, "%s", name);
	free(want);
	free(got);
}

/* ---- chrome ------------------------------------------------------------- */

/* An entry whose return never came is an instant at the end, with its
 * fields; a malformed record writes nothing; a loss is a global instant;
 * the document is whole. */
Test(renderer, chrome_entry_without_return)
{
	struct fixed x;
	char *got;
	int ret;
	struct dp_renderer r;
	struct cap c;

	fixed_init(&x);
	got = rendered("chrome", &x, x.len, &ret);
	cr_expect_eq(ret, 0);
	cr_expect_str_eq(got,
		"{\"traceEvents\":["
		"{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":4242,\"tid\":4242,\"args\":{\"name\":\"work\"}},"
		"{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":4242,\"tid\":4242,\"args\":{\"name\":\"work\"}},"
		"{\"ph\":\"i\",\"name\":\"k\",\"cat\":\"grp\",\"pid\":4242,\"tid\":4242,\"ts\":5592123456.789,"
		"\"s\":\"t\",\"args\":{\"x\":40,\"s\":\"etc\"}}"
		"],\"displayTimeUnit\":\"ns\"}\n");
	free(got);
	got = rendered("chrome", &x, x.len - 2, &ret);
	cr_expect_eq(ret, -1);
	cr_expect_str_eq(got, "{\"traceEvents\":[],\"displayTimeUnit\":\"ns\"}\n");
	free(got);
	open_renderer(&r, &c, "chrome");
	dp_render_begin(&r);
	dp_render_lost(&r, 1, 7);
	dp_render_end(&r);
	got = cap_close(&c);
	cr_expect_str_eq(got, "{\"traceEvents\":[{\"ph\":\"i\",\"name\":\"lost\","
		"\"s\":\"g\",\"pid\":0,\"tid\":0,\"ts\":0.000,\"args\":{\"cpu\":1,"
		"\"lost\":7}}],\"displayTimeUnit\":\"ns\"}\n");
	free(got);
}

/* ---- otlp ----------------------------------------------------------------- */

/* @s with the digits of every "KEY":"DIGITS" blanked to "KEY":"T" (the
 * times the wall clock decides); the first one's value in @first. */
static char *blank_times(const char *s, uint64_t *first)
{
	static const char *const keys[] = { "\"timeUnixNano\":\"",
					     "\"observedTimeUnixNano\":\"" };
	char *out = calloc(1, strlen(s) + 1), *q = out;

	cr_assert_not_null(out);
	*first = 0;
	while (*s) {
		size_t k = 0;

		for (unsigned i = 0; i < 2 && !k; i++)
			if (!strncmp(s, keys[i], strlen(keys[i])))
				k = strlen(keys[i]);
		if (!k) {
			*q++ = *s++;
			continue;
		}
		memcpy(q, s, k);
		q += k;
		s += k;
		if (!*first && k == strlen(keys[0]))
			*first = strtoull(s, NULL, 10);
		while (*s >= '0' && *s <= '9')
			s++;
		*q++ = 'T';
	}
	return out;
}

static uint64_t clock_of(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#define OTLP_RESOURCE(pid, comm) \
	"{\"resource\":{\"attributes\":[" \
	"{\"key\":\"service.name\",\"value\":{\"stringValue\":\"dprobe\"}}," \
	"{\"key\":\"process.pid\",\"value\":{\"intValue\":\"" pid "\"}}," \
	"{\"key\":\"process.executable.name\",\"value\":{\"stringValue\":\"" comm "\"}}]}," \
	"\"scopeLogs\":[{\"scope\":{\"name\":\"dprobe\",\"version\":\"" \
	DPROBE_VERSION "\"},\"logRecords\":["

/* One request line: the process as the resource, the record with its
 * `trace` text as body and every field typed, times as decimal strings
 * (the monotonic time moved to the wall clock). */
Test(renderer, otlp_record)
{
	uint64_t off = clock_of(CLOCK_REALTIME) - clock_of(CLOCK_MONOTONIC);
	uint64_t t;
	struct fixed x;
	char *got, *bl;
	int ret;

	fixed_init(&x);
	got = rendered("otlp", &x, x.len, &ret);
	cr_expect_eq(ret, 0);
	bl = blank_times(got, &t);
	cr_expect_str_eq(bl, "{\"resourceLogs\":[" OTLP_RESOURCE("4242", "work")
		"{\"timeUnixNano\":\"T\",\"observedTimeUnixNano\":\"T\","
		"\"severityNumber\":9,\"severityText\":\"INFO\","
		"\"body\":{\"stringValue\":\"k: (work+0x4/0x24) x=40 s=\\\"etc\\\"\"},"
		"\"attributes\":["
		"{\"key\":\"event.name\",\"value\":{\"stringValue\":\"k\"}},"
		"{\"key\":\"event.group\",\"value\":{\"stringValue\":\"grp\"}},"
		"{\"key\":\"thread.id\",\"value\":{\"intValue\":\"4242\"}},"
		"{\"key\":\"thread.name\",\"value\":{\"stringValue\":\"work\"}},"
		"{\"key\":\"cpu.logical_number\",\"value\":{\"intValue\":\"1\"}},"
		"{\"key\":\"probe.ip\",\"value\":{\"stringValue\":\"0x1004\"}},"
		"{\"key\":\"probe.symbol\",\"value\":{\"stringValue\":\"work+0x4/0x24\"}},"
		"{\"key\":\"x\",\"value\":{\"intValue\":\"40\"}},"
		"{\"key\":\"s\",\"value\":{\"stringValue\":\"etc\"}}]}"
		"]}]}]}\n");
	/* the offset measured at begin, as ours give or take the moments
	 * between each pair of clock reads */
	cr_expect(t > meta.ts_ns + off - 1000000000u &&
		  t < meta.ts_ns + off + 1000000000u,
		  "timeUnixNano %" PRIu64 " for %" PRIu64 " + %" PRIu64, t,
		  meta.ts_ns, off);
	free(bl);
	free(got);
	/* a malformed record: -1, and no line at all */
	got = rendered("otlp", &x, x.len - 2, &ret);
	cr_expect_eq(ret, -1);
	cr_expect_str_eq(got, "");
	free(got);
}

/* A record with a user stack: code.stacktrace, one frame a line, named
 * as the trace text names them, a frame no symbol covers in hex. */
Test(renderer, otlp_stack)
{
	static const uint64_t frames[3] = { 0x1004, 0x9999, DP_STACK_BAD_FRAME };
	struct dp_rec_meta m = meta;
	struct dp_renderer r;
	struct fixed x;
	struct cap c;
	char *got;

	fixed_init(&x);
	m.stack = frames;
	m.nstack = 3;
	open_renderer(&r, &c, "otlp");
	dp_render_begin(&r);
	cr_expect_eq(dp_render_event(&r, &x.ev, x.rec, x.len, &m, &syms), 0);
	dp_render_end(&r);
	got = cap_close(&c);
	cr_expect_not_null(strstr(got, "{\"key\":\"code.stacktrace\",\"value\":"
		"{\"stringValue\":\"work+0x4/0x24\\n0x9999\\n[bad frame]\"}}]}"),
		"%s", got);
	free(got);
}

static unsigned count_lines(const char *s)
{
	unsigned n = 0;

	while ((s = strchr(s, '\n')))
		n++, s++;
	return n;
}

/* Records are held until a flush, or BATCH (1024) of them: a long
 * session streams line by line; a loss is a WARN record of no process. */
Test(renderer, otlp_batches_and_lost)
{
	struct dp_renderer r;
	struct fixed x;
	struct cap c;
	uint64_t t;
	char *got, *bl;

	fixed_init(&x);
	open_renderer(&r, &c, "otlp");
	dp_render_begin(&r);
	cr_expect_eq(c.len, 0, "no header");
	for (int i = 0; i < 1024; i++)
		dp_render_event(&r, &x.ev, x.rec, x.len, &meta, &syms);
	fflush(c.f);
	cr_expect_eq(count_lines(c.buf), 1, "a line at 1024 records");
	dp_render_event(&r, &x.ev, x.rec, x.len, &meta, &syms);
	fflush(c.f);
	cr_expect_eq(count_lines(c.buf), 1, "the next one held");
	dp_render_flush(&r);
	cr_expect_eq(count_lines(c.buf), 2, "written at the flush");
	dp_render_flush(&r);
	cr_expect_eq(count_lines(c.buf), 2, "nothing held, nothing written");
	dp_render_lost(&r, 3, 17);
	dp_render_lost(&r, 1, 0);	/* none lost: no record */
	dp_render_lost(&r, 0, DP_LOST_UNKNOWN);
	dp_render_end(&r);
	got = cap_close(&c);
	cr_expect_eq(count_lines(got), 3);
	/* the third line: the losses */
	bl = blank_times(strchr(strchr(got, '\n') + 1, '\n') + 1, &t);
	cr_expect_str_eq(bl, "{\"resourceLogs\":[{\"resource\":{\"attributes\":["
		"{\"key\":\"service.name\",\"value\":{\"stringValue\":\"dprobe\"}}]},"
		"\"scopeLogs\":[{\"scope\":{\"name\":\"dprobe\",\"version\":\""
		DPROBE_VERSION "\"},\"logRecords\":["
		"{\"timeUnixNano\":\"T\",\"observedTimeUnixNano\":\"T\","
		"\"severityNumber\":13,\"severityText\":\"WARN\","
		"\"body\":{\"stringValue\":\"lost 17 events on CPU 3\"},"
		"\"attributes\":["
		"{\"key\":\"event.name\",\"value\":{\"stringValue\":\"lost\"}},"
		"{\"key\":\"cpu.logical_number\",\"value\":{\"intValue\":\"3\"}},"
		"{\"key\":\"dprobe.lost\",\"value\":{\"intValue\":\"17\"}}]},"
		"{\"timeUnixNano\":\"T\",\"observedTimeUnixNano\":\"T\","
		"\"severityNumber\":13,\"severityText\":\"WARN\","
		"\"body\":{\"stringValue\":\"lost events on CPU 0 (how many is not known)\"},"
		"\"attributes\":["
		"{\"key\":\"event.name\",\"value\":{\"stringValue\":\"lost\"}},"
		"{\"key\":\"cpu.logical_number\",\"value\":{\"intValue\":\"0\"}}]}"
		"]}]}]}\n");
	free(bl);
	free(got);
}

/* A copy of a session that a forked child carries on: freed, not ended
 * (not a byte more, and the format's state gone). */
Test(renderer, discard_writes_nothing)
{
	static const char *const names[] = { "chrome", "otlp", "json" };

	for (size_t i = 0; i < 3; i++) {
		struct dp_renderer r;
		struct fixed x;
		struct cap c;
		size_t len;
		char *got;

		fixed_init(&x);
		open_renderer(&r, &c, names[i]);
		dp_render_begin(&r);
		dp_render_event(&r, &x.ev, x.rec, x.len, &meta, &syms);
		fflush(c.f);
		len = c.len;
		dp_render_discard(&r);
		cr_expect_null(r.priv, "%s", names[i]);
		cr_expect_eq(r.out, c.f, "%s", names[i]);
		got = cap_close(&c);
		cr_expect_eq(strlen(got), len, "%s", names[i]);
		free(got);
	}
}

/* ---- by name ------------------------------------------------------------- */

Test(renderer, by_name)
{
	const struct dp_renderer_ops *t = dp_renderer_by_name("text");
	const struct dp_renderer_ops *j = dp_renderer_by_name("json");

	cr_assert_not_null(t);
	cr_assert_not_null(j);
	cr_expect_str_eq(t->name, "text");
	cr_expect_str_eq(j->name, "json");
	cr_expect_neq(t, j);
	cr_expect_null(dp_renderer_by_name("xml"));
	cr_expect_null(dp_renderer_by_name(""));
	cr_expect_null(dp_renderer_by_name("JSON"));
	cr_expect_null(dp_renderer_by_name("tex"));
	cr_expect_null(dp_renderer_by_name("text "));
}

Test(renderer, names)
{
	char buf[64], small[7];

	cr_expect_str_eq(dp_renderer_names(buf, sizeof(buf)),
			 "text, json, folded, flamegraph, chrome, tracedat, ctf or otlp");
	/* cut short, still a string */
	cr_expect_str_eq(dp_renderer_names(small, sizeof(small)), "text, ");
	cr_expect_eq(dp_renderer_names(buf, 0), buf);
}

/* ---- the formats write what the functions they wrap write ---------------- */

Test(renderer, text_is_trace_line)
{
	struct fixed x;
	int ret;
	char *got;

	expect_same("text", dp_trace_line, 0);
	fixed_init(&x);
	got = rendered("text", &x, x.len, &ret);
	cr_expect_eq(ret, 0);
	cr_expect_str_eq(got, "            work-4242    [001] .....  "
			 "5592.123457: k: (work+0x4/0x24) x=40 s=\"etc\"\n");
	free(got);
}

Test(renderer, json_is_json_line)
{
	struct fixed x;
	int ret;
	char *got;

	expect_same("json", dp_json_line, 0);
	fixed_init(&x);
	got = rendered("json", &x, x.len, &ret);
	cr_expect_eq(ret, 0);
	cr_expect_str_eq(got, "{\"event\":\"k\",\"group\":\"grp\",\"id\":1000,"
			 "\"ts\":5592.123457,\"cpu\":1,\"pid\":4242,"
			 "\"tgid\":4242,\"comm\":\"work\",\"ip\":\"0x1004\","
			 "\"sym\":\"work+0x4/0x24\","
			 "\"args\":{\"x\":40,\"s\":\"etc\"}}\n");
	free(got);
}

/* A record cut inside its string: -1 and not a byte, in either format. */
Test(renderer, malformed_record)
{
	struct fixed x;
	int ret;
	char *got;

	expect_same("text", dp_trace_line, 2);
	expect_same("json", dp_json_line, 2);
	fixed_init(&x);
	got = rendered("json", &x, x.len - 2, &ret);
	cr_expect_eq(ret, -1);
	cr_expect_str_eq(got, "");
	free(got);
}

/* ---- lost markers ---------------------------------------------------------- */

static char *lost_markers(const char *name)
{
	struct dp_renderer r;
	struct cap c;

	open_renderer(&r, &c, name);
	dp_render_lost(&r, 3, 17);
	dp_render_lost(&r, 0, DP_LOST_UNKNOWN);
	dp_render_lost(&r, 1, 0);
	dp_render_end(&r);
	return cap_close(&c);
}

Test(renderer, text_lost)
{
	char *got = lost_markers("text");
	struct cap c;
	char *want;

	cap_open(&c);
	dp_trace_lost(c.f, 3, 17);
	dp_trace_lost(c.f, 0, DP_LOST_UNKNOWN);
	dp_trace_lost(c.f, 1, 0);
	want = cap_close(&c);
	cr_expect_str_eq(got, want);
	cr_expect_str_eq(got, "CPU:3 [LOST 17 EVENTS]\nCPU:0 [LOST EVENTS]\n");
	free(want);
	free(got);
}

Test(renderer, json_lost)
{
	char *got = lost_markers("json");

	cr_expect_str_eq(got, "{\"lost\":17,\"cpu\":3}\n"
			 "{\"lost\":null,\"cpu\":0}\n"
			 "{\"lost\":0,\"cpu\":1}\n");
	free(got);
}

/* ---- the hooks around the records ---------------------------------------- */

/* Neither format has a header or a summary (trace_pipe has none). */
Test(renderer, no_header_no_summary)
{
	static const char *const names[] = { "text", "json" };
	struct dp_stats st = { .events = 3, .lost = 1 };

	for (size_t i = 0; i < 2; i++) {
		struct dp_renderer r;
		struct cap c;
		char *got;

		open_renderer(&r, &c, names[i]);
		dp_render_begin(&r);
		dp_render_summary(&r, &st);
		dp_render_end(&r);
		got = cap_close(&c);
		cr_expect_str_eq(got, "", "%s", names[i]);
		free(got);
	}
}

/* A format with every hook: called in order, each with the renderer. */
static void t_begin(struct dp_renderer *r)
{
	fputs("begin ", r->out);
}

static int t_event(struct dp_renderer *r, const struct dp_event *ev,
		   const void *rec, size_t len, const struct dp_rec_meta *m,
		   const struct dp_symbolizer *sym)
{
	(void)rec;
	(void)sym;
	fprintf(r->out, "event %s %zu %d ", ev->name, len, m->cpu);
	return 7;
}

static void t_lost(struct dp_renderer *r, int cpu, unsigned long n)
{
	fprintf(r->out, "lost %d %lu ", cpu, n);
}

static void t_summary(struct dp_renderer *r, const struct dp_stats *st)
{
	fprintf(r->out, "summary %llu ", (unsigned long long)st->events);
}

static void t_end(struct dp_renderer *r)
{
	fprintf(r->out, "end %d", r->ncpus);
}

static const struct dp_renderer_ops every_hook = {
	"test", t_begin, t_event, t_lost, t_summary, t_end,
};

Test(renderer, dispatch)
{
	struct dp_stats st = { .events = 5 };
	struct dp_renderer r;
	struct fixed x;
	struct cap c;
	char *got;

	fixed_init(&x);
	dp_renderer_init(&r, &every_hook, cap_open(&c), 4);
	dp_render_begin(&r);
	/* begin is flushed at once: a forking engine must not copy it */
	cr_expect_eq(c.len, strlen("begin "));
	cr_expect_eq(dp_render_event(&r, &x.ev, x.rec, x.len, &meta, NULL), 7);
	dp_render_lost(&r, 2, 9);
	dp_render_summary(&r, &st);
	dp_render_end(&r);
	cr_expect_eq(c.len, strlen(c.buf));
	got = cap_close(&c);
	cr_expect_str_eq(got, "begin event k 28 1 lost 2 9 summary 5 end 4");
	free(got);
}
