// SPDX-License-Identifier: GPL-2.0
/*
 * Flame graphs (output/flamegraph.h): folded lines read and refused,
 * the SVG's frames (names, counts, widths proportional to them, rows by
 * depth), names from hostile programs written as well-formed XML, the
 * same bytes whatever the order of the input, and the flamegraph format
 * of dprobe trace.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event/event.h"
#include "output/flamegraph.h"
#include "output/renderer.h"

#include "capture.h"

struct frame {
	char name[64];
	unsigned long n;
	double x, y, w;
};

static struct dp_flame *flame_of(const char *const *lines, size_t n)
{
	struct dp_flame *f = dp_flame_new();

	cr_assert_not_null(f);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(dp_flame_add_line(f, lines[i]), 0, "%s", lines[i]);
	return f;
}

static char *svg_of(struct dp_flame *f, unsigned width)
{
	struct dp_flame_opts o = { .title = "t", .width = width };
	struct cap c;

	cr_assert_eq(dp_flame_write_svg(f, cap_open(&c), &o), 0);
	return cap_close(&c);
}

/* The frames of @svg, in order; returns how many (at most @max). */
static size_t frames_of(const char *svg, struct frame *fr, size_t max)
{
	const char *p = svg;
	size_t n = 0;

	while (n < max && (p = strstr(p, "<g class=\"f\"><title>"))) {
		struct frame *f = &fr[n++];

		p += strlen("<g class=\"f\"><title>");
		cr_assert_eq(sscanf(p, "%63[^(] (%lu sample", f->name, &f->n), 2,
			     "%.80s", p);
		f->name[strlen(f->name) - 1] = '\0';	/* the space */
		p = strstr(p, "<rect ");
		cr_assert_eq(sscanf(p, "<rect x=\"%lf\" y=\"%lf\" width=\"%lf\"",
				    &f->x, &f->y, &f->w), 3, "%.80s", p);
	}
	return n;
}

Test(flamegraph, lines)
{
	struct dp_flame *f = dp_flame_new();

	cr_expect_eq(dp_flame_add_line(f, "main;work 3\n"), 0);
	cr_expect_eq(dp_flame_add_line(f, "main;work\t2\r\n"), 0);
	cr_expect_eq(dp_flame_add_line(f, "  \n"), 1);
	cr_expect_eq(dp_flame_add_line(f, ""), 1);
	cr_expect_eq(dp_flame_add_line(f, "main 0"), 0);	/* nothing */
	cr_expect_eq(dp_flame_add_line(f, "a frame with spaces;x 1"), 0);
	cr_expect_eq(dp_flame_total(f), 6);
	/* not STACK COUNT */
	cr_expect_eq(dp_flame_add_line(f, "main;work"), -EINVAL);
	cr_expect_eq(dp_flame_add_line(f, "42"), -EINVAL);
	cr_expect_eq(dp_flame_add_line(f, " 42"), -EINVAL);
	cr_expect_eq(dp_flame_add_line(f, "main;work 3x"), -EINVAL);
	cr_expect_eq(dp_flame_add_line(f, "main;work -3"), -EINVAL);
	cr_expect_eq(dp_flame_add_line(f, "main;work 1.5"), -EINVAL);
	cr_expect_eq(dp_flame_add_line(f, "main 99999999999999999999999"),
		     -EOVERFLOW);
	cr_expect_eq(dp_flame_total(f), 6, "a refused line adds nothing");
	dp_flame_free(f);
}

/* Too deep, or a total past 2^53: refused, and nothing changes. */
/* A frame with thousands of callees (found through its index): every
 * line in shuffled order lands on its own callee, and so do lines added
 * after an SVG sorted them. */
Test(flamegraph, wide_frame)
{
	enum { N = 3000 };
	struct dp_flame *f = dp_flame_new();
	const struct dp_flame_node *main_;
	char line[64];

	free(svg_of(f, 0));	/* an empty graph draws */
	for (unsigned round = 0; round < 2; round++) {
		for (unsigned i = 0; i < N; i++) {
			/* 7 is prime to N: each name once a round */
			snprintf(line, sizeof(line), "main;leaf%u %u",
				 (i * 7) % N, round + 1);
			cr_assert_eq(dp_flame_add_line(f, line), 0);
		}
		if (!round)
			free(svg_of(f, 0));	/* sorts, drops the index */
	}
	cr_assert_eq(f->root.nkids, 1);
	main_ = &f->root.kids[0];
	cr_assert_eq(main_->nkids, N);
	for (size_t i = 0; i < main_->nkids; i++)
		cr_expect_eq(main_->kids[i].count, 3, "%s", main_->kids[i].name);
	cr_expect_eq(dp_flame_total(f), 3ull * N);
	dp_flame_free(f);
}

Test(flamegraph, limits)
{
	struct dp_flame *f = dp_flame_new();
	size_t len = 2 * (DP_FLAME_MAX_DEPTH + 1) + 8;
	char *deep = malloc(len), *svg1, *svg2;

	cr_assert_not_null(deep);
	for (size_t i = 0; i <= DP_FLAME_MAX_DEPTH; i++)
		memcpy(deep + 2 * i, "a;", 2);
	strcpy(deep + 2 * DP_FLAME_MAX_DEPTH + 1, " 1");
	cr_expect_eq(dp_flame_add_line(f, "main 5"), 0);
	svg1 = svg_of(f, 0);
	cr_expect_eq(dp_flame_add_line(f, deep), -E2BIG);
	cr_expect_eq(dp_flame_add(f, "x", 1, (1ull << 53) - 2), -EOVERFLOW);
	cr_expect_eq(dp_flame_add(f, "", 0, 1), -EINVAL);
	cr_expect_eq(dp_flame_add(f, "a\0b", 3, 1), -EINVAL);
	svg2 = svg_of(f, 0);
	cr_expect_str_eq(svg1, svg2, "the refused stacks changed the graph");
	/* exactly the deepest allowed */
	deep[2 * DP_FLAME_MAX_DEPTH - 1] = '\0';
	cr_expect_eq(dp_flame_add(f, deep, strlen(deep), 1), 0);
	free(svg1);
	free(svg2);
	free(deep);
	dp_flame_free(f);
}

/* Frames: the root at the bottom, callees above, left to right by
 * name, each as wide as its share of the samples. */
Test(flamegraph, frames)
{
	static const char *const in[] = {
		"main;outer;middle;leaf 3", "main;other 1", "main 2",
		"start;main;outer 2",
	};
	struct dp_flame *f = flame_of(in, 4);
	char *svg = svg_of(f, 1020);	/* 1000 px of frames: 125 a sample */
	struct frame fr[16];
	size_t n = frames_of(svg, fr, 16);
	static const struct { const char *name; unsigned long n; double x;
			      int row; } want[] = {
		{ "all", 8, 10, 0 }, { "main", 6, 10, 1 },
		{ "other", 1, 10, 2 }, { "outer", 3, 135, 2 },
		{ "middle", 3, 135, 3 }, { "leaf", 3, 135, 4 },
		{ "start", 2, 760, 1 }, { "main", 2, 760, 2 },
		{ "outer", 2, 760, 3 },
	};

	cr_assert_eq(n, 9, "%zu frames", n);
	for (size_t i = 0; i < n; i++) {
		cr_expect_str_eq(fr[i].name, want[i].name, "frame %zu", i);
		cr_expect_eq(fr[i].n, want[i].n, "%s", fr[i].name);
		cr_expect(fabs(fr[i].w - 125.0 * (double)fr[i].n) < 0.01,
			  "%s: width %.2f for %lu samples", fr[i].name,
			  fr[i].w, fr[i].n);
		cr_expect(fabs(fr[i].x - want[i].x) < 0.01, "%s: x %.2f",
			  fr[i].name, fr[i].x);
		cr_expect(fabs(fr[i].y - (fr[0].y - 16.0 * want[i].row)) < 0.01,
			  "%s: y %.0f", fr[i].name, fr[i].y);
	}
	cr_expect(strstr(svg, "<title>leaf (3 samples, 37.50%)</title>"));
	cr_expect(strstr(svg, "<title>other (1 sample, 12.50%)</title>"));
	cr_expect(strstr(svg, "data-total=\"8\""));
	cr_expect(strstr(svg, "<text id=\"title\" x=\"510.0\" y=\"22\" "
			 "text-anchor=\"middle\">t</text>"));
	/* self-contained: nothing fetched */
	cr_expect_null(strstr(svg, "href"));
	cr_expect_null(strstr(svg, "http://www.w3.org/1999/xlink"));
	free(svg);
	dp_flame_free(f);
}

/* Hostile names: markup escaped, bytes XML cannot hold as '?'. */
Test(flamegraph, escaping)
{
	static const char *const in[] = {
		"a<b>&\"c' 1", "x;\xff\xfe\x01z 1", "\xc3\xa9t\xc3\xa9 1",
		"]]>;<script>alert(1)</script> 1", "\xed\xa0\x80s 1",
	};
	struct dp_flame *f = flame_of(in, 5);
	char *svg = svg_of(f, 0);

	cr_expect(strstr(svg, "<title>a&lt;b&gt;&amp;&quot;c&apos; (1 sample"));
	cr_expect(strstr(svg, "<title>???z (1 sample"));
	cr_expect(strstr(svg, "<title>\xc3\xa9t\xc3\xa9 (1 sample"));
	cr_expect(strstr(svg, "<title>]]&gt; (1 sample"));
	cr_expect(strstr(svg, "<title>&lt;script&gt;alert(1)&lt;/script&gt; "));
	cr_expect(strstr(svg, "<title>???s (1 sample"), "a surrogate");
	cr_expect_null(strstr(svg, "\xff"));
	cr_expect_null(strstr(svg, "<script>alert"));
	/* one CDATA section, the script's */
	cr_expect_eq(strstr(svg, "]]>"), strstr(svg, "]]></script>"));
	free(svg);
	dp_flame_free(f);
}

/* Labels: the name where it fits, its start and ".." where not, none
 * under three characters' width. */
Test(flamegraph, labels)
{
	static const char *const in[] = {
		"a_rather_long_function_name_indeed 9",
		"a_rather_long_function_name_indeed;sub 9", "tiny 2",
	};
	struct dp_flame *f = flame_of(in, 3);
	char *svg = svg_of(f, 220);	/* 200 px: 10 a sample */

	/* 180 px: (180 - 6) / 7.08 = 24 characters */
	cr_expect(strstr(svg, ">a_rather_long_function..</text>"), "%s", svg);
	cr_expect(strstr(svg, ">sub</text>"));
	/* 20 px: no label */
	cr_expect(strstr(svg, "<title>tiny (2 samples, 10.00%)</title>"));
	cr_expect(strstr(svg, "\"></text></g>"));
	free(svg);
	dp_flame_free(f);
}

/* The same stacks in another order, or split over lines: the same
 * bytes. */
Test(flamegraph, deterministic)
{
	static const char *const a[] = {
		"m;b 2", "m;a;x 1", "z 4", "m;a 3",
	};
	static const char *const b[] = {
		"z 1", "m;a 3", "z 3", "m;a;x 1", "m;b 1", "m;b 1",
	};
	struct dp_flame *fa = flame_of(a, 4), *fb = flame_of(b, 6);
	char *sa = svg_of(fa, 0), *sb = svg_of(fb, 0);

	cr_expect_str_eq(sa, sb);
	free(sa);
	free(sb);
	dp_flame_free(fa);
	dp_flame_free(fb);
}

Test(flamegraph, empty)
{
	struct dp_flame *f = dp_flame_new();
	char *svg = svg_of(f, 0);

	cr_expect(strstr(svg, ">no stacks</text>"));
	cr_expect_null(strstr(svg, "<g class=\"f\">"));
	cr_expect(strstr(svg, "</svg>\n"));
	free(svg);
	dp_flame_free(f);
}

/* The format of dprobe trace: the folded counts, drawn at the end. */
static int lookup(void *priv, uint64_t addr, const char **sym,
		  uint64_t *off, uint64_t *size)
{
	static const char *const names[] = { "leaf", "mid", "main" };

	(void)priv;
	if (addr < 0x1000 || addr >= 0x4000)
		return -1;
	*sym = names[addr / 0x1000 - 1];
	*off = addr % 0x1000;
	*size = 0x1000;
	return 0;
}

Test(flamegraph, renderer)
{
	static const uint64_t s1[] = { 0x1010, 0x2020, 0x3030 };
	static const uint64_t s2[] = { 0x2000, 0x3000 };
	const struct dp_renderer_ops *ops = dp_renderer_by_name("flamegraph");
	struct dp_symbolizer sym = { lookup, NULL };
	struct dp_field fld = { .name = "__probe_ip", .type = "unsigned long",
				.fclass = DP_FC_NUM, .offset = 8, .size = 8,
				.elem_size = 8 };
	struct dp_event ev = { .id = 1000, .group = "g", .name = "e",
			       .kind = DP_KIND_KPROBE, .fields = &fld,
			       .nfields = 1, .fixed_size = DP_ENTRY_HEAD_SIZE };
	uint8_t rec[DP_ENTRY_HEAD_SIZE] = { 1000 & 0xff, 1000 >> 8 };
	struct dp_rec_meta m1 = { .stack = s1, .nstack = 3, .comm = "w" };
	struct dp_rec_meta m2 = { .stack = s2, .nstack = 2, .comm = "w" };
	struct dp_renderer r;
	struct frame fr[8];
	struct cap c;
	char *svg;

	cr_assert_not_null(ops);
	cr_expect(ops->stacks, "made of stacks: implies --stack");
	dp_renderer_init(&r, ops, cap_open(&c), 2);
	dp_render_begin(&r);
	for (int i = 0; i < 3; i++)
		cr_expect_eq(dp_render_event(&r, &ev, rec, sizeof(rec), &m1,
					     &sym), 0);
	cr_expect_eq(dp_render_event(&r, &ev, rec, sizeof(rec), &m2, &sym), 0);
	dp_render_lost(&r, 0, 2);
	dp_render_end(&r);
	svg = cap_close(&c);
	cr_assert_eq(frames_of(svg, fr, 8), 4, "%s", svg);
	cr_expect_str_eq(fr[0].name, "all");
	cr_expect_str_eq(fr[1].name, "main");
	cr_expect_eq(fr[1].n, 4);
	cr_expect_str_eq(fr[2].name, "mid");
	cr_expect_eq(fr[2].n, 4);
	cr_expect_str_eq(fr[3].name, "leaf");
	cr_expect_eq(fr[3].n, 3);
	cr_expect(strstr(svg, "<?xml version=\"1.0\""));
	free(svg);
}
