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
	case DP_OL_QUIET_TARGET: dp_ol_push(a, "--quiet-target"); return true;
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

/* ---- counting by keys (count, top) ---------------------------------- */

enum { KS_FIELD, KS_COMM, KS_PID, KS_TID, KS_COMMON_PID };

#define STR_SLOT 256	/* a string field's key: char[256], as the kernel's */

/* One key of --by for @ev: its source, and its field in @def ("TYPE
 * NAME; "), or nothing for common_pid.  0, or -1 after saying why. */
static int key_source(const struct dp_event *ev, const char *key,
		      struct dp_ol_keysrc *ks, char *def, size_t size)
{
	char base[DP_MAX_EVENT_NAME_LEN];
	const struct dp_field *f;
	size_t n = strcspn(key, ".");

	if (!n || n >= sizeof(base)) {
		fprintf(stderr, "dprobe: bad key '%s' in --by\n", key);
		return -1;
	}
	memcpy(base, key, n);
	base[n] = '\0';
	f = dp_event_field(ev, base);
	*ks = (struct dp_ol_keysrc){ .kind = KS_FIELD, .src = f };
	if (!strcmp(base, "common_pid")) {
		ks->kind = KS_COMMON_PID;
		return 0;
	}
	if (f && f->ptype) {
		if (f->fclass == DP_FC_NUM) {
			snprintf(def, size, "%s %s; ", f->is_signed ? "s64" :
				 "u64", base);
			return 0;
		}
		if (f->fclass == DP_FC_STRING) {
			snprintf(def, size, "char %s[%d]; ", base, STR_SLOT);
			return 0;
		}
		fprintf(stderr, "dprobe: %s/%s: field '%s' is an array: not a "
			"key\n", ev->group, ev->name, base);
		return -1;
	}
	if (!strcmp(base, "comm")) {
		ks->kind = KS_COMM;
		snprintf(def, size, "char comm[%d]; ", DP_TASK_COMM_LEN);
	} else if (!strcmp(base, "pid") || !strcmp(base, "tid")) {
		ks->kind = base[0] == 'p' ? KS_PID : KS_TID;
		snprintf(def, size, "s32 %s; ", base);
	} else {
		fprintf(stderr, "dprobe: %s/%s has no field '%s' (its fields, "
			"comm, pid, tid or common_pid)\n", ev->group, ev->name,
			base);
		return -1;
	}
	return 0;
}

static int count_one(struct dp_ol_count *c, struct dp_event *ev)
{
	struct dp_ol_counted *e = &c->v[c->n];
	char def[1024], keys[256] = "", *by, *tok, *save = NULL;
	struct dp_hist_error herr = { 0 };
	struct dp_error err = { 0 };
	size_t len;
	int ret = -1;

	if (c->n == DP_OL_MAX_EVENTS) {
		fprintf(stderr, "dprobe: too many events (at most %d)\n",
			DP_OL_MAX_EVENTS);
		return -1;
	}
	*e = (struct dp_ol_counted){ .ev = ev };
	/* the event's own name, made unique in the synthetic registry */
	len = (size_t)snprintf(def, sizeof(def), "%s", ev->name);
	if (dp_registry_find(&c->synreg, DP_SYNTH_GROUP, ev->name))
		len += (size_t)snprintf(def + len, sizeof(def) - len, "_%u",
					c->n);
	def[len++] = ' ';
	def[len] = '\0';
	by = strdup(c->by);
	if (!by)
		return -1;
	for (tok = strtok_r(by, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (e->nk == DP_OL_MAX_BY) {
			fprintf(stderr, "dprobe: too many keys in --by (at most "
				"%d)\n", DP_OL_MAX_BY);
			goto out;
		}
		if (key_source(ev, tok, &e->k[e->nk], def + len,
			       sizeof(def) - len))
			goto out;
		len += strlen(def + len);
		snprintf(keys + strlen(keys), sizeof(keys) - strlen(keys),
			 "%s%s", e->nk ? "," : "", tok);
		e->nk++;
	}
	if (!e->nk) {
		fprintf(stderr, "dprobe: --by names no key\n");
		goto out;
	}
	/* a synthetic event needs a field: one for common_pid alone */
	if (!strchr(def, ';'))
		snprintf(def + len, sizeof(def) - len, "u64 unused; ");
	if (dp_registry_synth(&c->synreg, def, false, &err)) {
		dp_error_print(&err, stderr);
		dp_error_clear(&err);
		goto out;
	}
	for (struct dp_event *s = c->synreg.events; s; s = s->next)
		e->syn = s;	/* the last made */
	for (unsigned k = 0; k < e->nk; k++) {
		char base[DP_MAX_EVENT_NAME_LEN];
		const struct dp_field *f;
		const char *key = keys;

		for (unsigned i = 0; i < k; i++)
			key = strchr(key, ',') + 1;
		snprintf(base, sizeof(base), "%.*s",
			 (int)strcspn(key, ".,"), key);
		if (e->k[k].kind == KS_COMMON_PID)
			continue;
		f = dp_event_field(e->syn, base);
		if (!f)
			goto out;
		e->k[k].dst = f->offset;
		e->k[k].size = f->size;
	}
	if (asprintf(&e->trigger, "hist:keys=%s:vals=hitcount:"
		     "sort=hitcount.descending", keys) < 0) {
		e->trigger = NULL;
		goto out;
	}
	ret = dp_hist_new(e->syn, e->trigger, &e->hist, &herr);
	if (ret) {
		fprintf(stderr, "dprobe: --by '%s' on %s/%s, as a hist trigger "
			"on a synthetic event of the keys:\n", keys, ev->group,
			ev->name);
		dp_hist_error_print(e->syn, e->trigger, ret, &herr, stderr);
		ret = -1;
		goto out;
	}
	c->n++;
out:
	if (ret)
		free(e->trigger);
	free(by);
	return ret;
}

int dp_ol_count_setup(struct dp_ol_count *c, struct dp_registry *reg)
{
	dp_registry_init(&c->synreg);
	c->synreg_init = true;
	for (struct dp_event *ev = reg->events; ev; ev = ev->next)
		if (count_one(c, ev))
			return -1;
	return 0;
}

void dp_ol_count_record(struct dp_ol_count *c, const struct dp_event *ev,
			const void *rec, size_t len,
			const struct dp_rec_meta *meta,
			const struct dp_symbolizer *sym)
{
	uint8_t out[8 + DP_OL_MAX_BY * (STR_SLOT + 8)] = { 0 };
	struct dp_ol_counted *e = NULL;
	const uint8_t *r = rec;

	for (unsigned i = 0; i < c->n && !e; i++)
		if (c->v[i].ev == ev)
			e = &c->v[i];
	if (!e || e->syn->fixed_size > sizeof(out) || dp_rec_check(ev, rec, len))
		return;
	{
		uint16_t type = (uint16_t)e->syn->id;
		int32_t pid = meta->pid;

		memcpy(out, &type, sizeof(type));
		memcpy(out + 4, &pid, sizeof(pid));
	}
	for (unsigned k = 0; k < e->nk; k++) {
		const struct dp_ol_keysrc *ks = &e->k[k];
		uint8_t *d = out + ks->dst;
		int32_t v32;

		switch (ks->kind) {
		case KS_FIELD:
			if (ks->src->fclass == DP_FC_STRING) {
				const char *s;
				size_t n;

				if (dp_rec_str(r, r + ks->src->offset, &s, &n))
					memcpy(d, s, n < ks->size ? n : ks->size - 1);
			} else {
				uint64_t v = dp_rec_load(r + ks->src->offset,
							 ks->src->size);
				unsigned bits = ks->src->size * 8;

				if (ks->src->is_signed && bits < 64 &&
				    (v >> (bits - 1)) & 1)
					v |= ~0ull << bits;
				memcpy(d, &v, sizeof(v));
			}
			break;
		case KS_COMM:
			snprintf((char *)d, ks->size, "%s",
				 meta->comm ? meta->comm : "<...>");
			break;
		case KS_PID:
		case KS_TID:
			v32 = ks->kind == KS_PID ? meta->tgid : meta->pid;
			memcpy(d, &v32, sizeof(v32));
			break;
		default:
			break;
		}
	}
	dp_hist_add(e->hist, out, e->syn->fixed_size, meta, sym);
}

void dp_ol_count_print(struct dp_ol_count *c, FILE *out, bool clear)
{
	for (unsigned i = 0; i < c->n; i++) {
		char *text = NULL;
		size_t size = 0;
		FILE *mem = open_memstream(&text, &size);

		if (!mem)
			continue;
		dp_hist_print(c->v[i].hist, 0, mem);
		fclose(mem);
		fprintf(out, "%s%s/%s/hist:\n", i ? "\n" : "", c->v[i].ev->group,
			c->v[i].ev->name);
		dp_histbar_print(out, text ? text : "", &c->bar);
		free(text);
		if (clear)
			dp_hist_clear(c->v[i].hist);
	}
	fflush(out);
}

void dp_ol_count_free(struct dp_ol_count *c)
{
	for (unsigned i = 0; i < c->n; i++) {
		dp_hist_free(c->v[i].hist);
		free(c->v[i].trigger);
	}
	c->n = 0;
	if (c->synreg_init)
		dp_registry_free(&c->synreg);
	c->synreg_init = false;
}
