// SPDX-License-Identifier: GPL-2.0
/*
 * dprobe show: what a probe does to the code.  The probes are armed as
 * `dprobe trace` arms them (its session, session.h), and the engine
 * prints each location once armed: the original instructions, the bytes
 * there now, the detour or out-of-line slot and where it jumps back, and
 * why the probe is or is not jump-optimised (engine.h's show()).  Then
 * every probe goes: a launched command is killed before its main() runs,
 * an attached process runs on as it was.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/oneliner.h"
#include "cli/session.h"

/* The options, then PLACE (a definition's place: `p PLACE`). */
static int parse(int argc, char **argv, struct dp_ol_argv *a)
{
	static const struct option longopts[] = {
		{ "event", required_argument, NULL, 'e' },
		DP_OL_TARGET_LONGOPTS,
		{ 0 },
	};
	const char *place = NULL;
	int opt;

	optind = 1;
	for (;;) {
		while ((opt = getopt_long(argc, argv, "+e:p:h", longopts,
					  NULL)) != -1) {
			if (opt == 'h')
				return 1;
			if (opt == 'e') {
				dp_ol_push(a, "-e");
				dp_ol_push(a, optarg);
			} else if (opt == 'f' || !dp_ol_target_opt(a, opt, optarg)) {
				return -1;	/* -f: one process is shown */
			}
		}
		/* a word before "--" (getopt stopped on it, not on "--") */
		if (optind < argc && strcmp(argv[optind - 1], "--") && !place) {
			place = argv[optind++];
			continue;
		}
		break;
	}
	if (place) {
		dp_ol_push(a, "-e");
		dp_ol_pushf(a, "p %s", place);
	}
	dp_ol_push_cmd(a, argc, argv, optind);
	return 0;
}

int dp_cmd_show(int argc, char **argv)
{
	struct dp_session_hooks h = { .cmd = "show", .show = true };
	struct dp_ol_argv a = { 0 };
	int ret;

	dp_ol_push(&a, "show");
	ret = parse(argc, argv, &a);
	if (ret) {
		dp_ol_argv_free(&a);
		dp_usage(ret > 0 ? stdout : stderr, "show");
		return ret > 0 ? DP_EXIT_OK : DP_EXIT_USAGE;
	}
	ret = dp_trace_session(a.n, a.v, &h);
	dp_ol_argv_free(&a);
	return ret;
}
