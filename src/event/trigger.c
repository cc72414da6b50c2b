// SPDX-License-Identifier: GPL-2.0
/*
 * Event trigger commands (see trigger.h): parsing as the kernel's
 * event_trigger_parse() and event_enable_trigger_parse() cut the text,
 * the one-per-type rule, the `trigger` file lines, and the two calls
 * (before and after the record) with the commands' count rules.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "event/trigger.h"
#include "lang/kstrto.h"

const char *const dp_trigger_names[DP_TRIG_NCMDS] = {
	[DP_TRIG_TRACEON] = "traceon",
	[DP_TRIG_TRACEOFF] = "traceoff",
	[DP_TRIG_SNAPSHOT] = "snapshot",
	[DP_TRIG_STACKTRACE] = "stacktrace",
	[DP_TRIG_ENABLE_EVENT] = "enable_event",
	[DP_TRIG_DISABLE_EVENT] = "disable_event",
	[DP_TRIG_ENABLE_HIST] = "enable_hist",
	[DP_TRIG_DISABLE_HIST] = "disable_hist",
};

const char dp_trigger_help[] =
	"# Available triggers:\n"
	"# traceon traceoff snapshot stacktrace enable_event disable_event "
	"enable_hist disable_hist hist\n";

static char *skip_spaces(char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' ||
	       *s == '\f' || *s == '\v')
		s++;
	return s;
}

static bool lookup(const char *word, enum dp_trig_cmd *cmd)
{
	for (int i = 0; i < DP_TRIG_NCMDS; i++) {
		if (!strcmp(word, dp_trigger_names[i])) {
			*cmd = (enum dp_trig_cmd)i;
			return true;
		}
	}
	return false;
}

bool dp_trigger_command(const char *text, char *word, size_t size,
			enum dp_trig_cmd *cmd)
{
	size_t n;
	enum dp_trig_cmd c;

	while (*text == ' ' || *text == '\t')
		text++;
	if (*text == '!')
		text++;
	n = strcspn(text, ": \t");
	if (size) {
		size_t k = n < size - 1 ? n : size - 1;

		memcpy(word, text, k);
		word[k] = '\0';
	}
	if (n >= size)
		return false;
	if (!lookup(word, &c))
		return false;
	if (cmd)
		*cmd = c;
	return true;
}

bool dp_trigger_has_target(const struct dp_trigger *t)
{
	return t->cmd >= DP_TRIG_ENABLE_EVENT && t->cmd < DP_TRIG_NCMDS;
}

unsigned dp_trigger_type(const struct dp_trigger *t)
{
	switch (t->cmd) {
	case DP_TRIG_TRACEON:
	case DP_TRIG_TRACEOFF:
		return DP_ETT_TRACE_ONOFF;
	case DP_TRIG_SNAPSHOT:
		return DP_ETT_SNAPSHOT;
	case DP_TRIG_STACKTRACE:
		return DP_ETT_STACKTRACE;
	case DP_TRIG_ENABLE_EVENT:
	case DP_TRIG_DISABLE_EVENT:
		return DP_ETT_EVENT_ENABLE;
	default:
		return DP_ETT_HIST_ENABLE;
	}
}

bool dp_trigger_is_post(const struct dp_trigger *t)
{
	return t->cmd == DP_TRIG_TRACEOFF || t->cmd == DP_TRIG_STACKTRACE;
}

bool dp_trigger_same(const struct dp_trigger *a, const struct dp_trigger *b)
{
	if (dp_trigger_type(a) != dp_trigger_type(b))
		return false;
	return !dp_trigger_has_target(a) || a->target == b->target;
}

void dp_trigger_free(struct dp_trigger *t)
{
	if (!t)
		return;
	dp_filter_free(t->filter);
	free(t->filter_text);
	free(t);
}

/*
 * event_trigger_separate_filter(): with @required, the first word is the
 * parameter; without, only a word starting with a digit (a count) is.
 */
static void separate(char *pf, char **param, char **filter, bool required)
{
	*param = *filter = NULL;
	if (!pf)
		return;
	if (!required && !(*pf >= '0' && *pf <= '9')) {
		*filter = pf;
		return;
	}
	*param = strsep(&pf, " \t");
	if (pf) {
		*filter = skip_spaces(pf);
		if (!**filter)
			*filter = NULL;
	}
}

/* event_trigger_parse_num(): the first ':'-separated part, any base. */
static int parse_num(char *param, struct dp_trigger *t)
{
	char *number;
	uint64_t v;
	int ret;

	if (!param)
		return 0;
	number = strsep(&param, ":");
	if (!*number)
		return -EINVAL;
	ret = dp_kstrtoull(number, 0, &v);
	if (ret)
		return ret;
	t->count = (unsigned long)v;
	return 0;
}

/* set_trigger_filter(): "if" then the filter. */
static int set_filter(const struct dp_event *ev, char *text,
		      struct dp_trigger *t, struct dp_filter_error *ferr,
		      char **filter_text)
{
	char *s;

	if (!text)
		return 0;
	s = strsep(&text, " \t");
	if (!*s || strcmp(s, "if") || !text)
		return -EINVAL;
	t->filter = dp_filter_compile(ev, text, ferr);
	if (!t->filter) {
		if (filter_text)
			*filter_text = strdup(text);
		return ferr->err ? -ferr->err : -EINVAL;
	}
	t->filter_text = strdup(text);
	if (!t->filter_text)
		return -ENOMEM;
	return 0;
}

int dp_trigger_parse(const struct dp_event *ev, const char *text,
		     dp_trigger_find_t find, void *priv,
		     struct dp_trigger **out, bool *remove,
		     struct dp_filter_error *ferr, char **filter_text)
{
	char *buf = strdup(text), *next, *glob, *param, *filter;
	struct dp_trigger *t = NULL;
	enum dp_trig_cmd cmd;
	int ret = -EINVAL;

	*out = NULL;
	*remove = false;
	memset(ferr, 0, sizeof(*ferr));
	if (filter_text)
		*filter_text = NULL;
	if (!buf)
		return -ENOMEM;
	next = skip_spaces(buf);
	glob = strsep(&next, ": \t");
	if (next) {
		next = skip_spaces(next);
		if (!*next)
			next = NULL;
	}
	*remove = glob[0] == '!';
	if (!lookup(glob + *remove, &cmd))
		goto out;
	t = calloc(1, sizeof(*t));
	if (!t) {
		ret = -ENOMEM;
		goto out;
	}
	t->cmd = cmd;
	t->count = DP_TRIG_UNLIMITED;
	if (dp_trigger_has_target(t)) {
		char *sys, *name;

		if (!next)
			goto out;
		separate(next, &param, &filter, true);
		sys = strsep(&param, ":");
		if (!param)
			goto out;
		name = strsep(&param, ":");
		t->target = find ? find(priv, sys, name) : NULL;
		if (!t->target)
			goto out;
	} else {
		separate(next, &param, &filter, false);
	}
	t->counted = param != NULL;
	if (*remove) {
		ret = 0;
		goto out;
	}
	ret = parse_num(param, t);
	if (!ret)
		ret = set_filter(ev, filter, t, ferr, filter_text);
out:
	free(buf);
	if (ret) {
		dp_trigger_free(t);
		return ret;
	}
	*out = t;
	return 0;
}

void dp_trigger_print(const struct dp_trigger *t, FILE *out)
{
	fputs(dp_trigger_names[t->cmd], out);
	if (dp_trigger_has_target(t))
		fprintf(out, ":%s:%s", t->target->group, t->target->name);
	if (t->count == DP_TRIG_UNLIMITED)
		fputs(":unlimited", out);
	else
		fprintf(out, ":count=%ld", (long)t->count);
	if (t->filter_text)
		fprintf(out, " if %s\n", t->filter_text);
	else
		fputc('\n', out);
}

/* ---- a set ---------------------------------------------------------------- */

int dp_trigger_set_add(struct dp_trigger_set *s, struct dp_trigger *t)
{
	for (struct dp_trigger *o = s->head; o; o = o->next)
		if (dp_trigger_same(o, t))
			return -EEXIST;
	t->next = s->head;
	s->head = t;
	return 0;
}

struct dp_trigger *dp_trigger_set_remove(struct dp_trigger_set *s,
					 const struct dp_trigger *like)
{
	for (struct dp_trigger **pp = &s->head; *pp; pp = &(*pp)->next) {
		struct dp_trigger *t = *pp;

		if (dp_trigger_same(t, like)) {
			*pp = t->next;
			t->next = NULL;
			return t;
		}
	}
	return NULL;
}

void dp_trigger_set_clear(struct dp_trigger_set *s)
{
	while (s->head) {
		struct dp_trigger *t = s->head;

		s->head = t->next;
		dp_trigger_free(t);
	}
}

void dp_trigger_set_print(const struct dp_trigger_set *s, FILE *out)
{
	for (const struct dp_trigger *t = s->head; t; t = t->next)
		dp_trigger_print(t, out);
}

bool dp_trigger_set_cond(const struct dp_trigger_set *s)
{
	for (const struct dp_trigger *t = s->head; t; t = t->next)
		if (t->filter || dp_trigger_is_post(t))
			return true;
	return false;
}

/* ---- running -------------------------------------------------------------- */

/* The command's count_func: may it fire (and count it)? */
static bool count_ok(struct dp_trigger *t, const struct dp_trigger_ops *ops,
		     void *priv)
{
	switch (t->cmd) {
	case DP_TRIG_TRACEON:
		if (ops->tracing_is_on(priv))
			return false;
		break;
	case DP_TRIG_TRACEOFF:
		if (!ops->tracing_is_on(priv))
			return false;
		break;
	case DP_TRIG_ENABLE_EVENT:
	case DP_TRIG_DISABLE_EVENT:
		if (!t->count)
			return false;
		/* already in the state it would switch to */
		if ((t->cmd == DP_TRIG_ENABLE_EVENT) ==
		    !ops->soft_disabled(priv, t->target))
			return false;
		break;
	default:
		break;
	}
	if (!t->count)
		return false;
	if (t->count != DP_TRIG_UNLIMITED)
		t->count--;
	return true;
}

void dp_trigger_fire(struct dp_trigger *t, const struct dp_trigger_ops *ops,
		     void *priv)
{
	if (t->counted && !count_ok(t, ops, priv))
		return;
	switch (t->cmd) {
	case DP_TRIG_TRACEON:
	case DP_TRIG_TRACEOFF:
		if (ops->tracing_is_on(priv) != (t->cmd == DP_TRIG_TRACEON))
			ops->tracing_set(priv, t->cmd == DP_TRIG_TRACEON);
		break;
	case DP_TRIG_SNAPSHOT:
		ops->snapshot(priv);
		break;
	case DP_TRIG_STACKTRACE:
		ops->stacktrace(priv);
		break;
	case DP_TRIG_ENABLE_EVENT:
	case DP_TRIG_DISABLE_EVENT:
		ops->set_soft_disabled(priv, t->target,
				       t->cmd == DP_TRIG_DISABLE_EVENT);
		break;
	case DP_TRIG_ENABLE_HIST:
	case DP_TRIG_DISABLE_HIST:
		ops->hist_pause(priv, t->target, t->cmd == DP_TRIG_DISABLE_HIST);
		break;
	case DP_TRIG_DUMP:
	case DP_TRIG_CPUDUMP:
		ops->dump(priv, t->cmd == DP_TRIG_DUMP);
		break;
	default:
		break;
	}
}

unsigned dp_trigger_set_call(struct dp_trigger_set *s,
			     const struct dp_event *ev, const void *rec,
			     size_t len, const struct dp_rec_meta *meta,
			     const struct dp_trigger_ops *ops, void *priv)
{
	unsigned tt = 0;

	for (struct dp_trigger *t = s->head; t; t = t->next) {
		if (!rec) {
			dp_trigger_fire(t, ops, priv);
			continue;
		}
		if (t->filter && !dp_filter_match(t->filter, ev, rec, len, meta))
			continue;
		if (dp_trigger_is_post(t)) {
			tt |= dp_trigger_type(t);
			continue;
		}
		dp_trigger_fire(t, ops, priv);
	}
	return tt;
}

void dp_trigger_set_post_call(struct dp_trigger_set *s, unsigned tt,
			      const struct dp_trigger_ops *ops, void *priv)
{
	for (struct dp_trigger *t = s->head; t; t = t->next)
		if (dp_trigger_type(t) & tt)
			dp_trigger_fire(t, ops, priv);
}
