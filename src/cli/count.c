// SPDX-License-Identifier: GPL-2.0
/*
 * dprobe count -e EVENT... --by KEY[,KEY]: how often each key value
 * occurs in the events' records, most first, printed as the kernel's
 * `hist` text (with a bar per entry) at the end and on SIGUSR1: what
 * `--trigger 'hist:keys=KEY:sort=hitcount.descending'` gives, with the
 * keys the kernel's hist triggers lack (comm, pid: the process) too
 * (oneliner.c: dp_ol_count).  The events run in trace's session.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/oneliner.h"
#include "cli/session.h"

static int on_setup(void *priv, struct dp_registry *reg)
{
	return dp_ol_count_setup(priv, reg);
}

static void on_record(void *priv, const struct dp_event *ev, const void *rec,
		      size_t len, const struct dp_rec_meta *meta,
		      const struct dp_symbolizer *sym)
{
	dp_ol_count_record(priv, ev, rec, len, meta, sym);
}

static void on_tick(void *priv)
{
	dp_ol_count_print(priv, stdout, false);
}

static void on_end(void *priv, const struct dp_stats *st)
{
	(void)st;
	dp_ol_count_print(priv, stdout, false);
}

enum { OPT_BY = DP_OL_FIRST_OWN, OPT_FILTER, OPT_INTERVAL };

int dp_cmd_count(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "by", required_argument, NULL, OPT_BY },
		{ "filter", required_argument, NULL, OPT_FILTER },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		DP_OL_TARGET_LONGOPTS,
		{ 0 },
	};
	struct dp_ol_count c = { 0 };
	struct dp_session_hooks h = { .cmd = "count", .priv = &c,
				      .setup = on_setup, .record = on_record,
				      .tick = on_tick, .end = on_end };
	struct dp_ol_argv a = { 0 };
	int opt, ret;

	dp_ol_push(&a, "count");
	optind = 1;
	while ((opt = getopt_long(argc, argv, "+e:p:fh", longopts, NULL)) != -1) {
		if (dp_ol_target_opt(&a, opt, optarg))
			continue;
		switch (opt) {
		case 'e':
			dp_ol_push(&a, "-e");
			dp_ol_push(&a, optarg);
			break;
		case OPT_FILTER:
			dp_ol_push(&a, "--filter");
			dp_ol_push(&a, optarg);
			break;
		case OPT_BY: c.by = optarg; break;
		case OPT_INTERVAL:
			h.interval = dp_ol_seconds(optarg);
			if (h.interval < 0) {
				fprintf(stderr, "dprobe count: bad --interval "
					"'%s'\n", optarg);
				goto bad;
			}
			break;
		case 'h':
			dp_usage(stdout, "count");
			dp_ol_argv_free(&a);
			return DP_EXIT_OK;
		default:
			goto bad;
		}
	}
	if (!c.by || !*c.by) {
		fprintf(stderr, "dprobe count: no key given (--by KEY[,KEY])\n");
		goto bad;
	}
	dp_ol_push_cmd(&a, argc, argv, optind);
	ret = dp_trace_session(a.n, a.v, &h);
	dp_ol_count_free(&c);
	dp_ol_argv_free(&a);
	return ret;
bad:
	dp_ol_argv_free(&a);
	dp_usage(stderr, "count");
	return DP_EXIT_USAGE;
}
