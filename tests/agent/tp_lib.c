// SPDX-License-Identifier: GPL-2.0
/*
 * A shared library (-fPIC) with a tracepoint of the same name as one of
 * t_tracepoint's own: tracepoints are per object.  t_tracepoint dlopen()s
 * it and reaches the hidden tracepoint through the functions below.
 */
#include <dprobe/tracepoint.h>

#define DP_CREATE_TRACE_POINTS
#include <dprobe/tracepoint.h>

DP_TRACE_EVENT(dplib, tp_simple,
	TP_PROTO(int a, long b),
	TP_ARGS(a, b),
	TP_FIELDS(tp_field(int, a) tp_field(long, b)))

struct dp_tracepoint *tp_lib_tracepoint(void)
{
	return &__dp_tracepoint_tp_simple;
}

void tp_lib_fire(int a, long b)
{
	trace_tp_simple(a, b);
}

/* The jump table of this object, as the runtime sees it. */
const struct dp_jump_entry *tp_lib_jump_table(const struct dp_jump_entry **stop)
{
	*stop = __stop___dp_jump_table;
	return __start___dp_jump_table;
}
