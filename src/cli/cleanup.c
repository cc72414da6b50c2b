// SPDX-License-Identifier: GPL-2.0
/*
 * dprobe cleanup: remove what kernel-engine runs that died left in
 * tracefs (their instances and dynamic events).
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "engine/engine.h"

int dp_cmd_cleanup(int argc, char **argv)
{
	int n;

	(void)argv;
	if (argc > 1) {
		if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
			dp_usage(stdout, "cleanup");
			return DP_EXIT_OK;
		}
		dp_usage(stderr, "cleanup");
		return DP_EXIT_USAGE;
	}
	n = dp_engine_cleanup(stdout);
	if (n < 0)
		return DP_EXIT_REJECTED;
	if (!n)
		printf("dprobe cleanup: nothing to remove\n");
	return DP_EXIT_OK;
}
