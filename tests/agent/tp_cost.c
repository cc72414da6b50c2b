// SPDX-License-Identifier: GPL-2.0
/*
 * What a disabled tracepoint costs, counted by tests/agent/tp_callgrind.sh
 * with callgrind: the same function with and without a trace_cost() in
 * it, each called N times; the difference of their instruction counts
 * divided by N is the cost per call.  Built with -O2 and no sanitizer, as
 * an application would be (and with -DDP_TP_NO_JUMP_LABEL as tp_cost_nojl).
 *
 *   tp_cost N      prints the checksum of the calls
 */
#include <stdio.h>
#include <stdlib.h>

#define DP_CREATE_TRACE_POINTS
#include <dprobe/tracepoint.h>

DP_TRACE_EVENT(dpcost, cost,
	TP_PROTO(int id, long len, const char *name),
	TP_ARGS(id, len, name),
	TP_FIELDS(tp_field(int, id) tp_field(long, len) tp_string(name)))

/* A small function whose arguments are still needed after the site. */
__attribute__((noipa)) long with_tp(int id, long len, const char *name)
{
	trace_cost(id, len, name);
	return id * 3 + len + name[id & 3];
}

__attribute__((noipa)) long without_tp(int id, long len, const char *name)
{
	return id * 3 + len + name[id & 3];
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000, sum = 0;

	for (long i = 0; i < n; i++)
		sum += with_tp((int)i, i, "name");
	for (long i = 0; i < n; i++)
		sum += without_tp((int)i, i, "name");
	printf("%ld\n", sum);
	return 0;
}
