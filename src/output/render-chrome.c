// SPDX-License-Identifier: GPL-2.0
/*
 * The Chrome Trace Event Format (what Perfetto UI and chrome://tracing
 * open): {"traceEvents":[...],"displayTimeUnit":"ns"}.
 *
 * A return event and the entry event of the same thread on the same
 * function before it make one complete slice ("ph":"X", the entry's
 * time and the duration), named after the entry event, with both
 * records' fields as args ({"entry":{...},"return":{...}}).  An entry
 * waits, per thread, for its return; one whose return never comes (a
 * longjmp went past it, tracing stopped first, no return probe) and a
 * return with no entry become instants ("ph":"i"), as every other event
 * does.  A slice is always whole, so there is nothing to balance; the
 * viewers sort events by time, so a slice written at its return is in
 * order for them.  Each process and thread is named once ("ph":"M",
 * process_name and thread_name, from the records' comm); lost events are
 * a global instant "lost" with the CPU and the count, at the time of the
 * record before it.  Times are
 * microseconds with the nanoseconds as decimals.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lang/layout.h"
#include "output/output.h"
#include "output/renderer.h"

/* Entries a thread keeps waiting for their returns: past this, the
 * oldest is written as an instant. */
#define PENDING_MAX	1024
#define THREAD_BUCKETS	256

struct pending {
	uint64_t func, ts_ns;
	const struct dp_event *ev;
	char *args;		/* the entry's fields, a JSON object */
};

struct thread {
	int tid, tgid;
	struct pending *v;
	unsigned n, cap;
	struct thread *next;
};

struct chrome {
	struct thread *bucket[THREAD_BUCKETS];
	int *procs;		/* the processes named */
	size_t nprocs;
	uint64_t last_ns;	/* the newest record's time: a loss's */
	bool any;		/* an event written: the next one after ',' */
};

static void sep(struct dp_renderer *r)
{
	struct chrome *c = r->priv;

	if (c->any)
		fputc(',', r->out);
	c->any = true;
}

static void put_us(FILE *out, uint64_t ns)
{
	fprintf(out, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

static void put_name_meta(struct dp_renderer *r, const char *what, int pid,
			  int tid, const char *comm)
{
	sep(r);
	fprintf(r->out, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,"
		"\"args\":{\"name\":", what, pid, tid);
	dp_json_string(r->out, comm ? comm : "<...>");
	fputs("}}", r->out);
}

/* The thread of @meta, named in the output the first time it is seen. */
static struct thread *thread_of(struct dp_renderer *r,
				const struct dp_rec_meta *meta)
{
	struct chrome *c = r->priv;
	struct thread **b = &c->bucket[(unsigned)meta->pid % THREAD_BUCKETS];
	struct thread *t;
	int *p;

	for (t = *b; t; t = t->next)
		if (t->tid == meta->pid)
			return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = meta->pid;
	t->tgid = meta->tgid;
	t->next = *b;
	*b = t;
	put_name_meta(r, "thread_name", meta->tgid, meta->pid, meta->comm);
	for (size_t i = 0; i < c->nprocs; i++)
		if (c->procs[i] == meta->tgid)
			return t;
	p = realloc(c->procs, (c->nprocs + 1) * sizeof(*p));
	if (p) {
		c->procs = p;
		c->procs[c->nprocs++] = meta->tgid;
		put_name_meta(r, "process_name", meta->tgid, meta->tgid,
			      meta->comm);
	}
	return t;
}

static void put_head(struct dp_renderer *r, const char *ph,
		     const struct dp_event *ev, int pid, int tid,
		     uint64_t ts_ns)
{
	sep(r);
	fputs("{\"ph\":", r->out);
	dp_json_string(r->out, ph);
	fputs(",\"name\":", r->out);
	dp_json_string(r->out, ev->name);
	fputs(",\"cat\":", r->out);
	dp_json_string(r->out, ev->group);
	fprintf(r->out, ",\"pid\":%d,\"tid\":%d,\"ts\":", pid, tid);
	put_us(r->out, ts_ns);
}

/* A waiting entry, written as the instant it turned out to be. */
static void pending_instant(struct dp_renderer *r, const struct thread *t,
			    const struct pending *p)
{
	put_head(r, "i", p->ev, t->tgid, t->tid, p->ts_ns);
	fprintf(r->out, ",\"s\":\"t\",\"args\":%s}", p->args);
}

static void instant(struct dp_renderer *r, const struct dp_event *ev,
		    const void *rec, const struct dp_rec_meta *meta,
		    const struct dp_trace_opts *o)
{
	put_head(r, "i", ev, meta->tgid, meta->pid, meta->ts_ns);
	fputs(",\"s\":\"t\",\"args\":", r->out);
	dp_json_args(r->out, ev, rec, o);
	fputc('}', r->out);
}

/* The fields of @rec as a JSON object, in a string of its own. */
static char *args_text(const struct dp_event *ev, const void *rec,
		       const struct dp_trace_opts *o)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);

	if (!f)
		return NULL;
	dp_json_args(f, ev, rec, o);
	if (fclose(f)) {
		free(s);
		return NULL;
	}
	return s;
}

static void entry(struct dp_renderer *r, struct thread *t,
		  const struct dp_event *ev, const void *rec,
		  const struct dp_rec_meta *meta, const struct dp_trace_opts *o)
{
	struct pending p = {
		.func = dp_rec_load((const uint8_t *)rec + DP_REC_IP_OFF, 8),
		.ts_ns = meta->ts_ns, .ev = ev, .args = args_text(ev, rec, o),
	};

	if (!p.args) {
		instant(r, ev, rec, meta, o);
		return;
	}
	if (t->n == PENDING_MAX) {
		pending_instant(r, t, &t->v[0]);
		free(t->v[0].args);
		memmove(t->v, t->v + 1, --t->n * sizeof(*t->v));
	}
	if (t->n == t->cap) {
		unsigned cap = t->cap ? 2 * t->cap : 16;
		struct pending *v = realloc(t->v, cap * sizeof(*v));

		if (!v) {
			free(p.args);
			instant(r, ev, rec, meta, o);
			return;
		}
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n++] = p;
}

/* A return: the slice from the newest waiting entry of its function
 * (the entries above it never returned), or an instant. */
static void ret(struct dp_renderer *r, struct thread *t,
		const struct dp_event *ev, const void *rec,
		const struct dp_rec_meta *meta, const struct dp_trace_opts *o)
{
	uint64_t func = dp_rec_load((const uint8_t *)rec + DP_REC_FUNC_OFF, 8);
	unsigned k = t->n;
	struct pending *p;

	while (k && t->v[k - 1].func != func)
		k--;
	if (!k || t->v[k - 1].ts_ns > meta->ts_ns) {
		instant(r, ev, rec, meta, o);
		return;
	}
	while (t->n > k) {
		pending_instant(r, t, &t->v[t->n - 1]);
		free(t->v[--t->n].args);
	}
	p = &t->v[--t->n];
	put_head(r, "X", p->ev, t->tgid, t->tid, p->ts_ns);
	fputs(",\"dur\":", r->out);
	put_us(r->out, meta->ts_ns - p->ts_ns);
	fprintf(r->out, ",\"args\":{\"entry\":%s,\"return\":", p->args);
	dp_json_args(r->out, ev, rec, o);
	fputs("}}", r->out);
	free(p->args);
}

static bool is_probe(const struct dp_event *ev)
{
	return ev->kind != DP_KIND_TRACEPOINT && !ev->synth;
}

static int chrome_event(struct dp_renderer *r, const struct dp_event *ev,
			const void *rec, size_t len,
			const struct dp_rec_meta *meta,
			const struct dp_symbolizer *sym)
{
	struct dp_trace_opts o = { .ncpus = r->ncpus, .sym = sym };
	struct thread *t;

	if (!r->priv || !ev || !meta || dp_rec_check(ev, rec, len))
		return -1;
	((struct chrome *)r->priv)->last_ns = meta->ts_ns;
	t = thread_of(r, meta);
	if (t && is_probe(ev) && !ev->is_return)
		entry(r, t, ev, rec, meta, &o);
	else if (t && is_probe(ev))
		ret(r, t, ev, rec, meta, &o);
	else
		instant(r, ev, rec, meta, &o);
	return 0;
}

static void chrome_begin(struct dp_renderer *r)
{
	r->priv = calloc(1, sizeof(struct chrome));
	fputs("{\"traceEvents\":[", r->out);
}

static void chrome_lost(struct dp_renderer *r, int cpu, unsigned long n)
{
	struct chrome *c = r->priv;

	if (!c)
		return;
	sep(r);
	fputs("{\"ph\":\"i\",\"name\":\"lost\",\"s\":\"g\",\"pid\":0,"
	      "\"tid\":0,\"ts\":", r->out);
	put_us(r->out, c->last_ns);
	fprintf(r->out, ",\"args\":{\"cpu\":%d,\"lost\":", cpu);
	if (n == DP_LOST_UNKNOWN)
		fputs("null}}", r->out);
	else
		fprintf(r->out, "%lu}}", n);
}

static void chrome_end(struct dp_renderer *r)
{
	struct chrome *c = r->priv;

	for (unsigned b = 0; c && b < THREAD_BUCKETS; b++)
		while (c->bucket[b]) {
			struct thread *t = c->bucket[b];

			for (unsigned i = 0; i < t->n; i++) {
				pending_instant(r, t, &t->v[i]);
				free(t->v[i].args);
			}
			c->bucket[b] = t->next;
			free(t->v);
			free(t);
		}
	fputs("],\"displayTimeUnit\":\"ns\"}\n", r->out);
	if (c)
		free(c->procs);
	free(c);
	r->priv = NULL;
}

const struct dp_renderer_ops dp_render_chrome = {
	.name = "chrome",
	.begin = chrome_begin,
	.event = chrome_event,
	.lost = chrome_lost,
	.end = chrome_end,
};
