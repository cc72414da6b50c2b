/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Histograms for people: the kernel's `hist` text (event/hist.h) with a
 * bar after each entry, scaled to the largest count, and for `.log2` keys
 * holding durations the bucket's range in readable units:
 *
 *   { lat: ~ 2^10 } hitcount:        123  (512ns, 1.02us]  |@@@@@@@@    |
 *
 * Each entry line keeps the kernel's text as its start, so what parses
 * the kernel's lines parses these; the header, Totals and every other
 * line pass unchanged.  Used by `dprobe latency`, `count` and `top`.
 */
#ifndef DPROBE_OUTPUT_HISTBAR_H
#define DPROBE_OUTPUT_HISTBAR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum dp_dur_unit {
	DP_DUR_NONE,	/* keys are not durations: no range column */
	DP_DUR_NS,	/* a .log2 key counts nanoseconds */
	DP_DUR_US,	/* ... microseconds */
};

struct dp_histbar_opts {
	unsigned width;		/* of a bar, between the '|'s; 0: 40 */
	unsigned max_rows;	/* entry lines shown; 0: every one */
	enum dp_dur_unit unit;
};

#define DP_HISTBAR_WIDTH 40

/*
 * @text (the kernel's hist text, NUL-terminated) to @out with the bars.
 * With @o->max_rows, the entries after the first max_rows are left out
 * and one line says how many ("# 12 more entries").  Returns the number
 * of entry lines in @text.
 */
unsigned dp_histbar_print(FILE *out, const char *text,
			  const struct dp_histbar_opts *o);

/* "|@@@@      |": @n of @max as @width columns (a non-zero @n gets at
 * least one '@'); @buf needs @width + 3 bytes. */
void dp_histbar_bar(char *buf, size_t size, uint64_t n, uint64_t max,
		    unsigned width);

/* @v in @unit as a person reads it: "0ns", "512ns", "1.02us", "3.5ms",
 * "2.1s" (three significant digits at most). */
void dp_histbar_dur(char *buf, size_t size, uint64_t v, enum dp_dur_unit unit);

/* The range of log2 bucket 2^@exp, as the kernel fills it (a value v
 * goes to the power of two it rounds up to): "[0, 1ns]" for 2^0, else
 * "(2^(exp-1), 2^exp]" in readable units. */
void dp_histbar_range(char *buf, size_t size, unsigned exp,
		      enum dp_dur_unit unit);

#endif
