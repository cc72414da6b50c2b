// SPDX-License-Identifier: GPL-2.0
/*
 * The `function_graph` tracer (tracer.h): ftrace/funcgraph_entry and
 * ftrace/funcgraph_exit records as the kernel's function_graph tracer
 * prints its entries and returns, any other event as its comment line
 * (" /" "* EVENT: fields *" "/"), with the header, columns and
 * trace_options of trace_functions_graph.c (fgraph-line.c writes the
 * columns).
 *
 * The records carry no depth: each thread's calls are followed here on a
 * stack of frames, an exit matched to the innermost frame of its
 * function.  Frames above that one were left without a return (longjmp,
 * a C++ exception: the agent drops their return instances, so no exit
 * comes for them); each is closed by a line "} /" "* func (unwound) *" "/"
 * without a duration, so the indentation stays true.  An exit that
 * matches no frame (its entry came before tracing, or was lost) prints
 * as the kernel prints a return it cannot match, "} /" "* func *" "/",
 * here without a duration since no entry time is known.
 *
 * A call with nothing shown inside it is one line, "func();", as the
 * kernel prints an entry whose next record on its CPU is its own return.
 * Here the next record that matters is the thread's next one: the entry
 * line waits for it, and lines of other threads wait behind it so that
 * lines keep the order of the records.  So that no thread holds the
 * output for long, a waiting entry is printed as "func() {" once 100 ms
 * of trace time have passed or QUEUE_MAX lines wait behind it, and at
 * the end (the kernel does the same when it finds nothing after an
 * entry).
 *
 * Thread switches: the kernel prints its context-switch block when a CPU
 * runs another task than at its previous line.  A user process's threads
 * move between CPUs and run at once, so the block here marks what a
 * reader needs: the output going on with another thread than the line
 * before (docs/differences.md).
 *
 * When funcgraph_entry records carry the stack pointer (a field `sp`,
 * `%sp:x64`), a call entered above a frame's stack pointer shows that
 * frame abandoned, and it is closed at once (at the same stack pointer,
 * see live_frames()).  Without it a longjmp
 * is seen only when a function below the jump returns: calls made
 * between are printed one level inside each abandoned frame.
 */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "output/fgraph.h"
#include "output/render.h"
#include "output/tracer.h"

#define HOLD_NS 100000000ull	/* trace time an entry line may wait */
#define QUEUE_MAX 16384		/* lines that may wait behind one */
#define MAX_FRAMES 65536	/* a thread's deepest stack followed */
#define NBUCKETS 256
/* How far above a frame's stack pointer a new call's may be for the
 * frame to be taken as abandoned: the same stack, not a signal handler
 * on a sigaltstack mapped above it. */
#define SP_WINDOW (1u << 20)

struct fg_frame {
	uint64_t func;		/* the function's start */
	uint64_t ts;		/* entry time */
	uint64_t sp;		/* at the entry (an `sp` field); 0: unknown */
	bool shown;		/* its lines are printed */
	bool graph;		/* it matched set_graph_function */
	bool notrace;		/* it matched set_graph_notrace */
};

struct fg_item;

struct fg_thread {
	struct fg_thread *next;		/* in its hash bucket */
	int tid;
	struct fg_frame *stack;
	unsigned n, cap;
	unsigned shown;		/* shown frames: the next one's depth */
	unsigned in_graph;	/* frames that matched set_graph_function */
	unsigned in_notrace;	/* frames that matched set_graph_notrace */
	/* the kernel's cpu_data->depth: where a comment line indents */
	int cdepth;
	struct fg_item *pending;	/* its entry line, waiting */
	unsigned pending_at;		/* that entry's frame */
};

/* A line waiting to be written: text NULL while it is an entry line
 * whose thread's next record decides what it is. */
struct fg_item {
	struct fg_item *next;
	struct fg_thread *t;	/* while waiting */
	struct fg_where w;
	unsigned depth;
	char *name;		/* while waiting */
	char *text;
	size_t len;
};

/* Names matched against set_graph_function/set_graph_notrace, by
 * address: a glob is tried once per function. */
struct fg_match {
	uint64_t addr;
	uint8_t bits;		/* MATCH_* | MATCH_KNOWN */
};

enum { MATCH_GRAPH = 1, MATCH_NOTRACE = 2, MATCH_KNOWN = 4 };

struct fgraph {
	struct dp_tracer_opts opts;
	struct fg_style style;
	struct dp_symbolizer sym;	/* the last record's */
	struct dp_trace_opts topts;
	struct fg_thread *threads[NBUCKETS];
	struct fg_item *head, *tail;
	size_t queued;
	struct fg_where last;		/* the last line's thread; tid -1 */
	FILE *mf;			/* a line being made */
	char *mbuf;
	size_t msize;
	struct fg_match *match;
	size_t nmatch, match_cap;
	char name[512];			/* func_name()'s */
};

/* ---- names and the filters -------------------------------------------- */

/* @addr's function start in @start, its name (%ps: the bare name, or
 * 0x... when no symbol covers it) returned in st->name. */
static const char *func_name(struct fgraph *st, uint64_t addr,
			     uint64_t *start)
{
	const char *name;
	uint64_t off, size;

	if (!dp_out_lookup(&st->topts, addr, &name, &off, &size)) {
		snprintf(st->name, sizeof(st->name), "0x%llx",
			 (unsigned long long)addr);
		*start = addr;
		return st->name;
	}
	snprintf(st->name, sizeof(st->name), "%s", name);
	*start = addr - off;
	return st->name;
}

static bool any_glob(const char *const *globs, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!fnmatch(globs[i], name, 0))
			return true;
	return false;
}

static struct fg_match *match_slot(struct fg_match *tab, size_t cap,
				   uint64_t addr)
{
	size_t i = (size_t)(addr * 0x9e3779b97f4a7c15ull >> 20) & (cap - 1);

	while (tab[i].bits && tab[i].addr != addr)
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static int match_grow(struct fgraph *st)
{
	size_t cap = st->match_cap ? st->match_cap * 2 : 1024;
	struct fg_match *tab = calloc(cap, sizeof(*tab));

	if (!tab)
		return -1;
	for (size_t i = 0; i < st->match_cap; i++)
		if (st->match[i].bits)
			*match_slot(tab, cap, st->match[i].addr) = st->match[i];
	free(st->match);
	st->match = tab;
	st->match_cap = cap;
	return 0;
}

/* MATCH_* bits of the function at @start called @name. */
static unsigned matches(struct fgraph *st, uint64_t start, const char *name)
{
	const struct dp_tracer_opts *o = &st->opts;
	struct fg_match *m;
	unsigned bits;

	if (!o->ngraph_funcs && !o->nnotrace_funcs)
		return 0;
	if (st->nmatch * 2 >= st->match_cap && match_grow(st))
		return 0;
	m = match_slot(st->match, st->match_cap, start);
	if (m->bits)
		return m->bits & ~MATCH_KNOWN;
	bits = (any_glob(o->graph_funcs, o->ngraph_funcs, name) ?
		MATCH_GRAPH : 0) |
	       (any_glob(o->notrace_funcs, o->nnotrace_funcs, name) ?
		MATCH_NOTRACE : 0);
	*m = (struct fg_match){ .addr = start, .bits = bits | MATCH_KNOWN };
	st->nmatch++;
	return bits;
}

/*
 * Whether a call of a function with MATCH_* @bits, entered by @t, is
 * shown, as the kernel's entry handler decides: nothing under a
 * set_graph_notrace function, with set_graph_function only what runs
 * inside one, nothing at max_graph_depth or deeper.  Marks @fr.
 */
static bool entry_shown(struct fgraph *st, struct fg_thread *t,
			struct fg_frame *fr, unsigned bits)
{
	if (t->in_notrace)
		return false;
	if (bits & MATCH_NOTRACE) {
		fr->notrace = true;
		t->in_notrace++;
		return false;
	}
	if (st->opts.ngraph_funcs) {
		if (bits & MATCH_GRAPH) {
			fr->graph = true;
			t->in_graph++;
		} else if (!t->in_graph) {
			return false;
		}
	}
	return !st->opts.max_depth || t->shown < st->opts.max_depth;
}

/* ---- threads ------------------------------------------------------------ */

static struct fg_thread *thread_get(struct fgraph *st, int tid)
{
	struct fg_thread **b = &st->threads[(unsigned)tid % NBUCKETS], *t;

	for (t = *b; t; t = t->next)
		if (t->tid == tid)
			return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	t->next = *b;
	*b = t;
	return t;
}

static struct fg_frame *push(struct fg_thread *t)
{
	if (t->n == t->cap) {
		unsigned cap = t->cap ? t->cap * 2 : 16;
		struct fg_frame *s;

		if (t->n >= MAX_FRAMES)
			return NULL;
		s = realloc(t->stack, cap * sizeof(*s));
		if (!s)
			return NULL;
		t->stack = s;
		t->cap = cap;
	}
	t->stack[t->n] = (struct fg_frame){ 0 };
	return &t->stack[t->n++];
}

/* The top frame, off the stack (valid until the next push). */
static struct fg_frame *pop(struct fg_thread *t)
{
	struct fg_frame *fr = &t->stack[--t->n];

	t->in_graph -= fr->graph;
	t->in_notrace -= fr->notrace;
	if (fr->shown)
		t->shown--;
	return fr;
}

/* ---- lines, in record order ------------------------------------------- */

static FILE *line_start(struct fgraph *st)
{
	fseeko(st->mf, 0, SEEK_SET);
	return st->mf;
}

static void write_out(struct dp_renderer *r, struct fgraph *st,
		      const struct fg_where *w, const char *text, size_t len)
{
	if (w->tid >= 0 && w->tid != st->last.tid) {
		if (st->last.tid >= 0)
			fg_switch(r->out, &st->style, &st->last, w);
		st->last = *w;
	}
	fwrite_unlocked(text, 1, len, r->out);
}

/* @it at the end of the lines in order. */
static void enqueue(struct fgraph *st, struct fg_item *it)
{
	if (st->tail)
		st->tail->next = it;
	else
		st->head = it;
	st->tail = it;
	st->queued++;
}

/* The line made since line_start(): out now, or behind waiting ones. */
static void line_end(struct dp_renderer *r, struct fgraph *st,
		     const struct fg_where *w)
{
	struct fg_item *it;
	size_t len;

	fflush(st->mf);
	len = (size_t)ftello(st->mf);
	if (!st->head) {
		write_out(r, st, w, st->mbuf, len);
		return;
	}
	it = calloc(1, sizeof(*it));
	if (it)
		it->text = malloc(len ? len : 1);
	if (!it || !it->text) {
		free(it);
		return;		/* out of memory: the line is lost */
	}
	memcpy(it->text, st->mbuf, len);
	it->len = len;
	it->w = *w;
	enqueue(st, it);
}

/* Lines whose text is known, from the first, up to one still waiting. */
static void drain(struct dp_renderer *r, struct fgraph *st)
{
	struct fg_item *it;

	while ((it = st->head) && !it->t) {
		write_out(r, st, &it->w, it->text, it->len);
		st->head = it->next;
		if (!st->head)
			st->tail = NULL;
		st->queued--;
		free(it->text);
		free(it);
	}
}

/* The text of a waiting entry line: what line_start() started. */
static void settle(struct fgraph *st, struct fg_item *it)
{
	size_t len;

	fflush(st->mf);
	len = (size_t)ftello(st->mf);
	it->text = malloc(len ? len : 1);
	if (it->text)
		memcpy(it->text, st->mbuf, len);
	it->len = it->text ? len : 0;
	if (!it->text)
		it->text = strdup("");	/* best effort: the line is lost */
	free(it->name);
	it->name = NULL;
	it->t->pending = NULL;
	it->t = NULL;
}

/* A waiting entry is a call with lines inside: "func() {". */
static void resolve_nested(struct fgraph *st, struct fg_thread *t)
{
	struct fg_item *it = t->pending;
	FILE *f;

	if (!it)
		return;
	f = line_start(st);
	fg_prologue(f, &st->style, &it->w);
	fg_duration(f, &st->style, FG_NO_DURATION);
	fg_indent(f, it->depth);
	fprintf(f, "%s() {\n", it->name);
	t->cdepth = (int)it->depth;
	settle(st, it);
}

/* A waiting entry whose return came next: "func();" with its time. */
static void resolve_leaf(struct fgraph *st, struct fg_thread *t,
			 uint64_t ts, bool has_rv, uint64_t rv)
{
	struct fg_item *it = t->pending;
	FILE *f = line_start(st);

	fg_prologue(f, &st->style, &it->w);
	fg_duration(f, &st->style, ts - it->w.ts);
	fg_indent(f, it->depth);
	fg_call_end(f, &st->style, it->name, true, false, has_rv, rv);
	t->cdepth = (int)it->depth - 1;
	settle(st, it);
}

/* Entries that waited too long, or with too much behind them, are
 * printed as "func() {" (a record at @now has come). */
static void hold_limits(struct fgraph *st, uint64_t now)
{
	struct fg_item *it;

	while ((it = st->head) && it->t &&
	       (st->queued > QUEUE_MAX || now > it->w.ts + HOLD_NS))
		resolve_nested(st, it->t);
}

/* An entry line of @t at @depth, waiting for @t's next record. */
static void wait_entry(struct fgraph *st, struct fg_thread *t,
		       const struct fg_where *w, unsigned depth,
		       const char *name)
{
	struct fg_item *it = calloc(1, sizeof(*it));

	if (!it || !(it->name = strdup(name))) {
		free(it);
		return;		/* out of memory: the line is lost */
	}
	it->t = t;
	it->w = *w;
	it->depth = depth;
	enqueue(st, it);
	t->pending = it;
	t->pending_at = t->n - 1;
}

/* ---- records -------------------------------------------------------------- */

/* A closing line at @depth, without a duration when @ns is
 * FG_NO_DURATION; @how: NULL for a return, or what the tail says. */
static void close_line(struct dp_renderer *r, struct fgraph *st,
		       struct fg_thread *t, const struct fg_where *w,
		       unsigned depth, uint64_t ns, const char *name,
		       bool tail, bool has_rv, uint64_t rv)
{
	FILE *f = line_start(st);

	fg_prologue(f, &st->style, w);
	fg_duration(f, &st->style, ns);
	fg_indent(f, depth);
	fg_call_end(f, &st->style, name, false, tail, has_rv, rv);
	t->cdepth = (int)depth - 1;
	line_end(r, st, w);
}

/* The frames above @keep, left without a return: closed as unwound. */
static void unwind_to(struct dp_renderer *r, struct fgraph *st,
		      struct fg_thread *t, unsigned keep,
		      const struct fg_where *w)
{
	char name[sizeof(st->name) + 12];
	uint64_t start;

	while (t->n > keep) {
		struct fg_frame *fr = pop(t);

		if (!fr->shown)
			continue;
		resolve_nested(st, t);	/* it may be the waiting entry */
		snprintf(name, sizeof(name), "%s (unwound)",
			 func_name(st, fr->func, &start));
		close_line(r, st, t, w, t->shown, FG_NO_DURATION, name, true,
			   false, 0);
	}
}

/* Frame @i was entered below a call at stack pointer @sp, or at it
 * (@at), on the same stack. */
static bool below(const struct fg_thread *t, unsigned i, uint64_t sp, bool at)
{
	uint64_t f = t->stack[i].sp;

	return f && (at ? sp >= f : sp > f) && sp - f < SP_WINDOW;
}

/*
 * Frames a call at stack pointer @sp shows abandoned: those entered
 * below it on the same stack.  One entered at the very same stack
 * pointer is a tail call's caller (the callee took its frame, and both
 * return at once) unless frames below it were abandoned too: then a
 * longjmp or an exception left it, and this is a new call from its
 * caller.
 */
static unsigned live_frames(const struct fg_thread *t, uint64_t sp)
{
	unsigned n = t->n;

	while (n && below(t, n - 1, sp, false))
		n--;
	if (n < t->n)
		while (n && below(t, n - 1, sp, true))
			n--;
	return n;
}

static void on_call(struct dp_renderer *r, struct fgraph *st,
		    struct fg_thread *t, const struct dp_event *ev,
		    const void *rec, const struct fg_where *w)
{
	uint64_t ip = dp_rec_load((const uint8_t *)rec + DP_REC_IP_OFF, 8);
	uint64_t start, sp = 0;
	const char *name;
	unsigned bits;
	struct fg_frame *fr;

	if (dp_ftrace_u64(ev, rec, "sp", &sp) && sp)
		unwind_to(r, st, t, live_frames(t, sp), w);
	name = func_name(st, ip, &start);
	bits = matches(st, start, name);
	fr = push(t);
	if (!fr)
		return;		/* deeper than followed: its exit matches none */
	fr->func = start;
	fr->ts = w->ts;
	fr->sp = sp;
	fr->shown = entry_shown(st, t, fr, bits);
	if (!fr->shown)
		return;
	resolve_nested(st, t);
	wait_entry(st, t, w, t->shown++, name);
}

/* Whether a return with no frame would be shown, were it an entry. */
static bool unmatched_shown(struct fgraph *st, struct fg_thread *t,
			    unsigned bits)
{
	if (t->in_notrace || (bits & MATCH_NOTRACE))
		return false;
	if (st->opts.ngraph_funcs && !t->in_graph && !(bits & MATCH_GRAPH))
		return false;
	return !st->opts.max_depth || t->shown < st->opts.max_depth;
}

static void on_return(struct dp_renderer *r, struct fgraph *st,
		    struct fg_thread *t, const struct dp_event *ev,
		    const void *rec, const struct fg_where *w)
{
	uint64_t func = dp_rec_load((const uint8_t *)rec + DP_REC_FUNC_OFF, 8);
	uint64_t start, rv = 0;
	const char *name = func_name(st, func, &start);
	bool has_rv = dp_ftrace_u64(ev, rec, "retval", &rv);
	unsigned i = t->n;
	struct fg_frame *fr;

	while (i && t->stack[i - 1].func != start)
		i--;
	if (!i) {
		/* no entry seen: "} /" "* func *" "/", where the next call
		 * would be */
		if (!unmatched_shown(st, t, matches(st, start, name)))
			return;
		resolve_nested(st, t);
		close_line(r, st, t, w, t->shown, FG_NO_DURATION, name, true,
			   has_rv, rv);
		return;
	}
	unwind_to(r, st, t, i, w);
	name = func_name(st, func, &start);	/* unwind_to used st->name */
	fr = pop(t);
	if (!fr->shown)
		return;
	if (t->pending && t->pending_at == i - 1) {
		resolve_leaf(st, t, w->ts, has_rv, rv);
		return;
	}
	resolve_nested(st, t);
	close_line(r, st, t, w, t->shown, w->ts - fr->ts, name,
		   st->opts.flags & DP_FG_TAIL, has_rv, rv);
}

/* Another event: its line as a comment, indented as the kernel does
 * (print_graph_comment(): one level in from the last line's depth, none
 * at depth 0). */
static int on_other(struct dp_renderer *r, struct fgraph *st,
		    struct fg_thread *t, const struct dp_event *ev,
		    const void *rec, size_t len, const struct fg_where *w)
{
	FILE *f;

	resolve_nested(st, t);
	f = line_start(st);
	fg_prologue(f, &st->style, w);
	fg_duration(f, &st->style, FG_NO_DURATION);
	if (t->cdepth > 0)
		fg_indent(f, (unsigned)t->cdepth + 1);
	fputs_unlocked("/* ", f);
	if (dp_trace_body(f, ev, rec, len, &st->topts))
		return -1;	/* cannot be: the record was checked */
	fputs_unlocked(" */\n", f);
	line_end(r, st, w);
	return 0;
}

/* ---- the renderer --------------------------------------------------------- */

static int cpu_digits(int ncpus)
{
	int d = 1;

	for (int n = ncpus - 1; n >= 10; n /= 10)
		d++;
	return d;
}

static struct fgraph *fg_state(struct dp_renderer *r)
{
	struct fgraph *st = r->priv;

	if (st)
		return st;
	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->mf = open_memstream(&st->mbuf, &st->msize);
	if (!st->mf) {
		free(st);
		return NULL;
	}
	if (r->tracer)
		st->opts = *r->tracer;
	else
		dp_tracer_opts_init(&st->opts);
	st->style = (struct fg_style){ .flags = st->opts.flags,
				       .cpu_width = cpu_digits(r->ncpus),
				       .ts = (enum dp_ts_mode)r->ts };
	st->last.tid = -1;
	r->priv = st;
	return st;
}

/* The options as the caller has them now (tracer.h: the mount changes
 * them while the tracer runs). */
static void sync_opts(struct fgraph *st, const struct dp_renderer *r)
{
	if (!r->tracer)
		return;
	if (r->tracer->globs_gen != st->opts.globs_gen && st->match) {
		memset(st->match, 0, st->match_cap * sizeof(*st->match));
		st->nmatch = 0;
	}
	st->opts = *r->tracer;
	st->style.flags = st->opts.flags;
}

static void fg_begin(struct dp_renderer *r)
{
	struct fgraph *st = fg_state(r);

	if (st)
		dp_fgraph_header(r->out, st->opts.flags);
}

static int fg_event(struct dp_renderer *r, const struct dp_event *ev,
		    const void *rec, size_t len,
		    const struct dp_rec_meta *meta,
		    const struct dp_symbolizer *sym)
{
	struct fgraph *st = fg_state(r);
	struct fg_thread *t;
	struct fg_where w;
	int ret = 0;

	if (!st || !meta || dp_rec_check(ev, rec, len))
		return -1;
	sync_opts(st, r);
	st->sym = sym ? *sym : (struct dp_symbolizer){ 0 };
	st->topts = (struct dp_trace_opts){ .ncpus = r->ncpus, .sym = &st->sym,
					    .ts = st->style.ts };
	w = (struct fg_where){ .ts = meta->ts_ns, .cpu = meta->cpu,
			       .tid = meta->pid };
	snprintf(w.comm, sizeof(w.comm), "%s", meta->comm ? meta->comm : "<...>");
	t = thread_get(st, w.tid);
	if (!t)
		return -1;
	flockfile(r->out);
	switch (dp_ftrace_rec_kind(ev)) {
	case DP_FTRACE_GRAPH_ENTRY:
		on_call(r, st, t, ev, rec, &w);
		break;
	case DP_FTRACE_GRAPH_EXIT:
		on_return(r, st, t, ev, rec, &w);
		break;
	default:
		ret = on_other(r, st, t, ev, rec, len, &w);
		break;
	}
	/* after the record: it may be the return a waiting entry wants */
	hold_limits(st, w.ts);
	drain(r, st);
	funlockfile(r->out);
	return ret;
}

static void fg_lost(struct dp_renderer *r, int cpu, unsigned long n)
{
	struct fgraph *st = fg_state(r);
	struct fg_where w = { .tid = -1, .cpu = cpu };

	if (!st || !n)
		return;
	/* the kernel's marker, in its place among the lines */
	dp_trace_lost(line_start(st), cpu, n);
	flockfile(r->out);
	line_end(r, st, &w);
	drain(r, st);
	funlockfile(r->out);
}

/* Every waiting entry printed as "func() {", then everything. */
static void fg_finish(struct dp_renderer *r, struct fgraph *st)
{
	for (struct fg_item *it = st->head; it; it = it->next)
		if (it->t)
			resolve_nested(st, it->t);
	drain(r, st);
}

static void fg_free(struct dp_renderer *r)
{
	struct fgraph *st = r->priv;

	if (!st)
		return;
	while (st->head) {
		struct fg_item *it = st->head;

		st->head = it->next;
		free(it->name);
		free(it->text);
		free(it);
	}
	for (size_t i = 0; i < NBUCKETS; i++)
		while (st->threads[i]) {
			struct fg_thread *t = st->threads[i];

			st->threads[i] = t->next;
			free(t->stack);
			free(t);
		}
	fclose(st->mf);
	free(st->mbuf);
	free(st->match);
	free(st);
	r->priv = NULL;
}

static void fg_end(struct dp_renderer *r)
{
	struct fgraph *st = r->priv;

	if (st)
		fg_finish(r, st);
	fg_free(r);
}

const struct dp_renderer_ops dp_render_fgraph = {
	.name = "function_graph",
	.begin = fg_begin,
	.event = fg_event,
	.lost = fg_lost,
	.end = fg_end,
	.discard = fg_free,
	.tracer = true,
};
