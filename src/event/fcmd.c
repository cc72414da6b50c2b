// SPDX-License-Identifier: GPL-2.0
/*
 * Function commands (fcmd.h): the table of commands, the words parsed
 * as the kernel's ftrace_process_regex() and each command's callback cut
 * them, the one-per-ops rule, the listing, and a call of a function.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "event/fcmd.h"
#include "lang/kstrto.h"

enum {
	FC_TARGET = 1 << 0,	/* :SYS:EVENT before the count */
	FC_COUNT_ONE = 1 << 1,	/* always a count of 1 (dump) */
	FC_NO_COUNT = 1 << 2,	/* never a count (cpudump) */
	FC_ON_ONLY = 1 << 3,	/* counted, only while tracing is on */
};

struct fc_row {
	const char *name;
	enum dp_trig_cmd cmd;
	unsigned flags;
};

/* The kernel's commands but `mod` (set_ftrace_filter's :mod: rules). */
static const struct fc_row rows[] = {
	{ "traceon", DP_TRIG_TRACEON, 0 },
	{ "traceoff", DP_TRIG_TRACEOFF, 0 },
	{ "stacktrace", DP_TRIG_STACKTRACE, FC_ON_ONLY },
	{ "snapshot", DP_TRIG_SNAPSHOT, 0 },
	{ "dump", DP_TRIG_DUMP, FC_COUNT_ONE },
	{ "cpudump", DP_TRIG_CPUDUMP, FC_NO_COUNT },
	{ "enable_event", DP_TRIG_ENABLE_EVENT, FC_TARGET },
	{ "disable_event", DP_TRIG_DISABLE_EVENT, FC_TARGET },
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))

_Static_assert(2 * NROWS <= DP_FCMD_NOPS, "an ops number for each row");

bool dp_fcmd_is_command(const char *word)
{
	const char *c = strchr(word, ':');

	return c && !(!strncmp(c + 1, "mod", 3) && (!c[4] || c[4] == ':'));
}

static int find_row(const char *name, unsigned *row)
{
	for (unsigned i = 0; name && i < NROWS; i++)
		if (!strcmp(rows[i].name, name)) {
			*row = i;
			return 0;
		}
	return -EINVAL;
}

/* SYS:EVENT of enable_event's PARAM (event_enable_func()). */
static int parse_target(char **param, dp_trigger_find_t find, void *priv,
			struct dp_trigger *t)
{
	char *sys, *name;

	if (!*param)
		return -EINVAL;
	sys = strsep(param, ":");
	if (!*param)
		return -EINVAL;
	name = strsep(param, ":");
	t->target = find ? find(priv, sys, name) : NULL;
	return t->target ? 0 : -EINVAL;
}

/* The count in what is left of PARAM: its first ':' part, any base; an
 * empty one is (unsigned long)-1 where the command allows it. */
static int parse_count(char *param, unsigned long *count, bool empty_ok)
{
	char *number = strsep(&param, ":");
	uint64_t v;
	int ret;

	if (!*number)
		return empty_ok ? 0 : -EINVAL;
	ret = dp_kstrtoull(number, 0, &v);
	if (!ret)
		*count = (unsigned long)v;
	return ret;
}

/* The ops and count @param gives @req's command. */
static int parse_param(char *param, struct dp_fcmd_req *req)
{
	const struct fc_row *r = &rows[req->row];
	struct dp_trigger *t = &req->trig;

	t->cmd = r->cmd;
	t->count = r->flags & FC_COUNT_ONE ? 1 : DP_TRIG_UNLIMITED;
	t->counted = (r->flags & FC_COUNT_ONE) ||
		     (!(r->flags & FC_NO_COUNT) && param);
	if (!t->counted || req->remove || (r->flags & FC_COUNT_ONE))
		return 0;
	return parse_count(param, &t->count, !(r->flags & FC_TARGET));
}

int dp_fcmd_parse(const char *word, dp_trigger_find_t find, void *priv,
		  struct dp_fcmd_req *req)
{
	char *buf = strdup(word), *next = buf, *func, *cmd;
	int ret;

	memset(req, 0, sizeof(*req));
	if (!buf)
		return -ENOMEM;
	func = strsep(&next, ":");
	cmd = next ? strsep(&next, ":") : NULL;
	req->remove = func[0] == '!';
	ret = find_row(cmd, &req->row);
	if (!ret && (rows[req->row].flags & FC_TARGET))
		ret = parse_target(&next, find, priv, &req->trig);
	if (!ret)
		ret = parse_param(next, req);
	if (!ret) {
		req->glob = strdup(func + req->remove);
		ret = req->glob ? 0 : -ENOMEM;
	}
	free(buf);
	return ret;
}

void dp_fcmd_req_free(struct dp_fcmd_req *req)
{
	free(req->glob);
	req->glob = NULL;
}

static unsigned ops_of(unsigned row, const struct dp_trigger *t)
{
	return 2 * row + t->counted;
}

static unsigned c_ops(const struct dp_fcmd *c)
{
	return ops_of(c->row, &c->trig);
}

int dp_fcmd_add(struct dp_fcmd_set *s, unsigned site,
		const struct dp_event *ev, const char *name, const char *lib,
		const struct dp_fcmd_req *req)
{
	unsigned ops = ops_of(req->row, &req->trig);
	struct dp_fcmd c = { site, ev, strdup(name),
			     lib ? strdup(lib) : NULL, req->row, req->trig }, *v;

	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].site == site && c_ops(&s->v[i]) == ops &&
		    !strcmp(s->v[i].name, name)) {
			free(c.name);
			free(c.lib);
			return 0;
		}
	v = c.name && (c.lib || !lib) ?
		    realloc(s->v, (s->n + 1) * sizeof(*v)) : NULL;
	if (!v) {
		free(c.name);
		free(c.lib);
		return -ENOMEM;
	}
	c.trig.next = NULL;
	s->v = v;
	s->v[s->n++] = c;
	if (!s->seq[ops])
		s->seq[ops] = ++s->next_seq;
	return 1;
}

static bool ops_used(const struct dp_fcmd_set *s, unsigned ops)
{
	for (size_t i = 0; i < s->n; i++)
		if (c_ops(&s->v[i]) == ops)
			return true;
	return false;
}

static bool name_hit(const char *glob, const char *name)
{
	return !*glob || !strcmp(glob, "*") || !fnmatch(glob, name, 0);
}

static void fcmd_free(struct dp_fcmd *c)
{
	free(c->name);
	free(c->lib);
}

int dp_fcmd_remove(struct dp_fcmd_set *s, const struct dp_fcmd_req *req,
		   void (*gone)(void *priv, const struct dp_fcmd *c),
		   void *priv)
{
	unsigned ops = ops_of(req->row, &req->trig);
	size_t kept = 0;
	bool any = false;
	int n = 0;

	for (size_t i = 0; i < s->n; i++) {
		struct dp_fcmd *c = &s->v[i];
		bool mine = c_ops(c) == ops;

		any |= mine;
		if (mine && name_hit(req->glob, c->name)) {
			if (gone)
				gone(priv, c);
			fcmd_free(c);
			n++;
			continue;
		}
		s->v[kept++] = *c;
	}
	s->n = kept;
	if (!any)
		return -ENODEV;
	if (n && !ops_used(s, ops))
		s->seq[ops] = 0;
	return n ? n : -EINVAL;
}

const struct dp_event *dp_fcmd_site_event(const struct dp_fcmd_set *s,
					  unsigned site)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].site == site)
			return s->v[i].ev;
	return NULL;
}

bool dp_fcmd_on_site(const struct dp_fcmd_set *s, unsigned site)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].site == site)
			return true;
	return false;
}

bool dp_fcmd_site_stacks(const struct dp_fcmd_set *s, unsigned site)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].site == site &&
		    s->v[i].trig.cmd == DP_TRIG_STACKTRACE)
			return true;
	return false;
}

bool dp_fcmd_targets(const struct dp_fcmd_set *s, const struct dp_event *ev)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].trig.target == ev)
			return true;
	return false;
}

/* The ops in use, newest first (the kernel adds each ops to the head of
 * its list when its first function comes). */
static size_t ops_order(const struct dp_fcmd_set *s, unsigned *o)
{
	size_t n = 0;

	for (unsigned ops = 0; ops < DP_FCMD_NOPS; ops++) {
		size_t k = n;

		if (!s->seq[ops])
			continue;
		for (; k && s->seq[o[k - 1]] < s->seq[ops]; k--)
			o[k] = o[k - 1];
		o[k] = ops;
		n++;
	}
	return n;
}

/* ftrace_probe_print() and event_enable_print(): a count for the ops
 * that keeps one, but for enable_event's own "no count" value. */
static void print_one(const struct dp_fcmd *c, FILE *out)
{
	const struct fc_row *r = &rows[c->row];

	fputs(c->name, out);
	if (c->lib)
		fprintf(out, " [%s]", c->lib);
	fprintf(out, ":%s", r->name);
	if (r->flags & FC_TARGET)
		fprintf(out, ":%s:%s", c->trig.target->group,
			c->trig.target->name);
	if (!c->trig.counted ||
	    ((r->flags & FC_TARGET) && c->trig.count == DP_TRIG_UNLIMITED))
		fputs(":unlimited\n", out);
	else
		fprintf(out, ":count=%ld\n", (long)c->trig.count);
}

void dp_fcmd_print(const struct dp_fcmd_set *s, FILE *out)
{
	unsigned o[DP_FCMD_NOPS];
	size_t n = ops_order(s, o);

	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < s->n; i++)
			if (c_ops(&s->v[i]) == o[k])
				print_one(&s->v[i], out);
}

static void fire_one(struct dp_fcmd *c, const struct dp_trigger_ops *ops,
		     void *priv)
{
	if ((rows[c->row].flags & FC_ON_ONLY) && c->trig.counted &&
	    !ops->tracing_is_on(priv))
		return;
	dp_trigger_fire(&c->trig, ops, priv);
}

void dp_fcmd_run(struct dp_fcmd_set *s, unsigned site,
		 const struct dp_trigger_ops *ops, void *priv)
{
	unsigned o[DP_FCMD_NOPS];
	size_t n = ops_order(s, o);

	/* once an ops, whichever of the function's names it is under */
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < s->n; i++)
			if (s->v[i].site == site && c_ops(&s->v[i]) == o[k]) {
				fire_one(&s->v[i], ops, priv);
				break;
			}
}

void dp_fcmd_set_free(struct dp_fcmd_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		fcmd_free(&s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}
