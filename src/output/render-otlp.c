// SPDX-License-Identifier: GPL-2.0
/*
 * OpenTelemetry logs in OTLP/JSON, the file layout an OpenTelemetry
 * Collector's otlpjsonfile receiver reads: one ExportLogsServiceRequest
 * object per line,
 *
 *   {"resourceLogs":[{"resource":{"attributes":[service.name "dprobe",
 *     process.pid, process.executable.name]},"scopeLogs":[{"scope":
 *     {"name":"dprobe","version":V},"logRecords":[RECORD,...]}]},...]}
 *
 * with one resourceLogs per traced process (tgid) of the line, its name
 * the comm of its first record there.  Each event record is a log
 * record: timeUnixNano, observedTimeUnixNano, severity INFO (9), body
 * the event's `trace` line without the context columns (comm-pid [cpu]
 * flags ts:), and the attributes event.name, event.group, thread.id,
 * thread.name (comm), cpu.logical_number, the place (probe.ip, or
 * probe.func and probe.ret_ip for a return; probe.symbol and
 * probe.ret_symbol where --format json has sym and ret_sym), then every
 * field under its own name, and with --stack the user stack as
 * code.stacktrace.  Dotted names cannot clash with a field's.
 *
 * Values follow the protocol's JSON mapping: keys in lowerCamelCase,
 * enums as numbers, 64-bit integers as decimal strings (intValue, the
 * times).  A field is an AnyValue as --format json types it: u*, s*,
 * bitfields and a synthetic event's numbers intValue (a u64 above
 * INT64_MAX, which intValue cannot hold, the stringValue of its
 * decimal); x* "0x..." , char, strings and symbols stringValue; arrays
 * arrayValue; a faulted string {} (an AnyValue with no value: unknown).
 * There is no traceId or spanId: the records belong to no span.
 *
 * Times: dprobe's records carry CLOCK_MONOTONIC, OTLP wants Unix time.
 * The offset CLOCK_REALTIME - CLOCK_MONOTONIC is measured once, at
 * begin, and added to every record's time, so a session's times keep
 * their order and gaps even if the wall clock is stepped meanwhile (it
 * is then off by the step).  observedTimeUnixNano is the wall clock when
 * dprobe formatted the record.
 *
 * Records are held per process and written as a line every BATCH
 * records, whenever the engine has nothing more to read for now (flush)
 * and at the end: a long session streams in bounded memory.  Lost
 * events are a WARN (13) record, in a resource of no process, saying
 * how many were lost on which CPU (dprobe.lost: the count, absent when
 * not known), at the time of the record before them.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output/render.h"
#include "util/util.h"

#define BATCH		1024	/* records a line holds at most */
#define SEV_INFO	9	/* SEVERITY_NUMBER_INFO */
#define SEV_WARN	13	/* SEVERITY_NUMBER_WARN */
#define NO_PROCESS	(-1)	/* the tgid of the lost-event records */

/* A process's records of the line being gathered, comma separated.
 * Its stream writes @buf and @len: a proc never moves. */
struct proc {
	int tgid;
	char comm[32];
	char *buf;
	size_t len;
	FILE *f;
	unsigned n;		/* records in the line being gathered */
};

struct otlp {
	int64_t off_ns;		/* CLOCK_REALTIME - CLOCK_MONOTONIC */
	uint64_t last_ns;	/* the newest record's time: a loss's */
	struct proc **procs;
	size_t nprocs, cap;
	unsigned held;		/* records in procs */
	FILE *line;		/* scratch: a record's `trace` line */
	char *lbuf;
	size_t llen;
};

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- values -------------------------------------------------------------- */

static void put_int(FILE *f, int64_t v)
{
	fputs_unlocked("{\"intValue\":\"", f);
	dp_out_sdec(f, v);
	fputs_unlocked("\"}", f);
}

static void put_uint(FILE *f, uint64_t v)
{
	if (v > INT64_MAX) {
		fputs_unlocked("{\"stringValue\":\"", f);
		dp_out_udec(f, v);
		fputs_unlocked("\"}", f);
		return;
	}
	put_int(f, (int64_t)v);
}

static void put_strn(FILE *f, const void *s, size_t n)
{
	fputs_unlocked("{\"stringValue\":", f);
	dp_json_strn(f, s, n);
	fputc_unlocked('}', f);
}

static void put_hex(FILE *f, uint64_t v)
{
	fputs_unlocked("{\"stringValue\":\"", f);
	dp_out_hex(f, v);
	fputs_unlocked("\"}", f);
}

/* "sym+0xoff/0xsize" (or the bare name without @offset) of @addr; false
 * when no symbol covers it: nothing written then. */
static bool put_sym(FILE *f, const struct dp_trace_opts *o, uint64_t addr,
		    bool offset)
{
	const char *name;
	uint64_t off, size;
	char *s = NULL;
	int n;

	if (!addr || !dp_out_lookup(o, addr, &name, &off, &size))
		return false;
	n = offset ? asprintf(&s, "%s+0x%" PRIx64 "/0x%" PRIx64, name, off,
			      size) : asprintf(&s, "%s", name);
	if (n < 0)
		return false;
	put_strn(f, s, (size_t)n);
	free(s);
	return true;
}

/* One element of a field, as --format json types it. */
static void put_elem(FILE *f, const struct dp_type *t, const uint8_t *r,
		     const uint8_t *p, unsigned esz,
		     const struct dp_trace_opts *o)
{
	const char *s;
	size_t n;

	switch (t->kind) {
	case DP_T_U:
	case DP_T_BITFIELD:
		put_uint(f, dp_rec_load(p, esz));
		break;
	case DP_T_S:
		put_int(f, dp_rec_sload(p, esz));
		break;
	case DP_T_CHAR:
		put_strn(f, p, 1);
		break;
	case DP_T_STRING:
	case DP_T_USTRING:
	case DP_T_SYMSTR:
		if (dp_rec_str(r, p, &s, &n))
			put_strn(f, s, n);
		else
			fputs_unlocked("{}", f);	/* faulted: unknown */
		break;
	case DP_T_SYMBOL:
		if (!put_sym(f, o, dp_rec_load(p, esz), true))
			put_hex(f, dp_rec_load(p, esz));
		break;
	case DP_T_X:
	default:
		put_hex(f, dp_rec_load(p, esz));
		break;
	}
}

/* ---- attributes ------------------------------------------------------------ */

/* ",{"key":KEY,"value":" (the first attribute has no comma). */
static void put_key(FILE *f, const char *key, bool first)
{
	fputs_unlocked(first ? "{\"key\":" : ",{\"key\":", f);
	dp_json_string(f, key);
	fputs_unlocked(",\"value\":", f);
}

static void put_field(FILE *f, const struct dp_event *ev,
		      const struct dp_field *fl, const uint8_t *r,
		      const struct dp_trace_opts *o)
{
	struct dp_rec_geom g;

	put_key(f, fl->name, false);
	if (ev->synth && fl->fclass == DP_FC_NUM) {
		/* a synthetic event's numbers (hist actions) */
		if (fl->is_signed)
			put_int(f, dp_rec_sload(r + fl->offset, fl->size));
		else
			put_uint(f, dp_rec_load(r + fl->offset, fl->size));
	} else if (dp_rec_geom(fl, &g), !g.array) {
		put_elem(f, fl->ptype, r, dp_rec_elem(r, &g, 0), g.esz, o);
	} else {
		fputs_unlocked("{\"arrayValue\":{\"values\":[", f);
		for (unsigned i = 0; i < g.n; i++) {
			if (i)
				fputc_unlocked(',', f);
			put_elem(f, fl->ptype, r, dp_rec_elem(r, &g, i),
				 g.esz, o);
		}
		fputs_unlocked("]}}", f);
	}
	fputc_unlocked('}', f);
}

/* An attribute of a symbol, left out when there is none. */
static void put_sym_attr(FILE *f, const char *key,
			 const struct dp_trace_opts *o, uint64_t addr,
			 bool offset)
{
	const char *name;
	uint64_t off, size;

	if (!addr || !dp_out_lookup(o, addr, &name, &off, &size))
		return;
	put_key(f, key, false);
	put_sym(f, o, addr, offset);
	fputc_unlocked('}', f);
}

static void put_hex_attr(FILE *f, const char *key, uint64_t v)
{
	put_key(f, key, false);
	put_hex(f, v);
	fputc_unlocked('}', f);
}

/* Where the probe hit: --format json's ip or func and ret_ip, and syms. */
static void put_place(FILE *f, const struct dp_event *ev, const uint8_t *r,
		      const struct dp_trace_opts *o)
{
	bool ksym = ev->kind == DP_KIND_KPROBE;
	uint64_t func, ret_ip;

	if (ev->kind == DP_KIND_TRACEPOINT || ev->synth)
		return;
	if (!ev->is_return) {
		put_hex_attr(f, "probe.ip", dp_rec_load(r + DP_REC_IP_OFF, 8));
		if (ksym)
			put_sym_attr(f, "probe.symbol", o,
				     dp_rec_load(r + DP_REC_IP_OFF, 8), true);
		return;
	}
	func = dp_rec_load(r + DP_REC_FUNC_OFF, 8);
	ret_ip = dp_rec_load(r + DP_REC_RET_IP_OFF, 8);
	put_hex_attr(f, "probe.func", func);
	put_hex_attr(f, "probe.ret_ip", ret_ip);
	if (ksym) {
		put_sym_attr(f, "probe.symbol", o, func, false);
		put_sym_attr(f, "probe.ret_symbol", o, ret_ip, true);
	}
}

static void put_str_attr(FILE *f, const char *key, const char *s,
			 bool first)
{
	put_key(f, key, first);
	put_strn(f, s, strlen(s));
	fputc_unlocked('}', f);
}

static void put_int_attr(FILE *f, const char *key, int64_t v)
{
	put_key(f, key, false);
	put_int(f, v);
	fputc_unlocked('}', f);
}

/* ---- records ----------------------------------------------------------------- */

static void put_nanos(FILE *f, const char *key, uint64_t ns)
{
	fprintf(f, "\"%s\":\"%" PRIu64 "\"", key, ns);
}

/* {"timeUnixNano":...,"body":{"stringValue": (the body follows) */
static void put_record_head(FILE *f, uint64_t unix_ns, int sev)
{
	fputc_unlocked('{', f);
	put_nanos(f, "timeUnixNano", unix_ns);
	fputc_unlocked(',', f);
	put_nanos(f, "observedTimeUnixNano", clock_ns(CLOCK_REALTIME));
	fprintf(f, ",\"severityNumber\":%d,\"severityText\":\"%s\","
		"\"body\":{\"stringValue\":", sev,
		sev == SEV_WARN ? "WARN" : "INFO");
}

/* The record's `trace` line after its context columns, as a string. */
static int put_body(struct otlp *x, FILE *f, const struct dp_event *ev,
		    const void *rec, size_t len,
		    const struct dp_rec_meta *meta,
		    const struct dp_trace_opts *o)
{
	long ctx, end;

	if (!x->line || fseek(x->line, 0, SEEK_SET))
		return -1;
	/* the context alone first: its width, whatever the comm holds */
	dp_trace_context(x->line, meta);
	ctx = ftell(x->line);
	if (dp_trace_line(x->line, ev, rec, len, meta, o) || fflush(x->line))
		return -1;
	end = ftell(x->line);
	if (ctx < 0 || end < 2 * ctx + 1)
		return -1;
	/* the line: the context again, the text, '\n' */
	dp_json_strn(f, x->lbuf + 2 * ctx, (size_t)(end - 2 * ctx - 1));
	return 0;
}

/*
 * The user stack (--stack) as OpenTelemetry's code.stacktrace: one frame
 * a line, innermost first, each as the `trace` text names it
 * ("sym+0xoff/0xsize", the address in hex where no symbol covers it,
 * "[bad frame]" where a walk stopped at one).
 */
static void put_stack(FILE *f, const struct dp_rec_meta *meta,
		      const struct dp_trace_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *s;

	if (!meta->stack || !meta->nstack || !(s = open_memstream(&buf, &len)))
		return;
	for (unsigned i = 0; i < meta->nstack && meta->stack[i]; i++) {
		uint64_t ip = meta->stack[i], off, size;
		const char *name;

		if (i)
			fputc('\n', s);
		if (ip == DP_STACK_BAD_FRAME)
			fputs(DP_STACK_BAD_FRAME_NAME, s);
		else if (dp_out_lookup(o, ip, &name, &off, &size))
			fprintf(s, "%s+0x%" PRIx64 "/0x%" PRIx64, name, off,
				size);
		else
			fprintf(s, "0x%" PRIx64, ip);
	}
	if (!fclose(s)) {
		put_key(f, "code.stacktrace", false);
		put_strn(f, buf, len);
		fputc_unlocked('}', f);
	}
	free(buf);
}

static void put_attrs(FILE *f, const struct dp_event *ev, const uint8_t *r,
		      const struct dp_rec_meta *meta,
		      const struct dp_trace_opts *o)
{
	fputs_unlocked(",\"attributes\":[", f);
	put_str_attr(f, "event.name", ev->name, true);
	put_str_attr(f, "event.group", ev->group, false);
	put_int_attr(f, "thread.id", meta->pid);
	if (meta->comm)
		put_str_attr(f, "thread.name", meta->comm, false);
	put_int_attr(f, "cpu.logical_number", meta->cpu);
	put_place(f, ev, r, o);
	for (unsigned i = 0; i < ev->nfields; i++) {
		const struct dp_field *fl = &ev->fields[i];

		if (fl->ptype || (ev->synth && fl->fclass == DP_FC_NUM))
			put_field(f, ev, fl, r, o);
	}
	put_stack(f, meta, o);
	fputs_unlocked("]}", f);
}

/* ---- batches ----------------------------------------------------------------- */

/* The process @tgid's records of this line, begun if need be; named
 * after the comm of its first record in the line. */
static struct proc *proc_of(struct otlp *x, int tgid, const char *comm)
{
	struct proc *p;

	for (size_t i = x->nprocs; i-- > 0;) {
		p = x->procs[i];
		if (p->tgid != tgid)
			continue;
		if (!p->n)
			snprintf(p->comm, sizeof(p->comm), "%s",
				 comm ? comm : "");
		return p;
	}
	if (x->nprocs == x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 8;
		struct proc **v = realloc(x->procs, cap * sizeof(*v));

		if (!v)
			return NULL;
		x->procs = v;
		x->cap = cap;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->tgid = tgid;
	snprintf(p->comm, sizeof(p->comm), "%s", comm ? comm : "");
	p->f = open_memstream(&p->buf, &p->len);
	if (!p->f) {
		free(p);
		return NULL;
	}
	x->procs[x->nprocs++] = p;
	return p;
}

static void put_resource(FILE *out, const struct proc *p)
{
	fputs("{\"resource\":{\"attributes\":[", out);
	put_str_attr(out, "service.name", "dprobe", true);
	if (p->tgid != NO_PROCESS) {
		put_int_attr(out, "process.pid", p->tgid);
		if (*p->comm)
			put_str_attr(out, "process.executable.name", p->comm,
				     false);
	}
	fputs("]},\"scopeLogs\":[{\"scope\":{\"name\":\"dprobe\","
	      "\"version\":\"" DPROBE_VERSION "\"},\"logRecords\":[", out);
}

static void proc_free(struct proc *p)
{
	fclose(p->f);
	free(p->buf);
	free(p);
}

/* @p's records into the line; its buffer kept for the next (a buffer
 * made anew each line costs its page faults again). */
static void put_proc(FILE *out, struct proc *p, bool first)
{
	long len;

	fflush(p->f);
	len = ftell(p->f);
	fputs(first ? "" : ",", out);
	put_resource(out, p);
	if (len > 0)
		fwrite(p->buf, 1, (size_t)len, out);
	fputs("]}]}", out);
	fseek(p->f, 0, SEEK_SET);
	p->n = 0;
}

/* The records held, as one ExportLogsServiceRequest line.  A process
 * with none since the line before is forgotten: memory stays bounded
 * by the processes of the last two lines. */
static void write_batch(struct dp_renderer *r)
{
	struct otlp *x = r->priv;
	size_t i, k = 0;

	if (!x || !x->held)
		return;
	fputs("{\"resourceLogs\":[", r->out);
	for (i = 0; i < x->nprocs; i++) {
		struct proc *p = x->procs[i];

		if (!p->n) {
			proc_free(p);
			continue;
		}
		put_proc(r->out, p, !k);
		x->procs[k++] = p;
	}
	fputs("]}\n", r->out);
	x->nprocs = k;
	x->held = 0;
}

/* One more record in @p: a comma after the one before. */
static FILE *record_in(struct otlp *x, struct proc *p)
{
	if (p->n++)
		fputc(',', p->f);
	x->held++;
	return p->f;
}

static int otlp_event(struct dp_renderer *r, const struct dp_event *ev,
		      const void *rec, size_t len,
		      const struct dp_rec_meta *meta,
		      const struct dp_symbolizer *sym)
{
	struct dp_trace_opts o = { .ncpus = r->ncpus, .sym = sym };
	struct otlp *x = r->priv;
	long mark;
	struct proc *p;
	FILE *f;

	if (!x || !ev || !meta || dp_rec_check(ev, rec, len))
		return -1;
	p = proc_of(x, meta->tgid, meta->comm);
	if (!p)
		return -1;
	mark = ftell(p->f);
	f = record_in(x, p);
	put_record_head(f, meta->ts_ns + (uint64_t)x->off_ns, SEV_INFO);
	if (put_body(x, f, ev, rec, len, meta, &o)) {
		/* cannot happen once checked, short of memory: undone */
		fseek(p->f, mark, SEEK_SET);
		p->n--;
		x->held--;
		return -1;
	}
	fputc('}', f);
	put_attrs(f, ev, rec, meta, &o);
	x->last_ns = meta->ts_ns;
	if (x->held >= BATCH)
		write_batch(r);
	return 0;
}

static void otlp_lost(struct dp_renderer *r, int cpu, unsigned long n)
{
	struct otlp *x = r->priv;
	struct proc *p;
	char body[96];
	FILE *f;

	if (!x || !n)
		return;		/* none lost: nothing to say, as text */
	p = proc_of(x, NO_PROCESS, NULL);
	if (!p)
		return;
	f = record_in(x, p);
	put_record_head(f, x->last_ns ? x->last_ns + (uint64_t)x->off_ns :
			clock_ns(CLOCK_REALTIME), SEV_WARN);
	if (n == DP_LOST_UNKNOWN)
		snprintf(body, sizeof(body), "lost events on CPU %d (how "
			 "many is not known)", cpu);
	else
		snprintf(body, sizeof(body), "lost %lu events on CPU %d", n,
			 cpu);
	dp_json_string(f, body);
	fputs("},\"attributes\":[", f);
	put_str_attr(f, "event.name", "lost", true);
	put_int_attr(f, "cpu.logical_number", cpu);
	if (n != DP_LOST_UNKNOWN)
		put_int_attr(f, "dprobe.lost", (int64_t)n);
	fputs("]}", f);
	if (x->held >= BATCH)
		write_batch(r);
}

static void otlp_begin(struct dp_renderer *r)
{
	struct otlp *x = calloc(1, sizeof(*x));

	if (!x)
		return;
	x->off_ns = (int64_t)(clock_ns(CLOCK_REALTIME) -
			      clock_ns(CLOCK_MONOTONIC));
	x->line = open_memstream(&x->lbuf, &x->llen);
	r->priv = x;
}

static void otlp_end(struct dp_renderer *r)
{
	struct otlp *x = r->priv;

	if (!x)
		return;
	write_batch(r);
	for (size_t i = 0; i < x->nprocs; i++)
		proc_free(x->procs[i]);
	free(x->procs);
	if (x->line)
		fclose(x->line);
	free(x->lbuf);
	free(x);
	r->priv = NULL;
}

const struct dp_renderer_ops dp_render_otlp = {
	.name = "otlp",
	.begin = otlp_begin,
	.event = otlp_event,
	.lost = otlp_lost,
	.flush = write_batch,
	.end = otlp_end,
};
