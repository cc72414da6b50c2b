// SPDX-License-Identifier: GPL-2.0
/*
 * The flamegraph format (dprobe trace --flamegraph OUT.svg, or --format
 * flamegraph): the records' user stacks counted as the folded format
 * counts them, and at the end drawn as an interactive SVG
 * (flamegraph-svg.c) instead of written as lines: what `--format folded
 * | dprobe flamegraph` gives, in one step.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "output/flamegraph.h"
#include "output/render.h"
#include "output/renderer.h"

struct fill {
	struct dp_flame *flame;
	int err;
};

static void add(void *arg, const char *stack, uint64_t count)
{
	struct fill *fl = arg;
	int err = fl->flame ? dp_flame_add(fl->flame, stack, strlen(stack),
					   count) : 0;

	if (err && !fl->err)
		fl->err = err;
}

static void flamegraph_end(struct dp_renderer *r)
{
	struct fill fl = { .flame = dp_flame_new() };

	dp_folded_drain(r, add, &fl);
	if (!fl.flame) {
		fprintf(stderr, "dprobe: out of memory: no flame graph\n");
		return;
	}
	if (fl.err)
		fprintf(stderr, "dprobe: flame graph: some stacks left out: "
			"%s\n", strerror(-fl.err));
	if (dp_flame_write_svg(fl.flame, r->out, NULL))
		fprintf(stderr, "dprobe: flame graph: %s\n", strerror(EIO));
	dp_flame_free(fl.flame);
}

const struct dp_renderer_ops dp_render_flamegraph = {
	.name = "flamegraph",
	.stacks = true,
	.event = dp_folded_event,
	.lost = dp_folded_lost,
	.end = flamegraph_end,
};
