// SPDX-License-Identifier: GPL-2.0
/*
 * dprobe trace --ts: the timestamp of a text or JSON line in the
 * kernel's microseconds (rounded to the nearest, as ns2usecs()) or in
 * nanoseconds, through the renderers as trace prints them.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "output/renderer.h"
#include "capture.h"

static void ts_is(uint64_t ns, enum dp_ts_mode m, int width, const char *want)
{
	struct cap c;
	char *got;

	dp_put_ts(cap_open(&c), ns, m, width);
	got = cap_close(&c);
	cr_expect_str_eq(got, want, "%llu", (unsigned long long)ns);
	free(got);
}

Test(ts, put_ts)
{
	ts_is(5592123456789ull, DP_TS_US, 5, " 5592.123457");
	ts_is(5592123456789ull, DP_TS_NS, 5, " 5592.123456789");
	ts_is(5592123456489ull, DP_TS_US, 0, "5592.123456");
	/* rounding carries into the seconds */
	ts_is(1999999500ull, DP_TS_US, 0, "2.000000");
	ts_is(1999999500ull, DP_TS_NS, 0, "1.999999500");
	ts_is(5, DP_TS_NS, 5, "    0.000000005");
	ts_is(123456789012345678ull, DP_TS_NS, 5, "123456789.012345678");
}

static char *render(const char *format, enum dp_ts_mode m)
{
	struct dp_registry reg;
	struct dp_renderer r;
	struct dp_event *ev;
	struct dp_rec_meta meta = { .ts_ns = 42000000123ull, .cpu = 1,
				    .pid = 7, .tgid = 7, .comm = "t" };
	uint8_t rec[64] = { 0 };
	struct cap c;

	dp_registry_init(&reg);
	cr_assert_eq(dp_registry_apply(&reg, "p:kp/k work a=%di:s32", NULL,
				       NULL), 0);
	ev = dp_registry_find(&reg, "kp", "k");
	cr_assert(ev && ev->fixed_size <= sizeof(rec));
	dp_renderer_init(&r, dp_renderer_by_name(format), cap_open(&c), 2);
	r.ts = (int)m;
	cr_expect_eq(dp_render_event(&r, ev, rec, ev->fixed_size, &meta, NULL), 0);
	dp_registry_free(&reg);
	return cap_close(&c);
}

Test(ts, text_lines)
{
	char *us = render("text", DP_TS_US), *ns = render("text", DP_TS_NS);

	cr_expect(strstr(us, " [001] .....    42.000000: k: ") != NULL, "%s", us);
	cr_expect(strstr(ns, " [001] .....    42.000000123: k: ") != NULL, "%s", ns);
	free(us);
	free(ns);
}

Test(ts, json_lines)
{
	char *us = render("json", DP_TS_US), *ns = render("json", DP_TS_NS);

	cr_expect(strstr(us, ",\"ts\":42.000000,\"cpu\":1,") != NULL, "%s", us);
	cr_expect(strstr(ns, ",\"ts\":42.000000123,\"cpu\":1,") != NULL, "%s", ns);
	free(us);
	free(ns);
}
