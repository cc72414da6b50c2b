// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel tracepoints as dprobe events (kformat.h).  The kernel's print
 * fmt is C and is not interpreted: a record is printed as name=value
 * pairs, integers in decimal with the format's signedness.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event/kformat.h"
#include "event/record.h"
#include "lang/layout.h"

int dp_kformat_next(const char **pos, struct dp_kfield *f)
{
	const char *p, *semi, *sp, *br;
	int sign = 0;

	while ((p = strstr(*pos, "field:"))) {
		*pos = p + 6;
		p += 6;
		while (*p == ' ')
			p++;
		semi = strchr(p, ';');
		if (!semi)
			return 0;
		/* the name is the last word of the declaration */
		for (sp = semi; sp > p && sp[-1] != ' '; sp--)
			;
		if (sp == p || (size_t)(sp - 1 - p) >= sizeof(f->type) ||
		    (size_t)(semi - sp) >= sizeof(f->name))
			continue;
		memset(f, 0, sizeof(*f));
		snprintf(f->type, sizeof(f->type), "%.*s", (int)(sp - 1 - p), p);
		snprintf(f->name, sizeof(f->name), "%.*s", (int)(semi - sp), sp);
		br = strchr(f->name, '[');
		if (br) {
			f->count = (unsigned)strtoul(br + 1, NULL, 10);
			f->name[br - f->name] = '\0';
		}
		if (sscanf(semi + 1, " offset:%u; size:%u; signed:%d;",
			   &f->offset, &f->size, &sign) < 2)
			continue;
		f->is_signed = sign > 0;
		*pos = semi + 1;
		return 1;
	}
	return 0;
}

enum tkind { TK_NUM, TK_ARRAY, TK_CHARS, TK_LOC, TK_REL };

struct tfield {
	enum tkind kind;
	unsigned koff, ksize;	/* in the kernel's record */
	unsigned esz, count;	/* arrays */
	unsigned off;		/* in dprobe's */
	/* what the event's dp_field points to (the ktp outlives it) */
	struct dp_type type;
	char name[DP_MAX_EVENT_NAME_LEN];
	char ktype[128];	/* a number's type, as the kernel's format */
};

struct dp_ktp {
	struct tfield *f;
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

static int ktp_push(struct dp_ktp *tp, const struct dp_kfield *kf,
		    const struct tfield *t)
{
	struct tfield *a = realloc(tp->f, (tp->n + 1) * sizeof(*tp->f)), *f;

	if (!a)
		return -ENOMEM;
	tp->f = a;
	f = &tp->f[tp->n++];
	*f = *t;
	/* a number stays where the kernel has it (so a format without
	 * strings is the kernel's own); what follows a string moves up */
	if (t->kind == TK_NUM && t->koff >= tp->fixed)
		tp->fixed = t->koff;
	f->off = tp->fixed;
	snprintf(f->ktype, sizeof(f->ktype), "%s",
		 t->kind == TK_NUM ? kf->type : "");
	snprintf(f->name, sizeof(f->name), "%s", kf->name);
	f->type = (struct dp_type){
		.kind = t->kind >= TK_CHARS ? DP_T_STRING :
			kf->is_signed ? DP_T_S : DP_T_U,
		.size = (uint8_t)(t->kind >= TK_CHARS ? 4 :
				  t->kind == TK_ARRAY ? t->esz : t->ksize),
		.count = (uint16_t)t->count,
	};
	tp->fixed += t->kind >= TK_CHARS ? 4 : t->ksize;
	return 0;
}

static int ktp_parse(const char *format, struct dp_ktp *tp)
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
static int fill_fields(struct dp_event *ev, const struct dp_ktp *tp)
{
	char type[128];

	ev->fields = calloc(tp->n ? tp->n : 1, sizeof(*ev->fields));
	if (!ev->fields)
		return -ENOMEM;
	for (unsigned i = 0; i < tp->n; i++) {
		const struct dp_type *ty = &tp->f[i].type;
		struct dp_field *f = &ev->fields[i];
		bool str = ty->kind == DP_T_STRING;

		if (str)
			snprintf(type, sizeof(type), "__data_loc char[]");
		else if (tp->f[i].ktype[0])
			snprintf(type, sizeof(type), "%s", tp->f[i].ktype);
		else
			snprintf(type, sizeof(type), "%c%u%s",
				 ty->kind == DP_T_S ? 's' : 'u', ty->size * 8,
				 ty->count ? "[]" : "");
		*f = (struct dp_field){
			.name = tp->f[i].name, .type = strdup(type),
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

static uint8_t *conv_room(uint8_t **buf, size_t *cap, size_t need)
{
	uint8_t *b;

	if (need <= *cap)
		return *buf;
	b = realloc(*buf, need);
	if (!b)
		return NULL;
	*buf = b;
	*cap = need;
	return b;
}

const uint8_t *dp_ktp_convert_rec(const struct dp_ktp *tp, uint16_t id,
				  const uint8_t *rec, size_t len,
				  uint8_t **buf, size_t *bcap, size_t *out_len)
{
	size_t dyn = tp->fixed, n, cap = tp->fixed + len + tp->n;
	const uint8_t *s;
	uint8_t *out = conv_room(buf, bcap, cap);

	if (!out || len < DP_TP_HEAD_SIZE)
		return NULL;
	memset(out, 0, tp->fixed);	/* holes too: no stale bytes */
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

struct dp_ktp *dp_ktp_parse(const char *format)
{
	struct dp_ktp *tp = calloc(1, sizeof(*tp));

	if (tp && ktp_parse(format, tp)) {
		dp_ktp_free(tp);
		return NULL;
	}
	return tp;
}

void dp_ktp_free(struct dp_ktp *tp)
{
	if (!tp)
		return;
	free(tp->f);
	free(tp);
}

/* The text after "print fmt: " up to the line's end (malloc'd), or NULL. */
static char *kernel_print_fmt(const char *format)
{
	const char *p = strstr(format, "\nprint fmt: ");

	if (!p)
		return NULL;
	p += 12;
	return strndup(p, strcspn(p, "\n"));
}

int dp_ktp_describe(struct dp_event *ev, const struct dp_ktp *tp,
		    const char *format)
{
	int ret = fill_fields(ev, tp);

	if (!ret && format)
		ev->kprint_fmt = kernel_print_fmt(format);
	return ret;
}
