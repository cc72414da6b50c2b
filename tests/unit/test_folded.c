// SPDX-License-Identifier: GPL-2.0
/*
 * User stacks in the output (--stack): the folded renderer (counted
 * stacks, root first, for flame graphs), the kernel's <user stack trace>
 * entry after a text line, the "stack" array of a JSON line.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event/event.h"
#include "output/output.h"
#include "output/renderer.h"

#include "capture.h"

/* A kprobe-kind entry event with no argument: header and ip. */
struct rec {
	struct dp_event ev;
	struct dp_field f;
	uint8_t bytes[DP_ENTRY_HEAD_SIZE];
};

static void rec_init(struct rec *x, const char *name)
{
	uint64_t ip = 0x1000;

	memset(x, 0, sizeof(*x));
	x->ev.id = 1000;
	strcpy(x->ev.group, "grp");
	snprintf(x->ev.name, sizeof(x->ev.name), "%s", name);
	x->ev.kind = DP_KIND_KPROBE;
	x->ev.fields = &x->f;
	x->ev.nfields = 1;
	x->f = (struct dp_field){ .name = "__probe_ip", .type = "unsigned long",
				  .fclass = DP_FC_NUM, .offset = 8, .size = 8,
				  .elem_size = 8 };
	x->ev.fixed_size = DP_ENTRY_HEAD_SIZE;
	x->bytes[0] = 1000 & 0xff;
	x->bytes[1] = 1000 >> 8;
	memcpy(x->bytes + 8, &ip, 8);
}

/* Three functions at 0x1000, 0x2000, 0x3000 (0x100 bytes each); "semi;x"
 * at 0x4000 (a name the folded format cannot carry as is); from
 * 0x100000 on, a one-byte function "fN" at each 0x100000 + N. */
static int lookup(void *priv, uint64_t addr, const char **sym,
		  uint64_t *off, uint64_t *size)
{
	static const char *const names[] = { "leaf", "mid", "main", "semi;x" };
	static char gen[32];
	uint64_t i = addr / 0x1000;

	(void)priv;
	if (addr >= 0x100000) {
		snprintf(gen, sizeof(gen), "f%llu",
			 (unsigned long long)(addr - 0x100000));
		*sym = gen;
		*off = 0;
		*size = 1;
		return 0;
	}
	if (i < 1 || i > 4 || addr % 0x1000 >= 0x100)
		return -1;
	*sym = names[i - 1];
	*off = addr % 0x1000;
	*size = 0x100;
	return 0;
}

static const struct dp_symbolizer syms = { lookup, NULL };

static struct dp_rec_meta meta_of(const uint64_t *stack, unsigned n)
{
	return (struct dp_rec_meta){
		.ts_ns = 5592123456789ULL, .cpu = 1, .pid = 42, .tgid = 42,
		.comm = "work", .stack = stack, .nstack = n,
	};
}

/* Renderer @name over @n records, record i with stack @stacks[i]. */
static char *render(const char *name, const uint64_t (*stacks)[4],
		    const unsigned *depth, unsigned n)
{
	const struct dp_renderer_ops *ops = dp_renderer_by_name(name);
	struct dp_stats st = { .events = n };
	struct dp_renderer r;
	struct rec x;
	struct cap c;

	cr_assert_not_null(ops, "no format %s", name);
	rec_init(&x, "ev");
	dp_renderer_init(&r, ops, cap_open(&c), 2);
	dp_render_begin(&r);
	for (unsigned i = 0; i < n; i++) {
		struct dp_rec_meta m = meta_of(stacks[i], depth[i]);

		cr_expect_eq(dp_render_event(&r, &x.ev, x.bytes,
					     sizeof(x.bytes), &m, &syms), 0);
	}
	dp_render_lost(&r, 0, 3);
	dp_render_summary(&r, &st);
	dp_render_end(&r);
	return cap_close(&c);
}

Test(folded, by_name)
{
	const struct dp_renderer_ops *f = dp_renderer_by_name("folded");
	char buf[64];

	cr_assert_not_null(f);
	cr_expect(f->stacks, "folded is made of stacks");
	cr_expect_not(dp_renderer_by_name("text")->stacks);
	cr_expect_str_eq(dp_renderer_names(buf, sizeof(buf)),
			 "text, json, folded, flamegraph, chrome, tracedat, ctf or otlp");
}

/* Root first, ';' between frames, a count; one line per distinct stack,
 * sorted; no line for a lost marker or a record without a stack. */
Test(folded, counts_root_first)
{
	static const uint64_t s[5][4] = {
		{ 0x1010, 0x2020, 0x3030 },
		{ 0x1000, 0x2044, 0x3030 },	/* same names: same line */
		{ 0x2000, 0x3030 },
		{ 0 },
		{ 0x1010, 0x2020, 0x3030 },
	};
	static const unsigned d[5] = { 3, 3, 2, 0, 3 };
	char *got = render("folded", s, d, 5);

	cr_expect_str_eq(got, "main;mid 1\nmain;mid;leaf 3\n");
	free(got);
}

/* A frame no symbol covers is "[unknown]"; ';' in a name becomes '_'. */
Test(folded, unknown_and_separator)
{
	static const uint64_t s[2][4] = {
		{ 0x1000, 0x9999, 0x4000 },
		{ 0x1000, 0x8888, 0x4000 },
	};
	static const unsigned d[2] = { 3, 3 };
	char *got = render("folded", s, d, 2);

	cr_expect_str_eq(got, "semi_x;[unknown];leaf 2\n");
	free(got);
}

/* Nothing recorded: nothing written, no header. */
Test(folded, empty)
{
	char *got = render("folded", NULL, NULL, 0);

	cr_expect_str_eq(got, "");
	free(got);
}

/* A malformed record is refused, as by the other formats. */
Test(folded, malformed)
{
	static const uint64_t st[1] = { 0x1000 };
	const struct dp_renderer_ops *ops = dp_renderer_by_name("folded");
	struct dp_rec_meta m = meta_of(st, 1);
	struct dp_renderer r;
	struct rec x;
	struct cap c;
	char *got;

	rec_init(&x, "ev");
	dp_renderer_init(&r, ops, cap_open(&c), 2);
	dp_render_begin(&r);
	cr_expect_eq(dp_render_event(&r, &x.ev, x.bytes, 4, &m, &syms), -1);
	dp_render_end(&r);
	got = cap_close(&c);
	cr_expect_str_eq(got, "");
	free(got);
}

/* Many distinct stacks: the table grows, every count kept. */
Test(folded, many)
{
	enum { N = 3000, K = 1000 };
	static uint64_t s[N][4];
	static unsigned d[N];
	unsigned lines = 0, seen[K] = { 0 };
	char *got, *line, *save = NULL;

	/* K stacks "fN;leaf", N / K times each */
	for (unsigned i = 0; i < N; i++) {
		s[i][0] = 0x1000 + i % 256;		/* "leaf" */
		s[i][1] = 0x100000 + i % K;		/* "f<i % K>" */
		d[i] = 2;
	}
	got = render("folded", (const uint64_t (*)[4])s, d, N);
	for (line = strtok_r(got, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned k, n;

		cr_assert_eq(sscanf(line, "f%u;leaf %u", &k, &n), 2, "%s", line);
		cr_assert_lt(k, K);
		cr_expect_eq(n, N / K, "%s", line);
		seen[k]++;
		lines++;
	}
	cr_expect_eq(lines, K);
	for (unsigned k = 0; k < K; k++)
		cr_expect_eq(seen[k], 1, "f%u", k);
	free(got);
	/* depths 1, 2, 3 in turn: three stacks, sorted by their text */
	for (unsigned i = 0; i < N; i++) {
		s[i][0] = 0x1000;
		s[i][1] = 0x2000;
		s[i][2] = 0x3000;
		d[i] = 1 + i % 3;
	}
	got = render("folded", (const uint64_t (*)[4])s, d, N);
	cr_expect_str_eq(got, "leaf 1000\nmain;mid;leaf 1000\nmid;leaf 1000\n");
	free(got);
}

/* The text format: the kernel's entry after the line, one frame a line. */
Test(stack_output, text)
{
	static const uint64_t s[1][4] = { { 0x1000, 0x2010, 0x7f00 } };
	static const unsigned d[1] = { 3 };
	char *got = render("text", s, d, 1);

	cr_expect_str_eq(got,
		"            work-42      [001] .....  5592.123457: ev: (leaf+0x0/0x100)\n"
		"            work-42      [001] .....  5592.123457: <user stack trace>\n"
		" => leaf+0x0/0x100\n"
		" => mid+0x10/0x100\n"
		" =>  <0000000000007f00>\n"
		"CPU:0 [LOST 3 EVENTS]\n");
	free(got);
}

/* No stack (an event --stack did not name): the line alone. */
Test(stack_output, text_without)
{
	const struct dp_renderer_ops *ops = dp_renderer_by_name("text");
	struct dp_rec_meta m = meta_of(NULL, 0);
	struct dp_renderer r;
	struct rec x;
	struct cap c;
	char *got;

	rec_init(&x, "ev");
	dp_renderer_init(&r, ops, cap_open(&c), 2);
	cr_expect_eq(dp_render_event(&r, &x.ev, x.bytes, sizeof(x.bytes), &m,
				     &syms), 0);
	dp_render_end(&r);
	got = cap_close(&c);
	cr_expect_str_eq(got, "            work-42      [001] .....  "
			 "5592.123457: ev: (leaf+0x0/0x100)\n");
	free(got);
}

Test(stack_output, json)
{
	static const uint64_t s[1][4] = { { 0x1000, 0x9000 } };
	static const unsigned d[1] = { 2 };
	char *got = render("json", s, d, 1);

	cr_expect_str_eq(got,
		"{\"event\":\"ev\",\"group\":\"grp\",\"id\":1000,"
		"\"ts\":5592.123457,\"cpu\":1,\"pid\":42,\"tgid\":42,"
		"\"comm\":\"work\",\"ip\":\"0x1000\",\"sym\":\"leaf+0x0/0x100\","
		"\"args\":{},\"stack\":[{\"ip\":\"0x1000\","
		"\"sym\":\"leaf+0x0/0x100\"},{\"ip\":\"0x9000\"}]}\n"
		"{\"lost\":3,\"cpu\":0}\n");
	free(got);
}

/* The stack tracer's frames carry their depths: "depth" after "sym",
 * left out where it is not known (0). */
Test(stack_output, json_depths)
{
	static const uint64_t s[] = { 0x1000, 0x2010, 0x9000 };
	static const uint64_t dep[] = { 400, 0, 100 };
	const struct dp_renderer_ops *ops = dp_renderer_by_name("json");
	struct dp_rec_meta m = meta_of(s, 3);
	struct dp_renderer r;
	struct rec x;
	struct cap c;
	char *got;

	m.stack_depth = dep;
	rec_init(&x, "ev");
	dp_renderer_init(&r, ops, cap_open(&c), 2);
	cr_expect_eq(dp_render_event(&r, &x.ev, x.bytes, sizeof(x.bytes), &m,
				     &syms), 0);
	dp_render_end(&r);
	got = cap_close(&c);
	cr_expect(strstr(got, "\"stack\":[{\"ip\":\"0x1000\","
			 "\"sym\":\"leaf+0x0/0x100\",\"depth\":400},"
			 "{\"ip\":\"0x2010\",\"sym\":\"mid+0x10/0x100\"},"
			 "{\"ip\":\"0x9000\",\"depth\":100}]}\n"), "%s", got);
	free(got);
}

/* A walk stopped at a bad frame (DP_STACK_BAD_FRAME last): "[bad frame]"
 * where each format puts a frame, never looked up as an address. */
Test(stack_output, bad_frame)
{
	static const uint64_t s[2][4] = {
		{ 0x1000, 0x2010, DP_STACK_BAD_FRAME },
		{ 0x1000, 0x2010, 0x3000 },
	};
	static const unsigned d[2] = { 3, 3 };
	char *got = render("text", s, d, 1);

	cr_expect_str_eq(got,
		"            work-42      [001] .....  5592.123457: ev: (leaf+0x0/0x100)\n"
		"            work-42      [001] .....  5592.123457: <user stack trace>\n"
		" => leaf+0x0/0x100\n"
		" => mid+0x10/0x100\n"
		" => [bad frame]\n"
		"CPU:0 [LOST 3 EVENTS]\n");
	free(got);
	got = render("folded", s, d, 2);
	cr_expect_str_eq(got, "[bad frame];mid;leaf 1\nmain;mid;leaf 1\n");
	free(got);
	got = render("json", s, d, 1);
	cr_expect(strstr(got, "{\"ip\":\"0x2010\",\"sym\":\"mid+0x10/0x100\"},"
			 "{\"bad_frame\":true}]}\n"), "%s", got);
	free(got);
}
