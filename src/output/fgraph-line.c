// SPDX-License-Identifier: GPL-2.0
/*
 * The columns of a function_graph line (fgraph.h), byte for byte as the
 * kernel's trace_functions_graph.c prints them.
 */
#include <inttypes.h>
#include <string.h>

#include "output/fgraph.h"
#include "output/tracer.h"

/* The proc column's width (TRACE_GRAPH_PROCINFO_LENGTH). */
#define PROC_WIDTH 14

static void spaces(FILE *f, int n)
{
	while (n-- > 0)
		fputc_unlocked(' ', f);
}

/* "comm-tid" centred in 14 columns, the name cut at 7 characters
 * (print_graph_proc()). */
static void put_proc(FILE *f, const struct fg_where *w)
{
	char buf[32];
	int len = snprintf(buf, sizeof(buf), "%.7s-%d", w->comm, w->tid);
	int pad = len < PROC_WIDTH ? PROC_WIDTH - len : 0;

	spaces(f, pad / 2);
	fputs_unlocked(buf, f);
	spaces(f, pad - pad / 2);
}

static void put_cpu(FILE *f, const struct fg_style *s, int cpu)
{
	/* a space first, "to stand out when pasted into email" */
	fprintf(f, " %*d) ", s->cpu_width, cpu);
}

void fg_prologue(FILE *f, const struct fg_style *s, const struct fg_where *w)
{
	if (s->flags & DP_FG_ABSTIME) {
		/* the kernel truncates to microseconds here, not rounds */
		if (s->ts == DP_TS_NS)
			fprintf(f, "%5" PRIu64 ".%09" PRIu64 " |  ",
				w->ts / 1000000000, w->ts % 1000000000);
		else
			fprintf(f, "%5" PRIu64 ".%06" PRIu64 " |  ",
				w->ts / 1000000000, w->ts % 1000000000 / 1000);
	}
	if (s->flags & DP_FG_CPU)
		put_cpu(f, s, w->cpu);
	if (s->flags & DP_FG_PROC) {
		put_proc(f, w);
		fputs_unlocked(" | ", f);
	}
}

/* trace_find_mark(): the largest threshold the duration is above. */
static char mark(uint64_t ns)
{
	static const struct { uint64_t above; char c; } marks[] = {
		{ 1000000000, '$' }, { 100000000, '@' }, { 10000000, '*' },
		{ 1000000, '#' }, { 100000, '!' }, { 10000, '+' },
	};

	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		if (ns > marks[i].above)
			return marks[i].c;
	return ' ';
}

/*
 * trace_print_graph_duration(): microseconds, then as many digits of
 * the nanoseconds as keep the number within 7 characters and a dot,
 * " us ", and spaces up to 8 characters of number.
 */
static void put_usecs(FILE *f, uint64_t ns)
{
	char us[24], frac[8];
	int len = snprintf(us, sizeof(us), "%" PRIu64, ns / 1000);

	fputs_unlocked(us, f);
	if (len < 7) {
		/* the kernel's snprintf into 8 - len bytes (at most 5) cuts
		 * "%03lu" to what fits */
		int keep = (8 - len < 5 ? 8 - len : 5) - 1;

		snprintf(frac, sizeof(frac), "%03" PRIu64, ns % 1000);
		frac[keep] = '\0';
		fprintf(f, ".%s", frac);
		len += (int)strlen(frac) + 1;
	}
	fputs_unlocked(" us ", f);
	spaces(f, 8 - len);
}

void fg_duration(FILE *f, const struct fg_style *s, uint64_t ns)
{
	if (!(s->flags & DP_FG_DURATION))
		return;
	if (ns == FG_NO_DURATION) {
		fputs_unlocked("              |  ", f);
		return;
	}
	if (s->flags & DP_FG_OVERHEAD) {
		fputc_unlocked(mark(ns), f);
		fputc_unlocked(' ', f);
	} else {
		fputs_unlocked("  ", f);
	}
	put_usecs(f, ns);
	fputs_unlocked("|  ", f);
}

void fg_indent(FILE *f, unsigned depth)
{
	spaces(f, (int)depth * 2);	/* TRACE_GRAPH_INDENT */
}

/*
 * print_graph_retval(): 0 and anything but an error number in hex, an
 * error number (-1 .. -4095, also as a 32-bit value) in decimal, unless
 * funcgraph-retval-hex.
 */
static void put_retval(FILE *f, const struct fg_style *s, uint64_t rv)
{
	uint64_t e = rv;

	if (rv && !(s->flags & DP_FG_RETVAL_HEX)) {
		if ((rv & (1u << 31)) && !(rv >> 32))
			e = (uint64_t)(int64_t)(int32_t)rv;
		if (e >= (uint64_t)-4095) {
			fprintf(f, " = %" PRId64, (int64_t)e);
			return;
		}
	}
	fprintf(f, " = 0x%" PRIx64, rv);
}

void fg_call_end(FILE *f, const struct fg_style *s, const char *name,
		 bool leaf, bool tail, bool has_rv, uint64_t rv)
{
	bool retval = has_rv && (s->flags & DP_FG_RETVAL);

	if (leaf) {
		fprintf(f, "%s();", name);
		if (retval) {
			fputs_unlocked(" /*", f);
			put_retval(f, s, rv);
			fputs_unlocked(" */", f);
		}
	} else if (retval) {
		fprintf(f, "} /* %s", name);
		put_retval(f, s, rv);
		fputs_unlocked(" */", f);
	} else if (tail) {
		fprintf(f, "} /* %s */", name);
	} else {
		fputc_unlocked('}', f);
	}
	fputc_unlocked('\n', f);
}

void fg_switch(FILE *f, const struct fg_style *s, const struct fg_where *prev,
	       const struct fg_where *cur)
{
	fputs_unlocked(" ------------------------------------------\n", f);
	put_cpu(f, s, cur->cpu);
	put_proc(f, prev);
	fputs_unlocked(" => ", f);
	put_proc(f, cur);
	fputs_unlocked("\n ------------------------------------------\n\n", f);
}
