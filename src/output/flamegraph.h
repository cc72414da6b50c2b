/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Flame graphs: folded stacks ("main;run;work 3", the folded renderer's
 * lines, Brendan Gregg's format) merged into a tree of frames and drawn
 * as one self-contained interactive SVG (flamegraph.c): every frame a
 * <g> with its <title>, <rect> and <text>, the CSS and the script that
 * zooms and searches inline, nothing fetched.
 */
#ifndef DPROBE_OUTPUT_FLAMEGRAPH_H
#define DPROBE_OUTPUT_FLAMEGRAPH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Frames deeper than this are refused (dp_flame_add: -E2BIG). */
#define DP_FLAME_MAX_DEPTH	1024

/* A frame: its name, the samples of the stacks through it, its callees
 * (flamegraph.c builds them, flamegraph-svg.c draws them, sorted by
 * name), and, for a frame with many callees, a hash index of them by
 * name (slots: index + 1, 0 empty; nslots a power of two, 0 none) so
 * that a wide frame (thousands of distinct callees) is not searched
 * from end to end for each line. */
struct dp_flame_node {
	char *name;
	uint64_t count;
	struct dp_flame_node *kids;
	size_t nkids, cap;
	size_t *slots, nslots;
};

struct dp_flame {
	struct dp_flame_node root;	/* "all" */
	unsigned depth;			/* of the deepest frame; root: 0 */
};

struct dp_flame *dp_flame_new(void);
void dp_flame_free(struct dp_flame *f);

/*
 * @count more samples of the stack @stack (@len bytes: frame names from
 * the outermost to the innermost, joined by ';').  0, or -ENOMEM,
 * -E2BIG (deeper than DP_FLAME_MAX_DEPTH), -EOVERFLOW (the total would
 * pass 2^53, past what the script's numbers hold exactly), -EINVAL (an
 * empty stack); the tree is then as it was before the call.
 */
int dp_flame_add(struct dp_flame *f, const char *stack, size_t len,
		 uint64_t count);

/*
 * One folded line, "STACK COUNT" (a trailing newline allowed).  0 if it
 * was added, 1 if it was blank, or dp_flame_add()'s errors; -EINVAL
 * also for a line that is not STACK, a space and a decimal count.
 */
int dp_flame_add_line(struct dp_flame *f, const char *line);

/* The samples of every stack added. */
uint64_t dp_flame_total(const struct dp_flame *f);

struct dp_flame_opts {
	const char *title;	/* NULL: "Flame Graph" */
	unsigned width;		/* in pixels; 0: 1200 */
};

/* Drop @n's index of its callees, after they were moved (sorted); the
 * next dp_flame_add() through @n builds it anew. */
void dp_flame_reindex(struct dp_flame_node *n);

#define DP_FLAME_MIN_WIDTH	200
#define DP_FLAME_MAX_WIDTH	100000

/* The SVG of @f on @out (each frame's callees get sorted by name on the
 * way, and their index dropped: dp_flame_reindex()).  0, or -EIO if the
 * stream failed. */
int dp_flame_write_svg(struct dp_flame *f, FILE *out,
		       const struct dp_flame_opts *o);

#endif
