// SPDX-License-Identifier: GPL-2.0
/*
 * dprobe top -e EVENT --by KEY: the hottest key values of the last
 * interval, refreshed every second (--interval), as perf top refreshes:
 * on a terminal the screen is cleared and redrawn (ANSI codes), anywhere
 * else each interval is one block after the other.  Each block is the
 * kernel's hist text of that interval's records, most first, its first
 * -n entries with bars (oneliner.c: dp_ol_count), then the counts start
 * again.  Ctrl-C, --duration or the target's exit end it, with a last
 * block for the interval then under way.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/oneliner.h"
#include "cli/session.h"

#define DEFAULT_ROWS 20

struct top {
	struct dp_ol_count c;
	double interval;
	bool tty;
	unsigned block;
	const char *by;
};

static int on_setup(void *priv, struct dp_registry *reg)
{
	struct top *t = priv;

	return dp_ol_count_setup(&t->c, reg);
}

static void on_record(void *priv, const struct dp_event *ev, const void *rec,
		      size_t len, const struct dp_rec_meta *meta,
		      const struct dp_symbolizer *sym)
{
	struct top *t = priv;

	dp_ol_count_record(&t->c, ev, rec, len, meta, sym);
}

static void block(struct top *t, bool last)
{
	/* home and clear the screen, as perf top redraws */
	if (t->tty)
		fputs("\033[H\033[2J", stdout);
	else if (t->block)
		putchar('\n');
	t->block++;
	printf("# dprobe top: interval %u (%gs), by %s, at most %u entr%s each%s\n",
	       t->block, t->interval, t->by, t->c.bar.max_rows,
	       t->c.bar.max_rows == 1 ? "y" : "ies",
	       last ? ", the last (partial)" : "");
	dp_ol_count_print(&t->c, stdout, true);
}

static void on_tick(void *priv)
{
	block(priv, false);
}

static void on_end(void *priv, const struct dp_stats *st)
{
	(void)st;
	block(priv, true);
}

enum { OPT_BY = DP_OL_FIRST_OWN, OPT_FILTER, OPT_INTERVAL };

int dp_cmd_top(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "by", required_argument, NULL, OPT_BY },
		{ "filter", required_argument, NULL, OPT_FILTER },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "rows", required_argument, NULL, 'n' },
		DP_OL_TARGET_LONGOPTS,
		{ 0 },
	};
	struct top t = { .interval = 1, .by = "comm" };
	struct dp_session_hooks h = { .cmd = "top", .priv = &t,
				      .setup = on_setup, .record = on_record,
				      .tick = on_tick, .end = on_end };
	struct dp_ol_argv a = { 0 };
	char *end;
	long rows = DEFAULT_ROWS;
	int opt, ret;

	dp_ol_push(&a, "top");
	optind = 1;
	while ((opt = getopt_long(argc, argv, "+e:n:p:fh", longopts,
				  NULL)) != -1) {
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
		case OPT_BY: t.by = optarg; break;
		case 'n':
			rows = strtol(optarg, &end, 10);
			if (*end || end == optarg || rows < 1 || rows > 100000) {
				fprintf(stderr, "dprobe top: bad -n '%s' (1 to "
					"100000 rows)\n", optarg);
				goto bad;
			}
			break;
		case OPT_INTERVAL:
			t.interval = dp_ol_seconds(optarg);
			if (t.interval < 0.01) {
				fprintf(stderr, "dprobe top: bad --interval "
					"'%s' (seconds, 0.01 or more)\n", optarg);
				goto bad;
			}
			break;
		case 'h':
			dp_usage(stdout, "top");
			dp_ol_argv_free(&a);
			return DP_EXIT_OK;
		default:
			goto bad;
		}
	}
	if (!*t.by) {
		fprintf(stderr, "dprobe top: no key given (--by KEY[,KEY])\n");
		goto bad;
	}
	t.c.by = t.by;
	t.c.bar.max_rows = (unsigned)rows;
	t.tty = isatty(STDOUT_FILENO);
	h.interval = t.interval;
	dp_ol_push_cmd(&a, argc, argv, optind);
	ret = dp_trace_session(a.n, a.v, &h);
	dp_ol_count_free(&t.c);
	dp_ol_argv_free(&a);
	return ret;
bad:
	dp_ol_argv_free(&a);
	dp_usage(stderr, "top");
	return DP_EXIT_USAGE;
}
