// SPDX-License-Identifier: GPL-2.0
/*
 * Hist triggers (hist.h).  The table is open addressing over twice the
 * entries it may hold, as the kernel's tracing_map: a key that finds no
 * free entry is dropped and counted.  Nothing here runs in the traced
 * process: the engines hand records to dprobe, which aggregates them.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "event/agg.h"
#include "event/filter.h"
#include "event/hist.h"
#include "event/synth.h"

#define MAX_KEYS	3
#define MAX_VALS	2	/* besides hitcount: TRACING_MAP_VALS_MAX 3 */
#define MAX_SORT	2
#define MAX_VARS	16	/* TRACING_MAP_VARS_MAX */
#define MAX_REFS	16	/* a trigger's references, as many */
#define MAX_ACTIONS	8	/* HIST_ACTIONS_MAX */
#define MAX_PARAMS	64	/* SYNTH_FIELDS_MAX */
#define MAX_SUBEXPR	3
#define BITS_MIN	7
#define BITS_MAX	17
#define BITS_DEFAULT	11
#define KEY_STR_MAX	256	/* a string key's bytes, as MAX_FILTER_STR_VAL */
#define DIV_SHIFT	20	/* HIST_DIV_SHIFT */
#define FIRE_DEPTH	8	/* synthetic events firing synthetic events */
#define STACK_DEPTH	16	/* HIST_STACKTRACE_DEPTH */
#define STACK_SLOT	(1 + STACK_DEPTH)	/* a stack variable: count, frames */

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
	HF_USECS	= 1 << 10,
	HF_TS		= 1 << 11,	/* common_timestamp, or made of one */
	HF_STACK	= 1 << 12,	/* common_stacktrace: the user stack */
};

/* An expression node: what a variable, a value or a key computes. */
enum xop { X_FIELD, X_TS, X_CPU, X_CONST, X_REF, X_STACK,
	   X_PLUS, X_MINUS, X_MULT, X_DIV, X_NEG };

struct hexpr {
	enum xop op;
	const struct dp_field *f;	/* X_FIELD */
	unsigned flags;			/* HF_*: modifiers, HF_TS, HF_USECS */
	uint64_t buckets;
	uint64_t constant;		/* X_CONST; X_DIV: a constant divisor */
	bool const_div;
	uint64_t div_mult;
	unsigned ref;			/* X_REF: in dp_hist.refs[] */
	struct hexpr *a, *b;
	char *name;			/* as the kernel prints it */
	const char *type;		/* for the synthetic fields' checks */
	unsigned size;
	bool is_signed;
};

/* One key or value: an event field and its modifier, or an expression. */
struct hfield {
	char name[DP_MAX_EVENT_NAME_LEN];
	const struct dp_field *f;	/* NULL: hitcount, or @x */
	unsigned flags;
	uint64_t buckets;
	bool string;
	struct hexpr *x;		/* not a plain field: what it computes */
};

/* A variable: NAME=EXPR, set in the entry of the record's key. */
struct hvar {
	char name[DP_MAX_EVENT_NAME_LEN];
	struct hexpr *x;
	bool alias;			/* NAME=$OTHER */
	/* a stack (common_stacktrace, or $ another one): its value is the
	 * address of the entry's stack slot @slot (stack_slot()), where
	 * the frames are copied as the kernel keeps them: their count,
	 * then the frames, 0 after the last */
	bool stack;
	unsigned slot;
};

/* A reference to a variable, of this trigger (self) or another. */
struct href {
	struct dp_hist *h;
	unsigned var;
	bool read_once;
	char *name;			/* "$NAME" or "SYS.EVENT.$NAME" */
};

enum handler { H_ONMATCH, H_ONMAX, H_ONCHANGE };
enum action { A_TRACE, A_SAVE, A_SNAPSHOT };

struct haction {
	enum handler handler;
	enum action action;
	char *sys, *evname;		/* onmatch(SYS.EVENT) */
	char *var_str;			/* onmax(VAR_STR) as written */
	unsigned track_ref;		/* the tracked variable's reference */
	unsigned track;			/* its slot in the entry (max/changed) */
	char *name;			/* the action: trace, save, or SYNTH */
	bool trace_kw;
	char *synth_name;		/* trace(SYNTH, ...) */
	char *params[MAX_PARAMS];
	unsigned nparams;
	struct hexpr *px[MAX_PARAMS];	/* trace: each param's value */
	const struct dp_event *synth;
};

/* A saved field (save()): from the record, when the tracked value moves. */
struct hsave {
	const struct dp_field *f;
	bool string;
};

struct entry {
	bool used;
	uint64_t num[MAX_KEYS];
	char *str[MAX_KEYS];		/* string keys; resolved symbols */
	char comm[DP_TASK_COMM_LEN];	/* .execname: the first hit's */
	uint64_t sum[1 + MAX_VALS];	/* [0]: hitcount */
	/* variables, tracked values and saved fields: t->next_ext u64s
	 * then the saved strings, made when the entry is */
	uint64_t *ext;
};

/* The table, shared by the triggers of one name=. */
struct htable {
	unsigned refs;
	unsigned bits;
	struct entry *slots;
	size_t nslots, used;
	uint64_t hits, drops;
	/* ext layout: varset word, vars, tracks, saves; then save strings,
	 * then the stack variables' slots (STACK_SLOT words each) */
	unsigned nvars, ntrack, nsave, nstack;
};

struct dp_hist {
	const struct dp_event *ev;
	const struct dp_hist_env *env;
	char *text;			/* as written */
	char *name;			/* "name=NAME" */
	struct hfield keys[MAX_KEYS];
	unsigned nkeys;
	struct hfield vals[1 + MAX_VALS];	/* [0]: hitcount */
	unsigned nvals;
	struct hvar vars[MAX_VARS];
	unsigned nvars;
	struct href refs[MAX_REFS];
	unsigned nrefs;
	struct haction acts[MAX_ACTIONS];
	unsigned nacts;
	struct hsave saves[MAX_PARAMS];
	unsigned nsaves;
	struct sort_key {
		bool is_key;
		unsigned idx;		/* in keys[] or vals[] (0: hitcount) */
		bool descending;
	} sort[MAX_SORT];
	unsigned nsort;
	unsigned bits;
	bool nohitcount, paused, ts_usecs, timestamps, remove;
	enum dp_hist_cmd cmd;
	char *filter_text;
	struct dp_filter *filter;
	struct htable *t;
	/* snapshot(): the value and the key of the last snapshot taken */
	bool snap_taken;
	uint64_t snap_val;
	char *snap_key;
	/* pending var definitions while parsing: NAME, EXPR */
	char *defs[MAX_VARS][2];
	unsigned ndefs;
};

/* ---- parsing -------------------------------------------------------------- */

struct parse {
	const char *text;		/* the whole command, for positions */
	struct dp_hist_error *err;
	struct dp_hist *h;
};

static int fail(struct parse *ps, const char *msg, const char *at)
{
	const char *p = at && *at ? strstr(ps->text, at) : NULL;
	struct dp_hist_error *e = ps->err;

	/* the kernel logs each error on the way: the earlier ones too */
	if (e->msg && e->nprev < 2) {
		e->prev_msg[e->nprev] = e->msg;
		e->prev_pos[e->nprev++] = e->pos;
	}
	ps->err->msg = msg;
	ps->err->pos = p ? (unsigned)(p - ps->text) : 0;
	return -EINVAL;
}

static bool parse_ulong(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return !*end && !errno;
}

static struct hexpr *xnew(enum xop op)
{
	struct hexpr *x = calloc(1, sizeof(*x));

	if (x)
		x->op = op;
	return x;
}

static void xfree(struct hexpr *x)
{
	if (!x)
		return;
	xfree(x->a);
	xfree(x->b);
	free(x->name);
	free(x);
}

/* The modifier after a field's name; @key: a key, @var: a variable. */
static int parse_modifier(struct parse *ps, const char *field, char *mod,
			  bool key, bool var, unsigned *flags,
			  uint64_t *buckets)
{
	uint64_t n;

	if (!strcmp(mod, "hex"))
		*flags |= HF_HEX;
	else if (!strcmp(mod, "sym"))
		*flags |= HF_SYM;
	else if (!strcmp(mod, "symXoffset") || !strcmp(mod, "sym-offset"))
		*flags |= HF_SYM_OFFSET;
	else if (!strcmp(mod, "execname") && !strcmp(field, "common_pid"))
		*flags |= HF_EXECNAME;
	else if (!strcmp(mod, "syscall"))
		*flags |= HF_SYSCALL;
	else if (!strcmp(mod, "log2"))
		*flags |= HF_LOG2;
	else if (!strcmp(mod, "usecs"))
		*flags |= HF_USECS;
	else if (!strncmp(mod, "bucket", 6)) {
		/* the kernel's caret: after "bucket[s][=]" */
		const char *v = mod + 6 + (mod[6] == 's');

		if (*v != '=' || !parse_ulong(v + 1, &n) || !n)
			return fail(ps, "Invalid field modifier",
				    v + (*v == '='));
		*flags |= HF_BUCKET;
		*buckets = n;
	} else if (!strncmp(mod, "percent", 7) && !key && !var)
		*flags |= HF_PERCENT;
	else if (!strncmp(mod, "graph", 5) && !key && !var)
		*flags |= HF_GRAPH;
	else
		return fail(ps, "Invalid field modifier", mod);
	return 0;
}

static bool field_is_string(const struct dp_field *f)
{
	return f->fclass == DP_FC_STRING ||
	       (f->fclass == DP_FC_ARRAY && f->elem_size == 1 &&
		strstr(f->type, "char"));
}

/* common_stacktrace, or its old name stacktrace (or STACKTRACE) where
 * the event has no field of that name (parse_field()). */
static bool is_stack_name(const struct dp_event *ev, const char *name)
{
	if (!strcmp(name, "common_stacktrace"))
		return true;
	return (!strcmp(name, "stacktrace") || !strcmp(name, "STACKTRACE")) &&
	       !dp_event_field(ev, name);
}

/* A field with its modifier, as the kernel's parse_field(): an event
 * field, common_timestamp, common_cpu, common_stacktrace in a variable
 * (hitcount is the caller's). */
static struct hexpr *parse_field_x(struct parse *ps, const char *spec,
				   bool key, bool var, int *ret)
{
	char *buf = strdup(spec), *mod;
	struct hexpr *x = NULL;
	unsigned flags = 0;
	uint64_t buckets = 0;

	*ret = -ENOMEM;
	if (!buf)
		return NULL;
	mod = strchr(buf, '.');
	if (mod)
		*mod++ = '\0';
	if (mod) {
		*ret = parse_modifier(ps, buf, mod, key, var, &flags,
				      &buckets);
		if (*ret) {
			free(buf);
			return NULL;
		}
	}
	*ret = -ENOMEM;
	if (var && !mod && is_stack_name(ps->h->ev, buf)) {
		/* the record's user stack, as a variable's value */
		if (!(x = xnew(X_STACK)))
			goto out;
		flags |= HF_STACK;
		x->type = "unsigned long[]";
		x->size = STACK_DEPTH * 8;
		free(buf);
		buf = strdup("common_stacktrace");
		if (!buf)
			goto out;
	} else if (!strcmp(buf, "common_timestamp")) {
		if (!(x = xnew(X_TS)))
			goto out;
		flags |= HF_TS;
		ps->h->timestamps = true;
		if (flags & HF_USECS)
			ps->h->ts_usecs = true;
		x->type = "u64";
		x->size = 8;
	} else if (!strcmp(buf, "common_cpu") ||
		   ((!strcmp(buf, "cpu") || !strcmp(buf, "CPU")) &&
		    !dp_event_field(ps->h->ev, buf))) {
		/* "cpu" and "CPU" too, where the event has no such field */
		if (!(x = xnew(X_CPU)))
			goto out;
		x->type = "unsigned int";
		x->size = 4;
	} else {
		const struct dp_field *f = dp_event_field(ps->h->ev, buf);

		if (!f || !f->size ||
		    (!field_is_string(f) && f->fclass != DP_FC_NUM)) {
			*ret = fail(ps, "Couldn't find field", buf);
			goto out;
		}
		if (!(x = xnew(X_FIELD)))
			goto out;
		x->f = f;
		x->type = f->type;
		x->size = f->size;
		x->is_signed = f->is_signed;
	}
	x->flags = flags;
	x->buckets = buckets;
	x->name = strdup(buf);
	*ret = x->name ? 0 : -ENOMEM;
out:
	if (*ret) {
		xfree(x);
		x = NULL;
	}
	free(buf);
	return x;
}

/* ---- variables and references --------------------------------------------- */

static struct dp_hist *env_each(const struct dp_hist_env *env, size_t i)
{
	return env && env->each ? env->each(env->priv, i) : NULL;
}

static int find_var_idx(const struct dp_hist *h, const char *name)
{
	for (unsigned i = 0; i < h->nvars; i++)
		if (!strcmp(h->vars[i].name, name))
			return (int)i;
	return -1;
}

/* A variable of a trigger on @ev (find_file_var()). */
static struct dp_hist *find_on_event(const struct dp_hist *self,
				     const struct dp_event *ev,
				     const char *name, int *var)
{
	struct dp_hist *o;

	for (size_t i = 0; (o = env_each(self->env, i)); i++)
		if (o != self && o->ev == ev && (*var = find_var_idx(o, name)) >= 0)
			return o;
	return NULL;
}

static const struct dp_event *find_event(const struct dp_hist *h,
					 const char *sys, const char *name)
{
	const struct dp_event *x = h->env ? h->env->extra : NULL;

	if (x && !strcmp(x->group, sys) && !strcmp(x->name, name))
		return x;
	if (!h->env || !h->env->reg)
		return NULL;
	return dp_registry_find(h->env->reg, sys, name);
}

/*
 * A variable by name, as the kernel's find_event_var(): with SYS.EVENT
 * on that event's triggers; without, on the onmatch() events', else on
 * any trigger, where it must be the only one.  NULL and @ps's error when
 * it is not unique.
 */
static struct dp_hist *find_var(struct parse *ps, const char *sys,
				const char *evn, const char *name, int *var,
				bool *not_unique)
{
	struct dp_hist *h = ps->h, *o, *found = NULL;
	const struct dp_event *ev;

	*not_unique = false;
	if (sys && evn) {
		ev = find_event(h, sys, evn);
		return ev ? find_on_event(h, ev, name, var) : NULL;
	}
	for (unsigned i = 0; i < h->nacts; i++) {
		int v;

		if (h->acts[i].handler != H_ONMATCH)
			continue;
		ev = find_event(h, h->acts[i].sys, h->acts[i].evname);
		o = ev ? find_on_event(h, ev, name, &v) : NULL;
		if (o && found) {
			*not_unique = true;
			return NULL;
		}
		if (o) {
			found = o;
			*var = v;
		}
	}
	if (found)
		return found;
	for (size_t i = 0; (o = env_each(h->env, i)); i++) {
		int v = find_var_idx(o, name);

		if (o == h || v < 0)
			continue;
		if (found && found->ev != o->ev) {
			*not_unique = true;
			return NULL;
		}
		if (!found) {
			found = o;
			*var = v;
		}
	}
	return found;
}

/* A reference to variable @var of @o, made once (create_var_ref()). */
static int add_ref(struct dp_hist *h, struct dp_hist *o, unsigned var,
		   const char *sys, const char *evn)
{
	char *name;

	for (unsigned i = 0; i < h->nrefs; i++)
		if (h->refs[i].h == o && h->refs[i].var == var)
			return (int)i;
	if (h->nrefs == MAX_REFS)
		return -1;
	name = NULL;
	if ((sys ? asprintf(&name, "%s.%s.$%s", sys, evn, o->vars[var].name) :
	     asprintf(&name, "$%s", o->vars[var].name)) < 0)
		return -1;
	h->refs[h->nrefs].name = name;
	h->refs[h->nrefs].h = o;
	h->refs[h->nrefs].var = var;
	return (int)h->nrefs++;
}

static struct hexpr *ref_x(struct dp_hist *h, int ref)
{
	struct hexpr *x = xnew(X_REF), *vx;
	const struct href *r = &h->refs[ref];

	if (!x)
		return NULL;
	vx = r->h == h && !h->vars[r->var].x ? NULL : r->h->vars[r->var].x;
	x->ref = (unsigned)ref;
	x->name = strdup(r->name);
	if (vx) {
		x->flags = vx->flags & (HF_TS | HF_USECS | HF_STACK);
		x->type = vx->type;
		x->size = vx->size;
		x->is_signed = vx->is_signed;
	}
	if (!x->name) {
		xfree(x);
		return NULL;
	}
	return x;
}

/* "$NAME" of this trigger's own definitions that is a plain field: that
 * field (local_field_var_ref()). */
static const char *local_field(const struct dp_hist *h, const char *sys,
			       const char *evn, const char *var)
{
	if (sys && evn && (strcmp(sys, h->ev->group) ||
			   strcmp(evn, h->ev->name)))
		return NULL;
	if (!!sys != !!evn || var[0] != '$' || strlen(var) < 2)
		return NULL;
	for (unsigned i = 0; i < h->ndefs; i++) {
		const char *e = h->defs[i][1];

		if (strcmp(h->defs[i][0], var + 1))
			continue;
		if (strpbrk(e, "+-*/") || (e[0] == '$' && strlen(e) >= 2))
			continue;
		return e;
	}
	return NULL;
}

/* ---- expressions ------------------------------------------------------------ */

static const char *flag_name(unsigned flags)
{
	static const struct { unsigned flag; const char *name; } names[] = {
		{ HF_HEX, "hex" }, { HF_SYM, "sym" },
		{ HF_SYM_OFFSET, "sym-offset" }, { HF_EXECNAME, "execname" },
		{ HF_SYSCALL, "syscall" }, { HF_LOG2, "log2" },
		{ HF_BUCKET, "buckets" }, { HF_USECS, "usecs" },
		{ HF_PERCENT, "percent" }, { HF_GRAPH, "graph" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (flags & names[i].flag)
			return names[i].name;
	return NULL;
}

static bool is_expr(const struct hexpr *x)
{
	return x && x->op >= X_PLUS;
}

/* An operand as expr_field_str() writes it. */
static void operand_str(const struct hexpr *x, FILE *out)
{
	const char *flags = x->op == X_REF ? NULL : flag_name(x->flags);

	if (x->op == X_CONST)
		fprintf(out, "%llu", (unsigned long long)x->constant);
	else if (x->op == X_TS)
		fputs("common_timestamp", out);
	else if (x->op == X_CPU)
		fputs("common_cpu", out);
	else
		fputs(x->name ? x->name : "", out);
	if (flags)
		fprintf(out, ".%s", flags);
	if (x->op != X_REF && (x->flags & HF_BUCKET))
		fprintf(out, "=%llu", (unsigned long long)x->buckets);
}

/* expr_str(): "A-B", "-(A)"; for a constant folded, the number. */
static char *expr_name(const struct hexpr *x)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);

	if (!f)
		return NULL;
	if (x->op == X_NEG) {
		fputs("-(", f);
		if (x->a->a) {
			operand_str(x->a->a, f);
			fputc("+-*/"[x->a->op - X_PLUS], f);
			operand_str(x->a->b, f);
		} else {
			operand_str(x->a, f);
		}
		fputc(')', f);
	} else if (x->a) {
		operand_str(x->a, f);
		fputc("+-*/"[x->op - X_PLUS], f);
		operand_str(x->b, f);
	} else {
		operand_str(x, f);
	}
	if (fclose(f)) {
		free(s);
		return NULL;
	}
	return s;
}

static struct hexpr *parse_expr(struct parse *ps, char *str, bool key,
				bool var, unsigned *nsub, int *ret);

/* A constant, a variable reference, or a field (parse_atom()). */
static struct hexpr *parse_atom(struct parse *ps, char *str, bool key,
				bool var, int *ret)
{
	char *sys = NULL, *evn = NULL, *name = str, *d;
	struct hexpr *x;
	const char *local;

	if (isdigit((unsigned char)str[0])) {
		uint64_t c;

		if (!parse_ulong(str, &c)) {
			*ret = fail(ps, "Expecting numeric literal", str);
			return NULL;
		}
		x = xnew(X_CONST);
		*ret = -ENOMEM;
		if (!x)
			return NULL;
		x->constant = c;
		x->type = "u64";
		x->size = 8;
		if (!(x->name = expr_name(x))) {
			xfree(x);
			return NULL;
		}
		*ret = 0;
		return x;
	}
	d = strchr(str, '.');
	if (d && strchr(d + 1, '.')) {
		sys = str;
		*d = '\0';
		evn = d + 1;
		d = strchr(evn, '.');
		*d = '\0';
		name = d + 1;
	}
	local = local_field(ps->h, sys, evn, name);
	if (!local && name[0] == '$' && name[1]) {
		bool not_unique;
		int v = -1, r;
		struct dp_hist *o = find_var(ps, sys, evn, name + 1, &v,
					     &not_unique);

		if (not_unique)
			fail(ps, "Variable name not unique, need to use fully "
			     "qualified name (subsys.event.var) for variable",
			     name + 1);
		if (o && (r = add_ref(ps->h, o, (unsigned)v, sys, evn)) >= 0) {
			x = ref_x(ps->h, r);
			*ret = x ? 0 : -ENOMEM;
			return x;
		}
		/* then taken for a field, which it is not either */
		fail(ps, "Couldn't find variable", name + 1);
	}
	/* SYS.EVENT.FIELD: the field, as the kernel takes it */
	return parse_field_x(ps, local ? local : name, key, var, ret);
}

/* -(EXPR) (parse_unary()). */
static struct hexpr *parse_unary(struct parse *ps, char *str, bool key,
				 bool var, unsigned *nsub, int *ret)
{
	struct hexpr *x, *a;
	char *close;

	if (++*nsub > MAX_SUBEXPR) {
		*ret = fail(ps, "Too many subexpressions (3 max)", str);
		return NULL;
	}
	str++;
	*ret = -EINVAL;
	if (!strchr(str, '('))
		return NULL;
	str++;
	close = strrchr(str, ')');
	if (!close)
		return NULL;
	if (close[1]) {
		*ret = fail(ps, "Unary minus not supported in sub-expressions",
			    str);
		return NULL;
	}
	*close = '\0';
	a = parse_expr(ps, str, key, var, nsub, ret);
	if (!a)
		return NULL;
	if ((a->op == X_FIELD && field_is_string(a->f)) ||
	    (a->flags & HF_STACK)) {
		*ret = fail(ps, "String type can not be an operand in "
			    "expression", str);
		xfree(a);
		return NULL;
	}
	*ret = -ENOMEM;
	if (!(x = xnew(X_NEG))) {
		xfree(a);
		return NULL;
	}
	x->a = a;
	x->flags = a->flags & (HF_TS | HF_USECS);
	x->type = a->type;
	x->size = a->size;
	x->is_signed = a->is_signed;
	if (!(x->name = expr_name(x))) {
		xfree(x);
		return NULL;
	}
	*ret = 0;
	return x;
}

/* The root operator of @str: the last + or - (a leading -: unary),
 * else the last * or / (contains_operator()). */
static enum xop root_op(char *str, char **sep)
{
	char *minus = strrchr(str, '-'), *plus = strrchr(str, '+');
	char *div, *mult;

	*sep = NULL;
	if (minus == str) {
		*sep = minus;
		return X_NEG;
	}
	if (plus || minus) {
		*sep = plus > minus ? plus : minus;
		return plus > minus ? X_PLUS : X_MINUS;
	}
	div = strrchr(str, '/');
	mult = strrchr(str, '*');
	if (div || mult) {
		*sep = mult > div ? mult : div;
		return mult > div ? X_MULT : X_DIV;
	}
	return X_FIELD;
}

static uint64_t xcalc(enum xop op, uint64_t a, uint64_t b)
{
	switch (op) {
	case X_PLUS:
		return a + b;
	case X_MINUS:
		return a - b;
	case X_MULT:
		return a * b;
	case X_DIV:
		if (!b)
			return (uint64_t)-1;
		if (!(b & (b - 1)))
			return a >> __builtin_ctzll(b);
		return a / b;
	default:
		return 0;
	}
}

static struct hexpr *parse_expr(struct parse *ps, char *str, bool key,
				bool var, unsigned *nsub, int *ret)
{
	struct hexpr *x, *a, *b;
	enum xop op;
	char *sep, *rhs;

	if (*nsub > MAX_SUBEXPR) {
		*ret = fail(ps, "Too many subexpressions (3 max)", str);
		return NULL;
	}
	op = root_op(str, &sep);
	if (op == X_FIELD)
		return parse_atom(ps, str, key, var, ret);
	if (op == X_NEG)
		return parse_unary(ps, str, key, var, nsub, ret);
	++*nsub;
	*sep = '\0';
	rhs = sep + 1;
	*ret = -EINVAL;
	if (!*str || !*rhs)
		return NULL;
	a = parse_expr(ps, str, false, false, nsub, ret);
	if (!a)
		return NULL;
	if ((a->op == X_FIELD && field_is_string(a->f)) ||
	    (a->flags & HF_STACK)) {
		*ret = fail(ps, "String type can not be an operand in "
			    "expression", str);
		xfree(a);
		return NULL;
	}
	b = parse_expr(ps, rhs, false, false, nsub, ret);
	if (!b) {
		xfree(a);
		return NULL;
	}
	if ((b->op == X_FIELD && field_is_string(b->f)) ||
	    (b->flags & HF_STACK)) {
		*ret = fail(ps, "String type can not be an operand in "
			    "expression", rhs);
		goto free_ab;
	}
	/* a variable's units are those of what it was set to */
	if ((a->flags & HF_USECS) != (b->flags & HF_USECS)) {
		*ret = fail(ps, "Timestamp units in expression don't match",
			    NULL);
		goto free_ab;
	}
	if (a->op == X_REF)
		ps->h->refs[a->ref].read_once = true;
	if (b->op == X_REF)
		ps->h->refs[b->ref].read_once = true;
	*ret = -ENOMEM;
	if (!(x = xnew(op)))
		goto free_ab;
	x->flags = a->flags & (HF_TS | HF_USECS);
	x->a = a;
	x->b = b;
	if (op == X_DIV && b->op == X_CONST) {
		if (!b->constant) {
			*ret = fail(ps, "Division by zero", rhs);
			xfree(x);
			return NULL;
		}
		x->const_div = true;
		x->constant = b->constant;
		if ((b->constant & (b->constant - 1)) &&
		    b->constant <= (1u << DIV_SHIFT))
			x->div_mult = (1ull << DIV_SHIFT) / b->constant;
	}
	if (a->op == X_CONST && b->op == X_CONST) {
		x->constant = xcalc(op, a->constant, b->constant);
		x->op = X_CONST;
		x->a = x->b = NULL;
		xfree(a);
		xfree(b);
		x->type = "u64";
		x->size = 8;
	} else {
		x->type = a->type;
		x->size = a->size;
		x->is_signed = a->is_signed;
	}
	if (!(x->name = expr_name(x))) {
		xfree(x);
		return NULL;
	}
	*ret = 0;
	return x;
free_ab:
	xfree(a);
	xfree(b);
	return NULL;
}

/* ilog2(roundup_pow_of_two(v)) as the kernel computes it on x86-64
 * (see hist_field_log2()). */
static unsigned ilog2_roundup(uint64_t v)
{
	unsigned b = 0;

	if (v > 1ull << 63)
		return 0;
	while ((1ull << b) < v)
		b++;
	return b;
}

static uint64_t field_num(const struct dp_field *f, const uint8_t *rec)
{
	uint64_t v = dp_rec_load(rec + f->offset, f->size);

	if (f->is_signed && f->size < 8 && (v >> (f->size * 8 - 1)) & 1)
		v |= ~0ull << (f->size * 8);
	return v;
}

/* What @x computes for a record, with @refv the references' values. */
static uint64_t xeval(const struct dp_hist *h, const struct hexpr *x,
		      const uint8_t *rec, const struct dp_rec_meta *meta,
		      const uint64_t *refv)
{
	uint64_t v = 0, a, b;

	switch (x->op) {
	case X_FIELD:
		v = field_num(x->f, rec);
		break;
	case X_TS:
		v = meta ? meta->ts_ns : 0;
		if (h->ts_usecs)
			v = (v + 500) / 1000;
		break;
	case X_CPU:
		v = meta ? (uint64_t)(unsigned)meta->cpu : 0;
		break;
	case X_CONST:
		return x->constant;
	case X_STACK:
		return 0;	/* no number: set_stack_var() copies it */
	case X_REF:
		return refv ? refv[x->ref] : 0;
	case X_NEG:
		return -xeval(h, x->a, rec, meta, refv);
	default:
		a = xeval(h, x->a, rec, meta, refv);
		if (x->op == X_DIV && x->const_div) {
			b = x->constant;
			if (x->div_mult && a < (1ull << DIV_SHIFT))
				return (a * x->div_mult +
					((1ull << DIV_SHIFT) - 1)) >> DIV_SHIFT;
			return xcalc(X_DIV, a, b);
		}
		b = xeval(h, x->b, rec, meta, refv);
		return xcalc(x->op, a, b);
	}
	if (x->flags & HF_LOG2)
		return ilog2_roundup(v);
	if (x->flags & HF_BUCKET)
		return v / x->buckets * x->buckets;
	return v;
}

/* ---- keys, values, variables --------------------------------------------- */

static bool xhas_ref(const struct hexpr *x)
{
	return x && (x->op == X_REF || xhas_ref(x->a) || xhas_ref(x->b));
}

/* A key or a value from @spec into @hf (create_key_field(),
 * create_val_field()). */
static int parse_hfield(struct parse *ps, const char *spec, bool key,
			struct hfield *hf)
{
	unsigned nsub = 0;
	char *buf;
	struct hexpr *x;
	int ret;

	memset(hf, 0, sizeof(*hf));
	if (key && (!strcmp(spec, "common_stacktrace") ||
		    !strcmp(spec, "stacktrace"))) {
		/* the record's user stack, keyed as a string of its return
		 * addresses (stack_key()) */
		hf->flags = HF_STACK;
		hf->string = true;
		strcpy(hf->name, "common_stacktrace");
		return 0;
	}
	if (!strncmp(spec, "hitcount", 8) && (!spec[8] || spec[8] == '.')) {
		/* hitcount again, with a modifier (hitcount.percent) */
		hf->flags = HF_HITCOUNT;
		strcpy(hf->name, "hitcount");
		if (!spec[8])
			return 0;
		if (!(buf = strdup(spec + 9)))
			return -ENOMEM;
		ret = parse_modifier(ps, "hitcount", buf, key, false,
				     &hf->flags, &hf->buckets);
		free(buf);
		return ret;
	}
	if (!(buf = strdup(spec)))
		return -ENOMEM;
	x = parse_expr(ps, buf, key, false, &nsub, &ret);
	free(buf);
	if (!x)
		return ret;
	if (key && xhas_ref(x)) {
		/* a key made of a variable */
		xfree(x);
		return fail(ps, "Using variable references in keys not "
			    "supported", spec);
	}
	if (!key && (x->flags & (HF_BUCKET | HF_LOG2 | HF_SYM | HF_SYM_OFFSET |
				 HF_SYSCALL | HF_STACK))) {
		xfree(x);
		return fail(ps, "Invalid field modifier", spec);
	}
	hf->flags = x->flags & ~(HF_TS);
	hf->buckets = x->buckets;
	snprintf(hf->name, sizeof(hf->name), "%s",
		 x->op == X_REF ? x->name + (x->name[0] == '$') :
		 x->op == X_TS ? "common_timestamp" :
		 x->op == X_CPU ? "common_cpu" : x->name);
	if (x->op == X_FIELD) {
		hf->f = x->f;
		hf->string = field_is_string(x->f);
		/* a string is neither summed nor bucketed */
		if (hf->string && (!key || (hf->flags & ~HF_HEX))) {
			xfree(x);
			return fail(ps, "Invalid field modifier", spec);
		}
		xfree(x);
		return 0;
	}
	hf->x = x;
	return 0;
}

/* A comma list into @out (at most @max), each a key or a value. */
static int parse_list(struct parse *ps, const char *list, bool key,
		      struct hfield *out, unsigned max, unsigned *n)
{
	char *copy = strdup(list), *save = NULL;
	bool hitcount = false;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
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
		ret = parse_hfield(ps, t, key, &hf);
		if (!ret && key && (hf.flags & HF_HITCOUNT))
			ret = fail(ps, "Couldn't find field", t);
		if (!ret)
			out[(*n)++] = hf;
	}
	free(copy);
	return ret;
}

/* NAME=EXPR,... of every assignment (parse_var_defs()). */
static int add_defs(struct parse *ps, char *s)
{
	struct dp_hist *h = ps->h;

	for (char *t = strsep(&s, ","); t; t = s ? strsep(&s, ",") : NULL) {
		char *eq = strchr(t, '=');

		if (!eq)
			return fail(ps, "Malformed assignment", t);
		if (h->ndefs == MAX_VARS)
			return fail(ps, "Too many variables defined", t);
		*eq = '\0';
		h->defs[h->ndefs][0] = strdup(t);
		h->defs[h->ndefs][1] = strdup(eq + 1);
		*eq = '=';
		if (!h->defs[h->ndefs][0] || !h->defs[h->ndefs][1]) {
			free(h->defs[h->ndefs][0]);
			free(h->defs[h->ndefs][1]);
			return -ENOMEM;
		}
		h->ndefs++;
	}
	return 0;
}

/* Another trigger of the env with variable @name on the same event. */
static bool var_defined(const struct dp_hist *h, const char *name)
{
	struct dp_hist *o;

	if (find_var_idx(h, name) >= 0)
		return true;
	for (size_t i = 0; (o = env_each(h->env, i)); i++)
		if (o != h && o->ev == h->ev && find_var_idx(o, name) >= 0)
			return true;
	return false;
}

static int make_vars(struct parse *ps)
{
	struct dp_hist *h = ps->h;

	for (unsigned i = 0; i < h->ndefs; i++) {
		const char *name = h->defs[i][0], *e = h->defs[i][1];
		struct hvar *v = &h->vars[h->nvars];
		unsigned nsub = 0;
		char *buf;
		int ret;

		if (var_defined(h, name) && !h->remove)
			return fail(ps, "Variable already defined", name);
		if (strlen(name) >= sizeof(v->name))
			return fail(ps, "Malformed assignment", name);
		if (!(buf = strdup(e)))
			return -ENOMEM;
		memset(v, 0, sizeof(*v));
		snprintf(v->name, sizeof(v->name), "%s", name);
		v->x = parse_expr(ps, buf, false, true, &nsub, &ret);
		free(buf);
		if (!v->x)
			return ret;
		v->alias = v->x->op == X_REF;
		v->stack = (v->x->flags & HF_STACK) != 0;
		for (unsigned k = 0; v->stack && k < h->nvars; k++)
			v->slot += h->vars[k].stack;
		if (v->x->op == X_FIELD && field_is_string(v->x->f))
			/* string variables are not here yet */
			ret = fail(ps, "Not supported by dprobe yet (string "
				   "variables)", e);
		else if (v->x->flags & (HF_GRAPH | HF_PERCENT | HF_BUCKET |
					HF_LOG2))
			ret = fail(ps, "Invalid field modifier", e);
		if (ret) {
			xfree(v->x);
			v->x = NULL;
			return ret;
		}
		h->nvars++;
	}
	return 0;
}

/* ---- sort keys ------------------------------------------------------------- */

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

/* "F[.MOD],F[.MOD]" (create_sort_keys()): split as the kernel splits,
 * so that an empty field ("a,") and a third one are refused, in its
 * order. */
static int parse_sort(struct parse *ps, struct dp_hist *h, const char *list)
{
	char *copy = strdup(list), *rest = copy;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	h->nsort = 0;
	while (!ret && h->nsort < MAX_SORT) {
		char *t = strsep(&rest, ","), *mod;
		struct sort_key sk;

		if (!t)
			break;
		if (!*t) {
			ret = fail(ps, "Empty sort field", "sort=");
			break;
		}
		if (h->nsort == MAX_SORT - 1 && rest) {
			ret = fail(ps, "Too many sort fields (Max = 2)", "sort=");
			break;
		}
		mod = strchr(t, '.');
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

/* ---- actions ---------------------------------------------------------------- */

/* "P1,P2,..." (parse_action_params()): the first one the synthetic event's
 * name when the action is trace(). */
static int parse_params(struct parse *ps, struct haction *a, char *params)
{
	bool first = true;

	while (params) {
		char *p = strsep(&params, ","), *e;

		if (a->nparams >= MAX_PARAMS)
			return fail(ps, "Too many action params", NULL);
		p += strspn(p, " \t");
		e = p + strlen(p);
		while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
			*--e = '\0';
		if (strlen(p) < 2)
			return fail(ps, "Invalid action param", p);
		if (first && a->trace_kw) {
			if (!(a->synth_name = strdup(p)))
				return -ENOMEM;
			first = false;
			continue;
		}
		first = false;
		if (!(a->params[a->nparams] = strdup(p)))
			return -ENOMEM;
		a->nparams++;
	}
	return 0;
}

/* ".ACTION(PARAMS)" after the handler (action_parse()). */
static int parse_action_part(struct parse *ps, struct haction *a, char *str)
{
	char *name, *params;
	int ret;

	strsep(&str, ".");
	if (!str)
		return fail(ps, "No action found", NULL);
	name = strsep(&str, "(");
	if (!name || !str)
		return fail(ps, "No action found", NULL);
	if (!strncmp(name, "save", 4)) {
		params = strsep(&str, ")");
		if ((ret = parse_params(ps, a, params)))
			return ret;
		if (a->handler == H_ONMATCH)
			return fail(ps, "Handler doesn't support action", name);
		a->action = A_SAVE;
	} else if (!strncmp(name, "snapshot", 8)) {
		params = strsep(&str, ")");
		if (!str)
			return fail(ps, "No closing paren found", params);
		if (a->handler == H_ONMATCH)
			return fail(ps, "Handler doesn't support action", name);
		a->action = A_SNAPSHOT;
	} else {
		params = strsep(&str, ")");
		a->trace_kw = !strncmp(name, "trace", 5);
		if (params && (ret = parse_params(ps, a, params)))
			return ret;
		a->action = A_TRACE;
	}
	return (a->name = strdup(name)) ? 0 : -ENOMEM;
}

static int parse_one_action(struct parse *ps, char *str)
{
	struct dp_hist *h = ps->h;
	struct haction *a = &h->acts[h->nacts];
	char *ev, *sys;

	memset(a, 0, sizeof(*a));
	h->nacts++;		/* freed with the trigger, whatever happens */
	if (!strncmp(str, "onmatch(", 8)) {
		a->handler = H_ONMATCH;
		str += 8;
		ev = strsep(&str, ")");
		if (!ev || !str)
			return fail(ps, "No closing paren found", ev);
		sys = strsep(&ev, ".");
		if (!ev)
			return fail(ps, "Missing subsystem", sys);
		if (!find_event(h, sys, ev))
			return fail(ps, "Invalid subsystem or event name", ev);
		if (!(a->sys = strdup(sys)) || !(a->evname = strdup(ev)))
			return -ENOMEM;
	} else {
		bool max = !strncmp(str, "onmax(", 6);

		a->handler = max ? H_ONMAX : H_ONCHANGE;
		str += max ? 6 : 9;
		ev = strsep(&str, ")");
		if (!ev || !str)
			return -EINVAL;
		if (!(a->var_str = strdup(ev)))
			return -ENOMEM;
	}
	return parse_action_part(ps, a, str);
}

/* Whether a value of type @x suits synthetic field @sf (check_synth_field()). */
static bool synth_field_ok(const struct dp_synth_field *sf,
			   const struct hexpr *x)
{
	bool str = x->op == X_FIELD && field_is_string(x->f);

	/* a dynamic string takes any string (check_synth_field()) */
	if (str && strstr(x->type, "char[") && sf->is_string &&
	    sf->is_dynamic)
		return true;
	/* a stack field takes a stack, and a stack goes nowhere else */
	if (sf->is_stack || (x->flags & HF_STACK))
		return sf->is_stack && (x->flags & HF_STACK);
	/* strings where numbers go: not these */
	if (str != sf->is_string)
		return false;
	if (x->type && !strcmp(x->type, sf->type))
		return true;
	return sf->size == x->size &&
	       (sf->is_string || sf->is_signed == x->is_signed);
}

/* trace(SYNTH, P...) / SYNTH(P...): the event and each param's value
 * (trace_action_create()). */
static int create_trace(struct parse *ps, struct haction *a)
{
	struct dp_hist *h = ps->h;
	const char *sname = a->trace_kw ? a->synth_name : a->name;
	const struct dp_event *se;
	unsigned pos = 0;

	se = sname && h->env && h->env->reg ?
	     dp_registry_find(h->env->reg, DP_SYNTH_GROUP, sname) : NULL;
	if (!se || !se->synth)
		return fail(ps, "Couldn't find synthetic event", sname);
	for (unsigned i = 0; i < a->nparams; i++) {
		char *p = strdup(a->params[i]), *sys = NULL, *evn = NULL;
		char *name = p, *d;
		struct hexpr *x = NULL;
		int ret = 0;

		if (!p)
			return -ENOMEM;
		if ((d = strchr(p, '.'))) {
			sys = p;
			*d = '\0';
			evn = d + 1;
			if (!(d = strchr(evn, '.'))) {
				free(p);
				return -EINVAL;
			}
			*d = '\0';
			name = d + 1;
		}
		if (name[0] == '$') {
			int v = find_var_idx(h, name + 1), r = -1;
			bool not_unique = false;
			struct dp_hist *o = h;

			if (sys && (strcmp(sys, h->ev->group) ||
				    strcmp(evn, h->ev->name)))
				v = -1;
			if (v < 0) {
				const char *s2 = sys, *e2 = evn;

				if (!sys && a->handler == H_ONMATCH) {
					s2 = a->sys;
					e2 = a->evname;
				}
				o = find_var(ps, s2, e2, name + 1, &v,
					     &not_unique);
			}
			if (o)
				r = add_ref(h, o, (unsigned)v, sys, evn);
			if (r < 0) {
				ret = fail(ps, "Couldn't find param", name + 1);
				free(p);
				return ret;
			}
			x = ref_x(h, r);
		} else if (!sys || (!strcmp(sys, h->ev->group) &&
				    !strcmp(evn, h->ev->name))) {
			/* a field of this event (a field variable) */
			const struct dp_field *f = dp_event_field(h->ev, name);

			if (!f || !f->size ||
			    (f->fclass != DP_FC_NUM && !field_is_string(f))) {
				ret = fail(ps, "Couldn't find field", name);
				free(p);
				return ret;
			}
			if ((x = xnew(X_FIELD))) {
				/* a field variable: its type's name and size
				 * (a dynamic string's: 256), never signed
				 * (create_var()) */
				x->f = f;
				x->type = f->type;
				x->size = f->fclass == DP_FC_STRING ?
					  KEY_STR_MAX : f->size;
			}
		} else {
			/* a field of another event: a hist on it, not here */
			ret = fail(ps, "Not supported by dprobe yet (fields "
				   "of other events as params)", a->params[i]);
			free(p);
			return ret;
		}
		if (!x) {
			free(p);
			return -ENOMEM;
		}
		a->px[i] = x;
		if (pos >= se->synth->nfields ||
		    !synth_field_ok(&se->synth->fields[pos], x)) {
			ret = fail(ps, "Param type doesn't match synthetic "
				   "event field type", name);
			free(p);
			return ret;
		}
		pos++;
		free(p);
	}
	if (pos != se->synth->nfields)
		return fail(ps, "Param count doesn't match synthetic event "
			    "field count", se->name);
	a->synth = se;
	return 0;
}

static int create_save(struct parse *ps, struct haction *a)
{
	struct dp_hist *h = ps->h;

	if (h->nsaves)
		return fail(ps, "Can't have more than one save() action per "
			    "hist", NULL);
	for (unsigned i = 0; i < a->nparams; i++) {
		const struct dp_field *f = dp_event_field(h->ev, a->params[i]);

		if (!f || !f->size ||
		    (f->fclass != DP_FC_NUM && !field_is_string(f)))
			return fail(ps, "Couldn't create field variable",
				    a->params[i]);
		h->saves[h->nsaves].f = f;
		h->saves[h->nsaves++].string = field_is_string(f);
	}
	return 0;
}

/* The actions made real once the fields are (create_actions()). */
static bool has_snapshot(const struct dp_hist *h)
{
	for (unsigned i = 0; i < h->nacts; i++)
		if (h->acts[i].action == A_SNAPSHOT)
			return true;
	return false;
}

/*
 * snapshot(): the buffer's one conditional snapshot, as
 * tracing_snapshot_cond_enable() has it: one trigger at a time holds it
 * (another one: -EBUSY, with no error_log entry, as the kernel's).
 */
static int create_snapshot(struct parse *ps)
{
	struct dp_hist *h = ps->h, *o;

	if (!h->env || !h->env->snapshot)
		return fail(ps, "Not supported by dprobe yet (snapshot() "
			    "outside dprobe mount: no snapshot buffer)",
			    "snapshot");
	if (h->remove)
		return 0;
	for (size_t i = 0; (o = env_each(h->env, i)); i++)
		if (o != h && has_snapshot(o))
			return -EBUSY;
	return 0;
}

static int create_actions(struct parse *ps)
{
	struct dp_hist *h = ps->h;
	unsigned ntrack = 0;
	int ret;

	for (unsigned i = 0; i < h->nacts; i++) {
		struct haction *a = &h->acts[i];

		if (a->handler != H_ONMATCH) {
			int v, r;

			if (a->var_str[0] != '$')
				return fail(ps, "For onmax(x) or onchange(x), x "
					    "must be a variable", a->var_str);
			v = find_var_idx(h, a->var_str + 1);
			if (v < 0)
				return fail(ps, "Couldn't find onmax or onchange "
					    "variable", a->var_str + 1);
			r = add_ref(h, h, (unsigned)v, NULL, NULL);
			if (r < 0)
				return -ENOMEM;
			a->track_ref = (unsigned)r;
			a->track = ntrack++;
		}
		if (a->action == A_TRACE)
			ret = create_trace(ps, a);
		else if (a->action == A_SNAPSHOT)
			ret = create_snapshot(ps);
		else
			ret = create_save(ps, a);
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- the trigger ---------------------------------------------------------- */

static unsigned map_bits(uint64_t size)
{
	unsigned bits = 0;

	while (bits < 63 && (1ull << bits) < size)
		bits++;
	return bits;
}

/* The assignments, words and actions between colons
 * (parse_hist_trigger_attrs()). */
static int parse_attrs(struct parse *ps, struct dp_hist *h, char *s,
		       const char **keys, const char **vals,
		       const char **sort, char **assigns, unsigned *nassign,
		       char **acts, unsigned *nacts)
{
	for (char *t = strsep(&s, ":"); t; t = s ? strsep(&s, ":") : NULL) {
		char *eq = strchr(t, '=');
		uint64_t size;

		if (eq && !eq[1])
			return fail(ps, "Empty assignment", t);
		if (eq) {
			if (!strncmp(t, "keys=", 5) || !strncmp(t, "key=", 4))
				*keys = eq + 1;
			else if (!strncmp(t, "vals=", 5) ||
				 !strncmp(t, "val=", 4) ||
				 !strncmp(t, "values=", 7))
				*vals = eq + 1;
			else if (!strncmp(t, "sort=", 5))
				*sort = eq + 1;
			else if (!strncmp(t, "name=", 5)) {
				free(h->name);
				if (!(h->name = strdup(t)))
					return -ENOMEM;
			} else if (!strncmp(t, "clock=", 6)) {
				/* one clock: CLOCK_MONOTONIC, as "global" */
				continue;
			} else if (!strncmp(t, "size=", 5)) {
				if (!parse_ulong(eq + 1, &size) ||
				    map_bits(size) < BITS_MIN ||
				    map_bits(size) > BITS_MAX)
					return -EINVAL;
				h->bits = map_bits(size);
			} else {
				if (*nassign == MAX_VARS)
					return fail(ps, "Too many variables "
						    "defined", t);
				assigns[(*nassign)++] = t;
			}
		} else if (!strcmp(t, "nohitcount") || !strcmp(t, "NOHC"))
			h->nohitcount = true;
		else if (!strcmp(t, "pause"))
			h->cmd = DP_HIST_PAUSE;
		else if (!strcmp(t, "cont") || !strcmp(t, "continue"))
			h->cmd = DP_HIST_CONT;
		else if (!strcmp(t, "clear"))
			h->cmd = DP_HIST_CLEAR;
		else if (*nacts < MAX_ACTIONS &&
			 (!strncmp(t, "onmatch(", 8) ||
			  !strncmp(t, "onmax(", 6) ||
			  !strncmp(t, "onchange(", 9)))
			acts[(*nacts)++] = t;
		else
			return -EINVAL;	/* parse_action(): no message */
	}
	return *keys ? 0 : -EINVAL;
}

static int parse(struct parse *ps, struct dp_hist *h, char *body,
		 char *filter)
{
	const char *keys = NULL, *vals = NULL, *sort = NULL;
	char *assigns[MAX_VARS], *acts[MAX_ACTIONS];
	unsigned nassign = 0, nacts = 0, nv = 0;
	struct dp_filter_error fe = { 0 };
	int ret;

	/* .sym-offset holds a minus: the kernel renames it first */
	for (char *p = strstr(body, ".sym-offset"); p;
	     p = strstr(p + 11, ".sym-offset"))
		p[4] = 'X';
	ret = parse_attrs(ps, h, body, &keys, &vals, &sort, assigns,
			  &nassign, acts, &nacts);
	for (unsigned i = 0; !ret && i < nacts; i++)
		ret = parse_one_action(ps, acts[i]);
	for (unsigned i = 0; !ret && i < nassign; i++)
		ret = add_defs(ps, assigns[i]);
	if (ret)
		return ret;
	h->vals[0] = (struct hfield){ .name = "hitcount",
				      .flags = HF_HITCOUNT };
	h->nvals = 1;
	if (vals)
		ret = parse_list(ps, vals, false, h->vals + 1, MAX_VALS, &nv);
	h->nvals = 1 + nv;
	if (!ret && h->nohitcount && h->nvals == 1) {
		fail(ps, "Non-hitcount value is required for 'nohitcount'",
		     NULL);
		return -ENOENT;
	}
	if (!ret)
		ret = make_vars(ps);
	if (!ret)
		ret = parse_list(ps, keys, true, h->keys, MAX_KEYS, &h->nkeys);
	if (ret)
		return ret;
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

static struct htable *table_new(const struct dp_hist *h)
{
	struct htable *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->refs = 1;
	t->bits = h->bits;
	t->nslots = (size_t)2 << h->bits;
	t->slots = calloc(t->nslots, sizeof(*t->slots));
	t->nvars = h->nvars;
	for (unsigned i = 0; i < h->nvars; i++)
		t->nstack += h->vars[i].stack;
	for (unsigned i = 0; i < h->nacts; i++)
		t->ntrack += h->acts[i].handler != H_ONMATCH;
	t->nsave = h->nsaves;
	if (!t->slots) {
		free(t);
		return NULL;
	}
	return t;
}

static void entries_free(struct htable *t)
{
	for (size_t i = 0; i < t->nslots; i++) {
		struct entry *e = &t->slots[i];

		for (unsigned k = 0; k < MAX_KEYS; k++)
			free(e->str[k]);
		if (e->ext) {
			char **s = (char **)(e->ext + 1 + t->nvars + t->ntrack +
					     t->nsave);

			for (unsigned k = 0; k < t->nsave; k++)
				free(s[k]);
		}
		free(e->ext);
	}
}

static void table_put(struct htable *t)
{
	if (!t || --t->refs)
		return;
	entries_free(t);
	free(t->slots);
	free(t);
}

/* The trigger text without its state, size and filter: what tells two
 * triggers apart (hist_trigger_match()). */
static char *spec_of(const struct dp_hist *h, bool name);

/* name=: the table of the first trigger of that name, if it matches. */
static int join_named(struct parse *ps, struct dp_hist *h)
{
	struct dp_hist *o;
	char *a, *b;
	bool same;

	for (size_t i = 0; (o = env_each(h->env, i)); i++) {
		if (o == h || !o->name || strcmp(o->name, h->name))
			continue;
		a = spec_of(h, false);
		b = spec_of(o, false);
		same = a && b && !strcmp(a, b);
		for (unsigned k = 0; same && k < h->nkeys; k++)
			same = !h->keys[k].f || !o->keys[k].f ||
			       (!strcmp(h->keys[k].f->type, o->keys[k].f->type) &&
				h->keys[k].f->size == o->keys[k].f->size &&
				h->keys[k].f->is_signed ==
				o->keys[k].f->is_signed);
		free(a);
		free(b);
		if (!same)
			return fail(ps, "Named hist trigger doesn't match "
				    "existing named trigger (includes "
				    "variables)", h->name);
		h->t = o->t;
		o->t->refs++;
		return 1;
	}
	return 0;
}

int dp_hist_new_in(const struct dp_hist_env *env, const struct dp_event *ev,
		   const char *text, bool remove, struct dp_hist **out,
		   struct dp_hist_error *err)
{
	struct dp_hist *h = calloc(1, sizeof(*h));
	struct parse ps = { text, err, h };
	char *body = NULL, *filter;
	int ret;

	*err = (struct dp_hist_error){ 0 };
	*out = NULL;
	if (!h || !(h->text = strdup(text))) {
		free(h);
		return -ENOMEM;
	}
	h->ev = ev;
	h->env = env;
	h->remove = remove;
	h->bits = BITS_DEFAULT;
	body = strdup(text);
	ret = body ? 0 : -ENOMEM;
	if (!ret && strncmp(body, "hist:", 5) && strcmp(body, "hist"))
		ret = -EINVAL;
	if (!ret) {
		filter = strstr(body, " if ");
		if (filter) {
			/* the trigger ends at its first blank, where the
			 * kernel finds the filter (trigger_separate_filter()) */
			while (filter > body && (filter[-1] == ' ' ||
						 filter[-1] == '\t'))
				filter--;
			*filter++ = '\0';
			filter += strspn(filter, " \t") + 3;
		}
		ret = parse(&ps, h, body + (body[4] ? 5 : 4), filter);
	}
	/* a command or a removal acts on a trigger already there */
	if (!ret && !remove && h->cmd == DP_HIST_ADD) {
		ret = h->name ? join_named(&ps, h) : 0;
		if (ret == 0)
			ret = create_actions(&ps);
		else if (ret > 0)
			ret = 0;
	}
	free(body);
	if (!ret && !h->t)
		ret = (h->t = table_new(h)) ? 0 : -ENOMEM;
	if (ret) {
		dp_hist_free(h);
		return ret;
	}
	*out = h;
	return 0;
}

int dp_hist_new(const struct dp_event *ev, const char *text,
		struct dp_hist **out, struct dp_hist_error *err)
{
	return dp_hist_new_in(NULL, ev, text, false, out, err);
}

void dp_hist_error_print(const struct dp_event *ev, const char *text,
			 int ret, const struct dp_hist_error *err, FILE *out)
{
	for (unsigned i = 0; err->msg && i < err->nprev; i++)
		fprintf(out, "hist:%s:%s: error: %s\n  Command: %s\n%*s^\n",
			ev->group, ev->name, err->prev_msg[i], text,
			(int)(err->prev_pos[i] + sizeof("  Command: ") - 1), "");
	if (!err->msg) {
		fprintf(out, "hist:%s:%s: %s: %s\n", ev->group, ev->name, text,
			strerror(-ret));
		return;
	}
	fprintf(out, "hist:%s:%s: error: %s\n  Command: %s\n%*s^\n",
		ev->group, ev->name, err->msg, text,
		(int)(err->pos + sizeof("  Command: ") - 1), "");
}

static void hfield_free(struct hfield *hf)
{
	xfree(hf->x);
	hf->x = NULL;
}

void dp_hist_free(struct dp_hist *h)
{
	if (!h)
		return;
	table_put(h->t);
	free(h->snap_key);
	for (unsigned i = 0; i < MAX_KEYS; i++)
		hfield_free(&h->keys[i]);
	for (unsigned i = 0; i < 1 + MAX_VALS; i++)
		hfield_free(&h->vals[i]);
	for (unsigned i = 0; i < h->nvars; i++)
		xfree(h->vars[i].x);
	for (unsigned i = 0; i < h->nrefs; i++)
		free(h->refs[i].name);
	for (unsigned i = 0; i < h->nacts; i++) {
		struct haction *a = &h->acts[i];

		free(a->sys);
		free(a->evname);
		free(a->var_str);
		free(a->name);
		free(a->synth_name);
		for (unsigned k = 0; k < a->nparams; k++) {
			free(a->params[k]);
			xfree(a->px[k]);
		}
	}
	for (unsigned i = 0; i < h->ndefs; i++) {
		free(h->defs[i][0]);
		free(h->defs[i][1]);
	}
	dp_filter_free(h->filter);
	free(h->filter_text);
	free(h->name);
	free(h->text);
	free(h);
}

bool dp_hist_snapshots(const struct dp_hist *h)
{
	return has_snapshot(h);
}

const struct dp_event *dp_hist_event(const struct dp_hist *h)
{
	return h->ev;
}

const char *dp_hist_name(const struct dp_hist *h)
{
	return h->name;
}

bool dp_hist_referenced(const struct dp_hist *h)
{
	struct dp_hist *o;

	if (!h->nvars)
		return false;
	for (size_t i = 0; (o = env_each(h->env, i)); i++)
		for (unsigned r = 0; o != h && r < o->nrefs; r++)
			if (o->refs[r].h == h)
				return true;
	return false;
}

bool dp_hist_generates(const struct dp_hist *h, unsigned id)
{
	for (unsigned i = 0; i < h->nacts; i++)
		if (h->acts[i].synth && h->acts[i].synth->id == id)
			return true;
	return false;
}

enum dp_hist_cmd dp_hist_command(const struct dp_hist *h)
{
	return h->cmd;
}

bool dp_hist_wants_symbols(const struct dp_hist *h)
{
	for (unsigned k = 0; k < h->nkeys; k++)
		if (h->keys[k].flags & (HF_SYM | HF_SYM_OFFSET | HF_STACK))
			return true;
	return false;
}

bool dp_hist_wants_stacks(const struct dp_hist *h)
{
	for (unsigned k = 0; k < h->nkeys; k++)
		if (h->keys[k].flags & HF_STACK)
			return true;
	/* a stack variable's own, not one referring to another */
	for (unsigned i = 0; i < h->nvars; i++)
		if (h->vars[i].x && h->vars[i].x->op == X_STACK)
			return true;
	return false;
}

bool dp_hist_same(const struct dp_hist *a, const struct dp_hist *b)
{
	char *x = spec_of(a, true), *y = spec_of(b, true);
	bool same = x && y && !strcmp(x, y);

	free(x);
	free(y);
	return same;
}

void dp_hist_pause(struct dp_hist *h, bool paused)
{
	h->paused = paused;
}

void dp_hist_clear(struct dp_hist *h)
{
	struct htable *t = h->t;

	entries_free(t);
	memset(t->slots, 0, t->nslots * sizeof(*t->slots));
	t->used = 0;
	t->hits = t->drops = 0;
}

/* ---- aggregating ---------------------------------------------------------- */

/* A key's value, as the kernel keys it (log2, buckets applied). */
static uint64_t key_num(const struct dp_hist *h, const struct hfield *hf,
			const uint8_t *rec, const struct dp_rec_meta *meta)
{
	uint64_t v;

	if (hf->x)
		return xeval(h, hf->x, rec, meta, NULL);
	v = field_num(hf->f, rec);
	if (hf->flags & HF_LOG2)
		return ilog2_roundup(v);
	if (hf->flags & HF_BUCKET)
		return v / hf->buckets * hf->buckets;
	return v;
}

/* A string field's bytes; one whose bytes are not all in the record is
 * empty (records are checked, but a field without a probe type is not). */
static void field_str(const struct dp_field *f, const uint8_t *rec,
		      size_t len, char *out, size_t max)
{
	const char *s = "";
	size_t n = 0;

	if (f->fclass == DP_FC_STRING) {
		uint32_t loc = (uint32_t)dp_rec_load(rec + f->offset, 4);
		size_t off = dp_data_loc_off(loc), slen = dp_data_loc_len(loc);

		if (off <= len && slen <= len - off && slen) {
			s = (const char *)rec + off;
			n = strnlen(s, slen);
		}
	} else {
		s = (const char *)rec + f->offset;
		n = strnlen(s, f->size);
	}
	if (n >= max)
		n = max - 1;
	memcpy(out, s, n);
	out[n] = '\0';
}

struct key {
	uint64_t num[MAX_KEYS];
	char str[MAX_KEYS][KEY_STR_MAX];
};

static uint64_t hash_key(const struct dp_hist *h, const struct key *k)
{
	uint64_t x = 0xcbf29ce484222325ull;

	for (unsigned i = 0; i < h->nkeys; i++) {
		x = (x ^ k->num[i]) * 0x100000001b3ull;
		for (const char *c = h->keys[i].string ? k->str[i] : ""; *c; c++)
			x = (x ^ (uint8_t)*c) * 0x100000001b3ull;
	}
	return x ^ (x >> 29);
}

static bool same_key(const struct dp_hist *h, const struct entry *e,
		     const struct key *k)
{
	for (unsigned i = 0; i < h->nkeys; i++) {
		if (h->keys[i].string ? strcmp(e->str[i], k->str[i]) :
		    e->num[i] != k->num[i])
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

static size_t ext_words(const struct htable *t)
{
	/* the set-variables word, the values, the saved strings, then
	 * the stack variables' frames */
	return 1 + t->nvars + t->ntrack + t->nsave +
	       t->nsave * sizeof(char *) / sizeof(uint64_t) +
	       (size_t)t->nstack * STACK_SLOT;
}

/* Stack slot @j of @e: its count of frames, then STACK_DEPTH words. */
static uint64_t *stack_slot(const struct htable *t, const struct entry *e,
			    unsigned j)
{
	return e->ext + ext_words(t) - (size_t)(t->nstack - j) * STACK_SLOT;
}

/*
 * Stack variable @i of @e set: the record's user stack
 * (common_stacktrace), or a copy of the frames of the variable it
 * refers to, whose entry may go before this one does.  Its value is its
 * slot's address, which references and trace() params hand on.
 */
static void set_stack_var(const struct dp_hist *h, struct entry *e,
			  unsigned i, const struct dp_rec_meta *meta,
			  const uint64_t *refv)
{
	const struct hvar *v = &h->vars[i];
	uint64_t *slot = stack_slot(h->t, e, v->slot);
	const uint64_t *src = NULL;
	unsigned n = 0;

	if (v->x->op == X_STACK) {
		while (meta && meta->stack && n < meta->nstack &&
		       n < STACK_DEPTH && meta->stack[n]) {
			slot[1 + n] = meta->stack[n];
			n++;
		}
	} else if (v->x->op == X_REF) {
		src = (const uint64_t *)(uintptr_t)refv[v->x->ref];
		while (src && n < src[0] && n < STACK_DEPTH) {
			slot[1 + n] = src[1 + n];
			n++;
		}
	}
	slot[0] = n;
	for (unsigned k = n; k < STACK_DEPTH; k++)
		slot[1 + k] = 0;
	e->ext[1 + i] = (uint64_t)(uintptr_t)slot;
}

/*
 * A stack key: the first STACK_DEPTH return addresses of the record's
 * user stack (innermost first) as hex words, so that it hashes and
 * compares as a string key does; a record without one has the empty
 * stack.  Addresses that would not fit are left out.
 */
static void stack_key(const struct dp_rec_meta *meta, char *out, size_t size)
{
	size_t n = 0;

	out[0] = '\0';
	for (unsigned i = 0; meta && meta->stack && i < meta->nstack &&
	     i < STACK_DEPTH && meta->stack[i]; i++) {
		int w = snprintf(out + n, size - n, "%llx,",
				 (unsigned long long)meta->stack[i]);

		if (w < 0 || (size_t)w >= size - n) {
			out[n] = '\0';
			break;
		}
		n += (size_t)w;
	}
}

/*
 * An entry's stack key: the key itself (compared by strcmp), then, after
 * its NUL, the frames as the hist file prints them, each on a line of
 * its own after nine spaces (hist_trigger_stacktrace_print()), resolved
 * when the entry is made.
 */
static char *stack_text(const struct dp_symbolizer *sym, const char *key)
{
	size_t klen = strlen(key), n = 0;
	char *text = NULL, *out;
	const char *p = key;
	FILE *f = open_memstream(&text, &n);

	if (!f)
		return NULL;
	while (*p) {
		char *end, *s;
		uint64_t ip = strtoull(p, &end, 16);

		if (end == p || *end != ',')
			break;
		p = end + 1;
		s = ip == DP_STACK_BAD_FRAME ? strdup(DP_STACK_BAD_FRAME_NAME) :
		      sym_text(sym, ip, true);
		fprintf(f, "%9c%s\n", ' ', s ? s : "");
		free(s);
	}
	if (fclose(f))
		return NULL;
	out = malloc(klen + 1 + n + 1);
	if (out) {
		memcpy(out, key, klen + 1);
		memcpy(out + klen + 1, text, n + 1);
	}
	free(text);
	return out;
}

static int entry_fill(struct dp_hist *h, struct entry *e, const struct key *k,
		      const struct dp_rec_meta *meta,
		      const struct dp_symbolizer *sym)
{
	const struct htable *t = h->t;

	for (unsigned i = 0; i < h->nkeys; i++) {
		const struct hfield *hf = &h->keys[i];

		e->num[i] = k->num[i];
		if (hf->flags & HF_STACK)
			e->str[i] = stack_text(sym, k->str[i]);
		else if (hf->string)
			e->str[i] = strdup(k->str[i]);
		else if (hf->flags & (HF_SYM | HF_SYM_OFFSET))
			e->str[i] = sym_text(sym, k->num[i],
					     hf->flags & HF_SYM_OFFSET);
		else
			continue;
		if (!e->str[i])
			return -ENOMEM;
	}
	if (t->nvars || t->ntrack || t->nsave) {
		e->ext = calloc(ext_words(t), sizeof(uint64_t));
		if (!e->ext)
			return -ENOMEM;
	}
	snprintf(e->comm, sizeof(e->comm), "%s",
		 meta && meta->comm ? meta->comm : "<...>");
	e->used = true;
	return 0;
}

/* The entry of @k; @insert: made if there is none (a full table: NULL). */
static struct entry *lookup(struct dp_hist *h, const struct key *k,
			    bool insert, const struct dp_rec_meta *meta,
			    const struct dp_symbolizer *sym)
{
	struct htable *t = h->t;
	size_t mask = t->nslots - 1, i = hash_key(h, k) & mask;

	for (size_t n = 0; n < t->nslots; n++, i = (i + 1) & mask) {
		struct entry *e = &t->slots[i];

		if (e->used && same_key(h, e, k))
			return e;
		if (e->used)
			continue;
		if (!insert || t->used == (size_t)1 << t->bits)
			return NULL;
		if (entry_fill(h, e, k, meta, sym)) {
			for (unsigned j = 0; j < MAX_KEYS; j++) {
				free(e->str[j]);
				e->str[j] = NULL;
			}
			free(e->ext);
			e->ext = NULL;
			e->used = false;
			return NULL;
		}
		t->used++;
		return e;
	}
	return NULL;
}

/* The references' values (resolve_var_refs()): @self those of this
 * trigger's variables, else the others', read once where the kernel
 * does.  False: one is not set for this key. */
static bool resolve_refs(struct dp_hist *h, const struct key *k, bool self,
			 uint64_t *refv)
{
	for (unsigned i = 0; i < h->nrefs; i++) {
		const struct href *r = &h->refs[i];
		struct entry *e;
		uint64_t bit = 1ull << r->var;

		if ((r->h == h) != self)
			continue;
		if (r->h->nkeys != h->nkeys)
			return false;
		for (unsigned j = 0; j < h->nkeys; j++)
			if (r->h->keys[j].string != h->keys[j].string)
				return false;
		e = lookup(r->h, k, false, NULL, NULL);
		if (!e || !e->ext || !(e->ext[0] & bit))
			return false;
		refv[i] = e->ext[1 + r->var];
		if (!self && r->read_once)
			e->ext[0] &= ~bit;
	}
	return true;
}

static void fire(struct dp_hist *h, const struct haction *a,
		 const uint8_t *rec, size_t rlen,
		 const struct dp_rec_meta *meta, const uint64_t *refv)
{
	static __thread unsigned depth;
	char (*str)[KEY_STR_MAX] = NULL;
	const char *strs[MAX_PARAMS] = { NULL };
	const uint64_t *stacks[MAX_PARAMS] = { NULL };
	uint64_t v[MAX_PARAMS];
	void *r;
	size_t len;

	if (!a->synth || !h->env || !h->env->fire || depth >= FIRE_DEPTH)
		return;
	for (unsigned i = 0; i < a->nparams; i++) {
		const struct hexpr *x = a->px[i];

		if (x->op == X_FIELD && field_is_string(x->f)) {
			/* a string field of the record */
			if (!str && !(str = calloc(MAX_PARAMS, sizeof(*str))))
				return;
			field_str(x->f, rec, rlen, str[i], KEY_STR_MAX);
			strs[i] = str[i];
			continue;
		}
		v[i] = xeval(h, x, rec, meta, refv);
		/* a stack variable's value: its frames' address */
		if (x->flags & HF_STACK)
			stacks[i] = (const uint64_t *)(uintptr_t)v[i];
	}
	r = dp_synth_record(a->synth, v, strs, stacks, a->nparams, meta,
			    &len);
	free(str);
	if (!r)
		return;
	depth++;
	h->env->fire(h->env->priv, a->synth, r, len, meta);
	depth--;
	free(r);
}

static void print_keys(const struct dp_hist *h, const struct entry *e,
		       FILE *out);

/*
 * snapshot() after its handler moved: taken when @val is a new maximum
 * (onmax) or another value (onchange) against the one of the last
 * snapshot, whatever the entry (cond_snapshot_update()), which the
 * `hist` file then details with the entry's key.
 */
static void take_snapshot(struct dp_hist *h, const struct haction *a,
			  const struct entry *e, uint64_t val)
{
	char *key = NULL;
	size_t n = 0;
	FILE *f;

	if (a->handler == H_ONMAX ? val <= h->snap_val : val == h->snap_val)
		return;
	h->snap_val = val;
	h->snap_taken = true;
	f = open_memstream(&key, &n);
	if (f) {
		print_keys(h, e, f);
		if (fclose(f)) {
			free(key);
			key = NULL;
		}
	}
	free(h->snap_key);
	h->snap_key = key;
	h->env->snapshot(h->env->priv);
}

static void run_actions(struct dp_hist *h, struct entry *e,
			const uint8_t *rec, size_t len,
			const struct dp_rec_meta *meta, const uint64_t *refv)
{
	const struct htable *t = h->t;

	for (unsigned i = 0; i < h->nacts; i++) {
		const struct haction *a = &h->acts[i];
		uint64_t val, *track;

		if (a->handler == H_ONMATCH) {
			fire(h, a, rec, len, meta, refv);
			continue;
		}
		if (!e->ext)
			continue;
		val = refv[a->track_ref];
		track = &e->ext[1 + t->nvars + a->track];
		if (a->handler == H_ONMAX ? val <= *track : val == *track)
			continue;
		*track = val;
		if (a->action == A_TRACE) {
			fire(h, a, rec, len, meta, refv);
			continue;
		}
		if (a->action == A_SNAPSHOT) {
			take_snapshot(h, a, e, val);
			continue;
		}
		for (unsigned s = 0; s < h->nsaves; s++) {
			uint64_t *slot = &e->ext[1 + t->nvars + t->ntrack + s];
			char **str = (char **)(e->ext + 1 + t->nvars +
					       t->ntrack + t->nsave) + s;
			char buf[KEY_STR_MAX];

			if (!h->saves[s].string) {
				*slot = field_num(h->saves[s].f, rec);
				continue;
			}
			field_str(h->saves[s].f, rec, len, buf, sizeof(buf));
			free(*str);
			*str = strdup(buf);
		}
	}
}

void dp_hist_add(struct dp_hist *h, const void *rec, size_t len,
		 const struct dp_rec_meta *meta,
		 const struct dp_symbolizer *sym)
{
	uint64_t refv[MAX_REFS] = { 0 };
	struct htable *t = h->t;
	struct key *k;
	struct entry *e;

	if (h->paused || dp_rec_check(h->ev, rec, len))
		return;
	if (h->filter && !dp_filter_match(h->filter, h->ev, rec, len, meta))
		return;
	k = malloc(sizeof(*k));
	if (!k)
		return;
	for (unsigned i = 0; i < h->nkeys; i++) {
		k->num[i] = 0;
		k->str[i][0] = '\0';
		if (h->keys[i].flags & HF_STACK)
			stack_key(meta, k->str[i], KEY_STR_MAX);
		else if (h->keys[i].string)
			field_str(h->keys[i].f, rec, len, k->str[i],
				  KEY_STR_MAX);
		else
			k->num[i] = key_num(h, &h->keys[i], rec, meta);
	}
	if (h->nrefs && !resolve_refs(h, k, false, refv))
		goto out;
	t->hits++;
	e = lookup(h, k, true, meta, sym);
	if (!e) {
		t->drops++;
		goto out;
	}
	e->sum[0]++;
	for (unsigned v = 1; v < h->nvals; v++) {
		const struct hfield *hf = &h->vals[v];

		e->sum[v] += hf->x ? xeval(h, hf->x, rec, meta, refv) :
			     hf->f ? field_num(hf->f, rec) : 1;
	}
	for (unsigned i = 0; e->ext && i < h->nvars; i++) {
		if (h->vars[i].stack)
			set_stack_var(h, e, i, meta, refv);
		else
			e->ext[1 + i] = xeval(h, h->vars[i].x, rec, meta,
					      refv);
		e->ext[0] |= 1ull << i;
	}
	if (h->nacts && resolve_refs(h, k, true, refv))
		run_actions(h, e, rec, len, meta, refv);
out:
	free(k);
}

/* ---- kept in the traced processes (event/agg.h) --------------------------- */

_Static_assert(MAX_KEYS == DP_AGG_MAX_KEYS && MAX_VALS == DP_AGG_MAX_VALS,
	       "a table kept in a process holds what a histogram holds");

static bool agg_field(const struct hfield *hf, const struct dp_event *ev,
		      struct dp_agg_field *out)
{
	const struct dp_field *f = hf->f;

	if (hf->x || !f || f->fclass != DP_FC_NUM || hf->string ||
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
	/* variables, references, actions and shared tables need each
	 * record in dprobe, where the other triggers are */
	if (h->nvars || h->nrefs || h->nacts || h->nsaves || h->name ||
	    h->timestamps || h->ndefs)
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
	struct dp_rec_meta meta = { .comm = comm };
	struct htable *t = h->t;
	struct key *k;
	struct entry *e;

	if (h->paused)
		return;
	t->hits += hits;
	if (!key) {
		t->drops += hits;
		return;
	}
	k = calloc(1, sizeof(*k));
	if (!k)
		return;
	for (unsigned i = 0; i < h->nkeys; i++)
		k->num[i] = key[i];
	e = lookup(h, k, true, &meta, NULL);
	free(k);
	if (!e) {
		t->drops += hits;
		return;
	}
	e->sum[0] += hits;
	for (unsigned v = 1; v < h->nvals; v++)
		e->sum[v] += val[v - 1];
}

/* ---- printing ------------------------------------------------------------- */

/* A key or value as hist_field_print() writes it. */
static void print_hfield(const struct hfield *hf, FILE *out)
{
	const char *flags = flag_name(hf->flags);

	if (hf->x) {
		const struct hexpr *x = hf->x;

		if (x->op == X_CPU)
			fputs("common_cpu", out);
		else if (x->op == X_CONST)
			fprintf(out, "%llu", (unsigned long long)x->constant);
		else if (x->op == X_TS)
			fputs("common_timestamp", out);
		else
			fputs(x->name, out);
		if (x->op == X_REF || is_expr(x))
			flags = NULL;
	} else {
		fputs(hf->name, out);
	}
	if (flags)
		fprintf(out, ".%s", flags);
	if (hf->flags & HF_BUCKET)
		fprintf(out, "=%llu", (unsigned long long)hf->buckets);
}

static void print_var(const struct hvar *v, FILE *out)
{
	const struct hexpr *x = v->x;
	const char *flags = x->op == X_REF || is_expr(x) ? NULL :
			    flag_name(x->flags);

	fprintf(out, "%s=", v->name);
	if (x->op == X_CPU)
		fputs("common_cpu", out);
	else if (x->op == X_CONST)
		fprintf(out, "%llu", (unsigned long long)x->constant);
	else if (x->op == X_TS)
		fputs("common_timestamp", out);
	else
		fputs(x->name, out);
	if (flags)
		fprintf(out, ".%s", flags);
}

static void print_actions_spec(const struct dp_hist *h, FILE *out)
{
	for (unsigned i = 0; i < h->nacts; i++) {
		const struct haction *a = &h->acts[i];

		if (a->handler == H_ONMATCH)
			fprintf(out, ":onmatch(%s.%s).", a->sys, a->evname);
		else
			fprintf(out, ":%s(%s).", a->handler == H_ONMAX ?
				"onmax" : "onchange", a->var_str);
		fprintf(out, "%s(", a->name);
		if (a->action == A_SAVE) {
			for (unsigned k = 0; k < a->nparams; k++)
				fprintf(out, "%s%s", k ? "," : "", a->params[k]);
		} else {
			if (a->trace_kw)
				fputs(a->synth_name ? a->synth_name : "", out);
			for (unsigned k = 0; k < a->nparams; k++)
				fprintf(out, "%s%s", k || a->trace_kw ? "," : "",
					a->params[k]);
		}
		fputc(')', out);
	}
}

/* event_hist_trigger_print(), @size and @filter optional. */
static void print_spec(const struct dp_hist *h, bool size, bool filter,
		       FILE *out)
{
	bool first = true;

	fputs("hist:", out);
	if (h->name)
		fprintf(out, "%s:", h->name);
	fputs("keys=", out);
	for (unsigned k = 0; k < h->nkeys; k++) {
		if (k)
			fputc(',', out);
		print_hfield(&h->keys[k], out);
	}
	fputs(":vals=", out);
	for (unsigned v = h->nohitcount ? 1 : 0; v < h->nvals; v++) {
		if (!first)
			fputc(',', out);
		print_hfield(&h->vals[v], out);
		first = false;
	}
	for (unsigned i = 0; i < h->nvars; i++) {
		fputc(i ? ',' : ':', out);
		print_var(&h->vars[i], out);
	}
	fputs(":sort=", out);
	for (unsigned i = 0; i < h->nsort; i++) {
		const struct sort_key *sk = &h->sort[i];

		if (i)
			fputc(',', out);
		if (!sk->is_key && !sk->idx)
			fputs("hitcount", out);
		else
			print_hfield(sk->is_key ? &h->keys[sk->idx] :
				     &h->vals[sk->idx], out);
		if (sk->descending)
			fputs(".descending", out);
	}
	if (size)
		fprintf(out, ":size=%u", 1u << h->bits);
	if (h->timestamps)
		fputs(":clock=global", out);
	if (h->nohitcount)
		fputs(":nohitcount", out);
	print_actions_spec(h, out);
	if (filter && h->filter_text)
		fprintf(out, " if %s", h->filter_text);
}

static char *spec_of(const struct dp_hist *h, bool filter)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);

	if (!f)
		return NULL;
	print_spec(h, false, filter, f);
	if (fclose(f)) {
		free(s);
		return NULL;
	}
	return s;
}

void dp_hist_print_trigger(const struct dp_hist *h, FILE *out)
{
	print_spec(h, true, true, out);
	fputs(h->paused ? " [paused]\n" : " [active]\n", out);
}

static void print_key(const struct hfield *hf, const struct entry *e,
		      unsigned k, FILE *out)
{
	unsigned long long v = e->num[k];
	const struct dp_syscall *sc;

	if (hf->flags & HF_STACK)
		fprintf(out, "%s:\n%s", hf->name,
			e->str[k] + strlen(e->str[k]) + 1);
	else if (hf->flags & HF_HEX)
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

/* The max:/changed: lines and the saved fields (track_data_print()). */
static void print_tracks(const struct dp_hist *h, const struct entry *e,
			 FILE *out)
{
	const struct htable *t = h->t;

	for (unsigned i = 0; i < h->nacts; i++) {
		const struct haction *a = &h->acts[i];
		char *const *strs;

		if (a->handler == H_ONMATCH)
			continue;
		fprintf(out, "\n\t%s: %10llu", a->handler == H_ONMAX ? "max" :
			"changed", e->ext ? (unsigned long long)
			e->ext[1 + t->nvars + a->track] : 0ull);
		if (a->action != A_SAVE || !e->ext)
			continue;
		strs = (char *const *)(e->ext + 1 + t->nvars + t->ntrack +
				       t->nsave);
		for (unsigned s = 0; s < h->nsaves; s++) {
			if (h->saves[s].string)
				fprintf(out, "  %s: %-32s", h->saves[s].f->name,
					strs[s] ? strs[s] : "");
			else
				fprintf(out, "  %s: %10llu", h->saves[s].f->name,
					(unsigned long long)
					e->ext[1 + t->nvars + t->ntrack + s]);
		}
	}
}

/* "{ KEY, KEY }", or "{ ...\n}" after a stack's lines
 * (hist_trigger_print_key()). */
static void print_keys(const struct dp_hist *h, const struct entry *e,
		       FILE *out)
{
	bool multiline = false;

	fputs("{ ", out);
	for (unsigned k = 0; k < h->nkeys; k++) {
		if (k)
			fputs(", ", out);
		print_key(&h->keys[k], e, k, out);
		multiline |= (h->keys[k].flags & HF_STACK) != 0;
	}
	fputs(multiline ? "}" : " }", out);
}

static void print_entry(const struct dp_hist *h, const struct entry *e,
			const uint64_t *total, const uint64_t *max, FILE *out)
{
	print_keys(h, e, out);
	if (!h->nohitcount)
		print_val(&h->vals[0], e->sum[0], total[0], max[0], out);
	for (unsigned v = 1; v < h->nvals; v++) {
		/* expressions are summed, not shown (the kernel's) */
		if (is_expr(h->vals[v].x))
			continue;
		fputc(' ', out);
		print_val(&h->vals[v], e->sum[v], total[v], max[v], out);
	}
	print_tracks(h, e, out);
	fputc('\n', out);
}

/* The last snapshot's details (track_data_snapshot_print(): no newline
 * between the value and "triggered by", as the kernel's). */
static void print_snapshot(const struct dp_hist *h, FILE *out)
{
	for (unsigned i = 0; i < h->nacts && h->snap_taken; i++) {
		const struct haction *a = &h->acts[i];

		if (a->action != A_SNAPSHOT)
			continue;
		fprintf(out, "\nSnapshot taken (see tracing/snapshot).  "
			"Details:\n\ttriggering value { %s(%s) }: %10llu",
			a->handler == H_ONMAX ? "onmax" : "onchange",
			a->var_str, (unsigned long long)h->snap_val);
		fprintf(out, "\ttriggered by event with key: %s\n",
			h->snap_key ? h->snap_key : "");
		return;
	}
}

void dp_hist_print(const struct dp_hist *h, unsigned n, FILE *out)
{
	uint64_t total[1 + MAX_VALS] = { 0 }, max[1 + MAX_VALS] = { 0 };
	const struct htable *t = h->t;
	const struct entry **v = calloc(t->used ? t->used : 1, sizeof(*v));
	size_t m = 0;

	if (n)
		fputs("\n\n", out);
	fputs("# event histogram\n#\n# trigger info: ", out);
	dp_hist_print_trigger(h, out);
	fputs("#\n\n", out);
	for (size_t i = 0; v && i < t->nslots; i++)
		if (t->slots[i].used)
			v[m++] = &t->slots[i];
	for (size_t i = 0; i < m; i++)
		for (unsigned k = 0; k < h->nvals; k++) {
			total[k] += v[i]->sum[k];
			if (max[k] < v[i]->sum[k])
				max[k] = v[i]->sum[k];
		}
	qsort_r(v, m, sizeof(*v), cmp_entries, (void *)h);
	for (size_t i = 0; i < m; i++)
		print_entry(h, v[i], total, max, out);
	print_snapshot(h, out);
	fprintf(out, "\nTotals:\n    Hits: %llu\n    Entries: %zu\n"
		"    Dropped: %llu\n", (unsigned long long)t->hits, m,
		(unsigned long long)t->drops);
	free(v);
}
