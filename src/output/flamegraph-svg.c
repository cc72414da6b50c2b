// SPDX-License-Identifier: GPL-2.0
/*
 * The flame graph drawn: one SVG file that needs nothing else.  The root
 * ("all") is the bottom row, each frame's callees stand on it, left to
 * right by name, each as wide as its share of the samples.  A frame is
 *
 *   <g class="f"><title>NAME (N samples, P%)</title>
 *     <rect x= y= width= height= fill=/><text x= y=>NAME, cut to fit</text></g>
 *
 * so a viewer without scripts still shows names and counts (the title is
 * the tooltip).  The script inline (flamegraph-js.c) zooms on a click,
 * searches (Ctrl-F, or ?s=REGEX in the address), and marks the document
 * with data-ready="FRAMES" once it has run.  Names come from the traced
 * programs: they are written as well-formed XML whatever their bytes
 * (escaped, invalid UTF-8 and control characters as '?').  Colours come
 * from a hash of the name, so a function has the same colour in every
 * graph; frames narrower than a tenth of a pixel are left out.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "output/flamegraph.h"

#define FRAME_H		16	/* a row; the rect is 1 less */
#define FONT_SIZE	12
#define CHAR_W		(FONT_SIZE * 0.59)	/* an average glyph */
#define PAD		10	/* left and right */
#define TOP		34	/* title and controls above the frames */
#define BOTTOM		26	/* the details line below */
#define MIN_FRAME_W	0.1

extern const char dp_flame_script[];

struct draw {
	FILE *out;
	double scale;		/* pixels per sample */
	double total;
	unsigned depth;		/* rows above the root */
};

/* Bytes of the well-formed UTF-8 character at @s (of @n), 0 if none. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len = s[0] < 0xc2 ? 0 : s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 :
		     s[0] < 0xf5 ? 4 : 0;
	uint32_t cp;

	if (!len || len > n)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	cp = len == 2 ? (s[0] & 0x1fu) << 6 | (s[1] & 0x3fu) :
	     len == 3 ? (s[0] & 0x0fu) << 12 | (s[1] & 0x3fu) << 6 |
			(s[2] & 0x3fu) :
	     (s[0] & 0x07u) << 18 | (s[1] & 0x3fu) << 12 |
	     (s[2] & 0x3fu) << 6 | (s[3] & 0x3fu);
	/* overlong forms, surrogates, past U+10FFFF, the non-characters
	 * XML refuses */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff ||
	    cp == 0xfffe || cp == 0xffff)
		return 0;
	return len;
}

/*
 * Up to @max characters of @s as XML text (and attribute) content: the
 * five markup characters as entities, what XML cannot hold as '?'.
 * Returns the characters written.
 */
static size_t put_text(FILE *out, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), chars = 0;

	for (size_t i = 0; i < n && chars < max; chars++) {
		size_t len = p[i] < 0x80 ? 1 : utf8_len(p + i, n - i);

		switch (len ? p[i] : 0) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default:
			if (!len || (p[i] < 0x20 && p[i] != '\t') ||
			    p[i] == 0x7f)
				fputc('?', out);
			else
				fwrite(p + i, 1, len, out);
		}
		i += len ? len : 1;
	}
	return chars;
}

/* Characters in @s, as put_text() counts them. */
static size_t text_chars(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), chars = 0;

	for (size_t i = 0; i < n; chars++) {
		size_t len = p[i] < 0x80 ? 1 : utf8_len(p + i, n - i);

		i += len ? len : 1;
	}
	return chars;
}

/* The label of a frame @w pixels wide: the name, or its start and "..",
 * or nothing where not 3 characters fit (as the script does). */
static void put_label(FILE *out, const char *name, double w)
{
	long fit = (long)((w - 6) / CHAR_W);

	if (fit < 3)
		return;
	if (text_chars(name) <= (size_t)fit) {
		put_text(out, name, (size_t)fit);
		return;
	}
	put_text(out, name, (size_t)fit - 2);
	fputs("..", out);
}

/* FNV-1a of the name: warm colours, the same for a name everywhere. */
static void put_fill(FILE *out, const char *name)
{
	uint32_t h = 2166136261u;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 16777619u;
	fprintf(out, "rgb(%u,%u,%u)", 200 + h % 56, 60 + (h >> 8) % 150,
		(h >> 16) % 60);
}

static void put_frame(const struct draw *d, const struct dp_flame_node *n,
		      double x, double w, unsigned level)
{
	double y = TOP + (double)(d->depth - level) * FRAME_H;

	fputs("<g class=\"f\"><title>", d->out);
	put_text(d->out, n->name, (size_t)-1);
	fprintf(d->out, " (%llu sample%s, %.2f%%)</title>",
		(unsigned long long)n->count, n->count == 1 ? "" : "s",
		100.0 * (double)n->count / d->total);
	fprintf(d->out, "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" "
		"height=\"%d\" fill=\"", x, y, w, FRAME_H - 1);
	put_fill(d->out, n->name);
	fprintf(d->out, "\" rx=\"2\"/><text x=\"%.2f\" y=\"%.0f\">", x + 3,
		y + FRAME_H - 4.5);
	put_label(d->out, n->name, w);
	fputs("</text></g>\n", d->out);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct dp_flame_node *)a)->name,
		      ((const struct dp_flame_node *)b)->name);
}

/* @n at @x and its callees above it, left to right by name. */
static void draw(const struct draw *d, struct dp_flame_node *n, double x,
		 unsigned level)
{
	double w = (double)n->count * d->scale;

	if (!n->count || w < MIN_FRAME_W)
		return;
	put_frame(d, n, x, w, level);
	if (n->nkids > 1) {
		qsort(n->kids, n->nkids, sizeof(*n->kids), by_name);
		dp_flame_reindex(n);
	}
	for (size_t i = 0; i < n->nkids; i++) {
		draw(d, &n->kids[i], x, level + 1);
		x += (double)n->kids[i].count * d->scale;
	}
}

static void put_head(FILE *out, const struct dp_flame *f, unsigned width,
		     unsigned height, const char *title)
{
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" "
		"standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" "
		"width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" "
		"data-total=\"%llu\" data-pad=\"%d\" data-fontsize=\"%d\">\n",
		width, height, width, height,
		(unsigned long long)dp_flame_total(f), PAD, FONT_SIZE);
	fputs("<style type=\"text/css\">\n"
	      "text { font-family: Verdana, sans-serif; font-size: 12px; "
	      "fill: #000; }\n"
	      "#title { font-size: 17px; }\n"
	      ".ctl { cursor: pointer; fill: #205090; }\n"
	      ".f { cursor: pointer; }\n"
	      ".f:hover rect { stroke: #000; stroke-width: 0.5; }\n"
	      ".f.under rect { opacity: 0.55; }\n"
	      ".f text { pointer-events: none; }\n"
	      "</style>\n", out);
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]>"
		"</script>\n", dp_flame_script);
	fputs("<defs><linearGradient id=\"bg\" x1=\"0\" y1=\"0\" x2=\"0\" "
	      "y2=\"1\"><stop offset=\"5%\" stop-color=\"#eeeeee\"/>"
	      "<stop offset=\"95%\" stop-color=\"#eeeeb0\"/>"
	      "</linearGradient></defs>\n", out);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" "
		"fill=\"url(#bg)\"/>\n", width, height);
	fprintf(out, "<text id=\"title\" x=\"%.1f\" y=\"22\" "
		"text-anchor=\"middle\">", width / 2.0);
	put_text(out, title, 200);
	fputs("</text>\n", out);
	fprintf(out, "<text id=\"reset\" class=\"ctl\" x=\"%d\" y=\"22\" "
		"visibility=\"hidden\">Reset zoom</text>\n", PAD);
	fprintf(out, "<text id=\"search\" class=\"ctl\" x=\"%d\" y=\"22\" "
		"text-anchor=\"end\">Search</text>\n", width - PAD);
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n", PAD,
		height - 9);
	fprintf(out, "<text id=\"matched\" x=\"%d\" y=\"%u\" "
		"text-anchor=\"end\"> </text>\n", width - PAD, height - 9);
}

int dp_flame_write_svg(struct dp_flame *f, FILE *out,
		       const struct dp_flame_opts *o)
{
	unsigned width = o && o->width ? o->width : 1200;
	const char *title = o && o->title ? o->title : "Flame Graph";
	unsigned height = TOP + (f->depth + 1) * FRAME_H + BOTTOM;
	struct draw d = {
		.out = out, .total = (double)dp_flame_total(f),
		.depth = f->depth,
	};

	d.scale = d.total ? (width - 2.0 * PAD) / d.total : 0;
	put_head(out, f, width, height, title);
	fputs("<g id=\"frames\">\n", out);
	draw(&d, &f->root, PAD, 0);
	fputs("</g>\n", out);
	if (!d.total)
		fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">"
			"no stacks</text>\n", width / 2.0, TOP + FRAME_H);
	fputs("</svg>\n", out);
	return fflush(out) || ferror(out) ? -EIO : 0;
}
