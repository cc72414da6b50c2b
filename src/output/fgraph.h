/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private to render-fgraph.c and fgraph-line.c: the pieces of a
 * function_graph line, written as trace_functions_graph.c writes them.
 */
#ifndef DPROBE_OUTPUT_FGRAPH_H
#define DPROBE_OUTPUT_FGRAPH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "output/output.h"

/* Where and when a line happened: its thread, CPU and time. */
struct fg_where {
	uint64_t ts;
	int cpu;
	int tid;		/* -1: no thread's (a lost-events marker) */
	char comm[16];
};

/* How lines are written: the options and the CPU column's width. */
struct fg_style {
	unsigned flags;		/* enum dp_fg_flag */
	int cpu_width;		/* digits of the highest CPU number */
	enum dp_ts_mode ts;
};

/* A duration not known (an exit whose entry was not seen): the column
 * is left blank. */
#define FG_NO_DURATION UINT64_MAX

/* Absolute time, CPU and proc columns (print_graph_prologue()). */
void fg_prologue(FILE *f, const struct fg_style *s, const struct fg_where *w);

/* The overhead mark and duration column, blank for FG_NO_DURATION
 * (print_graph_duration()). */
void fg_duration(FILE *f, const struct fg_style *s, uint64_t ns);

/* @depth levels of indentation. */
void fg_indent(FILE *f, unsigned depth);

/* "func();", "} /" "* func = 0x1 *" "/" and the like: the text after
 * the indentation of a leaf (@leaf) or closing line, with the return
 * value @rv when @has_rv and funcgraph-retval is on, the name after the
 * brace when @tail. */
void fg_call_end(FILE *f, const struct fg_style *s, const char *name,
		 bool leaf, bool tail, bool has_rv, uint64_t rv);

/* The block the kernel prints when the thread of the lines changes
 * (verif_pid()): from @prev to @cur, on @cur's CPU. */
void fg_switch(FILE *f, const struct fg_style *s, const struct fg_where *prev,
	       const struct fg_where *cur);

#endif
