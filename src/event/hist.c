// SPDX-License-Identifier: GPL-2.0
/*
 * Hist triggers (hist.h).  The table is open addressing over twice the
 * entries it may hold, as the kernel's tracing_map: a key that finds no
 * free entry is dropped and counted.  Nothing here runs in the traced
 * process: the engines hand records to dprobe, which aggregates them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "event/agg.h"
#include "event/filter.h"
#include "event/hist.h"

#define MAX_KEYS	3
#define MAX_VALS	2	/* besides hitcount: TRACING_MAP_VALS_MAX 3 */
#define MAX_SORT	2
#define BITS_MIN	7
#define BITS_MAX	17
#define BITS_DEFAULT	11
#define KEY_STR_MAX	256	/* a string key's bytes, as MAX_FILTER_STR_VAL */

enum {
	HF_HEX		= 1 << 0,
	HF_SYM		= 1 << 1,
	HF_SYM_OFFSET	= 1 << 2,
	HF_EXECNAME	= 1 << 3,
	HF_SYSCALL	= 1 << 4,
	HF_LOG2		= 1 << 5,
	HF_BUCKET	= 1 << 6,
	HF_PERCENT	= 1 << 7,
	HF_GRAPH	= 1 << 8,
	HF_HITCOUNT	= 1 << 9,
};

/* One key or value: an event field and its modifier. */
struct hfield {
	char name[DP_MAX_EVENT_NAME_LEN];
	const struct dp_field *f;	/* NULL: hitcount */
	unsigned flags;
	uint64_t buckets;
	bool string;
};

struct sort_key {
	bool is_key;
	unsigned idx;			/* in keys[] or vals[] (0: hitcount) */
	bool descending;
};

struct entry {
	bool used;
	uint64_t num[MAX_KEYS];
	char *str[MAX_KEYS];		/* string keys; resolved symbols */
	char comm[DP_TASK_COMM_LEN];	/* .execname: the first hit's */
	uint64_t sum[1 + MAX_VALS];	/* [0]: hitcount */
};

struct dp_hist {
	const struct dp_event *ev;
	char *text;			/* as written, for dp_hist_same() */
	struct hfield keys[MAX_KEYS];
	unsigned nkeys;
	struct hfield vals[1 + MAX_VALS];	/* [0]: hitcount */
	unsigned nvals;
	struct sort_key sort[MAX_SORT];
	unsigned nsort;
	unsigned bits;
	bool nohitcount, paused;
	enum dp_hist_cmd cmd;
	char *filter_text;
	struct dp_filter *filter;
	/* the table: 2 << bits slots, at most 1 << bits used */
	struct entry *slots;
	size_t nslots, used;
	uint64_t hits, drops;
};

/* ---- parsing -------------------------------------------------------------- */

struct parse {
	const char *text;		/* the whole command, for positions */
	struct dp_hist_error *err;
};

static int fail(struct parse *ps, const char *msg, const char *at)
{
	const char *p = at && *at ? strstr(ps->text, at) : NULL;

	ps->err->msg = msg;
	ps->err->pos = p ? (unsigned)(p - ps->text) : 0;
	return -EINVAL;
}

static bool parse_ulong(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-')
		return false;
	*v = strtoull(s, &end, 0);
	return !*end;
}

/* "NAME[.MODIFIER]" into @hf; @key: a key (some modifiers are values'). */
static int parse_field(struct parse *ps, const struct dp_event *ev,
		       const char *spec, bool key, struct hfield *hf)
{
	char buf[DP_MAX_EVENT_NAME_LEN + 64], *mod;

	memset(hf, 0, sizeof(*hf));
	if (strlen(spec) >= sizeof(buf))
		return fail(ps, "Couldn't find field", spec);
	strcpy(buf, spec);
	mod = strchr(buf, '.');
	if (mod)
		*mod++ = '\0';
	if (mod) {
		uint64_t n;

		if (!strcmp(mod, "hex"))
			hf->flags |= HF_HEX;
		else if (!strcmp(mod, "sym"))
			hf->flags |= HF_SYM;
		else if (!strcmp(mod, "sym-offset"))
			hf->flags |= HF_SYM_OFFSET;
		else if (!strcmp(mod, "execname") && !strcmp(buf, "common_pid"))
			hf->flags |= HF_EXECNAME;
		else if (!strcmp(mod, "syscall"))
			hf->flags |= HF_SYSCALL;
		else if (!strcmp(mod, "log2"))
			hf->flags |= HF_LOG2;
		else if (!strncmp(mod, "bucket", 6)) {
			/* the kernel's caret: after "bucket[s][=]" */
			const char *v = mod + 6 + (mod[6] == 's');

			if (*v != '=' || !parse_ulong(v + 1, &n) || !n)
				return fail(ps, "Invalid field modifier",
					    strchr(spec, '.') + 1 +
					    (v - mod) + (*v == '='));
			hf->flags |= HF_BUCKET;
			hf->buckets = n;
		} else if (!key && !strcmp(mod, "percent"))
			hf->flags |= HF_PERCENT;
		else if (!key && !strcmp(mod, "graph"))
			hf->flags |= HF_GRAPH;
		else
			return fail(ps, "Invalid field modifier",
				    strchr(spec, '.') + 1);
	}
	/* no field has a longer name, and the copy below must not cut one */
	if (strlen(buf) >= sizeof(hf->name))
		return fail(ps, "Couldn't find field", spec);
	memcpy(hf->name, buf, strlen(buf) + 1);
	if (!strcmp(buf, "hitcount")) {
		hf->flags |= HF_HITCOUNT;
		return 0;
	}
	hf->f = dp_event_field(ev, buf);
	if (!hf->f || !hf->f->size)
		return fail(ps, "Couldn't find field", spec);
	hf->string = hf->f->fclass == DP_FC_STRING ||
		     (hf->f->fclass == DP_FC_ARRAY && hf->f->elem_size == 1 &&
		      strstr(hf->f->type, "char"));
	if (!hf->string && hf->f->fclass != DP_FC_NUM)
		return fail(ps, "Couldn't find field", spec);
	/* a string is neither summed nor bucketed */
	if (hf->string && (!key || (hf->flags & ~HF_HEX)))
		return fail(ps, "Invalid field modifier", spec);
	return 0;
}

/* A comma list into @out (at most @max), each a key or a value. */
static int parse_list(struct parse *ps, const struct dp_event *ev,
		      const char *list, bool key, struct hfield *out,
		      unsigned max, unsigned *n)
{
	char *copy = strdup(list), *save = NULL;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	bool hitcount = false;

	for (char *t = strtok_r(copy, ",", &save); t && !ret;
	     t = strtok_r(NULL, ",", &save)) {
		struct hfield hf;

		/* hitcount is always the first value: a first plain one
		 * is that one, another (hitcount.percent) one more */
		if (!key && !strcmp(t, "hitcount") && !hitcount) {
			hitcount = true;
			continue;
		}
		if (*n == max) {
			ret = -EINVAL;	/* the kernel says nothing */
			break;
		}
		ret = parse_field(ps, ev, t, key, &hf);
		if (!ret && key && (hf.flags & HF_HITCOUNT))
			ret = fail(ps, "Couldn't find field", t);
		if (!ret)
			out[(*n)++] = hf;
	}
	free(copy);
	return ret;
}

static int find_sort_field(const struct dp_hist *h, const char *name,
			   struct sort_key *sk)
{
	if (!strcmp(name, "hitcount")) {
		*sk = (struct sort_key){ .is_key = false, .idx = 0 };
		return 0;
	}
	for (unsigned i = 1; i < h->nvals; i++)
		if (!strcmp(h->vals[i].name, name)) {
			*sk = (struct sort_key){ .is_key = false, .idx = i };
			return 0;
		}
	for (unsigned i = 0; i < h->nkeys; i++)
		if (!strcmp(h->keys[i].name, name)) {
			*sk = (struct sort_key){ .is_key = true, .idx = i };
			return 0;
		}
	return -ENOENT;
}

static int parse_sort(struct parse *ps, struct dp_hist *h, const char *list)
{
	char *copy = strdup(list), *save = NULL;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	h->nsort = 0;
	for (char *t = strtok_r(copy, ",", &save); t && !ret;
	     t = strtok_r(NULL, ",", &save)) {
		char *mod = strchr(t, '.');
		struct sort_key sk;

		if (h->nsort == MAX_SORT) {
			ret = fail(ps, "Too many sort fields (Max = 2)", "sort=");
			break;
		}
		if (mod)
			*mod++ = '\0';
		if (!*t) {
			ret = fail(ps, "Empty sort field", "sort=");
			break;
		}
		if (find_sort_field(h, t, &sk)) {
			ret = fail(ps, "Sort field must be a key or a val", t);
			break;
		}
		if (mod && !strcmp(mod, "descending"))
			sk.descending = true;
		else if (mod && strcmp(mod, "ascending"))
			ret = fail(ps, "Invalid sort modifier", mod);
		h->sort[h->nsort++] = sk;
	}
	free(copy);
	return ret;
}

static unsigned map_bits(uint64_t size)
{
	unsigned bits = 0;

	while (bits < 63 && (1ull << bits) < size)
		bits++;
	return bits;
}

/* The assignments and words between colons. */
static int parse_attrs(struct parse *ps, struct dp_hist *h, char *s,
		       const char **keys, const char **vals,
		       const char **sort)
{
	for (char *t = strsep(&s, ":"); t; t = s ? strsep(&s, ":") : NULL) {
		char *eq = strchr(t, '=');
		uint64_t size;

		if (eq && !eq[1])
			return fail(ps, "Empty assignment", t);
		if (!strncmp(t, "keys=", 5) || !strncmp(t, "key=", 4))
			*keys = eq + 1;
		else if (!strncmp(t, "vals=", 5) || !strncmp(t, "val=", 4) ||
			 !strncmp(t, "values=", 7))
			*vals = eq + 1;
		else if (!strncmp(t, "sort=", 5))
			*sort = eq + 1;
		else if (!strncmp(t, "size=", 5)) {
			if (!parse_ulong(eq + 1, &size) ||
			    map_bits(size) < BITS_MIN || map_bits(size) > BITS_MAX)
				return -EINVAL;
			h->bits = map_bits(size);
		} else if (eq || !strncmp(t, "onmatch(", 8) ||
			   !strncmp(t, "onmax(", 6) ||
			   !strncmp(t, "onchange(", 9))
			/* variables, name=, clock=, actions: not here yet */
			return fail(ps, "Not supported by dprobe yet "
				    "(variables, name=, clock=, actions)", t);
		else if (!strcmp(t, "nohitcount") || !strcmp(t, "NOHC"))
			h->nohitcount = true;
		else if (!strcmp(t, "pause"))
			h->cmd = DP_HIST_PAUSE;
		else if (!strcmp(t, "cont") || !strcmp(t, "continue"))
			h->cmd = DP_HIST_CONT;
		else if (!strcmp(t, "clear"))
			h->cmd = DP_HIST_CLEAR;
		else
			return -EINVAL;	/* parse_action(): no message */
	}
	return *keys ? 0 : -EINVAL;
}

static int parse(struct parse *ps, struct dp_hist *h, char *body,
		 char *filter)
{
	const char *keys = NULL, *vals = NULL, *sort = NULL;
	struct dp_filter_error fe = { 0 };
	int ret = parse_attrs(ps, h, body, &keys, &vals, &sort);
	unsigned nv = 0;

	if (ret)
		return ret;
	h->vals[0] = (struct hfield){ .name = "hitcount",
				      .flags = HF_HITCOUNT };
	h->nvals = 1;
	ret = parse_list(ps, h->ev, keys, true, h->keys, MAX_KEYS, &h->nkeys);
	if (!ret && vals)
		ret = parse_list(ps, h->ev, vals, false, h->vals + 1, MAX_VALS,
				 &nv);
	if (ret)
		return ret;
	h->nvals = 1 + nv;
	if (h->nohitcount && h->nvals == 1) {
		fail(ps, "Non-hitcount value is required for 'nohitcount'",
		     NULL);
		return -ENOENT;
	}
	h->sort[0] = (struct sort_key){ .is_key = false, .idx = 0 };
	h->nsort = 1;
	if (sort && (ret = parse_sort(ps, h, sort)))
		return ret;
	if (filter) {
		h->filter = dp_filter_compile(h->ev, filter, &fe);
		if (!h->filter)
			return -(fe.err ? fe.err : EINVAL);
		h->filter_text = strdup(filter);
		if (!h->filter_text)
			return -ENOMEM;
	}
	return 0;
}

int dp_hist_new(const struct dp_event *ev, const char *text,
		struct dp_hist **out, struct dp_hist_error *err)
{
	struct parse ps = { text, err };
	struct dp_hist *h = calloc(1, sizeof(*h));
	char *body, *filter;
	int ret;

	*err = (struct dp_hist_error){ 0 };
	if (!h || !(h->text = strdup(text))) {
		free(h);
		return -ENOMEM;
	}
	h->ev = ev;
	h->bits = BITS_DEFAULT;
	body = strdup(text);
	ret = body ? 0 : -ENOMEM;
	if (!ret && strncmp(body, "hist:", 5) && strcmp(body, "hist"))
		ret = -EINVAL;
	if (!ret) {
		filter = strstr(body, " if ");
		if (filter) {
			*filter = '\0';
			filter += 4;
		}
		ret = parse(&ps, h, body + (body[4] ? 5 : 4), filter);
	}
	free(body);
	if (!ret) {
		h->nslots = (size_t)2 << h->bits;
		h->slots = calloc(h->nslots, sizeof(*h->slots));
		ret = h->slots ? 0 : -ENOMEM;
	}
	if (ret) {
		dp_hist_free(h);
		return ret;
	}
	*out = h;
	return 0;
}

void dp_hist_error_print(const struct dp_event *ev, const char *text,
			 int ret, const struct dp_hist_error *err, FILE *out)
{
	if (!err->msg) {
		fprintf(out, "hist:%s:%s: %s: %s\n", ev->group, ev->name, text,
			strerror(-ret));
		return;
	}
	fprintf(out, "hist:%s:%s: error: %s\n  Command: %s\n%*s^\n",
		ev->group, ev->name, err->msg, text,
		(int)(err->pos + sizeof("  Command: ") - 1), "");
}

static void entries_free(struct dp_hist *h)
{
	for (size_t i = 0; i < h->nslots; i++)
		for (unsigned k = 0; k < MAX_KEYS; k++)
			free(h->slots[i].str[k]);
}

void dp_hist_free(struct dp_hist *h)
{
	if (!h)
		return;
	if (h->slots)
		entries_free(h);
	free(h->slots);
	dp_filter_free(h->filter);
	free(h->filter_text);
	free(h->text);
	free(h);
}

enum dp_hist_cmd dp_hist_command(const struct dp_hist *h)
{
	return h->cmd;
}

bool dp_hist_wants_symbols(const struct dp_hist *h)
{
	for (unsigned k = 0; k < h->nkeys; k++)
		if (h->keys[k].flags & (HF_SYM | HF_SYM_OFFSET))
			return true;
	return false;
}

static bool fields_equal(const struct hfield *a, const struct hfield *b,
			 unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (strcmp(a[i].name, b[i].name) || a[i].flags != b[i].flags ||
		    a[i].buckets != b[i].buckets)
			return false;
	return true;
}

bool dp_hist_same(const struct dp_hist *a, const struct dp_hist *b)
{
	if (a->nkeys != b->nkeys || a->nvals != b->nvals ||
	    a->nsort != b->nsort || !fields_equal(a->keys, b->keys, a->nkeys) ||
	    !fields_equal(a->vals, b->vals, a->nvals))
		return false;
	for (unsigned i = 0; i < a->nsort; i++)
		if (a->sort[i].is_key != b->sort[i].is_key ||
		    a->sort[i].idx != b->sort[i].idx ||
		    a->sort[i].descending != b->sort[i].descending)
			return false;
	return !strcmp(a->filter_text ? a->filter_text : "",
		       b->filter_text ? b->filter_text : "");
}

void dp_hist_pause(struct dp_hist *h, bool paused)
{
	h->paused = paused;
}

void dp_hist_clear(struct dp_hist *h)
{
	entries_free(h);
	memset(h->slots, 0, h->nslots * sizeof(*h->slots));
	h->used = 0;
	h->hits = h->drops = 0;
}

/* ---- aggregating ---------------------------------------------------------- */

/*
 * ilog2(roundup_pow_of_two(v)) as the kernel computes it on x86-64:
 * 1UL << fls_long(v - 1), whose shift by 64 (v above 2^63: a negative
 * number seen unsigned) takes the count mod 64, so 1, and 0 (so is v 0).
 */
static unsigned ilog2_roundup(uint64_t v)
{
	unsigned b = 0;

	if (v > 1ull << 63)
		return 0;
	while ((1ull << b) < v)
		b++;
	return b;
}

static uint64_t field_num(const struct hfield *hf, const uint8_t *rec)
{
	const struct dp_field *f = hf->f;
	uint64_t v = dp_rec_load(rec + f->offset, f->size);

	if (f->is_signed && f->size < 8 && (v >> (f->size * 8 - 1)) & 1)
		v |= ~0ull << (f->size * 8);
	return v;
}

/* A key's value, as the kernel keys it (log2, buckets applied). */
static uint64_t key_num(const struct hfield *hf, const uint8_t *rec)
{
	uint64_t v = field_num(hf, rec);

	if (hf->flags & HF_LOG2)
		return ilog2_roundup(v);
	if (hf->flags & HF_BUCKET)
		return v / hf->buckets * hf->buckets;
	return v;
}

/* A string key; one whose bytes are not all in the record is empty
 * (records are checked, but a field without a probe type is not). */
static void key_str(const struct hfield *hf, const uint8_t *rec, size_t len,
		    char *out)
{
	const char *s = "";
	size_t n = 0;

	if (hf->f->fclass == DP_FC_STRING) {
		uint32_t loc = (uint32_t)dp_rec_load(rec + hf->f->offset, 4);
		size_t off = dp_data_loc_off(loc), slen = dp_data_loc_len(loc);

		if (off <= len && slen <= len - off && slen) {
			s = (const char *)rec + off;
			n = strnlen(s, slen);
		}
	} else {
		s = (const char *)rec + hf->f->offset;
		n = strnlen(s, hf->f->size);
	}
	if (n >= KEY_STR_MAX)
		n = KEY_STR_MAX - 1;
	memcpy(out, s, n);
	out[n] = '\0';
}

static uint64_t hash_key(const struct dp_hist *h, const uint64_t *num,
			 char str[][KEY_STR_MAX])
{
	uint64_t x = 0xcbf29ce484222325ull;

	for (unsigned k = 0; k < h->nkeys; k++) {
		x = (x ^ num[k]) * 0x100000001b3ull;
		for (const char *c = h->keys[k].string ? str[k] : ""; *c; c++)
			x = (x ^ (uint8_t)*c) * 0x100000001b3ull;
	}
	return x ^ (x >> 29);
}

static bool same_key(const struct dp_hist *h, const struct entry *e,
		     const uint64_t *num, char str[][KEY_STR_MAX])
{
	for (unsigned k = 0; k < h->nkeys; k++) {
		if (h->keys[k].string ? strcmp(e->str[k], str[k]) :
		    e->num[k] != num[k])
			return false;
	}
	return true;
}

/* A symbol as %ps (name) or %pS (name+off/size) prints it, else hex. */
static char *sym_text(const struct dp_symbolizer *sym, uint64_t addr,
		      bool offset)
{
	const char *name = NULL;
	uint64_t off = 0, size = 0;
	char *s = NULL;

	if (!sym || !sym->lookup || sym->lookup(sym->priv, addr, &name, &off,
						&size) || !name)
		return asprintf(&s, "0x%llx", (unsigned long long)addr) < 0 ?
		       NULL : s;
	if (!offset)
		return strdup(name);
	return asprintf(&s, "%s+0x%llx/0x%llx", name, (unsigned long long)off,
			(unsigned long long)size) < 0 ? NULL : s;
}

static int entry_fill(struct dp_hist *h, struct entry *e, const uint64_t *num,
		      char str[][KEY_STR_MAX], const struct dp_rec_meta *meta,
		      const struct dp_symbolizer *sym)
{
	for (unsigned k = 0; k < h->nkeys; k++) {
		const struct hfield *hf = &h->keys[k];

		e->num[k] = num[k];
		if (hf->string)
			e->str[k] = strdup(str[k]);
		else if (hf->flags & (HF_SYM | HF_SYM_OFFSET))
			e->str[k] = sym_text(sym, num[k],
					     hf->flags & HF_SYM_OFFSET);
		else
			continue;
		if (!e->str[k])
			return -ENOMEM;
	}
	snprintf(e->comm, sizeof(e->comm), "%s",
		 meta && meta->comm ? meta->comm : "<...>");
	e->used = true;
	return 0;
}

static struct entry *lookup(struct dp_hist *h, const uint64_t *num,
			    char str[][KEY_STR_MAX],
			    const struct dp_rec_meta *meta,
			    const struct dp_symbolizer *sym)
{
	size_t mask = h->nslots - 1, i = hash_key(h, num, str) & mask;

	for (size_t n = 0; n < h->nslots; n++, i = (i + 1) & mask) {
		struct entry *e = &h->slots[i];

		if (e->used && same_key(h, e, num, str))
			return e;
		if (e->used)
			continue;
		if (h->used == (size_t)1 << h->bits)
			return NULL;
		if (entry_fill(h, e, num, str, meta, sym)) {
			for (unsigned k = 0; k < MAX_KEYS; k++) {
				free(e->str[k]);
				e->str[k] = NULL;
			}
			e->used = false;
			return NULL;
		}
		h->used++;
		return e;
	}
	return NULL;
}

void dp_hist_add(struct dp_hist *h, const void *rec, size_t len,
		 const struct dp_rec_meta *meta,
		 const struct dp_symbolizer *sym)
{
	char str[MAX_KEYS][KEY_STR_MAX];
	uint64_t num[MAX_KEYS] = { 0 };
	struct entry *e;

	if (h->paused || dp_rec_check(h->ev, rec, len))
		return;
	if (h->filter && !dp_filter_match(h->filter, h->ev, rec, len, meta))
		return;
	for (unsigned k = 0; k < h->nkeys; k++) {
		if (h->keys[k].string)
			key_str(&h->keys[k], rec, len, str[k]);
		else
			num[k] = key_num(&h->keys[k], rec);
	}
	h->hits++;
	e = lookup(h, num, str, meta, sym);
	if (!e) {
		h->drops++;
		return;
	}
	e->sum[0]++;
	for (unsigned v = 1; v < h->nvals; v++)
		e->sum[v] += h->vals[v].f ? field_num(&h->vals[v], rec) : 1;
}

/* ---- kept in the traced processes (event/agg.h) --------------------------- */

_Static_assert(MAX_KEYS == DP_AGG_MAX_KEYS && MAX_VALS == DP_AGG_MAX_VALS,
	       "a table kept in a process holds what a histogram holds");

static bool agg_field(const struct hfield *hf, const struct dp_event *ev,
		      struct dp_agg_field *out)
{
	const struct dp_field *f = hf->f;

	if (!f || f->fclass != DP_FC_NUM || hf->string ||
	    (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8) ||
	    f->offset + f->size > ev->fixed_size)
		return false;
	*out = (struct dp_agg_field){ .off = (uint16_t)f->offset,
				      .size = (uint8_t)f->size,
				      .is_signed = f->is_signed };
	if (hf->flags & HF_LOG2)
		out->mode = DP_AGG_LOG2;
	else if (hf->flags & HF_BUCKET) {
		out->mode = DP_AGG_BUCKET;
		out->arg = hf->buckets;
	}
	return true;
}

bool dp_hist_agg_spec(const struct dp_hist *h, struct dp_agg_spec *s)
{
	const struct dp_event *ev = h->ev;

	memset(s, 0, sizeof(*s));
	/* numbers of a fixed-size record, no filter, and no key printed
	 * from this process's symbols (a table is the whole session's) */
	if (h->filter || h->paused || ev->fixed_size > DP_AGG_REC_MAX ||
	    h->bits > DP_AGG_BITS_MAX)
		return false;
	for (unsigned i = 0; i < ev->nfields; i++)
		if (ev->fields[i].fclass == DP_FC_STRING)
			return false;
	for (unsigned k = 0; k < h->nkeys; k++) {
		if (h->keys[k].flags & (HF_SYM | HF_SYM_OFFSET) ||
		    !agg_field(&h->keys[k], ev, &s->key[k]))
			return false;
	}
	for (unsigned v = 1; v < h->nvals; v++)
		if (!agg_field(&h->vals[v], ev, &s->val[v - 1]) ||
		    s->val[v - 1].mode != DP_AGG_RAW)
			return false;
	s->nkeys = h->nkeys;
	s->nvals = h->nvals - 1;
	s->bits = h->bits < DP_AGG_BITS_MIN ? DP_AGG_BITS_MIN : h->bits;
	s->rec_size = ev->fixed_size;
	return true;
}

void dp_hist_add_sums(struct dp_hist *h, const uint64_t *key, uint64_t hits,
		      const uint64_t *val, const char *comm)
{
	char str[MAX_KEYS][KEY_STR_MAX];
	uint64_t num[MAX_KEYS] = { 0 };
	struct dp_rec_meta meta = { .comm = comm };
	struct entry *e;

	if (h->paused)
		return;
	h->hits += hits;
	if (!key) {
		h->drops += hits;
		return;
	}
	for (unsigned k = 0; k < h->nkeys; k++)
		num[k] = key[k];
	e = lookup(h, num, str, &meta, NULL);
	if (!e) {
		h->drops += hits;
		return;
	}
	e->sum[0] += hits;
	for (unsigned v = 1; v < h->nvals; v++)
		e->sum[v] += val[v - 1];
}

/* ---- printing ------------------------------------------------------------- */

static const char *flag_name(const struct hfield *hf)
{
	static const struct { unsigned flag; const char *name; } names[] = {
		{ HF_HEX, "hex" }, { HF_SYM, "sym" },
		{ HF_SYM_OFFSET, "sym-offset" }, { HF_EXECNAME, "execname" },
		{ HF_SYSCALL, "syscall" }, { HF_LOG2, "log2" },
		{ HF_BUCKET, "buckets" }, { HF_PERCENT, "percent" },
		{ HF_GRAPH, "graph" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (hf->flags & names[i].flag)
			return names[i].name;
	return NULL;
}

static void print_field_spec(const struct hfield *hf, FILE *out)
{
	const char *flags = flag_name(hf);

	fputs(hf->name, out);
	if (flags)
		fprintf(out, ".%s", flags);
	if (hf->flags & HF_BUCKET)
		fprintf(out, "=%llu", (unsigned long long)hf->buckets);
}

void dp_hist_print_trigger(const struct dp_hist *h, FILE *out)
{
	fputs("hist:keys=", out);
	for (unsigned k = 0; k < h->nkeys; k++) {
		if (k)
			fputc(',', out);
		print_field_spec(&h->keys[k], out);
	}
	fputs(":vals=", out);
	for (unsigned v = h->nohitcount ? 1 : 0; v < h->nvals; v++) {
		if (v > (h->nohitcount ? 1u : 0u))
			fputc(',', out);
		print_field_spec(&h->vals[v], out);
	}
	fputs(":sort=", out);
	for (unsigned i = 0; i < h->nsort; i++) {
		const struct sort_key *sk = &h->sort[i];

		if (i)
			fputc(',', out);
		print_field_spec(sk->is_key ? &h->keys[sk->idx] :
				 &h->vals[sk->idx], out);
		if (sk->descending)
			fputs(".descending", out);
	}
	fprintf(out, ":size=%u", 1u << h->bits);
	if (h->nohitcount)
		fputs(":nohitcount", out);
	if (h->filter_text)
		fprintf(out, " if %s", h->filter_text);
	fputs(h->paused ? " [paused]\n" : " [active]\n", out);
}

static void print_key(const struct hfield *hf, const struct entry *e,
		      unsigned k, FILE *out)
{
	unsigned long long v = e->num[k];
	const struct dp_syscall *sc;

	if (hf->flags & HF_HEX)
		fprintf(out, "%s: %llx", hf->name, v);
	else if (hf->flags & HF_SYM)
		fprintf(out, "%s: [%llx] %-45s", hf->name, v, e->str[k]);
	else if (hf->flags & HF_SYM_OFFSET)
		fprintf(out, "%s: [%llx] %-55s", hf->name, v, e->str[k]);
	else if (hf->flags & HF_EXECNAME)
		fprintf(out, "%s: %-16s[%10llu]", hf->name, e->comm, v);
	else if (hf->flags & HF_SYSCALL) {
		sc = dp_syscall_by_nr((long)v);
		fprintf(out, "%s: %-30s[%3llu]", hf->name,
			sc ? sc->name : "unknown_syscall", v);
	} else if (hf->flags & HF_LOG2)
		fprintf(out, "%s: ~ 2^%-2llu", hf->name, v);
	else if (hf->flags & HF_BUCKET)
		fprintf(out, "%s: ~ %llu-%llu", hf->name, v,
			v + (unsigned long long)hf->buckets - 1);
	else if (hf->string)
		fprintf(out, "%s: %-50s", hf->name, e->str[k]);
	else
		fprintf(out, "%s: %10llu", hf->name, v);
}

/* val * 10000 / total, as the kernel's __get_percentage() */
static unsigned percentage(uint64_t val, uint64_t total)
{
	if (!total)
		return val ? UINT32_MAX : 0;
	if (val < UINT64_MAX / 10000)
		return (unsigned)(val * 10000 / total);
	total /= 10000;
	return total ? (unsigned)(val / total) : (val ? UINT32_MAX : 0);
}

static void print_val(const struct hfield *hf, uint64_t val, uint64_t total,
		      uint64_t max, FILE *out)
{
	const char *name = hf->name;

	if (hf->flags & HF_PERCENT) {
		unsigned pc = percentage(val, total);

		if (pc == UINT32_MAX)
			fprintf(out, " %s (%%):[ERROR]", name);
		else
			fprintf(out, " %s (%%): %3u.%02u", name, pc / 100,
				pc % 100);
	} else if (hf->flags & HF_GRAPH) {
		unsigned len = percentage(val, max);
		char bar[21];

		if (len == UINT32_MAX) {
			fprintf(out, " %s: %20s", name, "[ERROR]");
			return;
		}
		len = len * 20 / 10000;
		for (unsigned i = 0; i < 20; i++)
			bar[i] = i < len ? '#' : ' ';
		bar[20] = '\0';
		fprintf(out, " %s: %20s", name, bar);
	} else if (hf->flags & HF_HEX) {
		fprintf(out, " %s: %10llx", name, (unsigned long long)val);
	} else {
		fprintf(out, " %s: %10llu", name, (unsigned long long)val);
	}
}

static int cmp_u64(uint64_t a, uint64_t b, bool is_signed)
{
	if (is_signed)
		return (int64_t)a < (int64_t)b ? -1 : (int64_t)a > (int64_t)b;
	return a < b ? -1 : a > b;
}

static int cmp_one(const struct dp_hist *h, const struct sort_key *sk,
		   const struct entry *a, const struct entry *b)
{
	const struct hfield *hf = sk->is_key ? &h->keys[sk->idx] :
				  &h->vals[sk->idx];
	int c;

	if (sk->is_key && hf->string)
		c = strcmp(a->str[sk->idx], b->str[sk->idx]);
	else if (sk->is_key)
		c = cmp_u64(a->num[sk->idx], b->num[sk->idx],
			    hf->f && hf->f->is_signed &&
			    !(hf->flags & (HF_LOG2 | HF_BUCKET)));
	else
		c = cmp_u64(a->sum[sk->idx], b->sum[sk->idx], false);
	return sk->descending ? -c : c;
}

/* The sort keys, then the keys themselves: ties in a fixed order. */
static int cmp_entries(const void *pa, const void *pb, void *priv)
{
	const struct entry *a = *(const struct entry *const *)pa;
	const struct entry *b = *(const struct entry *const *)pb;
	const struct dp_hist *h = priv;
	int c = 0;

	for (unsigned i = 0; i < h->nsort && !c; i++)
		c = cmp_one(h, &h->sort[i], a, b);
	for (unsigned k = 0; k < h->nkeys && !c; k++)
		c = cmp_one(h, &(struct sort_key){ .is_key = true, .idx = k },
			    a, b);
	return c;
}

static void print_entry(const struct dp_hist *h, const struct entry *e,
			const uint64_t *total, const uint64_t *max, FILE *out)
{
	fputs("{ ", out);
	for (unsigned k = 0; k < h->nkeys; k++) {
		if (k)
			fputs(", ", out);
		print_key(&h->keys[k], e, k, out);
	}
	fputs(" }", out);
	if (!h->nohitcount)
		print_val(&h->vals[0], e->sum[0], total[0], max[0], out);
	for (unsigned v = 1; v < h->nvals; v++) {
		fputc(' ', out);
		print_val(&h->vals[v], e->sum[v], total[v], max[v], out);
	}
	fputc('\n', out);
}

void dp_hist_print(const struct dp_hist *h, unsigned n, FILE *out)
{
	uint64_t total[1 + MAX_VALS] = { 0 }, max[1 + MAX_VALS] = { 0 };
	const struct entry **v = calloc(h->used ? h->used : 1, sizeof(*v));
	size_t m = 0;

	if (n)
		fputs("\n\n", out);
	fputs("# event histogram\n#\n# trigger info: ", out);
	dp_hist_print_trigger(h, out);
	fputs("#\n\n", out);
	for (size_t i = 0; v && i < h->nslots; i++)
		if (h->slots[i].used)
			v[m++] = &h->slots[i];
	for (size_t i = 0; i < m; i++)
		for (unsigned k = 0; k < h->nvals; k++) {
			total[k] += v[i]->sum[k];
			if (max[k] < v[i]->sum[k])
				max[k] = v[i]->sum[k];
		}
	qsort_r(v, m, sizeof(*v), cmp_entries, (void *)h);
	for (size_t i = 0; i < m; i++)
		print_entry(h, v[i], total, max, out);
	fprintf(out, "\nTotals:\n    Hits: %llu\n    Entries: %zu\n"
		"    Dropped: %llu\n", (unsigned long long)h->hits, m,
		(unsigned long long)h->drops);
	free(v);
}
