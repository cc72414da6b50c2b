// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's `hist` text with a bar per entry (histbar.h).  The text is
 * read, not the table: whatever dp_hist_print() writes, the entry lines
 * are the ones that start with "{ " and hold "} hitcount:".
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "output/histbar.h"

void dp_histbar_bar(char *buf, size_t size, uint64_t n, uint64_t max,
		    unsigned width)
{
	unsigned fill = 0, i = 0;

	if (!size)
		return;
	if (max && n) {
		/* rounded to the nearest column, never below one */
		fill = (unsigned)(((long double)n * width + max / 2) / max);
		if (!fill)
			fill = 1;
		if (fill > width)
			fill = width;
	}
	if (i + 1 < size)
		buf[i++] = '|';
	for (unsigned k = 0; k < width && i + 1 < size; k++)
		buf[i++] = k < fill ? '@' : ' ';
	if (i + 1 < size)
		buf[i++] = '|';
	buf[i] = '\0';
}

void dp_histbar_dur(char *buf, size_t size, uint64_t v, enum dp_dur_unit unit)
{
	static const char *const names[] = { "ns", "us", "ms", "s" };
	long double x = (long double)v;
	unsigned u = unit == DP_DUR_US ? 1 : 0;

	if (unit == DP_DUR_NONE) {
		snprintf(buf, size, "%" PRIu64, v);
		return;
	}
	if (x < 1000) {
		snprintf(buf, size, "%" PRIu64 "%s", v, names[u]);
		return;
	}
	/* three significant digits: 999.6 is 1.00 of the next unit */
	while (u < 3 && x >= 999.5L) {
		x /= 1000;
		u++;
	}
	snprintf(buf, size, "%.3Lg%s", x, names[u]);
}

void dp_histbar_range(char *buf, size_t size, unsigned exp,
		      enum dp_dur_unit unit)
{
	char lo[32], hi[32];

	if (exp > 63)
		exp = 63;
	dp_histbar_dur(hi, sizeof(hi), 1ull << exp, unit);
	if (!exp) {
		snprintf(buf, size, "[0, %s]", hi);
		return;
	}
	dp_histbar_dur(lo, sizeof(lo), 1ull << (exp - 1), unit);
	snprintf(buf, size, "(%s, %s]", lo, hi);
}

/* An entry line: its count, and its log2 exponent when it has one. */
static bool entry_line(const char *line, size_t len, uint64_t *count,
		       int *exp)
{
	const char *p, *end = line + len;
	char num[32];
	size_t n;

	if (len < 2 || line[0] != '{' || line[1] != ' ')
		return false;
	p = memmem(line, len, "} hitcount:", 11);
	if (!p)
		return false;
	*exp = -1;
	{
		const char *t = memmem(line, (size_t)(p - line), "~ 2^", 4);

		if (t)
			*exp = atoi(t + 4);
	}
	p += 11;
	while (p < end && *p == ' ')
		p++;
	n = strspn(p, "0123456789");
	if (!n || n >= sizeof(num) || p + n > end)
		return false;
	memcpy(num, p, n);
	num[n] = '\0';
	*count = strtoull(num, NULL, 10);
	return true;
}

static void put_entry(FILE *out, const char *line, size_t len, uint64_t count,
		      uint64_t max, int exp, enum dp_dur_unit unit,
		      size_t range_w, char *bar, unsigned width)
{
	fwrite(line, 1, len, out);
	if (exp >= 0 && unit != DP_DUR_NONE) {
		char r[80];

		dp_histbar_range(r, sizeof(r), (unsigned)exp, unit);
		fprintf(out, "  %-*s", (int)range_w, r);
	}
	dp_histbar_bar(bar, width + 3, count, max, width);
	fprintf(out, "  %s\n", bar);
}

unsigned dp_histbar_print(FILE *out, const char *text,
			  const struct dp_histbar_opts *o)
{
	unsigned width = o && o->width ? o->width : DP_HISTBAR_WIDTH;
	unsigned max_rows = o ? o->max_rows : 0;
	enum dp_dur_unit unit = o ? o->unit : DP_DUR_NONE;
	uint64_t max = 0, count;
	unsigned entries = 0, hidden = 0;
	size_t range_w = 0;
	const char *p, *nl;
	char *bar = malloc(width + 3);
	int exp;

	if (!bar)
		return 0;
	/* first the scale: the largest count shown, the widest range */
	for (p = text; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		if (entry_line(p, (size_t)(nl - p), &count, &exp) &&
		    (!max_rows || entries < max_rows)) {
			char r[80];

			entries++;
			if (count > max)
				max = count;
			if (exp >= 0 && unit != DP_DUR_NONE) {
				dp_histbar_range(r, sizeof(r), (unsigned)exp,
						 unit);
				if (strlen(r) > range_w)
					range_w = strlen(r);
			}
		}
		if (!*nl)
			break;
	}
	entries = 0;
	for (p = text; *p; p = nl + 1) {
		size_t len;

		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		len = (size_t)(nl - p);
		if (entry_line(p, len, &count, &exp)) {
			if (max_rows && ++entries > max_rows) {
				hidden++;
			} else {
				if (!max_rows)
					entries++;
				put_entry(out, p, len, count, max, exp, unit,
					  range_w, bar, width);
			}
		} else {
			if (hidden)
				fprintf(out, "# %u more entr%s not shown\n",
					hidden, hidden == 1 ? "y" : "ies");
			hidden = 0;
			fwrite(p, 1, len, out);
			if (*nl)
				fputc('\n', out);
		}
		if (!*nl)
			break;
	}
	if (hidden)
		fprintf(out, "# %u more entr%s not shown\n", hidden,
			hidden == 1 ? "y" : "ies");
	free(bar);
	return entries;
}
