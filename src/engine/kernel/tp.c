// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel tracepoints (--kernel -e GROUP:NAME): enabled in the private
 * instance, their fields taken from the kernel's `format` file.  The
 * kernel's print fmt is C and is not interpreted: a record is turned into
 * dprobe's tracepoint layout (integers as they are, every char array and
 * __data_loc/__rel_loc string as a __data_loc string) and printed as
 * name=value pairs, integers in decimal with the format's signedness.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/kernel/session.h"
#include "event/filter.h"

enum tkind { TK_NUM, TK_ARRAY, TK_CHARS, TK_LOC, TK_REL };

struct tfield {
	enum tkind kind;
	unsigned koff, ksize;	/* in the kernel's record */
	unsigned esz, count;	/* arrays */
	unsigned off;		/* in dprobe's */
};

struct ktp {
	struct tfield *f;
	struct dp_type *types;
	char (*names)[DP_MAX_EVENT_NAME_LEN];
	unsigned n;
	unsigned fixed;
};

/* How a kernel field is shown, or -1 to leave it out. */
static int classify(const struct dp_kfield *kf, struct tfield *t)
{
	bool chars = strstr(kf->type, "char") != NULL;

	*t = (struct tfield){ .koff = kf->offset, .ksize = kf->size };
	if (!strncmp(kf->type, "__data_loc", 10) || !strncmp(kf->type, "__rel_loc", 9)) {
		if (!chars || kf->size != 4)
			return -1;
		t->kind = kf->type[2] == 'd' ? TK_LOC : TK_REL;
		return 0;
	}
	if (kf->count) {
		if (chars) {
			t->kind = TK_CHARS;
			return 0;
		}
		t->esz = kf->size / kf->count;
		t->count = kf->count;
		t->kind = TK_ARRAY;
		return t->esz == 1 || t->esz == 2 || t->esz == 4 || t->esz == 8 ?
		       0 : -1;
	}
	t->kind = TK_NUM;
	return kf->size == 1 || kf->size == 2 || kf->size == 4 ||
	       kf->size == 8 ? 0 : -1;
}

static int ktp_push(struct ktp *tp, const struct dp_kfield *kf,
		    const struct tfield *t)
{
	unsigned n = tp->n + 1;
	void *a = realloc(tp->f, n * sizeof(*tp->f));

	if (!a)
		return -ENOMEM;
	tp->f = a;
	a = realloc(tp->types, n * sizeof(*tp->types));
	if (!a)
		return -ENOMEM;
	tp->types = a;
	a = realloc(tp->names, n * sizeof(*tp->names));
	if (!a)
		return -ENOMEM;
	tp->names = a;
	tp->f[tp->n] = *t;
	tp->f[tp->n].off = tp->fixed;
	snprintf(tp->names[tp->n], sizeof(tp->names[0]), "%s", kf->name);
	tp->types[tp->n] = (struct dp_type){
		.kind = t->kind >= TK_CHARS ? DP_T_STRING :
			kf->is_signed ? DP_T_S : DP_T_U,
		.size = (uint8_t)(t->kind >= TK_CHARS ? 4 :
				  t->kind == TK_ARRAY ? t->esz : t->ksize),
		.count = (uint16_t)t->count,
	};
	tp->fixed += t->kind >= TK_CHARS ? 4 : t->ksize;
	tp->n = n;
	return 0;
}

static int ktp_parse(const char *format, struct ktp *tp)
{
	const char *pos = format;
	struct dp_kfield kf;
	struct tfield t;

	tp->fixed = DP_TP_HEAD_SIZE;
	while (dp_kformat_next(&pos, &kf) > 0) {
		if (!strncmp(kf.name, "common_", 7) || classify(&kf, &t))
			continue;
		if (ktp_push(tp, &kf, &t))
			return -ENOMEM;
	}
	return 0;
}

/* dprobe's description of the converted records. */
static int fill_fields(struct dp_event *ev, const struct ktp *tp)
{
	char type[32];

	ev->fields = calloc(tp->n ? tp->n : 1, sizeof(*ev->fields));
	if (!ev->fields)
		return -ENOMEM;
	for (unsigned i = 0; i < tp->n; i++) {
		const struct dp_type *ty = &tp->types[i];
		struct dp_field *f = &ev->fields[i];
		bool str = ty->kind == DP_T_STRING;

		if (str)
			snprintf(type, sizeof(type), "__data_loc char[]");
		else
			snprintf(type, sizeof(type), "%c%u%s",
				 ty->kind == DP_T_S ? 's' : 'u', ty->size * 8,
				 ty->count ? "[]" : "");
		*f = (struct dp_field){
			.name = tp->names[i], .type = strdup(type),
			.fclass = str ? DP_FC_STRING :
				  ty->count ? DP_FC_ARRAY : DP_FC_NUM,
			.offset = tp->f[i].off,
			.size = dp_type_fixed_size(ty),
			.elem_size = ty->size, .count = ty->count,
			.is_signed = ty->kind == DP_T_S, .ptype = ty,
		};
		ev->nfields++;
		if (!f->type)
			return -ENOMEM;
	}
	ev->fixed_size = tp->fixed;
	return 0;
}

/* A new registry event for GROUP:NAME, last in the list. */
static struct dp_event *reg_add(struct dp_registry *reg, const char *group,
				const char *name)
{
	struct dp_event *ev = calloc(1, sizeof(*ev)), **tail;
	unsigned id = reg->next_id_base;

	if (!ev || !(ev->probes = calloc(1, sizeof(*ev->probes)))) {
		free(ev);
		return NULL;
	}
	for (tail = &reg->events; *tail; tail = &(*tail)->next)
		if ((*tail)->id >= id)
			id = (*tail)->id + 1;
	ev->id = id;
	snprintf(ev->group, sizeof(ev->group), "%s", group);
	snprintf(ev->name, sizeof(ev->name), "%s", name);
	ev->kind = DP_KIND_TRACEPOINT;
	ev->enabled = true;
	ev->probes->event = ev;
	*tail = ev;
	return ev;
}

static int add_tracepoint(struct dp_kernel *k, const char *spec, char *why,
			  size_t whylen)
{
	char group[DP_MAX_EVENT_NAME_LEN], name[DP_MAX_EVENT_NAME_LEN];
	char rel[3 * DP_MAX_EVENT_NAME_LEN], *format;
	const char *colon = strchr(spec, ':');
	struct kev *e, *v;
	int ret;

	if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof(group) ||
	    strlen(colon + 1) >= sizeof(name) || strchr(colon + 1, '/')) {
		snprintf(why, whylen, "'%s' is not GROUP:NAME", spec);
		return -EINVAL;
	}
	snprintf(group, sizeof(group), "%.*s", (int)(colon - spec), spec);
	snprintf(name, sizeof(name), "%s", colon + 1);
	snprintf(rel, sizeof(rel), "events/%s/%s/format", group, name);
	if (dp_tfs_read(&k->tfs, rel, &format, NULL)) {
		snprintf(why, whylen, "no kernel tracepoint %s:%s (see `dprobe "
			 "list --kernel`)", group, name);
		return -ENOENT;
	}
	v = realloc(k->kevs, (k->nkevs + 1) * sizeof(*v));
	if (!v) {
		free(format);
		return -ENOMEM;
	}
	k->kevs = v;
	e = memset(&v[k->nkevs++], 0, sizeof(*e));
	snprintf(e->kgroup, sizeof(e->kgroup), "%s", group);
	snprintf(e->kname, sizeof(e->kname), "%s", name);
	e->tp = calloc(1, sizeof(*e->tp));
	ret = e->tp ? ktp_parse(format, e->tp) : -ENOMEM;
	free(format);
	if (!ret && !(e->ev = reg_add(k->o.reg, group, name)))
		ret = -ENOMEM;
	return ret ? ret : fill_fields(e->ev, e->tp);
}

int dp_ktp_translate(struct dp_kernel *k, char *why, size_t whylen)
{
	int ret;

	for (size_t i = 0; i < k->o.ntracepoints; i++) {
		ret = add_tracepoint(k, k->o.tracepoints[i], why, whylen);
		if (ret)
			return ret;
	}
	return 0;
}

bool dp_kernel_tp_named(const char *tp, const char *event, size_t len)
{
	const char *colon = strchr(tp, ':');
	size_t glen;

	if (!colon)
		return false;
	glen = (size_t)(colon - tp);
	if (len == strlen(colon + 1) && !strncmp(event, colon + 1, len))
		return true;			/* NAME */
	return len == strlen(tp) && !strncmp(event, tp, glen) &&
	       (event[glen] == ':' || event[glen] == '/') &&
	       !strncmp(event + glen + 1, colon + 1, len - glen - 1);
}

/*
 * The --filter expressions of the session's tracepoints, compiled against
 * the fields their format gave, and run in user space as the other
 * events' are.  A bad one is reported as the kernel's filter error_log.
 */
int dp_ktp_filters(struct dp_kernel *k, char *why, size_t whylen)
{
	for (size_t i = 0; i < k->o.nfilters; i++) {
		const char *f = k->o.filters[i], *eq = strchr(f, '=');
		struct dp_filter_error fe = { 0 };

		for (size_t j = 0; eq && j < k->nkevs; j++) {
			struct kev *e = &k->kevs[j];
			char tp[2 * DP_MAX_EVENT_NAME_LEN + 1];

			if (e->file)
				continue;	/* a probe: trace.c set it */
			snprintf(tp, sizeof(tp), "%s:%s", e->ev->group,
				 e->ev->name);
			if (!dp_kernel_tp_named(tp, f, (size_t)(eq - f)))
				continue;
			if (dp_event_set_filter(e->ev, eq + 1, &fe)) {
				dp_filter_error_log_print(eq + 1, &fe, stderr);
				snprintf(why, whylen, "--filter: a bad filter for "
					 "%s", tp);
				return -EINVAL;
			}
		}
	}
	return 0;
}

int dp_ktp_enable(struct dp_kernel *k, struct kev *e, char *why,
		  size_t whylen)
{
	char rel[PATH_MAX], *id;
	int ret;

	snprintf(rel, sizeof(rel), "%s/events/%s/%s/id", k->inst, e->kgroup,
		 e->kname);
	ret = dp_tfs_read(&k->tfs, rel, &id, NULL);
	if (!ret) {
		e->kid = (unsigned)strtoul(id, NULL, 10);
		free(id);
		snprintf(rel, sizeof(rel), "%s/events/%s/%s/enable", k->inst,
			 e->kgroup, e->kname);
		ret = dp_tfs_write(&k->tfs, rel, "1");
	}
	if (ret)
		snprintf(why, whylen, "cannot enable %s:%s in %s: %s",
			 e->kgroup, e->kname, k->inst, dp_kstrerror(ret));
	return ret;
}

/* The bytes of a string field in the kernel's record: 0 or -1. */
static int kstring(const struct tfield *t, const uint8_t *rec, size_t len,
		   const uint8_t **s, size_t *n)
{
	uint32_t loc;
	size_t base;

	if (t->kind == TK_CHARS) {
		*s = rec + t->koff;
		*n = strnlen((const char *)*s, t->ksize);
		return 0;
	}
	loc = (uint32_t)dp_rec_load(rec + t->koff, 4);
	/* __rel_loc counts from the end of its own word */
	base = (t->kind == TK_REL ? t->koff + 4 : 0) + dp_data_loc_off(loc);
	if (base + dp_data_loc_len(loc) > len)
		return -1;
	*s = rec + base;
	*n = strnlen((const char *)*s, dp_data_loc_len(loc));
	return 0;
}

static uint8_t *conv_room(struct dp_kernel *k, size_t need)
{
	uint8_t *b;

	if (need <= k->conv_cap)
		return k->conv;
	b = realloc(k->conv, need);
	if (!b)
		return NULL;
	k->conv = b;
	k->conv_cap = need;
	return b;
}

const uint8_t *dp_ktp_convert(struct dp_kernel *k, const struct kev *e,
			      const uint8_t *rec, size_t len, size_t *out_len)
{
	const struct ktp *tp = e->tp;
	size_t dyn = tp->fixed, n, cap = tp->fixed + len + tp->n;
	const uint8_t *s;
	uint16_t id = (uint16_t)e->ev->id;
	uint8_t *out = conv_room(k, cap);

	if (!out || len < DP_TP_HEAD_SIZE)
		return NULL;
	memcpy(out, rec, DP_TP_HEAD_SIZE);
	memcpy(out, &id, 2);
	for (unsigned i = 0; i < tp->n; i++) {
		const struct tfield *t = &tp->f[i];
		uint32_t loc;

		if ((size_t)t->koff + t->ksize > len)
			return NULL;
		if (t->kind == TK_NUM || t->kind == TK_ARRAY) {
			memcpy(out + t->off, rec + t->koff, t->ksize);
			continue;
		}
		/* room for the record's own strings, each once: a record
		 * whose strings overlap is malformed */
		if (kstring(t, rec, len, &s, &n) || dyn + n + 1 > cap)
			return NULL;
		/* every string ends in a NUL of its own */
		memcpy(out + dyn, s, n);
		out[dyn + n] = '\0';
		loc = dp_data_loc((unsigned)(n + 1), (unsigned)dyn);
		memcpy(out + t->off, &loc, 4);
		dyn += n + 1;
	}
	*out_len = dyn;
	return out;
}

void dp_ktp_free(struct kev *e)
{
	if (!e->tp)
		return;
	free(e->tp->f);
	free(e->tp->types);
	free(e->tp->names);
	free(e->tp);
	e->tp = NULL;
}

/* ---- dprobe list --kernel ------------------------------------------------ */

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int dp_kernel_list_tracepoints(const char *glob, FILE *out)
{
	char *text, *line, *save = NULL, **v = NULL, **nv, why[512];
	size_t n = 0, cap = 0;
	struct dp_tfs t;
	int ret = dp_tfs_find(&t, why, sizeof(why));

	if (ret) {
		fprintf(stderr, "dprobe: %s\n", why);
		return ret;
	}
	ret = dp_tfs_read(&t, "available_events", &text, NULL);
	if (ret) {
		fprintf(stderr, "dprobe: cannot read %s/available_events: %s\n",
			t.root, dp_kstrerror(ret));
		return ret;
	}
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (glob && fnmatch(glob, line, 0))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				ret = -ENOMEM;
				break;
			}
			v = nv;
		}
		v[n++] = line;
	}
	if (!ret) {
		if (n)
			qsort(v, n, sizeof(*v), str_cmp);
		for (size_t i = 0; i < n; i++)
			fprintf(out, "%-46s [Tracepoint event]\n", v[i]);
	} else {
		fprintf(stderr, "dprobe: out of memory\n");
	}
	free(v);
	free(text);
	return ret;
}
