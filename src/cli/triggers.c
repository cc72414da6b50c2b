// SPDX-License-Identifier: GPL-2.0
/*
 * --trigger [EVENT=]hist:...: the kernel's hist triggers on the events of
 * `dprobe trace` (event/hist.h).  An event with a hist trigger is
 * aggregated instead of printed: all its records, as the kernel's hist
 * triggers see them, its --filter deciding only what counts as an event;
 * the histograms are printed as the kernel's `hist` files, at the end and
 * on SIGUSR1.  Variables are shared by all of them, and the synthetic
 * events their actions generate (defined with -e 's:NAME TYPE FIELD;...')
 * go to the triggers on them, then through their filter to the output.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/triggers.h"
#include "event/filter.h"

/* The events @arg names: "EVENT=hist:..." one, "hist:..." every one. */
static int add_one(struct dp_cli_triggers *t, struct dp_event *ev,
		   const char *text)
{
	struct dp_hist_error err;
	struct dp_hist *h;
	int ret;

	if (t->n == DP_CLI_MAX_TRIGGERS) {
		fprintf(stderr, "dprobe: too many triggers (at most %d)\n",
			DP_CLI_MAX_TRIGGERS);
		return -1;
	}
	ret = dp_hist_new_in(&t->env, ev, text, false, &h, &err);
	if (ret) {
		dp_hist_error_print(ev, text, ret, &err, stderr);
		return -1;
	}
	if (dp_hist_command(h) != DP_HIST_ADD) {
		fprintf(stderr, "dprobe: --trigger '%s': pause, cont and clear "
			"act on a trigger already there (dprobe mount)\n",
			text);
		dp_hist_free(h);
		return -1;
	}
	t->v[t->n].ev = ev;
	t->v[t->n++].hist = h;
	ev->triggered = true;	/* the sink's trigger hook sees its records */
	/* a common_stacktrace key or variable: its records carry the user
	 * stack */
	if (dp_hist_wants_stacks(h))
		ev->stack = true;
	return 0;
}

static struct dp_hist *each(void *priv, size_t i)
{
	struct dp_cli_triggers *t = priv;

	return i < t->n ? t->v[i].hist : NULL;
}

/* A record of a synthetic event an action made: its triggers, its
 * filter, the output, as a probe's record goes (deliver.c). */
static void fire(void *priv, const struct dp_event *ev, const void *rec,
		 size_t len, const struct dp_rec_meta *meta)
{
	struct dp_cli_triggers *t = priv;

	if (ev->triggered)
		dp_cli_triggers_add(t, ev, rec, len, meta, t->sym);
	if (!ev->enabled || ev->soft)
		return;
	if (ev->filter && !dp_filter_match(ev->filter, ev, rec, len, meta)) {
		if (t->stats)
			t->stats->filtered++;
		return;
	}
	if (t->stats)
		t->stats->events++;
	if (t->emit)
		t->emit(t->emit_priv, ev, rec, len, meta, t->sym);
}

int dp_cli_triggers_setup(struct dp_cli_triggers *t, struct dp_registry *reg,
			  const char *const *args, int nargs)
{
	t->env = (struct dp_hist_env){ reg, each, fire, t };
	for (int i = 0; i < nargs; i++) {
		const char *a = args[i], *eq = strchr(a, '=');
		char name[2 * DP_MAX_EVENT_NAME_LEN];
		struct dp_event *ev;

		if (!strncmp(a, "hist", 4) && (a[4] == ':' || !a[4])) {
			for (ev = reg->events; ev; ev = ev->next)
				if (add_one(t, ev, a))
					return -1;
			continue;
		}
		if (!eq || eq == a || (size_t)(eq - a) >= sizeof(name)) {
			fprintf(stderr, "dprobe: --trigger takes [EVENT=]hist:..., "
				"not '%s'\n", a);
			return -1;
		}
		snprintf(name, sizeof(name), "%.*s", (int)(eq - a), a);
		ev = dp_cli_find_event(reg, name);
		if (!ev) {
			fprintf(stderr, "dprobe: --trigger: no event '%s'\n", name);
			return -1;
		}
		if (add_one(t, ev, eq + 1))
			return -1;
	}
	return 0;
}

void dp_cli_triggers_add(struct dp_cli_triggers *t, const struct dp_event *ev,
			 const void *rec, size_t len,
			 const struct dp_rec_meta *meta,
			 const struct dp_symbolizer *sym)
{
	const struct dp_symbolizer *was = t->sym;

	t->sym = sym;
	for (unsigned i = 0; i < t->n; i++)
		if (t->v[i].ev == ev)
			dp_hist_add(t->v[i].hist, rec, len, meta, sym);
	t->sym = was;
}

/* @ev's triggers as one request, if they all can be kept in processes. */
static bool agg_req_of(const struct dp_cli_triggers *t,
		       const struct dp_event *ev, struct dp_agg_req *r)
{
	*r = (struct dp_agg_req){ .ev = ev };
	if (ev->filter || ev->neprobes)
		return false;
	for (unsigned i = 0; i < t->n; i++) {
		if (t->v[i].ev != ev)
			continue;
		if (r->n == DP_AGG_PER_PROBE ||
		    !dp_hist_agg_spec(t->v[i].hist, &r->spec[r->n]))
			return false;
		r->cookie[r->n++] = t->v[i].hist;
	}
	return r->n > 0;
}

size_t dp_cli_triggers_aggs(const struct dp_cli_triggers *t,
			    struct dp_agg_req *out, size_t max)
{
	const char *env = getenv("DPROBE_AGG");
	size_t n = 0;

	if (env && !strcmp(env, "0"))
		return 0;
	for (unsigned i = 0; i < t->n && n < max; i++) {
		bool seen = false;

		for (unsigned k = 0; k < i && !seen; k++)
			seen = t->v[k].ev == t->v[i].ev;
		if (!seen && agg_req_of(t, t->v[i].ev, &out[n]))
			n++;
	}
	return n;
}

void dp_cli_triggers_agg(void *cookie, const uint64_t *key, uint64_t hits,
			 const uint64_t *val, const char *comm)
{
	dp_hist_add_sums(cookie, key, hits, val, comm);
}

void dp_cli_triggers_print(const struct dp_cli_triggers *t, FILE *out)
{
	bool first = true;

	/* one `hist` file per event: its triggers in the order given, as
	 * the kernel appends them */
	for (unsigned i = 0; i < t->n; i++) {
		const struct dp_event *ev = t->v[i].ev;
		unsigned n = 0;
		bool seen = false;

		for (unsigned k = 0; k < i && !seen; k++)
			seen = t->v[k].ev == ev;
		if (seen)
			continue;
		fprintf(out, "%s%s/%s/hist:\n", first ? "" : "\n", ev->group,
			ev->name);
		first = false;
		for (unsigned k = i; k < t->n; k++)
			if (t->v[k].ev == ev)
				dp_hist_print(t->v[k].hist, n++, out);
	}
	fflush(out);
}

void dp_cli_triggers_free(struct dp_cli_triggers *t)
{
	for (unsigned i = 0; i < t->n; i++)
		dp_hist_free(t->v[i].hist);
	t->n = 0;
}
