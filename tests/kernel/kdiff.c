// SPDX-License-Identifier: GPL-2.0
/*
 * kdiff - the kernel side of the uprobe_events differential test.
 *
 *   kdiff expand NAME=VALUE... < CORPUS > EXPANDED
 *   kdiff kernel EXPANDED OUT.jsonl
 *   kdiff compare EXPANDED KERNEL.jsonl DPROBE.jsonl COUNTS
 *   kdiff formats DPROBE EXPANDED COUNTS [KFORMATS]
 *   kdiff kformats EXPANDED KFORMATS
 *   kdiff cleanup UPROBES_PATH_PREFIX
 *   kdiff show RESULTS.jsonl
 *
 * "kernel" writes every line of a corpus to uprobe_events with one write()
 * each and records what the kernel made of it, in the shape of
 * `dprobe check --json`.  "compare" puts the two side by side.  "formats"
 * creates events, reads their format files and compares them with
 * `dprobe format` (DPROBE "-": only print the kernel's).  "cleanup" removes every probe in a dpk* group and every
 * probe of group uprobes whose file lies under the given prefix: the test
 * owns exactly those.  Only uprobe_events, error_log and events/.../format
 * are touched; nothing is ever enabled and error_log is only read.
 *
 * Kprobe mode (KDIFF_EVENTS=kprobe_events, used by tests/qemu/ inside a
 * guest kernel that has kprobes): lines go to kprobe_events instead and a
 * create's listing line is simply the new one, as the guest is ours alone.
 * "kformats" saves the kernel's format files there, for a later "formats"
 * on the host (which has no kprobe_events) to compare with dprobe.
 * KDIFF_EXPECT=FILE names accepted differences: lines "INPUT<TAB>WHY";
 * a mismatch whose input is listed is reported as EXPECTED-DIFFERENCE
 * and counted as passed.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *tracefs = "/sys/kernel/tracing";
static const char *events_file = "uprobe_events";
static bool kprobe_mode;

/* ---- small helpers -------------------------------------------------- */

struct buf {
	char *s;
	size_t len, cap;
};

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("kdiff: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

static char *xstrndup(const char *s, size_t n)
{
	char *d = xrealloc(NULL, n + 1);

	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

static char *xstrdup(const char *s)
{
	return s ? xstrndup(s, strlen(s)) : NULL;
}

static void buf_add(struct buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->s = xrealloc(b->s, b->cap);
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void buf_puts(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

static void buf_printf(struct buf *b, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	buf_add(b, tmp, n < (int)sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* Whole file, NUL-terminated; NULL (errno set) if it cannot be read. */
static char *read_file(const char *path, size_t *lenp)
{
	struct buf b = { 0 };
	char chunk[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	buf_add(&b, "", 0);
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		buf_add(&b, chunk, n);
	close(fd);
	if (n < 0) {
		free(b.s);
		return NULL;
	}
	if (lenp)
		*lenp = b.len;
	return b.s;
}

struct lines {
	char **v;
	size_t n;
};

/* Split at '\n'; a trailing newline does not make an empty last line. */
static struct lines split_lines(const char *text)
{
	struct lines l = { 0 };
	const char *p = text;

	while (*p) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		l.v = xrealloc(l.v, (l.n + 1) * sizeof(*l.v));
		l.v[l.n++] = xstrndup(p, len);
		p += len + (e ? 1 : 0);
	}
	return l;
}

static void free_lines(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static struct lines read_lines(const char *path)
{
	char *text = read_file(path, NULL);
	struct lines l;

	if (!text)
		die("%s: %s", path, strerror(errno));
	l = split_lines(text);
	free(text);
	return l;
}

static char *tracefs_path(const char *rel)
{
	struct buf b = { 0 };

	buf_printf(&b, "%s/", tracefs);
	buf_puts(&b, rel);
	return b.s;
}

static const char *errno_name(int err)
{
	const char *n = strerrorname_np(err);

	return n ? n : "E?";
}

/* ---- expand ---------------------------------------------------------- */

/*
 * Placeholders: @NAME@ (a variable given on the command line, or @TAB@,
 * @CR@, @VT@, @FF@; NAME starts with an upper-case letter), @REP(N,TEXT)@ (TEXT N times),
 * @SEQ(N,TEXT)@ (TEXT N times, "{i}" replaced by 1..N), @PADTO(N)@ (spaces
 * so that the whole line is N bytes long).  TEXT ends at the first ")@" and
 * may itself hold @NAME@.  A '@' followed by anything else is literal, so
 * "@0x10", "@+8" and "b4@4/16" stay as written.  Lines starting with ";;"
 * are notes for the reader and are dropped.
 */
static int nvars;
static char **var_names, **var_values;

static const char *var_get(const char *name, size_t len)
{
	/* Whitespace that a corpus file cannot show plainly. */
	static const char *const builtin[][2] = {
		{ "TAB", "\t" }, { "CR", "\r" }, { "VT", "\v" }, { "FF", "\f" },
	};

	for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		if (strlen(builtin[i][0]) == len &&
		    !memcmp(builtin[i][0], name, len))
			return builtin[i][1];
	for (int i = 0; i < nvars; i++)
		if (strlen(var_names[i]) == len &&
		    !memcmp(var_names[i], name, len))
			return var_values[i];
	return NULL;
}

#define PAD_MARK '\001'

static void expand(const char *s, size_t len, struct buf *out, int *padto,
		   const char *whole);

static const char *expand_func(const char *p, const char *end, const char *fn,
			       struct buf *out, int *padto, const char *whole)
{
	const char *body = p + strlen(fn) + 2;	/* "@FN(" */
	char *close = NULL;
	long n = strtol(body, &close, 10);
	const char *text, *stop;
	struct buf t = { 0 };

	if (!strcmp(fn, "PADTO")) {
		if (close[0] != ')' || close[1] != '@')
			die("bad @PADTO in: %s", whole);
		*padto = (int)n;
		buf_add(out, (char[]){ PAD_MARK }, 1);
		return close + 2;
	}
	if (*close != ',')
		die("bad @%s in: %s", fn, whole);
	text = close + 1;
	stop = strstr(text, ")@");
	if (!stop || stop > end)
		die("unterminated @%s in: %s", fn, whole);
	expand(text, stop - text, &t, padto, whole);
	for (long i = 1; i <= n; i++) {
		const char *q = t.s ? t.s : "";

		while (*q) {
			const char *m = strcmp(fn, "SEQ") ? NULL :
					strstr(q, "{i}");

			if (!m) {
				buf_puts(out, q);
				break;
			}
			buf_add(out, q, m - q);
			buf_printf(out, "%ld", i);
			q = m + 3;
		}
	}
	free(t.s);
	return stop + 2;
}

static void expand(const char *s, size_t len, struct buf *out, int *padto,
		   const char *whole)
{
	const char *p = s, *end = s + len;

	buf_add(out, "", 0);
	while (p < end) {
		const char *q = p + 1;
		char fn[16];

		if (*p != '@' || q >= end || !isupper((unsigned char)*q)) {
			buf_add(out, p, 1);
			p++;
			continue;
		}
		while (q < end && (isalnum((unsigned char)*q) || *q == '_'))
			q++;
		if (q < end && *q == '(' && q - p - 1 < (long)sizeof(fn)) {
			memcpy(fn, p + 1, q - p - 1);
			fn[q - p - 1] = '\0';
			if (!strcmp(fn, "REP") || !strcmp(fn, "SEQ") ||
			    !strcmp(fn, "PADTO")) {
				p = expand_func(p, end, fn, out, padto, whole);
				continue;
			}
		}
		if (q < end && *q == '@') {
			const char *v = var_get(p + 1, q - p - 1);

			if (!v)
				die("unknown placeholder %.*s in: %s",
				    (int)(q - p + 1), p, whole);
			buf_puts(out, v);
			p = q + 1;
			continue;
		}
		buf_add(out, p, 1);
		p++;
	}
}

static int cmd_expand(int argc, char **argv)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	nvars = argc;
	var_names = xrealloc(NULL, argc * sizeof(char *));
	var_values = xrealloc(NULL, argc * sizeof(char *));
	for (int i = 0; i < argc; i++) {
		char *eq = strchr(argv[i], '=');

		if (!eq)
			die("expand: NAME=VALUE expected, got %s", argv[i]);
		var_names[i] = xstrndup(argv[i], eq - argv[i]);
		var_values[i] = eq + 1;
	}
	while ((n = getline(&line, &cap, stdin)) >= 0) {
		struct buf out = { 0 };
		int padto = -1;
		char *mark;

		if (n && line[n - 1] == '\n')
			line[--n] = '\0';
		if (!strncmp(line, ";;", 2))
			continue;
		expand(line, n, &out, &padto, line);
		mark = memchr(out.s, PAD_MARK, out.len);
		if (mark) {
			long fill = padto - (long)(out.len - 1);
			struct buf o2 = { 0 };

			if (fill < 0)
				die("line longer than @PADTO: %s", line);
			buf_add(&o2, out.s, mark - out.s);
			for (long i = 0; i < fill; i++)
				buf_add(&o2, " ", 1);
			buf_puts(&o2, mark + 1);
			free(out.s);
			out = o2;
		}
		fwrite(out.s, 1, out.len, stdout);
		fputc('\n', stdout);
		free(out.s);
	}
	free(line);
	return 0;
}

/* ---- results (the schema of `dprobe check --json`) ----------------- */

struct result {
	char *input;
	bool accepted;
	char *canonical;	/* NULL: null */
	char *err;		/* errno name */
	char *error;		/* message */
	int caret;		/* -1: null */
	char *command;
	bool logged;
	char *note;		/* harness remark (kernel side only) */
};

static void free_result(struct result *r)
{
	free(r->input);
	free(r->canonical);
	free(r->err);
	free(r->error);
	free(r->command);
	free(r->note);
	memset(r, 0, sizeof(*r));
}

static void json_str(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void write_result(FILE *f, const struct result *r)
{
	fputs("{\"input\":", f);
	json_str(f, r->input);
	fprintf(f, ",\"accepted\":%s,\"canonical\":",
		r->accepted ? "true" : "false");
	json_str(f, r->canonical);
	fputs(",\"errno\":", f);
	json_str(f, r->err);
	fputs(",\"error\":", f);
	json_str(f, r->error);
	if (r->caret < 0)
		fputs(",\"caret_col\":null", f);
	else
		fprintf(f, ",\"caret_col\":%d", r->caret);
	fputs(",\"command\":", f);
	json_str(f, r->command);
	fprintf(f, ",\"logged\":%s", r->logged ? "true" : "false");
	if (r->note) {
		fputs(",\"note\":", f);
		json_str(f, r->note);
	}
	fputs("}\n", f);
}

/*
 * A small JSON reader: enough for a stream of flat objects (or an array of
 * them) whose values are strings, numbers, booleans or null.  Nested
 * values are skipped.
 */
struct jp {
	const char *p;
	const char *err;
};

static void jp_ws(struct jp *j)
{
	while (isspace((unsigned char)*j->p))
		j->p++;
}

static void utf8_put(struct buf *b, unsigned cp)
{
	char t[4];

	if (cp < 0x80) {
		t[0] = cp;
		buf_add(b, t, 1);
	} else if (cp < 0x800) {
		t[0] = 0xc0 | cp >> 6;
		t[1] = 0x80 | (cp & 0x3f);
		buf_add(b, t, 2);
	} else {
		t[0] = 0xe0 | cp >> 12;
		t[1] = 0x80 | ((cp >> 6) & 0x3f);
		t[2] = 0x80 | (cp & 0x3f);
		buf_add(b, t, 3);
	}
}

static char *jp_string(struct jp *j)
{
	struct buf b = { 0 };

	buf_add(&b, "", 0);
	if (*j->p != '"') {
		j->err = "string expected";
		return b.s;
	}
	for (j->p++; *j->p && *j->p != '"'; j->p++) {
		char c = *j->p;

		if (c != '\\') {
			buf_add(&b, &c, 1);
			continue;
		}
		c = *++j->p;
		switch (c) {
		case 'n': buf_add(&b, "\n", 1); break;
		case 't': buf_add(&b, "\t", 1); break;
		case 'r': buf_add(&b, "\r", 1); break;
		case 'b': buf_add(&b, "\b", 1); break;
		case 'f': buf_add(&b, "\f", 1); break;
		case 'u': {
			unsigned cp = 0;

			if (sscanf(j->p + 1, "%4x", &cp) != 1) {
				j->err = "bad \\u escape";
				return b.s;
			}
			utf8_put(&b, cp);
			j->p += 4;
			break;
		}
		case '\0':
			j->err = "unterminated string";
			return b.s;
		default:
			buf_add(&b, &c, 1);
		}
	}
	if (*j->p != '"')
		j->err = "unterminated string";
	else
		j->p++;
	return b.s;
}

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_OTHER };

struct jval {
	enum jtype t;
	bool b;
	long n;
	char *s;
};

static void jp_skip_nested(struct jp *j)
{
	int depth = 0;

	do {
		if (*j->p == '"') {
			free(jp_string(j));
			continue;
		}
		if (*j->p == '{' || *j->p == '[')
			depth++;
		else if (*j->p == '}' || *j->p == ']')
			depth--;
		if (!*j->p) {
			j->err = "unterminated value";
			return;
		}
		j->p++;
	} while (depth > 0);
}

static struct jval jp_value(struct jp *j)
{
	struct jval v = { J_OTHER, false, 0, NULL };

	jp_ws(j);
	if (*j->p == '"') {
		v.t = J_STR;
		v.s = jp_string(j);
	} else if (!strncmp(j->p, "null", 4)) {
		v.t = J_NULL;
		j->p += 4;
	} else if (!strncmp(j->p, "true", 4)) {
		v.t = J_BOOL;
		v.b = true;
		j->p += 4;
	} else if (!strncmp(j->p, "false", 5)) {
		v.t = J_BOOL;
		j->p += 5;
	} else if (*j->p == '-' || isdigit((unsigned char)*j->p)) {
		char *e;

		v.t = J_NUM;
		v.n = strtol(j->p, &e, 10);
		j->p = e;
		while (strchr("0123456789.eE+-", *j->p) && *j->p)
			j->p++;
	} else if (*j->p == '{' || *j->p == '[') {
		jp_skip_nested(j);
	} else {
		j->err = "unexpected character";
	}
	return v;
}

static void take_str(char **dst, struct jval *v)
{
	free(*dst);
	*dst = v->t == J_STR ? v->s : NULL;
	if (v->t != J_STR)
		free(v->s);
	v->s = NULL;
}

/* One object at j->p into r. */
static void jp_object(struct jp *j, struct result *r)
{
	memset(r, 0, sizeof(*r));
	r->caret = -1;
	jp_ws(j);
	if (*j->p != '{') {
		j->err = "object expected";
		return;
	}
	j->p++;
	for (;;) {
		char *key;
		struct jval v;

		jp_ws(j);
		if (*j->p == '}') {
			j->p++;
			return;
		}
		key = jp_string(j);
		jp_ws(j);
		if (j->err || *j->p != ':') {
			free(key);
			j->err = j->err ? j->err : "':' expected";
			return;
		}
		j->p++;
		v = jp_value(j);
		if (!strcmp(key, "input"))
			take_str(&r->input, &v);
		else if (!strcmp(key, "canonical"))
			take_str(&r->canonical, &v);
		else if (!strcmp(key, "errno"))
			take_str(&r->err, &v);
		else if (!strcmp(key, "error"))
			take_str(&r->error, &v);
		else if (!strcmp(key, "command"))
			take_str(&r->command, &v);
		else if (!strcmp(key, "note"))
			take_str(&r->note, &v);
		else if (!strcmp(key, "accepted"))
			r->accepted = v.t == J_BOOL && v.b;
		else if (!strcmp(key, "logged"))
			r->logged = v.t == J_BOOL && v.b;
		else if (!strcmp(key, "caret_col"))
			r->caret = v.t == J_NUM ? (int)v.n : -1;
		free(v.s);
		free(key);
		if (j->err)
			return;
		jp_ws(j);
		if (*j->p == ',') {
			j->p++;
		} else if (*j->p != '}') {
			j->err = "',' or '}' expected";
			return;
		}
	}
}

/* Every object of a JSON-lines stream or of a top-level array. */
static struct result *read_results(const char *path, size_t *np)
{
	char *text = read_file(path, NULL);
	struct result *rs = NULL;
	size_t n = 0;
	struct jp j;

	if (!text)
		die("%s: %s", path, strerror(errno));
	j.p = text;
	j.err = NULL;
	for (;;) {
		jp_ws(&j);
		if (*j.p == '[' || *j.p == ']' || *j.p == ',') {
			j.p++;
			continue;
		}
		if (!*j.p)
			break;
		rs = xrealloc(rs, (n + 1) * sizeof(*rs));
		jp_object(&j, &rs[n]);
		if (j.err) {
			fprintf(stderr, "kdiff: %s: JSON error (%s) near: %.60s\n",
				path, j.err, j.p);
			free_result(&rs[n]);
			break;
		}
		n++;
	}
	free(text);
	*np = n;
	return rs;
}

/* ---- the kernel ------------------------------------------------------ */

static bool same_str(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return !strcmp(a, b);
}

struct logent {
	char *text;		/* whole entry, timestamp included */
	char *loc, *msg, *command;
	int caret;
};

struct errlog {
	struct logent *e;
	size_t n;
};

static void free_errlog(struct errlog *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->e[i].text);
		free(l->e[i].loc);
		free(l->e[i].msg);
		free(l->e[i].command);
	}
	free(l->e);
	l->e = NULL;
	l->n = 0;
}

/*
 * "[ts] LOC: error: MSG" / "  Command: CMD" / "<spaces>^"; an entry is
 * every line up to the next one starting with '['.
 */
static struct errlog read_errlog(void)
{
	char *path = tracefs_path("error_log");
	char *text = read_file(path, NULL);
	struct lines l;
	struct errlog log = { 0 };

	if (!text)
		die("%s: %s", path, strerror(errno));
	free(path);
	l = split_lines(text);
	free(text);
	for (size_t i = 0; i < l.n; i++) {
		struct logent *e;
		struct buf all = { 0 };
		const char *rb, *sep;

		if (l.v[i][0] != '[')
			continue;
		log.e = xrealloc(log.e, (log.n + 1) * sizeof(*log.e));
		e = &log.e[log.n++];
		memset(e, 0, sizeof(*e));
		e->caret = -1;
		buf_puts(&all, l.v[i]);
		rb = strstr(l.v[i], "] ");
		sep = rb ? strstr(rb, ": error: ") : NULL;
		if (sep) {
			e->loc = xstrndup(rb + 2, sep - rb - 2);
			e->msg = xstrdup(sep + 9);
		}
		for (size_t k = i + 1; k < l.n && l.v[k][0] != '['; k++) {
			buf_puts(&all, "\n");
			buf_puts(&all, l.v[k]);
			if (!strncmp(l.v[k], "  Command: ", 11) && !e->command)
				e->command = xstrdup(l.v[k] + 11);
			else if (strchr(l.v[k], '^') && e->caret < 0)
				e->caret = (int)(strchr(l.v[k], '^') - l.v[k]) - 11;
		}
		e->text = all.s;
	}
	free_lines(&l);
	return log;
}

/* argv re-joined with single spaces, after the kernel's '#' cut. */
static char *joined_command(const char *line)
{
	struct buf b = { 0 };
	const char *p = line;
	const char *hash = strchr(line, '#');
	const char *end = hash ? hash : line + strlen(line);

	buf_add(&b, "", 0);
	while (p < end) {
		const char *s;

		while (p < end && isspace((unsigned char)*p))
			p++;
		s = p;
		while (p < end && !isspace((unsigned char)*p))
			p++;
		if (p > s) {
			if (b.len)
				buf_add(&b, " ", 1);
			buf_add(&b, s, p - s);
		}
	}
	return b.s;
}

/* One write() of line + '\n'; returns 0 or the errno. */
static int kwrite(const char *line)
{
	char *path = tracefs_path(events_file);
	int fd = open(path, O_WRONLY | O_APPEND);
	size_t len = strlen(line);
	char *b;
	ssize_t n;
	int err = 0;

	if (fd < 0)
		die("%s: %s", path, strerror(errno));
	free(path);
	b = xrealloc(NULL, len + 1);
	memcpy(b, line, len);
	b[len] = '\n';
	n = write(fd, b, len + 1);
	if (n < 0)
		err = errno;
	else if ((size_t)n != len + 1)
		err = EIO;
	free(b);
	close(fd);
	return err;
}

static struct lines read_listing(void)
{
	char *path = tracefs_path(events_file);
	char *text = read_file(path, NULL);
	struct lines l;

	if (!text)
		die("%s: %s", path, strerror(errno));
	free(path);
	l = split_lines(text);
	free(text);
	return l;
}

static bool in_lines(const struct lines *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], s))
			return true;
	return false;
}

/* The place token of a create line, up to its last ':' ("" if none). */
static char *line_path(const char *line)
{
	char *cmd = joined_command(line);
	char *sp = strchr(cmd, ' '), *path, *colon;

	if (!sp) {
		free(cmd);
		return xstrdup("");
	}
	path = xstrdup(sp + 1);
	free(cmd);
	sp = strchr(path, ' ');
	if (sp)
		*sp = '\0';
	colon = strrchr(path, ':');
	if (colon)
		*colon = '\0';
	return path;
}

/*
 * Apply one line and observe the kernel: the write's errno, the error_log
 * entry it added (matched by its Command, as other writers may log too),
 * and the probe line it added to the listing (matched by its path, as
 * other users of uprobe_events may add theirs meanwhile).
 */
static void kernel_apply(const char *line, struct result *r)
{
	struct lines before = read_listing(), after;
	struct errlog lb = read_errlog(), la;
	char *cmd = joined_command(line);
	int err = kwrite(line);

	memset(r, 0, sizeof(*r));
	r->input = xstrdup(line);
	r->caret = -1;
	r->accepted = !err;
	after = read_listing();
	la = read_errlog();
	if (!err) {
		char *path = line_path(line);
		size_t plen = strlen(path);
		int found = 0;

		for (size_t i = 0; i < after.n; i++) {
			const char *sp = strchr(after.v[i], ' ');

			if (in_lines(&before, after.v[i]) || !sp)
				continue;
			if (!kprobe_mode && (strncmp(sp + 1, path, plen) ||
					     sp[1 + plen] != ':'))
				continue;
			if (!found++)
				r->canonical = xstrdup(after.v[i]);
		}
		if (found > 1)
			r->note = xstrdup("several new listing lines");
		free(path);
	} else {
		r->err = xstrdup(errno_name(err));
		for (size_t i = la.n; i-- > 0;) {
			bool old = false;

			for (size_t k = 0; k < lb.n && !old; k++)
				old = !strcmp(lb.e[k].text, la.e[i].text);
			if (old || !la.e[i].command ||
			    strcmp(la.e[i].command, cmd))
				continue;
			r->logged = true;
			r->error = xstrdup(la.e[i].msg);
			r->command = xstrdup(la.e[i].command);
			r->caret = la.e[i].caret;
			if (la.e[i].loc &&
			    strcmp(la.e[i].loc, kprobe_mode ? "trace_kprobe" :
				   "trace_uprobe"))
				r->note = xstrdup(la.e[i].loc);
			break;
		}
	}
	free(cmd);
	free_lines(&before);
	free_lines(&after);
	free_errlog(&lb);
	free_errlog(&la);
}

/*
 * A rejected line changes nothing, so it can be tried again.  Do that when
 * no error_log entry turned up: another user of the shared tracefs may have
 * cleared error_log (O_TRUNC) between our write and our read.  A line the
 * kernel really does not log stays unlogged every time.
 */
static void kernel_apply_retry(const char *line, struct result *r)
{
	kernel_apply(line, r);
	for (int i = 0; i < 3 && !r->accepted && !r->logged; i++) {
		struct result again;

		usleep(20000);
		kernel_apply(line, &again);
		if (again.accepted || !again.logged ||
		    !same_str(again.err, r->err)) {
			free_result(&again);
			continue;
		}
		free_result(r);
		*r = again;
	}
}

static int cmd_kernel(const char *corpus, const char *out)
{
	struct lines l = read_lines(corpus);
	FILE *f = fopen(out, "w");

	if (!f)
		die("%s: %s", out, strerror(errno));
	for (size_t i = 0; i < l.n; i++) {
		struct result r;

		kernel_apply_retry(l.v[i], &r);
		write_result(f, &r);
		free_result(&r);
	}
	fclose(f);
	free_lines(&l);
	return 0;
}

/* ---- cleanup --------------------------------------------------------- */

/*
 * Is this listing line ours?  Fills "GRP/EVENT" and the place token.  Ours:
 * any group with "dpk" in its name, and in the default group "uprobes" the
 * probes on files under @prefix (the run's temporary directory).
 */
static bool owned(const char *line, const char *prefix, char **ev,
		  char **place)
{
	const char *colon = strchr(line, ':');
	const char *sp = strchr(line, ' ');
	const char *sp2, *slash;
	char *group;
	bool mine;

	if (!colon || !sp || colon > sp)
		return false;
	sp2 = strchr(sp + 1, ' ');
	slash = memchr(colon, '/', sp - colon);
	if (!slash)
		return false;
	/* Groups named in the corpus all contain "dpk" ("dpk1", "_dpk"). */
	group = xstrndup(colon + 1, slash - colon - 1);
	mine = strstr(group, "dpk") ||
	       (!strcmp(group, "uprobes") && *prefix &&
		!strncmp(sp + 1, prefix, strlen(prefix)));
	free(group);
	if (!mine)
		return false;
	*ev = xstrndup(colon + 1, sp - colon - 1);
	*place = sp2 ? xstrndup(sp + 1, sp2 - sp - 1) : xstrdup(sp + 1);
	return true;
}

static int cmd_cleanup(const char *prefix)
{
	struct lines l = read_listing();
	int left = 0;

	for (size_t i = 0; i < l.n; i++) {
		char *ev, *place, *del;
		struct buf b = { 0 };
		int err;

		if (!owned(l.v[i], prefix, &ev, &place))
			continue;
		buf_printf(&b, "-:%s ", ev);
		buf_puts(&b, place);
		del = b.s;
		/* ENOENT: an earlier delete took this probe already. */
		err = kwrite(del);
		if (err && err != ENOENT)
			fprintf(stderr, "kdiff: cleanup: '%s': %s\n", del,
				errno_name(err));
		free(del);
		free(ev);
		free(place);
	}
	free_lines(&l);
	l = read_listing();
	for (size_t i = 0; i < l.n; i++) {
		char *ev, *place;

		if (!owned(l.v[i], prefix, &ev, &place))
			continue;
		fprintf(stderr, "kdiff: cleanup: left behind: %s\n", l.v[i]);
		left++;
		free(ev);
		free(place);
	}
	free_lines(&l);
	return left ? 1 : 0;
}

/* ---- compare --------------------------------------------------------- */

static void show(const char *who, const struct result *r)
{
	printf("  %s: ", who);
	if (r->accepted) {
		printf("accepted%s%s\n", r->canonical ? ": " : "",
		       r->canonical ? r->canonical : "");
		return;
	}
	printf("rejected %s, %s\n", r->err ? r->err : "(no errno)",
	       r->logged ? "logged" : "not logged");
	if (r->logged || r->error) {
		printf("    error: %s\n", r->error ? r->error : "(null)");
		printf("    Command: %s\n", r->command ? r->command : "(null)");
		printf("    caret: %d\n", r->caret);
	}
}

/* NULL if they agree, else what differs. */
static const char *differs(const struct result *k, const struct result *d)
{
	if (k->accepted != d->accepted)
		return "accept/reject";
	if (k->accepted)
		return same_str(k->canonical, d->canonical) ? NULL :
		       "canonical line";
	if (!same_str(k->err, d->err))
		return "errno";
	if (k->logged != d->logged)
		return "logged";
	if (!k->logged)
		return NULL;
	if (!same_str(k->error, d->error))
		return "error message";
	if (k->caret != d->caret)
		return "caret column";
	if (!same_str(k->command, d->command))
		return "Command";
	return NULL;
}

static void add_counts(const char *path, int pass, int fail)
{
	FILE *f = fopen(path, "a");

	if (!f)
		die("%s: %s", path, strerror(errno));
	fprintf(f, "%d %d\n", pass, fail);
	fclose(f);
}

/*
 * The reason $KDIFF_EXPECT gives for a difference on this input, or NULL.
 * The file is read once.
 */
static const char *expected_difference(const char *input)
{
	static struct lines l;
	static bool loaded;
	const char *path = getenv("KDIFF_EXPECT");
	size_t len = strlen(input);

	if (!path || !*path)
		return NULL;
	if (!loaded) {
		l = read_lines(path);
		loaded = true;
	}
	for (size_t i = 0; i < l.n; i++)
		if (!strncmp(l.v[i], input, len) && l.v[i][len] == '\t')
			return l.v[i] + len + 1;
	return NULL;
}

/* Say so and return true if the difference on @input is an accepted one. */
static bool report_expected(const char *what, size_t n, const char *input)
{
	const char *why = expected_difference(input);

	if (!why)
		return false;
	printf("EXPECTED-DIFFERENCE %s %zu: %s\n  (%s)\n", what, n, input, why);
	return true;
}

static int cmd_compare(const char *corpus, const char *kpath,
		       const char *dpath, const char *counts)
{
	struct lines l = read_lines(corpus);
	size_t nk, nd;
	struct result *k = read_results(kpath, &nk);
	struct result *d = read_results(dpath, &nd);
	int pass = 0, fail = 0;

	if (nk != l.n)
		die("%s: %zu results for %zu lines", kpath, nk, l.n);
	if (nd != l.n)
		printf("MISMATCH: dprobe gave %zu results for %zu lines\n", nd,
		       l.n);
	for (size_t i = 0; i < l.n; i++) {
		const char *why;

		if (i >= nd) {
			fail++;
			continue;
		}
		why = d[i].input && strcmp(d[i].input, l.v[i]) ?
		      "input (results out of step)" : differs(&k[i], &d[i]);
		if (!why) {
			pass++;
			continue;
		}
		if (report_expected("line", i + 1, l.v[i])) {
			show("kernel", &k[i]);
			show("dprobe", &d[i]);
			pass++;
			continue;
		}
		fail++;
		printf("MISMATCH line %zu (%s): %s\n", i + 1, why, l.v[i]);
		show("kernel", &k[i]);
		show("dprobe", &d[i]);
	}
	add_counts(counts, pass, fail);
	for (size_t i = 0; i < nk; i++)
		free_result(&k[i]);
	for (size_t i = 0; i < nd; i++)
		free_result(&d[i]);
	free(k);
	free(d);
	free_lines(&l);
	return fail ? 1 : 0;
}

/* ---- formats --------------------------------------------------------- */

/* Run argv, return its stdout; *status = exit status (or -1). */
static char *run_capture(char **argv, int *status)
{
	int pfd[2], ws;
	pid_t pid;
	struct buf b = { 0 };
	char chunk[4096];
	ssize_t n;

	if (pipe(pfd))
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (!pid) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		execv(argv[0], argv);
		fprintf(stderr, "kdiff: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	buf_add(&b, "", 0);
	while ((n = read(pfd[0], chunk, sizeof(chunk))) > 0)
		buf_add(&b, chunk, n);
	close(pfd[0]);
	waitpid(pid, &ws, 0);
	*status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
	return b.s;
}

/* The text without its "ID: " line. */
static char *drop_id(const char *text)
{
	struct buf b = { 0 };
	const char *p = text;

	buf_add(&b, "", 0);
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p + 1) : strlen(p);

		if (strncmp(p, "ID: ", 4))
			buf_add(&b, p, len);
		p += len;
	}
	return b.s;
}

static void show_text_diff(const char *k, const char *d)
{
	struct lines lk = split_lines(k), ld = split_lines(d);
	size_t n = lk.n > ld.n ? lk.n : ld.n;

	for (size_t i = 0; i < n; i++) {
		const char *a = i < lk.n ? lk.v[i] : "<none>";
		const char *b = i < ld.n ? ld.v[i] : "<none>";

		if (!strcmp(a, b))
			continue;
		printf("    first difference at line %zu:\n", i + 1);
		printf("      kernel: %s\n", a);
		printf("      dprobe: %s\n", b);
		break;
	}
	if (lk.n != ld.n)
		printf("    (kernel %zu lines, dprobe %zu lines)\n", lk.n, ld.n);
	free_lines(&lk);
	free_lines(&ld);
}

/* Split a formats-file line at " ;; " into definitions. */
static struct lines split_defs(const char *line)
{
	struct lines l = { 0 };
	const char *p = line;

	for (;;) {
		const char *e = strstr(p, " ;; ");
		size_t len = e ? (size_t)(e - p) : strlen(p);

		l.v = xrealloc(l.v, (l.n + 1) * sizeof(*l.v));
		l.v[l.n++] = xstrndup(p, len);
		if (!e)
			break;
		p = e + 4;
	}
	return l;
}

/* "c:GRP/EVENT ..." -> "GRP/EVENT" */
static char *listing_event(const char *canon)
{
	const char *c = strchr(canon, ':'), *sp = strchr(canon, ' ');

	return c && sp && c < sp ? xstrndup(c + 1, sp - c - 1) : NULL;
}

/*
 * Create the test's events in the kernel and read the format file of the
 * event the last definition made; the events are deleted again at once.
 * Returns NULL (and says why in *why) if the kernel refused.
 */
static char *kernel_format(const struct lines *defs, char **why)
{
	struct lines made = { 0 };
	char *ev = NULL, *fmt = NULL;

	*why = NULL;
	for (size_t i = 0; i < defs->n && !*why; i++) {
		struct result r;

		kernel_apply(defs->v[i], &r);
		if (!r.accepted || !r.canonical) {
			struct buf b = { 0 };

			buf_printf(&b, "kernel rejected definition %zu (%s%s%s)",
				   i + 1, r.err ? r.err : "no listing line",
				   r.error ? ": " : "", r.error ? r.error : "");
			*why = b.s;
		} else {
			free(ev);
			ev = listing_event(r.canonical);
			made.v = xrealloc(made.v, (made.n + 1) * sizeof(char *));
			made.v[made.n++] = xstrdup(ev);
		}
		free_result(&r);
	}
	if (!*why && ev) {
		struct buf p = { 0 };

		buf_printf(&p, "%s/events/", tracefs);
		buf_puts(&p, ev);
		buf_puts(&p, "/format");
		fmt = read_file(p.s, NULL);
		if (!fmt)
			*why = xstrdup("cannot read the format file");
		free(p.s);
	}
	for (size_t i = 0; i < made.n; i++) {
		struct buf del = { 0 };
		int err;

		buf_puts(&del, "-:");
		buf_puts(&del, made.v[i]);
		err = kwrite(del.s);
		if (err && err != ENOENT)
			fprintf(stderr, "kdiff: '%s': %s\n", del.s,
				errno_name(err));
		free(del.s);
	}
	free_lines(&made);
	free(ev);
	return fmt;
}

/*
 * "kformats" output: per formats line, "== N OK LEN\n", LEN bytes (the
 * format file when OK is 1, why there is none when 0) and a "\n".
 */
static int cmd_kformats(const char *corpus, const char *out)
{
	struct lines l = read_lines(corpus);
	FILE *f = fopen(out, "w");

	if (!f)
		die("%s: %s", out, strerror(errno));
	for (size_t i = 0; i < l.n; i++) {
		struct lines defs = split_defs(l.v[i]);
		char *why, *kfmt = kernel_format(&defs, &why);
		const char *t = kfmt ? kfmt : why;

		fprintf(f, "== %zu %d %zu\n", i + 1, kfmt != NULL, strlen(t));
		fwrite(t, 1, strlen(t), f);
		fputc('\n', f);
		free(why);
		free(kfmt);
		free_lines(&defs);
	}
	if (fclose(f))
		die("%s: %s", out, strerror(errno));
	free_lines(&l);
	return 0;
}

/* Record @n of a "kformats" file: the format, or NULL and *why. */
static char *saved_format(const char *saved, size_t n, char **why)
{
	const char *p = saved;

	*why = NULL;
	while (p && *p) {
		size_t idx, len;
		int ok, used = 0;

		if (sscanf(p, "== %zu %d %zu\n%n", &idx, &ok, &len, &used) != 3 ||
		    !used || strlen(p + used) < len)
			break;
		p += used;
		if (idx == n) {
			if (ok)
				return xstrndup(p, len);
			*why = xstrndup(p, len);
			return NULL;
		}
		p += len + 1;
	}
	*why = xstrdup("no record in the saved kernel formats");
	return NULL;
}

static int cmd_formats(const char *dprobe, const char *corpus,
		       const char *counts, const char *saved_path)
{
	struct lines l = read_lines(corpus);
	int pass = 0, fail = 0;
	char *saved = NULL;

	if (saved_path) {
		saved = read_file(saved_path, NULL);
		if (!saved)
			die("%s: %s", saved_path, strerror(errno));
	}

	for (size_t i = 0; i < l.n; i++) {
		struct lines defs = split_defs(l.v[i]);
		char **argv = xrealloc(NULL, (defs.n + 4) * sizeof(char *));
		char *why, *kfmt, *dfmt, *k, *d;
		int st;

		kfmt = saved ? saved_format(saved, i + 1, &why) :
			       kernel_format(&defs, &why);
		if (!strcmp(dprobe, "-")) {
			/* Kernel only: show what it gave. */
			printf("== %zu: %s\n%s", i + 1, l.v[i],
			       kfmt ? kfmt : why);
			free(why);
			free(kfmt);
			free(argv);
			free_lines(&defs);
			continue;
		}
		argv[0] = (char *)dprobe;
		argv[1] = "format";
		argv[2] = "--no-elf";
		for (size_t n = 0; n < defs.n; n++)
			argv[3 + n] = defs.v[n];
		argv[3 + defs.n] = NULL;
		dfmt = run_capture(argv, &st);
		if (!kfmt) {
			if (report_expected("format", i + 1, l.v[i])) {
				printf("  kernel: %s\n", why);
				pass++;
			} else {
				fail++;
				printf("FORMAT %zu: %s: %s\n", i + 1, why,
				       l.v[i]);
			}
		} else {
			k = drop_id(kfmt);
			d = drop_id(dfmt);
			if (st == 0 && !strcmp(k, d)) {
				pass++;
			} else if (report_expected("format", i + 1, l.v[i])) {
				show_text_diff(k, d);
				pass++;
			} else {
				fail++;
				printf("FORMAT MISMATCH %zu (dprobe exit %d): %s\n",
				       i + 1, st, l.v[i]);
				show_text_diff(k, d);
			}
			free(k);
			free(d);
		}
		free(why);
		free(kfmt);
		free(dfmt);
		free(argv);
		free_lines(&defs);
	}
	add_counts(counts, pass, fail);
	free_lines(&l);
	free(saved);
	return fail ? 1 : 0;
}

/* Human-readable dump of a results file, for looking at the kernel. */
static int cmd_show(const char *path)
{
	size_t n;
	struct result *r = read_results(path, &n);

	for (size_t i = 0; i < n; i++) {
		printf("%zu: %s\n", i + 1, r[i].input ? r[i].input : "?");
		if (r[i].accepted) {
			printf("   OK %s\n", r[i].canonical ? r[i].canonical : "");
		} else if (r[i].logged) {
			printf("   %s: %s\n   Command: %s\n   %*s^\n",
			       r[i].err, r[i].error, r[i].command,
			       r[i].caret + 9, "");
		} else {
			printf("   %s (not logged)\n", r[i].err);
		}
		if (r[i].note)
			printf("   note: %s\n", r[i].note);
		free_result(&r[i]);
	}
	free(r);
	return 0;
}

int main(int argc, char **argv)
{
	const char *t = getenv("KDIFF_TRACEFS");
	const char *ev = getenv("KDIFF_EVENTS");

	if (t && *t)
		tracefs = t;
	if (ev && *ev)
		events_file = ev;
	kprobe_mode = !strcmp(events_file, "kprobe_events");
	if (argc >= 2 && !strcmp(argv[1], "expand"))
		return cmd_expand(argc - 2, argv + 2);
	if (argc == 4 && !strcmp(argv[1], "kernel"))
		return cmd_kernel(argv[2], argv[3]);
	if (argc == 6 && !strcmp(argv[1], "compare"))
		return cmd_compare(argv[2], argv[3], argv[4], argv[5]);
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "formats"))
		return cmd_formats(argv[2], argv[3], argv[4],
				   argc == 6 ? argv[5] : NULL);
	if (argc == 4 && !strcmp(argv[1], "kformats"))
		return cmd_kformats(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "cleanup"))
		return cmd_cleanup(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "show"))
		return cmd_show(argv[2]);
	fprintf(stderr,
		"usage: kdiff expand NAME=VALUE... < CORPUS > EXPANDED\n"
		"       kdiff kernel EXPANDED OUT.jsonl\n"
		"       kdiff compare EXPANDED KERNEL.jsonl DPROBE.jsonl COUNTS\n"
		"       kdiff formats DPROBE EXPANDED COUNTS [KFORMATS]\n"
		"       kdiff kformats EXPANDED KFORMATS\n"
		"       kdiff cleanup UPROBES_PATH_PREFIX\n"
		"       kdiff show RESULTS.jsonl\n");
	return 2;
}
