// SPDX-License-Identifier: GPL-2.0
/*
 * An application with static tracepoints (include/dprobe/tracepoint.h):
 * shop:order and shop:restock cost a nop each until something enables
 * them.  The program enables shop:restock itself, with a probe that
 * counts what came in, as kernel code registers a probe on a tracepoint;
 * dprobe enables either from outside:
 *
 *	dprobe list -x build/examples/tracepoint_example 'shop:*'
 *	dprobe trace -e shop:order -e shop:restock -- build/examples/tracepoint_example
 *	dprobe stat -e shop:order -- build/examples/tracepoint_example 1000
 *
 * Usage: tracepoint_example [ORDERS]   (default 4)
 */
#include <stdio.h>
#include <stdlib.h>

#define DP_CREATE_TRACE_POINTS
#include "tracepoint_example.h"

static const char *const items[] = { "tea", "coffee", "cocoa" };

/* The program's own probe on shop:restock. */
static void count_restock(void *data, unsigned short qty,
			  const unsigned char *tag)
{
	(void)tag;
	*(unsigned long *)data += qty;
}

static unsigned long take_order(int id)
{
	unsigned long cents = 250 + 125 * (unsigned long)(id % 3);

	trace_order(id, items[id % 3], cents);
	return cents;
}

static void restock(int round)
{
	const unsigned char tag[4] = { 'S', 'H', (unsigned char)('0' + round % 10),
				       (unsigned char)round };

	trace_restock((unsigned short)(10 * (round + 1)), tag);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	unsigned long total = 0, stocked = 0;
	int ret = register_trace_restock(count_restock, &stocked);

	if (ret) {
		fprintf(stderr, "register_trace_restock: %d\n", ret);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		total += take_order(i);
		if (i % 2 == 1)
			restock(i / 2);
	}
	unregister_trace_restock(count_restock, &stocked);
	printf("%d orders, %lu cents, %lu restocked\n", n, total, stocked);
	return 0;
}
