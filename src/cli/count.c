// SPDX-License-Identifier: GPL-2.0
#include "cli/cli.h"

int dp_cmd_count(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return DP_EXIT_USAGE;
}
