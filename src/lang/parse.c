// SPDX-License-Identifier: GPL-2.0
/*
 * Probe definition lines (the kernel's trace_kprobe_create() and
 * trace_uprobe_create()):
 *
 *   p[:[GRP/|GRP.]EVENT] PATH:OFFSET[%return][(REF)] [FETCHARGS]    uprobe
 *   p[:[GRP/|GRP.]EVENT] [MOD:]SYM[+offs]|MEMADDR [FETCHARGS]       kprobe
 *   r[MAXACTIVE][:[GRP/|GRP.]EVENT] [MOD:]SYM[+0] [FETCHARGS]
 *   f[MAXACTIVE][:[GRP/|GRP.]EVENT] [MOD:]FUNC[%return] [FETCHARGS] fprobe
 *   t[:[GRP/|GRP.]EVENT] [TPGROUP:]TRACEPOINT [FETCHARGS]           tracepoint
 *   e[:[GRP/|GRP.]EVENT] SYSTEM.EVENT [FETCHARGS] [if FILTER]        eprobe
 *
 * The grammar family is chosen from the place as the kernel's
 * dynamic_events does; each family then follows its kernel parser
 * (__trace_uprobe_create / trace_kprobe_create_internal /
 * __trace_fprobe_create) check for check,
 * so the same line fails with the same message at the same column.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lang/argv.h"
#include "lang/fetcharg.h"
#include "lang/kstrto.h"
#include "lang/lang.h"

struct line_ctx {
	const char *line;
	struct dp_argv a;
	struct dp_error *err;
	struct dp_probe_def *def;
	const char *event;	/* name part in argv[0], NULL if none */
	unsigned flags;		/* DP_PARSE_* */
	const struct dp_attach_lookup *lk;	/* e: lines */
	int words;		/* e: words before "if" (0: all) */
};

static int fail(struct line_ctx *c, int index, int offset,
		enum dp_err_code code, int err)
{
	dp_error_at(c->err, c->line, code, err, index, offset);
	return -err;
}

static bool is_good_system_name(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_' && *s != '-')
		return false;
	while (*++s)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-')
			return false;
	return true;
}

/* traceprobe_parse_event_name(): "[GRP/|GRP.]EVENT" at column @offset. */
static int parse_event_name(struct line_ctx *c, const char *ev, int offset,
			    bool *auto_name)
{
	struct dp_probe_def *def = c->def;
	const char *sep = strchr(ev, '/');
	size_t len;

	if (!sep)
		sep = strchr(ev, '.');
	if (sep) {
		size_t glen = (size_t)(sep - ev);

		if (glen == 0)
			return fail(c, 0, offset, DP_ERR_NO_GROUP_NAME, EINVAL);
		if (glen + 1 > DP_MAX_EVENT_NAME_LEN)
			return fail(c, 0, offset, DP_ERR_GROUP_TOO_LONG, EINVAL);
		memcpy(def->group, ev, glen);
		def->group[glen] = '\0';
		if (!is_good_system_name(def->group))
			return fail(c, 0, offset, DP_ERR_BAD_GROUP_NAME, EINVAL);
		offset += (int)glen + 1;
		ev = sep + 1;
	}
	len = strlen(ev);
	if (len == 0) {
		if (sep) {
			*auto_name = true;
			return 0;
		}
		return fail(c, 0, offset, DP_ERR_NO_EVENT_NAME, EINVAL);
	}
	if (len >= DP_MAX_EVENT_NAME_LEN)
		return fail(c, 0, offset, DP_ERR_EVENT_TOO_LONG, EINVAL);
	if (!dp_is_good_name(ev))
		return fail(c, 0, offset, DP_ERR_BAD_EVENT_NAME, EINVAL);
	memcpy(def->event, ev, len + 1);
	*auto_name = false;
	return 0;
}

/* "%c_%s_0x%lx" from the file's basename cut at the first of ".-_". */
static void uprobe_auto_name(struct dp_probe_def *def)
{
	const char *base = strrchr(def->place.path, '/');
	char tail[DP_MAX_EVENT_NAME_LEN * 4];

	snprintf(tail, sizeof(tail), "%.255s", base ? base + 1 : def->place.path);
	char buf[sizeof(tail) + 32];

	tail[strcspn(tail, ".-_")] = '\0';
	snprintf(buf, sizeof(buf), "p_%s_0x%lx", tail,
		 (unsigned long)def->place.offset);
	/* truncated to 63 characters and not sanitized, as the kernel does */
	snprintf(def->event, sizeof(def->event), "%.63s", buf);
}

/*
 * "%c_%s_%ld" of the place text, made a valid event name.  The kernel only
 * replaces ':' '.' '*'; a dprobe module can be a path, whose basename is
 * used and whose other characters are replaced too.
 */
static void kprobe_auto_name(struct dp_probe_def *def)
{
	struct dp_place *pl = &def->place;
	char buf[512];
	char *p;

	if (!pl->symbol) {
		snprintf(buf, sizeof(buf), "%c_0x%016lx",
			 def->is_return ? 'r' : 'p', (unsigned long)pl->addr);
	} else {
		const char *mod = pl->module;

		if (mod && strrchr(mod, '/'))
			mod = strrchr(mod, '/') + 1;
		snprintf(buf, sizeof(buf), "%c_%s%s%s_%ld",
			 def->is_return ? 'r' : 'p', mod ? mod : "",
			 mod ? ":" : "", pl->symbol, (long)pl->offset);
	}
	for (p = buf + 1; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			*p = '_';
	snprintf(def->event, sizeof(def->event), "%.63s", buf);
}

/* The kernel's uprobe place checks, in its order (trace_uprobe_create()). */
static int parse_uprobe_place(struct line_ctx *c)
{
	struct dp_place *pl = &c->def->place;
	char *file, *arg, *rctr, *rend, *pct;
	struct stat st;
	int ret = 0;

	file = strdup(c->a.argv[1]);
	if (!file)
		return -ENOMEM;
	arg = strrchr(file, ':');
	*arg++ = '\0';
	if (stat(file, &st) < 0) {
		ret = fail(c, 1, 0, DP_ERR_FILE_NOT_FOUND, errno);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = fail(c, 1, 0, DP_ERR_NO_REGULAR_FILE, EINVAL);
		goto out;
	}
	rctr = strchr(arg, '(');
	if (rctr) {
		rend = strchr(rctr, ')');
		if (!rend) {
			ret = fail(c, 1, (int)(rctr + strlen(rctr) - file),
				   DP_ERR_REFCNT_OPEN_BRACE, EINVAL);
			goto out;
		}
		if (rend[1]) {
			ret = fail(c, 1, (int)(rend + 1 - file),
				   DP_ERR_BAD_REFCNT_SUFFIX, EINVAL);
			goto out;
		}
		*rctr++ = '\0';
		*rend = '\0';
		ret = dp_kstrtoull(rctr, 0, &pl->ref_ctr);
		if (ret) {
			ret = fail(c, 1, (int)(rctr - file), DP_ERR_BAD_REFCNT,
				   -ret);
			goto out;
		}
	}
	pct = strchr(arg, '%');
	if (pct) {
		if (strcmp(pct, "%return")) {
			ret = fail(c, 1, (int)(pct - file),
				   DP_ERR_BAD_ADDR_SUFFIX, EINVAL);
			goto out;
		}
		*pct = '\0';
		c->def->is_return = true;
	}
	ret = dp_kstrtoull(arg, 0, &pl->offset);
	if (ret) {
		ret = fail(c, 1, (int)(arg - file), DP_ERR_BAD_UPROBE_OFFS, -ret);
		goto out;
	}
	pl->path = file;
	pl->dev = st.st_dev;
	pl->ino = st.st_ino;
	return 0;
out:
	free(file);
	return ret;
}

/*
 * "r<N>" / "f<N>": N into def->maxactive.  A kprobe line refuses N on an
 * entry probe first (@type_first), as trace_kprobe_create() does; an f:
 * line reads N first and checks that later (__trace_fprobe_create()).
 */
static int parse_maxactive(struct line_ctx *c, bool type_first)
{
	const char *a0 = c->a.argv[0];
	char buf[DP_MAX_EVENT_NAME_LEN];
	size_t len;
	unsigned n;

	if (!isdigit((unsigned char)a0[1]))
		return 0;
	if (type_first && !c->def->is_return)
		return fail(c, 0, 1, DP_ERR_BAD_MAXACT_TYPE, EINVAL);
	len = c->event ? (size_t)(c->event - a0 - 2) : strlen(a0 + 1);
	if (len > DP_MAX_EVENT_NAME_LEN - 1)
		return fail(c, 0, 1, DP_ERR_BAD_MAXACT, EINVAL);
	memcpy(buf, a0 + 1, len);
	buf[len] = '\0';
	if (dp_kstrtouint(buf, 0, &n) || !n)
		return fail(c, 0, 1, DP_ERR_BAD_MAXACT, EINVAL);
	if (n > DP_MAX_MAXACTIVE)
		return fail(c, 0, 1, DP_ERR_MAXACT_TOO_BIG, EINVAL);
	c->def->maxactive = (int)n;
	return 0;
}

/* Characters of an ELF symbol name as users write them. */
static bool is_symbol_text(const char *s)
{
	if (!*s || isdigit((unsigned char)*s))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("_.$@", *s))
			return false;
	return true;
}

/* "[MOD:]SYM[+offs]": MOD is split at the last ':' (it may be a path). */
static int split_symbol(struct line_ctx *c, char *sym)
{
	struct dp_place *pl = &c->def->place;
	char *colon = strrchr(sym, ':'), *pm;
	int64_t off = 0;

	if (colon) {
		*colon = '\0';
		if (!*sym)
			return fail(c, 1, 0, DP_ERR_BAD_PROBE_ADDR, EINVAL);
		pl->module = strdup(sym);
		if (!pl->module)
			return -ENOMEM;
		sym = colon + 1;
	}
	pm = strpbrk(sym, "+-");
	if (pm) {
		if (dp_kstrtoll(pm, 0, &off) || off < 0 || off > UINT32_MAX)
			return fail(c, 1, 0, DP_ERR_BAD_PROBE_ADDR, EINVAL);
		*pm = '\0';
	}
	if (!is_symbol_text(sym))
		return fail(c, 1, 0, DP_ERR_BAD_PROBE_ADDR, EINVAL);
	pl->symbol = strdup(sym);
	if (!pl->symbol)
		return -ENOMEM;
	pl->offset = (uint64_t)off;
	return 0;
}

static int parse_kprobe_place(struct line_ctx *c, bool *fentry)
{
	struct dp_probe_def *def = c->def;
	char *sym, *pct;
	int ret;

	*fentry = false;
	if (!dp_kstrtoull(c->a.argv[1], 0, &def->place.addr))
		return 0;
	sym = strdup(c->a.argv[1]);
	if (!sym)
		return -ENOMEM;
	pct = strchr(sym, '%');
	if (pct) {
		if (strcmp(pct, "%return")) {
			ret = fail(c, 1, (int)(pct - sym), DP_ERR_BAD_ADDR_SUFFIX,
				   EINVAL);
			goto out;
		}
		*pct = '\0';
		def->is_return = true;
	}
	ret = split_symbol(c, sym);
	if (ret)
		goto out;
	/* a return probe must sit on a function entry */
	if (def->is_return && def->place.offset) {
		ret = fail(c, 1, 0, DP_ERR_BAD_RETPROBE, EINVAL);
		goto out;
	}
	*fentry = !def->is_return && def->place.offset == 0;
out:
	free(sym);
	return ret;
}

static bool is_uprobe_place(const char *place)
{
	const char *colon = strrchr(place, ':');

	return strchr(place, '/') && colon && isdigit((unsigned char)colon[1]);
}

/*
 * Places uprobe_events refuses without an error_log entry (ECANCELED):
 * PATH:OFFSET without a '/', and a place with a '/' that is neither
 * PATH:OFFSET nor, as dprobe extends it, PATH:SYM[+offs][%return].
 */
static bool is_bad_place(const char *place, unsigned flags)
{
	const char *colon = strrchr(place, ':');
	char sym[DP_MAX_LINE_LEN + 1];

	if (!strchr(place, '/'))
		return colon && isdigit((unsigned char)colon[1]);
	if (!colon)
		return true;
	if (isdigit((unsigned char)colon[1]))
		return false;
	if (flags & DP_PARSE_KERNEL_PLACES)
		return true;
	snprintf(sym, sizeof(sym), "%s", colon + 1);
	sym[strcspn(sym, "%")] = '\0';
	sym[strcspn(sym, "+-")] = '\0';
	return !is_symbol_text(sym);
}

static int parse_args(struct line_ctx *c, bool kernel, bool fentry)
{
	struct dp_probe_def *def = c->def;
	struct dp_parse_ctx pc = {
		.kernel = kernel, .is_return = def->is_return,
		.fentry = fentry, .line = c->line, .err = c->err,
		.fprobe = def->fprobe || def->kind == DP_KIND_TRACEPOINT ||
			  def->kind == DP_KIND_EPROBE,
		.tracepoint = def->kind == DP_KIND_TRACEPOINT,
	};
	int n = (c->words ? c->words : c->a.argc) - 2, ret;

	if (def->kind == DP_KIND_EPROBE) {
		pc.tevent = c->lk;
		pc.att_group = def->place.module;
		pc.att_event = def->place.symbol;
	}
	def->args = calloc((size_t)(n ? n : 1), sizeof(*def->args));
	if (!def->args)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		pc.index = i + 2;
		def->nargs = (unsigned)i + 1;
		ret = dp_parse_fetcharg(&pc, def->args, i, c->a.argv[i + 2],
					&def->args_size);
		if (ret)
			return ret;
	}
	return 0;
}

static int parse_name_part(struct line_ctx *c, const char *default_group,
			   void (*auto_name)(struct dp_probe_def *))
{
	bool is_auto = true;
	int ret;

	snprintf(c->def->group, sizeof(c->def->group), "%s", default_group);
	if (c->event) {
		ret = parse_event_name(c, c->event,
				       (int)(c->event - c->a.argv[0]), &is_auto);
		if (ret)
			return ret;
	}
	if (is_auto)
		auto_name(c->def);
	return 0;
}

/*
 * "[TPGROUP:]TRACEPOINT": an application tracepoint (tracepoint.h).  The
 * kernel's tprobes name a tracepoint alone; applications' tracepoints
 * live in groups of their own, so dprobe also takes "group:name".
 */
static int parse_tracepoint_place(struct line_ctx *c)
{
	struct dp_place *pl = &c->def->place;
	const char *place = c->a.argv[1], *colon = strchr(place, ':');

	if (colon) {
		pl->module = strndup(place, (size_t)(colon - place));
		if (!pl->module)
			return -ENOMEM;
		if (!dp_is_good_name(pl->module))
			return fail(c, 1, 0, DP_ERR_BAD_TP_NAME, EINVAL);
		place = colon + 1;
	}
	/* the kernel's check: the first character that is not [A-Za-z0-9_] */
	for (const char *ch = place; *ch; ch++)
		if (!isalnum((unsigned char)*ch) && *ch != '_')
			return fail(c, 1, (int)(ch - c->a.argv[1]),
				    DP_ERR_BAD_TP_NAME, EINVAL);
	if (!*place)
		return fail(c, 1, (int)(place - c->a.argv[1]),
			    DP_ERR_BAD_TP_NAME, EINVAL);
	pl->symbol = strdup(place);
	return pl->symbol ? 0 : -ENOMEM;
}

/* The default event name of a tprobe is its tracepoint's. */
static void tracepoint_auto_name(struct dp_probe_def *def)
{
	snprintf(def->event, sizeof(def->event), "%s%.62s",
		 isdigit((unsigned char)def->place.symbol[0]) ? "_" : "",
		 def->place.symbol);
}

/* "FUNC__entry" or "FUNC__exit", made a valid event name. */
static void fprobe_auto_name(struct dp_probe_def *def)
{
	const char *mod = def->place.module;
	char buf[512];

	if (mod && strrchr(mod, '/'))
		mod = strrchr(mod, '/') + 1;
	snprintf(buf, sizeof(buf), "%s%s%s__%s", mod ? mod : "", mod ? ":" : "",
		 def->place.symbol, def->is_return ? "exit" : "entry");
	for (char *p = buf; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			*p = '_';
	snprintf(def->event, sizeof(def->event), "%.63s", buf);
}

/*
 * parse_symbol_and_return(): "%return" (f: only), and a $retval among the
 * arguments makes an f: line a return probe; on a t: line it is refused.
 */
static int fprobe_return(struct line_ctx *c, char *place)
{
	struct dp_probe_def *def = c->def;
	char *pct = strchr(place, '%');

	if (pct) {
		if (def->kind == DP_KIND_TRACEPOINT || strcmp(pct, "%return"))
			return fail(c, 1, (int)(pct - place),
				    DP_ERR_BAD_ADDR_SUFFIX, EINVAL);
		*pct = '\0';
		def->is_return = true;
		return 0;
	}
	for (int i = 2; i < c->a.argc; i++) {
		const char *rv = strstr(c->a.argv[i], "$retval");

		if (!rv || isalnum((unsigned char)rv[7]) || rv[7] == '_')
			continue;
		if (def->kind == DP_KIND_TRACEPOINT)
			return fail(c, i, (int)(rv - c->a.argv[i]),
				    DP_ERR_RETVAL_ON_PROBE, EINVAL);
		def->is_return = true;
		break;
	}
	return 0;
}

/*
 * "f[N][:[GRP/]EVENT] [MOD:]FUNC[%return] [FETCHARGS]" and
 * "t[:[GRP/]EVENT] [TPGROUP:]TRACEPOINT [FETCHARGS]", in the order of the
 * kernel's __trace_fprobe_create().  An f: line is a kprobe on the
 * function's first instruction (or its return) that reads arguments,
 * not registers; a t: line reads a tracepoint's arguments as at the
 * entry of a function called with them.
 */
static int parse_fprobe_line(struct line_ctx *c)
{
	struct dp_probe_def *def = c->def;
	bool tp = c->a.argv[0][0] == 't';
	char *place = strdup(c->a.argv[1]);
	int ret;

	if (!place)
		return -ENOMEM;
	def->kind = tp ? DP_KIND_TRACEPOINT : DP_KIND_KPROBE;
	def->fprobe = !tp;
	c->event = strchr(c->a.argv[0] + 1, ':');
	if (c->event)
		c->event++;
	ret = parse_maxactive(c, false);
	if (!ret)
		ret = fprobe_return(c, place);
	if (!ret && tp)
		ret = parse_tracepoint_place(c);
	else if (!ret)
		ret = split_symbol(c, place);
	if (!ret && !def->is_return && def->maxactive)
		ret = fail(c, 0, 1, DP_ERR_BAD_MAXACT_TYPE, EINVAL);
	if (!ret)
		ret = parse_name_part(c, tp ? "tracepoints" : "fprobes",
				      tp ? tracepoint_auto_name :
				      fprobe_auto_name);
	if (!ret)
		ret = parse_args(c, true, !def->is_return);
	/* an fprobe is on a function's entry: no offset (the kernel finds
	 * no such function when it registers) */
	if (!ret && def->fprobe && def->place.offset)
		ret = fail(c, 1, 0, DP_ERR_BAD_PROBE_ADDR, ENOENT);
	free(place);
	return ret;
}

/*
 * "SYSTEM.EVENT" or "SYSTEM/EVENT" of an e: line, both parts valid
 * names (traceprobe_parse_event_name() at offset 0; whatever it refuses,
 * the kernel then logs NO_EVENT_INFO there, the entry that counts).
 */
static int attached_name(struct line_ctx *c)
{
	struct dp_place *pl = &c->def->place;
	const char *t = c->a.argv[1], *sep = strchr(t, '/');
	size_t glen;

	if (!sep)
		sep = strchr(t, '.');
	glen = sep ? (size_t)(sep - t) : 0;
	if (!sep || !glen || glen >= DP_MAX_EVENT_NAME_LEN ||
	    !sep[1] || strlen(sep + 1) >= DP_MAX_EVENT_NAME_LEN)
		return fail(c, 1, 0, DP_ERR_NO_EVENT_INFO, EINVAL);
	pl->module = strndup(t, glen);
	pl->symbol = strdup(sep + 1);
	if (!pl->module || !pl->symbol)
		return -ENOMEM;
	if (!is_good_system_name(pl->module) || !dp_is_good_name(pl->symbol))
		return fail(c, 1, 0, DP_ERR_NO_EVENT_INFO, EINVAL);
	return 0;
}

/* The default event name of an eprobe is its attached event's. */
static void eprobe_auto_name(struct dp_probe_def *def)
{
	snprintf(def->event, sizeof(def->event), "%s", def->place.symbol);
}

/* "if FILTER": the words after "if", joined by single spaces. */
static int eprobe_filter(struct line_ctx *c, int at)
{
	size_t len = 0;
	char *f;

	if (at + 1 >= c->a.argc)
		return fail(c, at + 1, 0, DP_ERR_NO_EP_FILTER, EINVAL);
	for (int i = at + 1; i < c->a.argc; i++)
		len += strlen(c->a.argv[i]) + 1;
	f = c->def->filter = malloc(len);
	if (!f)
		return -ENOMEM;
	for (int i = at + 1; i < c->a.argc; i++)
		f += sprintf(f, "%s%s", i > at + 1 ? " " : "", c->a.argv[i]);
	return 0;
}

/*
 * "e[:[GRP/]EVENT] SYSTEM.EVENT [FETCHARGS] [if FILTER]", in the order of
 * the kernel's __trace_eprobe_create(): the name, the attached event's
 * name, the filter's words, the attached event itself, then the
 * arguments (fields by $NAME, no registers).
 */
static int parse_eprobe_line(struct line_ctx *c)
{
	struct dp_probe_def *def = c->def;
	int ret, at;

	def->kind = DP_KIND_EPROBE;
	c->event = strchr(c->a.argv[0] + 1, ':');
	if (c->event)
		c->event++;
	snprintf(def->group, sizeof(def->group), "eprobes");
	if (c->event) {
		bool is_auto = false;

		ret = parse_event_name(c, c->event,
				       (int)(c->event - c->a.argv[0]), &is_auto);
		if (ret)
			return ret;
	}
	ret = attached_name(c);
	if (ret)
		return ret;
	if (!def->event[0])
		eprobe_auto_name(def);
	for (at = 2; at < c->a.argc; at++)
		if (!strcmp(c->a.argv[at], "if"))
			break;
	if (at - 2 > DP_MAX_TRACE_ARGS)
		return -E2BIG;
	if (!c->lk || !c->lk->event(c->lk->priv, def->place.module,
				    def->place.symbol))
		return fail(c, 1, 0, DP_ERR_BAD_ATTACH_EVENT, ENODEV);
	if (at < c->a.argc) {
		ret = eprobe_filter(c, at);
		if (ret)
			return ret;
		c->words = at;	/* the words after "if" are not arguments */
	}
	return parse_args(c, true, false);
}

static int parse_line(struct line_ctx *c)
{
	struct dp_probe_def *def = c->def;
	const char *a0 = c->a.argv[0];
	bool fentry = false;
	int ret;

	if (!strchr("prtfe", a0[0]) || !a0[0] || c->a.argc < 2)
		return fail(c, 0, 0, DP_ERR_NOT_PROBE, EINVAL);
	if (a0[0] == 'e')
		return c->lk ? parse_eprobe_line(c) :
		       fail(c, 0, 0, DP_ERR_NOT_PROBE, EINVAL);
	if (c->a.argc - 2 > DP_MAX_TRACE_ARGS)
		return fail(c, 2, 0, DP_ERR_TOO_MANY_ARGS, E2BIG);
	if (a0[0] == 't' || a0[0] == 'f')
		return parse_fprobe_line(c);
	def->is_return = a0[0] == 'r';
	if (is_bad_place(c->a.argv[1], c->flags))
		return fail(c, 1, 0, DP_ERR_BAD_PLACE, EINVAL);

	c->event = strchr(a0 + 1, ':');
	if (c->event)
		c->event++;
	if (is_uprobe_place(c->a.argv[1])) {
		/*
		 * uprobe_events ignores anything between the letter and ':'
		 * ("px:g/e" is an unnamed probe in "uprobes"), MAXACTIVE too;
		 * dprobe reads "r5:g/e" as kprobe_events does
		 * (docs/differences.md).
		 */
		if (a0[1] != ':' && !isdigit((unsigned char)a0[1]))
			c->event = NULL;
		def->kind = DP_KIND_UPROBE;
		ret = parse_maxactive(c, true);
		if (!ret)
			ret = parse_uprobe_place(c);
		if (!ret)
			ret = parse_name_part(c, "uprobes", uprobe_auto_name);
		return ret ? ret : parse_args(c, false, false);
	}
	def->kind = DP_KIND_KPROBE;
	ret = parse_maxactive(c, true);
	if (!ret)
	ret = parse_kprobe_place(c, &fentry);
	if (!ret)
		ret = parse_name_part(c, "kprobes", kprobe_auto_name);
	return ret ? ret : parse_args(c, true, fentry);
}

int dp_parse_probe(const char *line, struct dp_probe_def *def,
		   struct dp_error *err)
{
	return dp_parse_probe_flags(line, def, err, 0);
}

static int parse_with(const char *line, struct dp_probe_def *def,
		      struct dp_error *err, unsigned flags,
		      const struct dp_attach_lookup *lk)
{
	struct line_ctx c = { .line = line, .err = err, .def = def,
			      .flags = flags, .lk = lk };
	char *copy = strndup(line, strcspn(line, "#\n"));
	int ret;

	memset(def, 0, sizeof(*def));
	if (!copy)
		return -ENOMEM;
	c.line = copy;
	ret = dp_argv_split(copy, &c.a);
	if (ret)
		goto out;
	if (c.a.argc == 0)
		ret = -ENODATA;
	else
		ret = parse_line(&c);
	if (ret)
		dp_probe_def_free(def);
	dp_argv_free(&c.a);
out:
	free(copy);
	return ret;
}

int dp_parse_probe_flags(const char *line, struct dp_probe_def *def,
			 struct dp_error *err, unsigned flags)
{
	return parse_with(line, def, err, flags, NULL);
}

int dp_parse_eprobe(const char *line, struct dp_probe_def *def,
		    struct dp_error *err, const struct dp_attach_lookup *lk)
{
	return parse_with(line, def, err, 0, lk);
}

void dp_probe_def_free(struct dp_probe_def *def)
{
	for (unsigned i = 0; def->args && i < def->nargs; i++)
		dp_arg_free(&def->args[i]);
	free(def->args);
	free(def->place.path);
	free(def->place.module);
	free(def->place.symbol);
	free(def->filter);
	memset(def, 0, sizeof(*def));
}

bool dp_line_is_delete(const char *line)
{
	return line[0] == '-';
}

/* dyn_event_release(): "-:[GRP/]EVENT [match tokens]". */
int dp_parse_delete(const char *line, struct dp_delete_cmd *cmd,
		    struct dp_error *err)
{
	struct line_ctx c = { .line = line, .err = err };
	char *copy = strndup(line, strcspn(line, "#\n"));
	const char *ev, *slash;
	int ret = -EINVAL;

	memset(cmd, 0, sizeof(*cmd));
	if (!copy)
		return -ENOMEM;
	c.line = copy;
	if (dp_argv_split(copy, &c.a)) {
		free(copy);
		return -ENOMEM;
	}
	if (c.a.argc == 0 || c.a.argv[0][0] != '-' || c.a.argv[0][1] != ':')
		goto bad;
	ev = c.a.argv[0] + 2;
	slash = strchr(ev, '/');
	if (!slash && !*ev)
		goto bad;
	if (slash) {
		cmd->any_group = false;
		snprintf(cmd->group, sizeof(cmd->group), "%.*s",
			 (int)(slash - ev), ev);
		if ((size_t)(slash - ev) >= sizeof(cmd->group))
			cmd->group[0] = '\x01';	/* can match no group */
		ev = slash + 1;
	} else {
		cmd->any_group = true;
	}
	snprintf(cmd->event, sizeof(cmd->event), "%s", ev);
	if (strlen(ev) >= sizeof(cmd->event))
		cmd->event[0] = '\x01';		/* can match no event */
	cmd->nmatch = c.a.argc - 1;
	cmd->match = c.a.argv + 1;
	cmd->argv_ = c.a.argv;
	c.a.argv = NULL;
	ret = 0;
	goto out;
bad:
	fail(&c, 0, 0, DP_ERR_BAD_DELETE, EINVAL);
out:
	dp_argv_free(&c.a);
	free(copy);
	return ret;
}

void dp_delete_cmd_free(struct dp_delete_cmd *cmd)
{
	struct dp_argv a = { .argc = cmd->nmatch + 1, .argv = cmd->argv_ };

	if (cmd->argv_)
		dp_argv_free(&a);
	memset(cmd, 0, sizeof(*cmd));
}
