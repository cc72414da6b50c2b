// SPDX-License-Identifier: GPL-2.0
/*
 * Definitions by name, translated through the debug information (see
 * debugdef.h).  The line is split as the kernel splits it; the place is
 * found (a function, a line, a pattern) and each argument that names a
 * variable is replaced by the fetch argument that reads it there, with
 * the type its declaration gives.  What is not a name is kept as it was
 * written.  Errors use the kernel's codes for its BTF arguments, with
 * the caret on the argument, and say what the debug information has
 * instead (the variables at the place, a struct's members).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/argv.h"
#include "lang/lang.h"
#include "sym/debugdef.h"
#include "sym/debuginfo.h"
#include "sym/demangle.h"
#include "sym/elf.h"
#include "sym/resolve.h"
#include "util/util.h"

#define MAX_PLACES	64	/* addresses one place may stand for */
#define MAX_ARGS	128	/* the kernel's MAX_TRACE_ARGS */

struct dbg_file {
	struct dbg_file *next;
	char *path;
	struct dp_dbg *dbg;	/* NULL: none, and @why says why */
	char why[1024];
};

struct dp_debugdef {
	char *binary;
	char **objs;
	size_t nobjs;
	struct dbg_file *files;
	char note[600];		/* what the last translation did, or "" */
	/* per line of the last translation: each argument as written,
	 * one per line of text (dp_debugdef_shown()) */
	char **shown;
	size_t nshown;
};

struct dp_debugdef *dp_debugdef_new(const char *binary, char *const *objs,
				    size_t nobjs)
{
	struct dp_debugdef *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->binary = binary ? strdup(binary) : NULL;
	c->objs = calloc(nobjs + 1, sizeof(*c->objs));
	for (size_t i = 0; c->objs && i < nobjs; i++)
		if ((c->objs[c->nobjs] = strdup(objs[i])))
			c->nobjs++;
	return c;
}

static void shown_free(struct dp_debugdef *c)
{
	for (size_t i = 0; i < c->nshown; i++)
		free(c->shown[i]);
	free(c->shown);
	c->shown = NULL;
	c->nshown = 0;
}

void dp_debugdef_free(struct dp_debugdef *c)
{
	if (!c)
		return;
	while (c->files) {
		struct dbg_file *f = c->files;

		c->files = f->next;
		dp_dbg_close(f->dbg);
		free(f->path);
		free(f);
	}
	for (size_t i = 0; i < c->nobjs; i++)
		free(c->objs[i]);
	free(c->objs);
	free(c->binary);
	shown_free(c);
	free(c);
}

void dp_debugdef_lines_free(char **lines)
{
	for (size_t i = 0; lines && lines[i]; i++)
		free(lines[i]);
	free(lines);
}

/* ---- what a line holds -------------------------------------------------- */

/* An argument split into NAME=, BODY and :TYPE (pointers into @buf). */
struct arg_parts {
	char buf[256];
	const char *name;	/* NULL: none given */
	const char *body;
	const char *type;	/* "" if none */
	int body_at;		/* BODY's offset in the argument */
};

static void split_arg(const char *arg, struct arg_parts *p)
{
	char *eq, *colon;

	snprintf(p->buf, sizeof(p->buf), "%s", arg);
	p->name = NULL;
	p->body = p->buf;
	p->body_at = 0;
	eq = strchr(p->buf, '=');
	if (eq && !memchr(p->buf, '(', (size_t)(eq - p->buf))) {
		*eq = '\0';
		p->name = p->buf;
		p->body = eq + 1;
		p->body_at = (int)(eq + 1 - p->buf);
	}
	colon = strchr(p->body, ':');
	p->type = "";
	if (colon) {
		*colon = '\0';
		p->type = colon + 1;
	}
}

/* Whether BODY is something only the debug information can fetch. */
static bool body_named(const char *b)
{
	if (isalpha((unsigned char)b[0]) || b[0] == '_')
		return true;
	if (!strcmp(b, "$arg*"))
		return true;
	return !strncmp(b, "$retval", 7) &&
	       (b[7] == '-' || b[7] == '.' || b[7] == '[');
}

/* "$argN" or "$argN:TYPE", unnamed: an fprobe's or tracepoint's
 * parameter by number, which the kernel names from BTF. */
static bool arg_by_number(const char *tok)
{
	return !strncmp(tok, "$arg", 4) && isdigit((unsigned char)tok[4]);
}

/* f: and t: lines read parameters; t: places are tracepoints. */
static bool reads_params(const char *line)
{
	return line[0] == 'f' || line[0] == 't';
}

/* The place's kind; @mod/@where/@rest point into @buf. */
enum place_kind { PL_PLAIN, PL_REL_LINE, PL_FILE_LINE, PL_LAZY };

struct place {
	char buf[512];
	const char *mod;	/* NULL: the program */
	const char *where;	/* function, or source file */
	const char *rest;	/* "+offs%return", the line number, the pattern */
	enum place_kind kind;
};

static bool all_digits(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s);
}

/* The ':' after MOD, or NULL: not one of a C++ name's "::". */
static char *mod_colon(char *s)
{
	for (char *c = strchr(s, ':'); c; c = strchr(c + 2, ':')) {
		if (c[1] != ':')
			return c;
		if (!c[2])
			break;
	}
	return NULL;
}

static void split_place(const char *text, struct place *p)
{
	char *c1, *c2, *semi;

	snprintf(p->buf, sizeof(p->buf), "%s", text);
	p->mod = NULL;
	p->where = p->buf;
	p->rest = "";
	p->kind = PL_PLAIN;
	semi = strchr(p->buf, ';');
	if (semi)
		*semi = '\0';
	c1 = mod_colon(p->buf);
	if (c1) {
		*c1 = '\0';
		p->mod = p->buf;
		p->where = c1 + 1;
		c2 = strrchr(c1 + 1, ':');
		if (c2 && c2[-1] != ':' && all_digits(c2 + 1)) {
			*c2 = '\0';
			p->rest = c2 + 1;
			p->kind = strchr(p->where, '.') ? PL_FILE_LINE :
				  PL_REL_LINE;
		}
	}
	if (semi) {
		p->rest = semi + 1;
		p->kind = PL_LAZY;
	}
}

/* @line without its comment ('#' to the end, as the kernel cuts a
 * write's lines), malloc'd. */
static char *uncommented(const char *line)
{
	return strndup(line, strcspn(line, "#"));
}

/*
 * Whether the kernel's parser, going through @line in order, reaches a
 * name before anything else it refuses: it would hand that name to its
 * BTF parser (NOSUP_BTFARG without BTF).  An earlier mistake is the
 * kernel's to report, with its own error and caret.
 */
static bool btf_turn(const char *line)
{
	struct dp_probe_def def;
	struct dp_error e = { 0 };
	int ret = dp_parse_probe(line, &def, &e);
	bool turn = ret && e.code == DP_ERR_NOSUP_BTFARG;

	if (!ret)
		dp_probe_def_free(&def);
	/* $arg*, $retval->f: refused as $-variables, names all the same */
	if (ret && !turn && e.code == DP_ERR_BAD_VAR && e.command && e.pos >= 0 &&
	    (size_t)e.pos < strlen(e.command)) {
		const char *c = e.command, *b = c + e.pos, *t;
		char word[256];
		struct arg_parts p;

		while (b > c && b[-1] != ' ')
			b--;
		t = b + strcspn(b, " ");
		snprintf(word, sizeof(word), "%.*s", (int)(t - b), b);
		split_arg(word, &p);
		turn = b > c && body_named(p.body);
	}
	dp_error_clear(&e);
	return turn;
}

bool dp_debugdef_needed(const char *line)
{
	struct dp_argv a;
	struct place pl;
	bool need = false;
	char *l = uncommented(line);
	int bad = !l || !line[0] || !strchr("prft", line[0]) ||
		  dp_argv_split(l, &a);

	free(l);
	if (bad)
		return false;
	/* the kernel names an fprobe's $argN from BTF before parsing */
	for (int i = 2; reads_params(line) && i < a.argc && !need; i++)
		need = arg_by_number(a.argv[i]);
	if (need) {
		dp_argv_free(&a);
		return true;
	}
	if (a.argc >= 2 && line[0] != 't') {
		split_place(a.argv[1], &pl);
		need = pl.kind != PL_PLAIN || dp_cxx_place(pl.where);
	}
	if (need) {
		dp_argv_free(&a);
		return true;
	}
	for (int i = 2; i < a.argc && !need; i++) {
		struct arg_parts p;

		split_arg(a.argv[i], &p);
		need = body_named(p.body);
	}
	dp_argv_free(&a);
	return need && btf_turn(line);
}

/* ---- the files ------------------------------------------------------------- */

/* The file @mod names (dp_module_file()), or else the object whose base
 * name @mod begins, up to a '.': "libc" for libc.so.6, as MOD: takes it. */
static const char *mod_path(struct dp_debugdef *c, const char *mod)
{
	const char *f = dp_module_file(c->binary, c->objs, c->nobjs, mod);
	size_t n;

	if (f || !mod)
		return f;
	n = strlen(mod);
	for (size_t i = 0; i < c->nobjs; i++) {
		const char *b = dp_base_name(c->objs[i]);

		if (!strncmp(b, mod, n) && b[n] == '.')
			return c->objs[i];
	}
	return NULL;
}

static struct dbg_file *file_of(struct dp_debugdef *c, const char *path)
{
	struct dbg_file *f;

	for (f = c->files; f; f = f->next)
		if (!strcmp(f->path, path))
			return f;
	f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(path))) {
		free(f);
		return NULL;
	}
	dp_dbg_open(path, &f->dbg, f->why, sizeof(f->why));
	f->next = c->files;
	c->files = f;
	return f;
}

/* ---- translating ------------------------------------------------------------- */

struct xlate {
	struct dp_debugdef *c;
	const char *line;
	struct dp_argv a;
	struct dp_error *e;
	struct dp_dbg *dbg;
	bool ret;		/* r: a return probe */
	bool params;		/* f: or t: (reads_params()) */
	struct place place;
	struct dp_dbg_place pl[MAX_PLACES];
	int npl;
};

/* The errno the kernel's BTF parser returns with each of its errors. */
static int errno_of(enum dp_err_code code)
{
	switch (code) {
	case DP_ERR_NO_BTFARG:
	case DP_ERR_NO_RETVAL:
	case DP_ERR_NO_BTF_FIELD:
		return ENOENT;
	case DP_ERR_NOSUP_DAT_ARG:
		return EOPNOTSUPP;
	default:
		return EINVAL;
	}
}

static int fail(struct xlate *x, enum dp_err_code code, int index, int offset,
		const char *why)
{
	return dp_error_detail(x->e, x->line, code, errno_of(code), index,
			       offset, "%s", why);
}

/*
 * A C++ name for a place ('prog:ns::Widget::draw(int)+4%return'): the
 * line's place becomes MOD:SYMBOL with the same suffix.
 */
static int cxx_place(struct xlate *x, const char *path)
{
	char name[512], sym[512], why[2048], place[1200];
	const char *w = x->place.where, *close = strrchr(w, ')');
	const char *suffix = w + strcspn(close ? close : w, "+%") +
			     (close ? close - w : 0);
	struct dp_elf *elf;
	int ret;

	snprintf(name, sizeof(name), "%.*s", (int)(suffix - w), w);
	/* "f(int) const" keeps its qualifier in the name */
	if (dp_elf_open_why(path, &elf, why, sizeof(why)))
		return fail(x, DP_ERR_BAD_PROBE_ADDR, 1, 0, why);
	ret = dp_cxx_lookup(elf, name, sym, sizeof(sym), why, sizeof(why));
	dp_elf_close(elf);
	if (ret)
		return fail(x, ret == -ENOTUNIQ ? DP_ERR_NON_UNIQ_SYMBOL :
			    DP_ERR_BAD_PROBE_ADDR, 1, 0, why);
	snprintf(place, sizeof(place), "%s%s%s%s", x->place.mod ? x->place.mod :
		 "", x->place.mod ? ":" : "", sym, suffix);
	free(x->a.argv[1]);
	x->a.argv[1] = strdup(place);
	if (!x->a.argv[1])
		return -ENOMEM;
	split_place(x->a.argv[1], &x->place);
	return 0;
}

/* The address(es) of the place; 0 or -errno (the error set). */
static int find_place(struct xlate *x)
{
	char why[1024] = "", *end;
	const char *ps = x->place.where;
	long line;
	uint64_t off = 0;

	switch (x->place.kind) {
	case PL_REL_LINE:
	case PL_FILE_LINE:
		line = strtol(x->place.rest, &end, 10);
		if (x->ret)
			return fail(x, DP_ERR_BAD_RETPROBE, 1, 0, "a return probe "
				    "goes on a function, not a line");
		x->npl = dp_dbg_lines(x->dbg, ps, x->place.kind == PL_REL_LINE,
				      (int)line, x->pl, MAX_PLACES, why,
				      sizeof(why));
		break;
	case PL_LAZY:
		if (x->ret)
			return fail(x, DP_ERR_BAD_RETPROBE, 1, 0, "a return probe "
				    "goes on a function, not a line");
		x->npl = dp_dbg_lazy(x->dbg, ps, x->place.rest, x->pl,
				     MAX_PLACES, why, sizeof(why));
		break;
	default: {
		char fn[256];
		size_t n = strcspn(ps, "+%");
		int inl = 0;

		snprintf(fn, sizeof(fn), "%.*s", (int)n, ps);
		if (ps[n] == '+')
			off = strtoull(ps + n + 1, &end, 0);
		if (ps[n] || x->ret || x->params) {
			/* an offset, a return or an fprobe: the called
			 * copy only */
			x->npl = dp_dbg_func(x->dbg, fn, &x->pl[0], why,
					     sizeof(why)) ? -ENOENT : 1;
		} else {
			/* perf's way: the out-of-line copy and every
			 * inlined one */
			x->npl = dp_dbg_func_places(x->dbg, fn, x->pl,
						    MAX_PLACES, &inl, why,
						    sizeof(why));
		}
		if (x->npl == 1 && off) {
			x->pl[0].addr += off;
			x->pl[0].entry = false;
		}
		if (x->npl > 1 || inl)
			snprintf(x->c->note, sizeof(x->c->note), "%s: %d "
				 "place%s (%d inlined cop%s)", fn, x->npl,
				 x->npl == 1 ? "" : "s", inl,
				 inl == 1 ? "y" : "ies");
		break;
	}
	}
	if (x->npl <= 0)
		return fail(x, DP_ERR_BAD_PROBE_ADDR, 1, 0, why);
	for (int i = 0; i < x->npl; i++)
		x->pl[i].args = x->params;
	return 0;
}

/*
 * traceprobe_expand_meta_args(): each unnamed "$argN[:TYPE]" of an f: or
 * t: line becomes the N-th parameter's name, as the kernel rewrites it
 * from BTF before parsing the arguments.
 */
static int expand_args(struct xlate *x)
{
	char names[MAX_ARGS][33];
	int n = -1;

	for (int i = 2; i < x->a.argc; i++) {
		char *tok = x->a.argv[i], *end, *now;
		long k;

		if (!arg_by_number(tok))
			continue;
		k = strtol(tok + 4, &end, 10);
		if (*end && *end != ':')
			return fail(x, DP_ERR_BAD_VAR, i, 0, "");
		if (k == 0)
			return fail(x, DP_ERR_BAD_ARG_NUM, i, 0, "");
		if (n < 0)
			n = dp_dbg_params(x->dbg, &x->pl[0], names, MAX_ARGS);
		if (k > n)
			return fail(x, DP_ERR_NO_BTFARG, i, 0,
				    "the function takes fewer parameters");
		if (asprintf(&now, "%s%s", names[k - 1], end) < 0)
			return -ENOMEM;
		free(tok);
		x->a.argv[i] = now;
	}
	return 0;
}

/*
 * A tracepoint's parameters are those of the function that calls its
 * probes (include/dprobe/tracepoint.h: __dp_tp_call_NAME), as the
 * kernel's are its probe stub's: looked for in the program, then in its
 * libraries.  -ENODATA: no debug information describes it.
 */
static int tracepoint_place(struct xlate *x)
{
	const char *name = x->place.where;
	char fn[300], why[1024] = "";

	snprintf(fn, sizeof(fn), "__dp_tp_call_%s", name);
	for (size_t i = 0; i <= x->c->nobjs; i++) {
		const char *path = i ? x->c->objs[i - 1] : x->c->binary;
		struct dbg_file *f = path ? file_of(x->c, path) : NULL;

		if (!f || !f->dbg ||
		    dp_dbg_func(f->dbg, fn, &x->pl[0], why, sizeof(why)))
			continue;
		x->dbg = f->dbg;
		x->npl = 1;
		x->pl[0].args = true;
		return 0;
	}
	return -ENODATA;
}

static enum dp_err_code code_of(enum dp_dbg_err e)
{
	switch (e) {
	case DP_DBG_NO_VAR:
	case DP_DBG_OPTIMIZED:
		return DP_ERR_NO_BTFARG;
	case DP_DBG_NO_FIELD:
	case DP_DBG_BAD_INDEX:
		return DP_ERR_NO_BTF_FIELD;
	case DP_DBG_NOT_PTR:
		return DP_ERR_NO_PTR_STRCT;
	case DP_DBG_STRUCT_VAL:
		return DP_ERR_NOSUP_DAT_ARG;
	case DP_DBG_BAD_HYPHEN:
		return DP_ERR_BAD_HYPHEN;
	case DP_DBG_NO_RETVAL:
		return DP_ERR_NO_RETVAL;
	case DP_DBG_TOO_LONG:
		return DP_ERR_ARG_TOO_LONG;
	case DP_DBG_BAD_STRING:
		return DP_ERR_BAD_TYPE4STR;
	default:
		return DP_ERR_NOSUP_BTFARG;
	}
}

/* Append TEXT and a newline to @shown (@len bytes). */
static void show(char *shown, size_t len, const char *text)
{
	size_t n = strlen(shown);

	snprintf(shown + n, len - n, "%s\n", text);
}

/* Append " TEXT" to @out (@len bytes). */
static int put(char *out, size_t len, const char *text)
{
	size_t n = strlen(out);
	int k = snprintf(out + n, len - n, "%s%s", n ? " " : "", text);

	return k < 0 || (size_t)k >= len - n ? -E2BIG : 0;
}

/* One argument (index @i in the line) at place @pl into @out. */
static int one_arg(struct xlate *x, const struct dp_dbg_place *pl, int i,
		   int *pos, bool *all_done, char *out, size_t len,
		   char *shown, size_t shownlen)
{
	struct arg_parts p;
	struct dp_dbg_arg da;
	char why[1024], text[4400];
	enum dp_dbg_err de;
	int at;

	split_arg(x->a.argv[i], &p);
	if (!strcmp(p.body, "$arg*")) {
		char names[MAX_ARGS][33];
		int n;

		if (p.name || *p.type)
			return fail(x, DP_ERR_BAD_VAR_ARGS, i, p.body_at,
				    "$arg* stands for every parameter, each "
				    "named after itself");
		if (*all_done)
			return fail(x, DP_ERR_DOUBLE_ARGS, i, 0, "");
		if (!x->ret && !pl->entry && !pl->scope)
			return fail(x, DP_ERR_NOFENTRY_ARGS, i, 0, "");
		*all_done = true;
		n = dp_dbg_params(x->dbg, pl, names, MAX_ARGS);
		for (int k = 0; k < n; k++) {
			de = dp_dbg_arg(x->dbg, pl, x->ret, names[k], "", &da,
					&at, why, sizeof(why));
			if (de)
				return fail(x, code_of(de), i, 0, why);
			snprintf(text, sizeof(text), "%s=%s", names[k], da.body);
			if (put(out, len, text))
				return fail(x, DP_ERR_ARGS_2LONG, i, 0, "");
			show(shown, shownlen, names[k]);
			(*pos)++;
		}
		return 0;
	}
	(*pos)++;
	/* a $retval of a return probe without a type: the declared one */
	snprintf(text, sizeof(text), "%s%s%s", p.body, *p.type ? ":" : "",
		 p.type);
	show(shown, shownlen, text);
	if (!body_named(p.body) &&
	    !(x->ret && !strcmp(p.body, "$retval") && !*p.type))
		return put(out, len, x->a.argv[i]) ?
		       fail(x, DP_ERR_ARGS_2LONG, i, 0, "") : 0;
	if (!x->ret && !strncmp(p.body, "$retval", 7))
		return fail(x, DP_ERR_RETVAL_ON_PROBE, i, p.body_at, "");
	de = dp_dbg_arg(x->dbg, pl, x->ret, p.body, p.type, &da, &at, why,
			sizeof(why));
	if (de)
		return fail(x, code_of(de), i, p.body_at + at, why);
	if (p.name)
		snprintf(text, sizeof(text), "%s=%s", p.name, da.body);
	else if (da.name[0])
		snprintf(text, sizeof(text), "%s=%s", da.name, da.body);
	else if (!strcmp(p.body, "$retval"))
		snprintf(text, sizeof(text), "%s", da.body);
	else
		snprintf(text, sizeof(text), "arg%d=%s", *pos, da.body);
	return put(out, len, text) ? fail(x, DP_ERR_ARGS_2LONG, i, 0, "") : 0;
}

/* The definition for place @pl. */
static int one_line(struct xlate *x, const struct dp_dbg_place *pl, char **out,
		    char **shown_out)
{
	size_t len = 8192;
	char *buf = calloc(1, len), place[600], *shown = calloc(1, len);
	bool all_done = false;
	int pos = 0, ret = 0;

	if (!buf || !shown) {
		free(buf);
		free(shown);
		return -ENOMEM;
	}
	/* the place as written: a tracepoint, one copy, the one named, or
	 * an offset */
	if (x->line[0] == 't')
		snprintf(place, sizeof(place), "%s", x->a.argv[1]);
	else if (x->place.kind == PL_PLAIN &&
	    ((x->npl == 1 && pl->entry &&
	      strlen(pl->sym) == strcspn(x->place.where, "%") &&
	      !strncmp(pl->sym, x->place.where, strlen(pl->sym))) ||
	     strchr(x->place.where, '+')))
		snprintf(place, sizeof(place), "%s", x->a.argv[1]);
	else if (pl->addr == pl->func)
		snprintf(place, sizeof(place), "%s%s%s%s", x->place.mod ?
			 x->place.mod : "", x->place.mod ? ":" : "", pl->sym,
			 x->place.kind == PL_PLAIN ?
			 x->place.where + strcspn(x->place.where, "%") : "");
	else
		snprintf(place, sizeof(place), "%s%s%s+0x%llx", x->place.mod ?
			 x->place.mod : "", x->place.mod ? ":" : "", pl->sym,
			 (unsigned long long)(pl->addr - pl->func));
	put(buf, len, x->a.argv[0]);
	put(buf, len, place);
	for (int i = 2; i < x->a.argc && !ret; i++)
		ret = one_arg(x, pl, i, &pos, &all_done, buf, len, shown, len);
	if (ret) {
		free(buf);
		free(shown);
		return ret;
	}
	*out = buf;
	*shown_out = shown;
	return 0;
}

/*
 * No debug information for a plain place: what the kernel's parser says
 * of @line.  Where it turns to BTF (a name), its error, with @why (which
 * files were searched) as dprobe's detail; else -ENODATA: the caller
 * applies the line and the parser's own error stands.
 */
static int kernel_says(const char *line, struct dp_error *e, const char *why)
{
	struct dp_probe_def def;
	struct dp_error k = { 0 };
	int ret = dp_parse_probe(line, &def, &k);

	if (!ret) {
		dp_probe_def_free(&def);
		return -ENODATA;
	}
	if (k.code != DP_ERR_NOSUP_BTFARG) {
		dp_error_clear(&k);
		return -ENODATA;
	}
	snprintf(k.detail, sizeof(k.detail), "%s", why);
	if (e) {
		dp_error_clear(e);
		*e = k;
	} else {
		dp_error_clear(&k);
	}
	return ret;
}

const char *dp_debugdef_note(const struct dp_debugdef *c)
{
	return c->note;
}

const char *dp_debugdef_shown(const struct dp_debugdef *c, size_t line,
			      unsigned arg)
{
	const char *s = line < c->nshown ? c->shown[line] : NULL;

	for (unsigned i = 0; s && i < arg; i++) {
		s = strchr(s, '\n');
		s = s ? s + 1 : NULL;
	}
	return s && *s ? s : NULL;
}

int dp_debugdef_translate(struct dp_debugdef *c, const char *line,
			  char ***out, struct dp_error *e)
{
	struct xlate *x = calloc(1, sizeof(*x));
	const char *path;
	struct dbg_file *f;
	char **lines = NULL;
	int ret, first;
	bool plain;

	char *own = uncommented(line);

	*out = NULL;
	c->note[0] = '\0';
	shown_free(c);
	if (!x || !own) {
		free(x);
		free(own);
		return -ENOMEM;
	}
	line = own;
	x->c = c;
	x->line = line;
	x->e = e;
	if (dp_argv_split(line, &x->a) || x->a.argc < 2) {
		ret = dp_error_detail(e, line, DP_ERR_BAD_PROBE_ADDR, EINVAL, 1,
				      0, "no place");
		goto out;
	}
	/* a return probe: r:, or a place with %return */
	x->ret = line[0] == 'r' ||
		 (x->a.argc > 1 && strstr(x->a.argv[1], "%return"));
	x->params = reads_params(line);
	first = x->a.argc + 1;
	split_place(x->a.argv[1], &x->place);
	if (line[0] == 't') {
		ret = tracepoint_place(x);
		if (ret == -ENODATA) {
			ret = kernel_says(line, e, "no debug information "
					  "describes the tracepoint's "
					  "parameters");
			goto out;
		}
		if (!ret)
			ret = expand_args(x);
		if (ret)
			goto out;
		goto translate;
	}
	if (x->place.kind != PL_PLAIN && !x->place.mod) {
		ret = fail(x, DP_ERR_BAD_PROBE_ADDR, 1, 0, "a line place names "
			   "its file first: PROG:FUNC:LINE, PROG:FILE.c:LINE, "
			   "PROG:FUNC;PATTERN");
		goto out;
	}
	path = mod_path(c, x->place.mod);
	/* a plain place without debug information: the kernel's parser
	 * says what it says (BTF not available, or an earlier mistake) */
	plain = x->place.kind == PL_PLAIN && !dp_cxx_place(x->place.where);
	if (!path && plain) {
		ret = kernel_says(line, e, "no program to look the place up in: "
				  "name its file (PROG:FUNC)");
		goto out;
	}
	if (!path) {
		ret = fail(x, DP_ERR_BAD_PROBE_ADDR, 1, 0, x->place.mod ?
			   "that file is not the program's nor one of its "
			   "libraries: name it by its path" :
			   "no program to look the place up in: name its file "
			   "(PROG:FUNC)");
		goto out;
	}
	if (dp_cxx_place(x->place.where)) {
		ret = cxx_place(x, path);
		if (ret)
			goto out;
	}
	for (int i = 2; i < x->a.argc; i++) {
		struct arg_parts p;

		split_arg(x->a.argv[i], &p);
		if (body_named(p.body) ||
		    (x->params && arg_by_number(x->a.argv[i]))) {
			first = i;
			break;
		}
	}
	if (first == x->a.argc + 1 && x->place.kind == PL_PLAIN) {
		/* a C++ place alone: no debug information needed */
		lines = calloc(2, sizeof(*lines));
		if (!lines || !(lines[0] = dp_argv_join(&x->a))) {
			free(lines);
			ret = -ENOMEM;
			goto out;
		}
		*out = lines;
		goto out;
	}
	f = file_of(c, path);
	if (f && !f->dbg && plain) {
		ret = kernel_says(line, e, f->why);
		goto out;
	}
	if (!f || !f->dbg) {
		ret = fail(x, DP_ERR_NOSUP_BTFARG,
			   x->place.kind != PL_PLAIN || first > x->a.argc ? 1 :
			   first, 0,
			   f ? f->why : "out of memory");
		goto out;
	}
	x->dbg = f->dbg;
	ret = find_place(x);
	if (!ret && x->params)
		ret = expand_args(x);
	if (ret)
		goto out;
translate:
	lines = calloc((size_t)x->npl + 1, sizeof(*lines));
	if (!lines) {
		ret = -ENOMEM;
		goto out;
	}
	c->shown = calloc((size_t)x->npl, sizeof(*c->shown));
	c->nshown = c->shown ? (size_t)x->npl : 0;
	for (int i = 0; i < x->npl && !ret; i++)
		ret = one_line(x, &x->pl[i], &lines[i],
			       c->shown ? &c->shown[i] : &(char *){ NULL });
	if (ret) {
		dp_debugdef_lines_free(lines);
		lines = NULL;
	}
	*out = lines;
out:
	dp_argv_free(&x->a);
	free(x);
	free(own);
	return ret;
}

int dp_debugdef_check(struct dp_debugdef *c, const char *line,
		      struct dp_error *e)
{
	struct xlate x = { .c = c, .line = line, .e = e };
	struct dbg_file *f;
	const char *path, *fn;
	int nparams, ret = 0;
	bool returns, ret_probe;

	if (!strchr("prf", line[0]) || dp_argv_split(line, &x.a) || x.a.argc < 3)
		goto out;
	split_place(x.a.argv[1], &x.place);
	fn = x.place.where;
	path = mod_path(c, x.place.mod);
	/* a function by name, at its entry or return */
	if (x.place.kind != PL_PLAIN || !path || strchr(fn, '+') ||
	    isdigit((unsigned char)fn[0]) || !(f = file_of(c, path)) || !f->dbg)
		goto out;
	x.dbg = f->dbg;
	ret_probe = line[0] == 'r' || strstr(fn, "%return");
	{
		char name[256];
		struct dp_dbg_place pl;
		char why[512];

		snprintf(name, sizeof(name), "%.*s", (int)strcspn(fn, "%"), fn);
		if (dp_dbg_func(x.dbg, name, &pl, why, sizeof(why)) ||
		    dp_dbg_signature(x.dbg, &pl, &nparams, &returns))
			goto out;
	}
	for (int i = 2; i < x.a.argc && !ret; i++) {
		struct arg_parts p;
		char *end;
		long n;

		split_arg(x.a.argv[i], &p);
		if (!strncmp(p.body, "$arg", 4) && isdigit((unsigned char)p.body[4])) {
			n = strtol(p.body + 4, &end, 10);
			if (!*end && nparams >= 0 && n > nparams)
				ret = fail(&x, DP_ERR_NO_BTFARG, i, p.body_at,
					   "the function takes fewer parameters");
		} else if (ret_probe && !strcmp(p.body, "$retval") && !returns) {
			ret = fail(&x, DP_ERR_NO_RETVAL, i, p.body_at, "");
		}
	}
out:
	dp_argv_free(&x.a);
	return ret;
}

/* ---- %pd and %pD ------------------------------------------------------------ */

/* "NAME=BODY:%pd" or "BODY:%pD" (the kernel's glob "*:%p[dD]"). */
static bool vfs_arg(const char *tok)
{
	size_t n = strlen(tok);

	return n > 4 && !strcmp(tok + n - 4, ":%pd") ? true :
	       n > 4 && !strcmp(tok + n - 4, ":%pD");
}

/* PATH:OFFSET, the uprobe form, as the kernel's dynamic_events tells it. */
static bool uprobe_place(const char *place)
{
	const char *colon = strrchr(place, ':');

	return strchr(place, '/') && colon && isdigit((unsigned char)colon[1]);
}

/* The offsets the expansion needs, from @path's debug information. */
static int vfs_offsets(struct dp_debugdef *c, const char *path, int64_t *name,
		       int64_t *dentry, char *why, size_t whylen)
{
	struct dbg_file *f = path ? file_of(c, path) : NULL;

	if (!f || !f->dbg) {
		snprintf(why, whylen, "%%pd/%%pD need the debug information "
			 "of %s: %s", path ? path : "the program",
			 f ? f->why : "no such file");
		return -ENOENT;
	}
	if (dp_dbg_member_offset(f->dbg, "dentry", "d_name.name", name) ||
	    dp_dbg_member_offset(f->dbg, "file", "f_path.dentry", dentry)) {
		snprintf(why, whylen, "%%pd/%%pD read struct dentry's "
			 "d_name.name and struct file's f_path.dentry: %s "
			 "describes no such members", path);
		return -ENOENT;
	}
	return 0;
}

int dp_debugdef_vfs_args(struct dp_debugdef *c, const char *line, char **out,
			 struct dp_error *e)
{
	char *own = uncommented(line), why[1400], *buf = NULL;
	int64_t name = 0, dentry = 0;
	struct dp_argv a;
	struct place pl;
	size_t len = 0;
	int ret = -ENODATA, first = 0;
	FILE *f;

	*out = NULL;
	if (!own || dp_argv_split(own, &a)) {
		free(own);
		return -ENOMEM;
	}
	for (int i = 2; i < a.argc && !first; i++)
		if (vfs_arg(a.argv[i]))
			first = i;
	/* kprobe_events and fprobes expand them; uprobe_events does not */
	if (!first || !strchr("prf", own[0]) || a.argc < 2 || uprobe_place(a.argv[1]))
		goto out;
	split_place(a.argv[1], &pl);
	ret = vfs_offsets(c, pl.mod ? mod_path(c, pl.mod) : c->binary, &name,
			  &dentry, why, sizeof(why));
	if (ret) {
		ret = dp_error_detail(e, own, DP_ERR_BAD_TYPE, EINVAL, first,
				      (int)strlen(a.argv[first]) - 3, "%s", why);
		goto out;
	}
	f = open_memstream(&buf, &len);
	if (!f) {
		ret = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < a.argc; i++) {
		const char *t = a.argv[i], *eq = strchr(t, '=');
		int body = eq ? (int)(eq + 1 - t) : 0;
		int blen = (int)strlen(t) - 4 - body;

		fputs(i ? " " : "", f);
		if (i < 2 || !vfs_arg(t)) {
			fputs(t, f);
			continue;
		}
		/* traceprobe_expand_dentry_args(): the name, then the
		 * string at the dentry's name (through the file's) */
		if (t[strlen(t) - 1] == 'd')
			fprintf(f, "%.*s+0x0(+0x%llx(%.*s)):string", body, t,
				(unsigned long long)name, blen, t + body);
		else
			fprintf(f, "%.*s+0x0(+0x%llx(+0x%llx(%.*s))):string",
				body, t, (unsigned long long)name,
				(unsigned long long)dentry, blen, t + body);
	}
	ret = fclose(f) ? -ENOMEM : 0;
	if (!ret)
		*out = buf;
	else
		free(buf);
out:
	dp_argv_free(&a);
	free(own);
	return ret;
}
