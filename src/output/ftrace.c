// SPDX-License-Identifier: GPL-2.0
/*
 * The ftrace `trace` renderer: the file header, one line per record and the
 * lost-events marker, byte for byte as the kernel prints probe events
 * (print_*_event in trace_kprobe.c and trace_uprobe.c).  Also the symbol
 * lookup shared with the JSON renderer.
 *
 * Deliberate difference from the kernel: the five flag columns are always
 * "....." (a user-space hit has no irq/preempt context to report); 6.18
 * prints "DBZff" for uprobes, which is an accident of its handler.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "event/synth.h"
#include "output/output.h"
#include "output/render.h"

/* ---- symbols (shared with json.c) ------------------------------------ */

bool dp_out_lookup(const struct dp_trace_opts *opts, uint64_t addr,
		   const char **name, uint64_t *off, uint64_t *size)
{
	const struct dp_symbolizer *sym = opts ? opts->sym : NULL;

	if (!sym || !sym->lookup)
		return false;
	*name = NULL;
	*off = 0;
	*size = 0;
	if (sym->lookup(sym->priv, addr, name, off, size) || !*name)
		return false;
	/* the kernel treats an empty name as no symbol */
	return **name != '\0';
}

/* ---- header and markers ------------------------------------------------ */

/* The column legend of the nop tracer with default options
 * (print_trace_header() in trace.c). */
static const char trace_legend[] =
	"#\n"
	"#                                _-----=> irqs-off/BH-disabled\n"
	"#                               / _----=> need-resched\n"
	"#                              | / _---=> hardirq/softirq\n"
	"#                              || / _--=> preempt-depth\n"
	"#                              ||| / _-=> migrate-disable\n"
	"#                              |||| /     delay\n"
	"#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
	"#              | |         |   |||||     |         |\n";

void dp_trace_header(FILE *out, unsigned long entries, unsigned long written,
		     int ncpus)
{
	dp_trace_header_of(out, "nop", entries, written, ncpus);
}

void dp_trace_header_of(FILE *out, const char *tracer, unsigned long entries,
			unsigned long written, int ncpus)
{
	flockfile(out);
	fprintf(out, "# tracer: %s\n#\n", tracer);
	fprintf(out, "# entries-in-buffer/entries-written: %lu/%lu   #P:%d\n",
		entries, written, ncpus);
	fputs_unlocked(trace_legend, out);
	funlockfile(out);
}

void dp_trace_lost(FILE *out, int cpu, unsigned long lost)
{
	if (!lost)
		return;
	if (lost == DP_LOST_UNKNOWN)
		fprintf(out, "CPU:%d [LOST EVENTS]\n", cpu);
	else
		fprintf(out, "CPU:%d [LOST %lu EVENTS]\n", cpu, lost);
}

/* ---- one line ---------------------------------------------------------- */

void dp_put_ts(FILE *out, uint64_t ts_ns, enum dp_ts_mode mode, int width)
{
	uint64_t us = ts_ns / 1000 + (ts_ns % 1000 >= 500);

	if (mode == DP_TS_NS)
		fprintf(out, "%*" PRIu64 ".%09" PRIu64, width,
			ts_ns / 1000000000, ts_ns % 1000000000);
	else
		fprintf(out, "%*" PRIu64 ".%06" PRIu64, width, us / 1000000,
			us % 1000000);
}

/*
 * "comm-pid [cpu] flags secs.usecs: ".  Microseconds are rounded to the
 * nearest, as the kernel's ns2usecs() does (+500 ns, then divide);
 * --ts ns prints the nanoseconds instead.
 */
static void put_context(FILE *out, const struct dp_rec_meta *meta,
			enum dp_ts_mode ts)
{
	fprintf(out, "%16s-%-7d [%03d] ..... ",
		meta->comm ? meta->comm : "<...>", meta->pid, meta->cpu);
	dp_put_ts(out, meta->ts_ns, ts, 5);
	fputs_unlocked(": ", out);
}

void dp_trace_context(FILE *out, const struct dp_rec_meta *meta)
{
	put_context(out, meta, DP_TS_US);	/* tracefs: the kernel's microseconds */
}

void dp_trace_context_ts(FILE *out, const struct dp_rec_meta *meta,
			 enum dp_ts_mode ts)
{
	put_context(out, meta, ts);
}

/*
 * seq_print_ip_sym(): "0" for 0, "sym+0xoff/0xsize" (or the bare name
 * without @offset), "0x%08lx" when no symbol covers @addr.
 */
static void put_ip_sym(FILE *out, const struct dp_trace_opts *opts,
		       uint64_t addr, bool offset)
{
	const char *name;
	uint64_t off, size;

	if (!addr) {
		fputc_unlocked('0', out);
		return;
	}
	if (!dp_out_lookup(opts, addr, &name, &off, &size)) {
		fprintf(out, "0x%08" PRIx64, addr);
		return;
	}
	fputs_unlocked(name, out);
	if (offset)
		fprintf(out, "+0x%" PRIx64 "/0x%" PRIx64, off, size);
}

void dp_trace_ip_sym(FILE *out, const struct dp_trace_opts *opts,
		     uint64_t addr, bool offset)
{
	put_ip_sym(out, opts, addr, offset);
}

/* The parenthesised place: uprobes print raw addresses, kprobes symbols. */
static void put_head(FILE *out, const struct dp_event *ev, const uint8_t *r,
		     const struct dp_trace_opts *opts)
{
	uint64_t ip, func, ret_ip;

	fputc_unlocked('(', out);
	if (ev->kind == DP_KIND_EPROBE) {
		/* print_eprobe_event(): the attached SYSTEM.EVENT */
		const struct dp_place *pl = &ev->probes->def.place;

		fprintf(out, "%s.%s)", pl->module, pl->symbol);
		return;
	}
	if (!ev->is_return) {
		ip = dp_rec_load(r + DP_REC_IP_OFF, 8);
		if (ev->kind == DP_KIND_UPROBE)
			dp_out_hex(out, ip);
		else
			put_ip_sym(out, opts, ip, true);
		fputc_unlocked(')', out);
		return;
	}
	func = dp_rec_load(r + DP_REC_FUNC_OFF, 8);
	ret_ip = dp_rec_load(r + DP_REC_RET_IP_OFF, 8);
	/* (return address <- function), the reverse of the record order */
	if (ev->kind == DP_KIND_UPROBE) {
		dp_out_hex(out, ret_ip);
		fputs_unlocked(" <- ", out);
		dp_out_hex(out, func);
	} else {
		put_ip_sym(out, opts, ret_ip, true);
		fputs_unlocked(" <- ", out);
		put_ip_sym(out, opts, func, false);
	}
	fputc_unlocked(')', out);
}

/* %pS: "sym+0xoff/0xsize", or the bare address as hex. */
static void put_symbol(FILE *out, const struct dp_trace_opts *opts,
		       uint64_t addr)
{
	const char *name;
	uint64_t off, size;

	if (!dp_out_lookup(opts, addr, &name, &off, &size)) {
		dp_out_hex(out, addr);
		return;
	}
	fprintf(out, "%s+0x%" PRIx64 "/0x%" PRIx64, name, off, size);
}

static void put_string(FILE *out, const uint8_t *r, const uint8_t *slot)
{
	const char *s;
	size_t n;

	if (!dp_rec_str(r, slot, &s, &n)) {
		fputs_unlocked("(fault)", out);
		return;
	}
	/* raw bytes, no escaping: the kernel prints "\"%s\"" */
	fputc_unlocked('"', out);
	fwrite_unlocked(s, 1, n, out);
	fputc_unlocked('"', out);
}

/* One element of an argument, as the kernel's print_type_*() functions. */
static void put_elem(FILE *out, const struct dp_type *t, const uint8_t *r,
		     const uint8_t *p, unsigned esz,
		     const struct dp_trace_opts *opts)
{
	switch (t->kind) {
	case DP_T_U:
	case DP_T_BITFIELD:	/* the record holds the extracted value */
		dp_out_udec(out, dp_rec_load(p, esz));
		break;
	case DP_T_S:
		dp_out_sdec(out, dp_rec_sload(p, esz));
		break;
	case DP_T_CHAR:
		fputc_unlocked('\'', out);
		fputc_unlocked(*p, out);
		fputc_unlocked('\'', out);
		break;
	case DP_T_STRING:
	case DP_T_USTRING:
	case DP_T_SYMSTR:
		put_string(out, r, p);
		break;
	case DP_T_SYMBOL:
		put_symbol(out, opts, dp_rec_load(p, esz));
		break;
	case DP_T_X:
	default:
		dp_out_hex(out, dp_rec_load(p, esz));
		break;
	}
}

static void put_arg(FILE *out, const struct dp_field *f, const uint8_t *r,
		    const struct dp_trace_opts *opts)
{
	struct dp_rec_geom g;
	unsigned i;

	dp_rec_geom(f, &g);	/* cannot fail: dp_rec_check() passed */
	fputc_unlocked(' ', out);
	fputs_unlocked(f->name, out);
	fputc_unlocked('=', out);
	if (!g.array) {
		put_elem(out, f->ptype, r, dp_rec_elem(r, &g, 0), g.esz,
			 opts);
		return;
	}
	fputc_unlocked('{', out);
	for (i = 0; i < g.n; i++) {
		if (i)
			fputc_unlocked(',', out);
		put_elem(out, f->ptype, r, dp_rec_elem(r, &g, i), g.esz,
			 opts);
	}
	fputc_unlocked('}', out);
}

/*
 * The kernel's syscall events print as print_syscall_enter() and
 * print_syscall_exit() do: "sys_NAME(arg: hex, ...)" and
 * "sys_NAME -> 0xhex", with no event name before.  False: not one.
 */
static bool put_syscall(FILE *out, const struct dp_event *ev,
			const uint8_t *r)
{
	bool enter = !strncmp(ev->name, "sys_enter_", 10);
	bool first = true;

	if (!ev->kernel || strcmp(ev->group, "syscalls") ||
	    (!enter && strncmp(ev->name, "sys_exit_", 9)))
		return false;
	fprintf(out, "sys_%s", ev->name + (enter ? 10 : 9));
	if (enter)
		fputc_unlocked('(', out);
	for (unsigned i = 0; i < ev->nfields; i++) {
		const struct dp_field *f = &ev->fields[i];
		uint64_t v;

		if (!strcmp(f->name, "__syscall_nr") || f->fclass != DP_FC_NUM)
			continue;
		v = dp_rec_load(r + f->offset, f->size);
		if (enter)
			fprintf(out, "%s%s: %" PRIx64, first ? "" : ", ",
				f->name, v);
		else
			fprintf(out, " -> 0x%" PRIx64, v);
		first = false;
	}
	if (enter)
		fputc_unlocked(')', out);
	return true;
}

/* The line after its context, without '\n' (the caller has checked the
 * record and holds @out's lock). */
static void put_body(FILE *out, const struct dp_event *ev, const uint8_t *r,
		     size_t len, const struct dp_trace_opts *opts)
{
	unsigned i;

	if (put_syscall(out, ev, r))
		return;
	fputs_unlocked(ev->name, out);
	fputc_unlocked(':', out);
	if (ev->synth) {
		/* a synthetic event: print_synth_event()'s fields */
		fputc_unlocked(' ', out);
		dp_synth_print(out, ev, r, len, opts ? opts->sym : NULL);
		return;
	}
	/* a tracepoint's line is its fields alone, as the kernel's */
	if (ev->kind != DP_KIND_TRACEPOINT) {
		fputc_unlocked(' ', out);
		put_head(out, ev, r, opts);
	}
	for (i = 0; i < ev->nfields; i++)
		if (ev->fields[i].ptype)
			put_arg(out, &ev->fields[i], r, opts);
}

int dp_trace_body(FILE *out, const struct dp_event *ev, const void *rec,
		  size_t len, const struct dp_trace_opts *opts)
{
	if (!ev || dp_rec_check(ev, rec, len))
		return -1;
	flockfile(out);
	put_body(out, ev, rec, len, opts);
	funlockfile(out);
	return 0;
}

int dp_trace_line(FILE *out, const struct dp_event *ev, const void *rec,
		  size_t len, const struct dp_rec_meta *meta,
		  const struct dp_trace_opts *opts)
{
	if (!ev || !meta || dp_rec_check(ev, rec, len))
		return -1;
	/* one lock for the whole line: concurrent writers never interleave */
	flockfile(out);
	put_context(out, meta, opts ? opts->ts : DP_TS_US);
	put_body(out, ev, rec, len, opts);
	fputc_unlocked('\n', out);
	funlockfile(out);
	return 0;
}

/*
 * The user stack of a record that has one (dp_rec_meta.stack), as the
 * kernel prints a TRACE_USER_STACK entry after the event
 * (trace_user_stack_print()): its own context, "<user stack trace>",
 * then " => " and one frame a line, up to the first 0.  Frames print
 * as the kernel's %pS (sprint_symbol(): "sym+0xoff/0xsize"); one that
 * no symbol covers as the kernel prints a user frame it cannot name
 * (" <%016lx>" after the arrow).  A walk that stopped at a bad frame
 * ends with DP_STACK_BAD_FRAME, printed " => [bad frame]" (bracketed as
 * perf names what it cannot: "[unknown]").
 */
void dp_trace_stack(FILE *out, const struct dp_rec_meta *meta,
		    const struct dp_trace_opts *opts)
{
	const char *name;
	uint64_t off, size;

	if (!meta || !meta->stack)
		return;
	flockfile(out);
	put_context(out, meta, opts ? opts->ts : DP_TS_US);
	fputs_unlocked("<user stack trace>\n", out);
	for (unsigned i = 0; i < meta->nstack && meta->stack[i]; i++) {
		uint64_t ip = meta->stack[i];

		fputs_unlocked(" => ", out);
		if (ip == DP_STACK_BAD_FRAME)
			fputs_unlocked(DP_STACK_BAD_FRAME_NAME, out);
		else if (dp_out_lookup(opts, ip, &name, &off, &size))
			fprintf(out, "%s+0x%" PRIx64 "/0x%" PRIx64, name, off,
				size);
		else
			fprintf(out, " <%016" PRIx64 ">", ip);
		fputc_unlocked('\n', out);
	}
	funlockfile(out);
}
