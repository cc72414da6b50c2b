// SPDX-License-Identifier: GPL-2.0
/* What `dprobe latency`, `count` and `top` share (oneliner.h). */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/oneliner.h"

static void oom(void)
{
	fprintf(stderr, "dprobe: out of memory\n");
	exit(1);
}

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n);

	if (!q)
		oom();
	return q;
}

void dp_ol_push(struct dp_ol_argv *a, const char *s)
{
	if (a->n + 2 > a->cap) {
		a->cap = a->cap ? a->cap * 2 : 16;
		a->v = xrealloc(a->v, (size_t)a->cap * sizeof(*a->v));
	}
	a->v[a->n] = strdup(s);
	if (!a->v[a->n])
		oom();
	a->v[++a->n] = NULL;
}

void dp_ol_pushf(struct dp_ol_argv *a, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s)
		oom();
	dp_ol_push(a, s);
	free(s);
}

void dp_ol_argv_free(struct dp_ol_argv *a)
{
	for (int i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	*a = (struct dp_ol_argv){ 0 };
}

bool dp_ol_target_opt(struct dp_ol_argv *a, int c, const char *arg)
{
	switch (c) {
	case 'p': dp_ol_push(a, "-p"); break;
	case 'f': dp_ol_push(a, "-f"); return true;
	case DP_OL_DURATION: dp_ol_push(a, "--duration"); break;
	case DP_OL_ENGINE: dp_ol_push(a, "--engine"); break;
	case DP_OL_BUFFER_SIZE: dp_ol_push(a, "--buffer-size"); break;
	default: return false;
	}
	dp_ol_push(a, arg);
	return true;
}

void dp_ol_push_cmd(struct dp_ol_argv *a, int argc, char **argv, int first)
{
	if (first >= argc)
		return;
	dp_ol_push(a, "--");
	for (int i = first; i < argc; i++)
		dp_ol_push(a, argv[i]);
}

double dp_ol_seconds(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	return end != s && !*end && v > 0 && v < 1e7 ? v : -1;
}

/* ---- histograms per key ---------------------------------------------- */

struct dp_ol_key *dp_ol_key(struct dp_ol_hists *h, const char *name)
{
	struct dp_hist_error err;
	struct dp_ol_key *k;

	for (unsigned i = 0; i < h->nkeys; i++)
		if (!strcmp(h->keys[i].name, name))
			return &h->keys[i];
	if (h->nkeys == DP_OL_MAX_KEYS) {
		h->dropped++;
		return NULL;
	}
	if (h->nkeys == h->cap) {
		h->cap = h->cap ? h->cap * 2 : 8;
		h->keys = xrealloc(h->keys, h->cap * sizeof(*h->keys));
	}
	k = &h->keys[h->nkeys];
	*k = (struct dp_ol_key){ .min = UINT64_MAX };
	snprintf(k->name, sizeof(k->name), "%s", name);
	if (dp_hist_new(h->ev, h->trigger, &k->hist, &err)) {
		/* the trigger is ours: checked when the command starts */
		dp_hist_error_print(h->ev, h->trigger, -EINVAL, &err, stderr);
		h->dropped++;
		return NULL;
	}
	h->nkeys++;
	return k;
}

void dp_ol_key_value(struct dp_ol_key *k, uint64_t v)
{
	k->count++;
	k->sum += v;
	if (v < k->min)
		k->min = v;
	if (v > k->max)
		k->max = v;
}

static int by_count(const void *a, const void *b)
{
	const struct dp_ol_key *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->name, y->name);
}

void dp_ol_sort_keys(struct dp_ol_hists *h)
{
	if (h->nkeys > 1)
		qsort(h->keys, h->nkeys, sizeof(*h->keys), by_count);
}

void dp_ol_print_hist(const struct dp_ol_key *k, FILE *out,
		      const struct dp_histbar_opts *o)
{
	char *text = NULL;
	size_t size = 0;
	FILE *mem = open_memstream(&text, &size);

	if (!mem)
		return;
	dp_hist_print(k->hist, 0, mem);
	fclose(mem);
	dp_histbar_print(out, text ? text : "", o);
	free(text);
}

void dp_ol_hists_free(struct dp_ol_hists *h)
{
	for (unsigned i = 0; i < h->nkeys; i++)
		dp_hist_free(h->keys[i].hist);
	free(h->keys);
	h->keys = NULL;
	h->nkeys = h->cap = 0;
}
