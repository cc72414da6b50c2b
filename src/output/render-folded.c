// SPDX-License-Identifier: GPL-2.0
/*
 * The folded format: the user stacks of the records (dprobe trace
 * --stack), counted, for flame graphs.  One line per distinct stack,
 * the function names from the outermost frame to the innermost joined
 * by ';', a space and how many records had that stack:
 *
 *   main;run;work 3
 *
 * which is the input of flamegraph.pl, speedscope and inferno.  The
 * lines come at the end of the session, sorted by stack.  A frame no
 * symbol covers is "[unknown]" (as perf's stack collapsing names it),
 * the mark of a walk stopped at a bad frame "[bad frame]" (a frame of
 * its own above the last one walked, so that a flame graph shows where);
 * ';' and control characters in a name become '_', since the format
 * cannot carry them.  Records without a stack (an event --stack did not
 * name) are not counted.  Lost records are not marked: a flame graph
 * has no place for them (the summary line counts them).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "output/render.h"
#include "output/renderer.h"

struct stack_ent {
	char *key;
	uint64_t count;
};

struct folded {
	struct stack_ent *tab;		/* open addressing, size a power of 2 */
	size_t cap, n;
	char *buf;			/* the key being built */
	size_t buflen, bufcap;
	bool oom;			/* an allocation failed: counts are short */
};

static uint64_t hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

static bool grow(struct folded *f)
{
	size_t cap = f->cap ? 2 * f->cap : 256;
	struct stack_ent *t = calloc(cap, sizeof(*t));

	if (!t)
		return false;
	for (size_t i = 0; i < f->cap; i++) {
		size_t j;

		if (!f->tab[i].key)
			continue;
		for (j = hash(f->tab[i].key) & (cap - 1); t[j].key;
		     j = (j + 1) & (cap - 1))
			;
		t[j] = f->tab[i];
	}
	free(f->tab);
	f->tab = t;
	f->cap = cap;
	return true;
}

/* Count one more record with the stack f->buf. */
static void count(struct folded *f)
{
	size_t i;

	if ((f->n + 1) * 2 > f->cap && !grow(f)) {
		f->oom = true;
		return;
	}
	for (i = hash(f->buf) & (f->cap - 1); f->tab[i].key;
	     i = (i + 1) & (f->cap - 1)) {
		if (!strcmp(f->tab[i].key, f->buf)) {
			f->tab[i].count++;
			return;
		}
	}
	f->tab[i].key = strdup(f->buf);
	if (!f->tab[i].key) {
		f->oom = true;
		return;
	}
	f->tab[i].count = 1;
	f->n++;
}

/* @n bytes of @s after the key so far; @name: sanitised (';' and
 * control characters become '_'). */
static bool put(struct folded *f, const char *s, size_t n, bool name)
{
	if (f->buflen + n + 1 > f->bufcap) {
		size_t cap = (f->buflen + n + 1) * 2;
		char *b = realloc(f->buf, cap);

		if (!b)
			return false;
		f->buf = b;
		f->bufcap = cap;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		f->buf[f->buflen++] = name && (c == ';' || c < 0x20 ||
					       c == 0x7f) ? '_' : (char)c;
	}
	f->buf[f->buflen] = '\0';
	return true;
}

int dp_folded_event(struct dp_renderer *r, const struct dp_event *ev,
			const void *rec, size_t len,
			const struct dp_rec_meta *meta,
			const struct dp_symbolizer *sym)
{
	struct dp_trace_opts o = { .ncpus = r->ncpus, .sym = sym };
	struct folded *f = r->priv;

	if (!ev || !meta || dp_rec_check(ev, rec, len))
		return -1;
	if (!meta->stack || !meta->nstack)
		return 0;
	/* made at the first stack, not in begin: a CLI that forks an
	 * engine's process begins before the fork, and only the child
	 * gets records and ends */
	if (!f && !(f = r->priv = calloc(1, sizeof(*f)))) {
		fprintf(stderr, "dprobe: out of memory: no stack counted\n");
		return 0;
	}
	f->buflen = 0;
	for (unsigned i = meta->nstack; i-- > 0;) {
		const char *name = "[unknown]";
		uint64_t off, size;
		bool ok = true;

		if (meta->stack[i] == DP_STACK_BAD_FRAME)
			name = DP_STACK_BAD_FRAME_NAME;
		else
			dp_out_lookup(&o, meta->stack[i], &name, &off, &size);
		if (!name || !*name)
			name = "[unknown]";
		if (f->buflen)
			ok = put(f, ";", 1, false);
		if (!ok || !put(f, name, strlen(name), true)) {
			f->oom = true;
			return 0;
		}
	}
	count(f);
	return 0;
}

void dp_folded_lost(struct dp_renderer *r, int cpu, unsigned long n)
{
	(void)r;
	(void)cpu;
	(void)n;
}

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct stack_ent *)a)->key,
		      ((const struct stack_ent *)b)->key);
}

void dp_folded_drain(struct dp_renderer *r,
		     void (*fn)(void *arg, const char *stack, uint64_t count),
		     void *arg)
{
	struct folded *f = r->priv;
	size_t n = 0;

	if (!f)
		return;
	/* the used entries to the front, then in order */
	for (size_t i = 0; i < f->cap; i++)
		if (f->tab[i].key)
			f->tab[n++] = f->tab[i];
	if (n)
		qsort(f->tab, n, sizeof(*f->tab), by_key);
	for (size_t i = 0; i < n; i++) {
		fn(arg, f->tab[i].key, f->tab[i].count);
		free(f->tab[i].key);
	}
	if (f->oom)
		fprintf(stderr, "dprobe: out of memory: some stacks were not "
			"counted\n");
	free(f->tab);
	free(f->buf);
	free(f);
	r->priv = NULL;
}

static void put_line(void *arg, const char *stack, uint64_t count)
{
	fprintf(arg, "%s %" PRIu64 "\n", stack, count);
}

static void folded_end(struct dp_renderer *r)
{
	dp_folded_drain(r, put_line, r->out);
}

const struct dp_renderer_ops dp_render_folded = {
	.name = "folded",
	.stacks = true,
	.event = dp_folded_event,
	.lost = dp_folded_lost,
	.end = folded_end,
};
