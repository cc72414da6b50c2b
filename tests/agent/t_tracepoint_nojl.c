// SPDX-License-Identifier: GPL-2.0
/*
 * t_tracepoint.c again with the fallback of compilers without asm goto:
 * each trace_NAME() loads the probe count and branches (no jump table
 * entries, no code patching).
 */
#define DP_TP_NO_JUMP_LABEL
#include "t_tracepoint.c"
