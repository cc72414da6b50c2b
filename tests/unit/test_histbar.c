// SPDX-License-Identifier: GPL-2.0
/*
 * Histograms with bars (output/histbar.h), as `dprobe latency`, `count`
 * and `top` print them: the bar's scale and rounding, durations in
 * readable units, log2 bucket ranges as the kernel fills the buckets,
 * entry lines decorated and every other line of the kernel's text kept,
 * -n's cut; and the whole path from a dp_hist on a synthetic event.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "event/hist.h"
#include "output/histbar.h"
#include "capture.h"

static void bar_is(uint64_t n, uint64_t max, unsigned width, const char *want)
{
	char buf[64];

	dp_histbar_bar(buf, sizeof(buf), n, max, width);
	cr_expect_str_eq(buf, want, "%llu of %llu in %u", (unsigned long long)n,
			 (unsigned long long)max, width);
}

Test(histbar, bar)
{
	bar_is(10, 10, 4, "|@@@@|");
	bar_is(0, 10, 4, "|    |");
	bar_is(5, 10, 4, "|@@  |");
	/* rounded to the nearest column: 2/3 of 4 is 2.67 */
	bar_is(2, 3, 4, "|@@@ |");
	/* a count that is not zero always shows */
	bar_is(1, 1000000, 4, "|@   |");
	bar_is(0, 0, 2, "|  |");
	/* never past the width */
	bar_is(20, 10, 3, "|@@@|");
}

Test(histbar, bar_small_buffer)
{
	char buf[4];

	dp_histbar_bar(buf, sizeof(buf), 5, 5, 10);
	cr_expect_str_eq(buf, "|@@");
}

static void dur_is(uint64_t v, enum dp_dur_unit u, const char *want)
{
	char buf[32];

	dp_histbar_dur(buf, sizeof(buf), v, u);
	cr_expect_str_eq(buf, want, "%llu", (unsigned long long)v);
}

Test(histbar, durations)
{
	dur_is(0, DP_DUR_NS, "0ns");
	dur_is(512, DP_DUR_NS, "512ns");
	dur_is(999, DP_DUR_NS, "999ns");
	dur_is(1000, DP_DUR_NS, "1us");
	dur_is(1024, DP_DUR_NS, "1.02us");
	dur_is(524288, DP_DUR_NS, "524us");
	/* 999.6 us has three digits only as 1.00 ms */
	dur_is(999600, DP_DUR_NS, "1ms");
	dur_is(1048576, DP_DUR_NS, "1.05ms");
	dur_is(2147483648ull, DP_DUR_NS, "2.15s");
	dur_is(4096, DP_DUR_US, "4.1ms");
	dur_is(3, DP_DUR_US, "3us");
	dur_is(1ull << 40, DP_DUR_NS, "1.1e+03s");
	dur_is(42, DP_DUR_NONE, "42");
}

static void range_is(unsigned exp, enum dp_dur_unit u, const char *want)
{
	char buf[64];

	dp_histbar_range(buf, sizeof(buf), exp, u);
	cr_expect_str_eq(buf, want, "2^%u", exp);
}

Test(histbar, log2_ranges)
{
	/* the kernel keys v by ilog2(roundup_pow_of_two(v)): 0 and 1 in
	 * 2^0, (2^(N-1), 2^N] in 2^N */
	range_is(0, DP_DUR_NS, "[0, 1ns]");
	range_is(1, DP_DUR_NS, "(1ns, 2ns]");
	range_is(10, DP_DUR_NS, "(512ns, 1.02us]");
	range_is(12, DP_DUR_US, "(2.05ms, 4.1ms]");
	/* past 2^63: 2^63 */
	range_is(70, DP_DUR_NS, "(4.61e+09s, 9.22e+09s]");
}

static char *decorate(const char *text, const struct dp_histbar_opts *o,
		      unsigned *entries)
{
	struct cap c;

	*entries = dp_histbar_print(cap_open(&c), text, o);
	return cap_close(&c);
}

static const char kernel_text[] =
	"# event histogram\n"
	"#\n"
	"# trigger info: hist:keys=lat.log2:vals=hitcount:sort=lat.log2:size=2048 [active]\n"
	"#\n"
	"\n"
	"{ lat: ~ 2^9  } hitcount:          2\n"
	"{ lat: ~ 2^10 } hitcount:          4\n"
	"{ lat: ~ 2^11 } hitcount:          1\n"
	"\n"
	"Totals:\n"
	"    Hits: 7\n"
	"    Entries: 3\n"
	"    Dropped: 0\n";

Test(histbar, entries_decorated_rest_kept)
{
	struct dp_histbar_opts o = { .width = 8, .unit = DP_DUR_NS };
	unsigned n;
	char *got = decorate(kernel_text, &o, &n);

	cr_expect_eq(n, 3);
	cr_expect_str_eq(got,
		"# event histogram\n"
		"#\n"
		"# trigger info: hist:keys=lat.log2:vals=hitcount:sort=lat.log2:size=2048 [active]\n"
		"#\n"
		"\n"
		"{ lat: ~ 2^9  } hitcount:          2  (256ns, 512ns]    |@@@@    |\n"
		"{ lat: ~ 2^10 } hitcount:          4  (512ns, 1.02us]   |@@@@@@@@|\n"
		"{ lat: ~ 2^11 } hitcount:          1  (1.02us, 2.05us]  |@@      |\n"
		"\n"
		"Totals:\n"
		"    Hits: 7\n"
		"    Entries: 3\n"
		"    Dropped: 0\n");
	free(got);
}

Test(histbar, not_durations_no_range)
{
	struct dp_histbar_opts o = { .width = 4 };
	unsigned n;
	char *got = decorate("{ a:          1 } hitcount:          3\n"
			     "{ a:          0 } hitcount:          1\n", &o, &n);

	cr_expect_eq(n, 2);
	cr_expect_str_eq(got,
		"{ a:          1 } hitcount:          3  |@@@@|\n"
		"{ a:          0 } hitcount:          1  |@   |\n");
	free(got);
}

Test(histbar, rows_cut)
{
	/* the scale is that of the rows shown; what is cut is counted */
	struct dp_histbar_opts o = { .width = 4, .max_rows = 1 };
	unsigned n;
	char *got = decorate("{ a: 1 } hitcount:          8\n"
			     "{ a: 2 } hitcount:          4\n"
			     "{ a: 3 } hitcount:          2\n"
			     "\n"
			     "Totals:\n", &o, &n);

	cr_expect_eq(n, 3);
	cr_expect_str_eq(got,
		"{ a: 1 } hitcount:          8  |@@@@|\n"
		"# 2 more entries not shown\n"
		"\n"
		"Totals:\n");
	free(got);
	o.max_rows = 2;
	got = decorate("{ a: 1 } hitcount:          8\n"
		       "{ a: 2 } hitcount:          4\n"
		       "{ a: 3 } hitcount:          2", &o, &n);
	cr_expect_str_eq(got,
		"{ a: 1 } hitcount:          8  |@@@@|\n"
		"{ a: 2 } hitcount:          4  |@@  |\n"
		"# 1 more entry not shown\n");
	free(got);
}

Test(histbar, not_entries)
{
	/* lines that only look like entries pass as they are */
	struct dp_histbar_opts o = { 0 };
	unsigned n;
	const char *text = "{no space } hitcount: 3\n"
			   "{ a: 1 } hitcount: many\n"
			   "{ a: 1 } hits: 3\n"
			   "no newline at the end";
	char *got = decorate(text, &o, &n);

	cr_expect_eq(n, 0);
	cr_expect_str_eq(got, text);
	free(got);
}

Test(histbar, from_a_dp_hist)
{
	/* what latency does: a synthetic event of one u64, a dp_hist on it
	 * keyed by lat.log2, its text with bars */
	struct dp_registry reg;
	struct dp_hist_error err;
	struct dp_hist *h;
	const struct dp_event *ev;
	const struct dp_field *f;
	struct dp_rec_meta meta = { .pid = 1, .tgid = 1, .comm = "t" };
	struct dp_histbar_opts o = { .width = 4, .unit = DP_DUR_NS };
	uint64_t vals[] = { 1000, 1024, 1025, 3000 };
	char *text = NULL, *got;
	size_t size = 0;
	unsigned n;
	FILE *mem;

	dp_registry_init(&reg);
	cr_assert_eq(dp_registry_synth(&reg, "latency u64 lat", false, NULL), 0);
	ev = dp_registry_find(&reg, "synthetic", "latency");
	cr_assert_not_null(ev);
	f = dp_event_field(ev, "lat");
	cr_assert_not_null(f);
	cr_assert_eq(dp_hist_new(ev, "hist:keys=lat.log2:sort=lat", &h, &err), 0);
	for (unsigned i = 0; i < 4; i++) {
		uint8_t rec[64] = { 0 };

		memcpy(rec + f->offset, &vals[i], 8);
		dp_hist_add(h, rec, ev->fixed_size, &meta, NULL);
	}
	mem = open_memstream(&text, &size);
	dp_hist_print(h, 0, mem);
	fclose(mem);
	got = decorate(text, &o, &n);
	cr_expect_eq(n, 3);
	/* 1000 and 1024 round up to 2^10, 1025 to 2^11, 3000 to 2^12 */
	cr_expect(strstr(got, "{ lat: ~ 2^10 } hitcount:          2  "
			 "(512ns, 1.02us]   |@@@@|\n") != NULL, "%s", got);
	cr_expect(strstr(got, "{ lat: ~ 2^11 } hitcount:          1  "
			 "(1.02us, 2.05us]  |@@  |\n") != NULL, "%s", got);
	cr_expect(strstr(got, "{ lat: ~ 2^12 } hitcount:          1  "
			 "(2.05us, 4.1us]   |@@  |\n") != NULL, "%s", got);
	cr_expect(strstr(got, "    Hits: 4\n") != NULL, "%s", got);
	free(got);
	free(text);
	dp_hist_free(h);
	dp_registry_free(&reg);
}
