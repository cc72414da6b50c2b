/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tracepoints of examples/tracepoint_example.c, as an application
 * declares them: once here, created in one .c file that defines
 * DP_CREATE_TRACE_POINTS before including this header.
 */
#ifndef TRACEPOINT_EXAMPLE_H
#define TRACEPOINT_EXAMPLE_H

#include <dprobe/tracepoint.h>

/* An order taken: `dprobe trace -e shop:order`. */
DP_TRACE_EVENT(shop, order,
	TP_PROTO(int id, const char *item, unsigned long cents),
	TP_ARGS(id, item, cents),
	TP_FIELDS(tp_field(int, id) tp_string(item)
		  tp_field(unsigned long, cents)))

/* Stock coming in: an unsigned quantity and a 4-byte shelf tag. */
DP_TRACE_EVENT(shop, restock,
	TP_PROTO(unsigned short qty, const unsigned char *tag),
	TP_ARGS(qty, tag),
	TP_FIELDS(tp_field(unsigned short, qty)
		  tp_array(unsigned char, tag, 4)))

#endif
