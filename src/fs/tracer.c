// SPDX-License-Identifier: GPL-2.0
/*
 * current_tracer, set_ftrace_filter and set_ftrace_notrace: the function
 * and function_graph tracers on the served process (sym/tracer.h); what
 * function_graph shows of them is graph.c's, their options options.c's.
 *
 * Writing a tracer's name to current_tracer puts its events (group
 * `ftrace`, listed in no *_events file, as the kernel's own are not) on
 * every function set_ftrace_filter selects and set_ftrace_notrace does
 * not, and clears the trace, as the kernel does when the tracer changes.
 * They are armed in soft mode: the session child sends their records
 * raw, and the reader thread turns them into the tracer's lines with
 * the tracer's renderer, which keeps the state the lines need (a call's
 * entry held back until its return shows whether it was a leaf).
 * Writing `nop` takes the events away.  Only the top level has a
 * function tracer; an instance's current_tracer stays nop.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/internal.h"
#include "output/output.h"
#include "sym/proc.h"

static bool is_fgraph(const struct dp_tracer *t)
{
	return t && !strcmp(dp_tracer_name(t), "function_graph");
}

bool dp_fs_fgraph_current(const struct dp_fs *fs)
{
	return is_fgraph(fs->tracer);
}

/*
 * The rules @t's functions are chosen by: set_ftrace_filter's, or, while
 * it puts none in (the kernel's "all functions", here the program's),
 * every function of @program and, for function_graph, the functions
 * set_graph_function and set_graph_notrace put in: a library function
 * they name is probed for them to mean something.  @out's rules are
 * the files' own (only @out->v to free).
 */
static int filter_rules(struct dp_fs *fs, const struct dp_tracer *t,
			const char *program, struct dp_funcsel *out)
{
	const struct dp_funcsel *g[2] = { &fs->graph_function,
					  &fs->graph_notrace };

	*out = fs->ftrace_filter;
	if (!is_fgraph(t) || dp_fs_sel_some(out) ||
	    !(dp_fs_sel_some(g[0]) || dp_fs_sel_some(g[1])))
		return 0;
	out->v = calloc(g[0]->n + g[1]->n + 1, sizeof(*out->v));
	if (!out->v)
		return -ENOMEM;
	out->v[0] = (struct dp_funcrule){ .glob = "*", .mod = (char *)program };
	out->n = 1;
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < g[k]->n; i++)
			if (!g[k]->v[i].neg)
				out->v[out->n++] = g[k]->v[i];
	return 0;
}

/* @l's paths and the program's, @prog, copied: they point into the
 * process's objects, which go.  0 or -ENOMEM. */
static int own_paths(struct dp_funclist *l, const char *prog, char **program)
{
	*program = strdup(prog);
	if (!*program) {
		dp_funclist_free(l);
		return -ENOMEM;
	}
	for (size_t i = 0; i < l->n; i++) {
		l->v[i].path = strdup(l->v[i].path);
		if (!l->v[i].path)
			return -ENOMEM;
	}
	return 0;
}

/* The functions @t is to be on now. */
static int select_funcs(struct dp_fs *fs, const struct dp_tracer *t,
			struct dp_funclist *l, char **program)
{
	struct dp_funcsel filter = { 0 };
	const char **paths;
	struct dp_proc *p;
	char err[512];
	size_t n;
	int ret = dp_fs_target_paths(fs, &p, &paths, &n);

	if (ret)
		return ret;
	ret = n ? filter_rules(fs, t, paths[0], &filter) : -ENOENT;
	if (!ret)
		ret = dp_funcs_select(paths, n, &filter, &fs->ftrace_notrace,
				      l, err, sizeof(err));
	if (filter.v != fs->ftrace_filter.v)
		free(filter.v);
	*program = NULL;
	if (!ret)
		ret = own_paths(l, paths[0], program);
	free(paths);
	dp_proc_close(p);
	return ret;
}

int dp_fs_select_funcs(struct dp_fs *fs, const struct dp_funcsel *filter,
		       const struct dp_funcsel *notrace, struct dp_funclist *l,
		       char **program)
{
	const char **paths;
	struct dp_proc *p;
	char err[512];
	size_t n;
	int ret = dp_fs_target_paths(fs, &p, &paths, &n);

	if (ret)
		return ret;
	ret = n ? dp_funcs_select(paths, n, filter, notrace, l, err,
				  sizeof(err)) : -ENOENT;
	*program = NULL;
	if (!ret)
		ret = own_paths(l, paths[0], program);
	free(paths);
	dp_proc_close(p);
	return ret;
}

void dp_fs_funclist_free(struct dp_funclist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free((char *)l->v[i].path);
	dp_funclist_free(l);
}

bool dp_fs_tracer_event(const struct dp_fs *fs, const struct dp_event *ev)
{
	return fs->tracer && ev->builtin && !strcmp(ev->group, DP_TRACER_GROUP) &&
	       strcmp(ev->name, DP_TRACER_STACK_EVENT) && ev->probes;
}

/* The tracer's events out of the registry (the reader threads told
 * first). */
static void remove_events(struct dp_fs *fs)
{
	struct dp_event *ev = fs->reg.events;

	pthread_mutex_lock(&fs->buf_lock);
	fs->ntr_events = 0;
	pthread_mutex_unlock(&fs->buf_lock);

	while (ev) {
		struct dp_event *next = ev->next;

		if (dp_fs_tracer_event(fs, ev)) {
			char del[2 * DP_MAX_EVENT_NAME_LEN + 4];

			snprintf(del, sizeof(del), "-:%s/%s", ev->group,
				 ev->name);
			dp_registry_apply(&fs->reg, del, NULL, NULL);
		}
		ev = next;
	}
}

static bool known(struct dp_event *const *v, size_t n,
		  const struct dp_event *ev)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == ev)
			return true;
	return false;
}

/* The tracer's events on @l's functions; -errno with nothing left made. */
static int add_events(struct dp_fs *fs, const struct dp_tracer *t,
		      const char *program, struct dp_funclist *l)
{
	char **lines = NULL;
	size_t n = 0;
	int ret = dp_tracer_defs(t, program, l, &lines, &n);

	struct dp_event *made[4];
	size_t nmade = 0;

	for (size_t i = 0; !ret && i < n; i++) {
		struct dp_probe *p = NULL;

		ret = dp_registry_apply(&fs->reg, lines[i], &p, NULL);
		if (ret || !p)
			continue;
		/* appended to the first probe's event: marked once all are
		 * in (a builtin event takes no more probes) */
		if (!known(made, nmade, p->event) && nmade < 4)
			made[nmade++] = p->event;
	}
	for (size_t i = 0; i < nmade; i++)
		made[i]->builtin = true;
	if (!ret) {
		pthread_mutex_lock(&fs->buf_lock);
		for (size_t i = 0; i < nmade; i++)
			fs->tr_events[i] = made[i];
		fs->ntr_events = (unsigned)nmade;
		pthread_mutex_unlock(&fs->buf_lock);
	}
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
	if (ret)
		remove_events(fs);
	return ret;
}

/* The tracer's renderer, fresh (buf_lock held). */
static void renderer_reset(struct dp_fs *fs)
{
	if (fs->tr_mem) {
		dp_render_discard(&fs->tr_render);
		fclose(fs->tr_mem);
		fs->tr_mem = NULL;
	}
	free(fs->tr_text);
	fs->tr_text = NULL;
	fs->tr_size = 0;
	if (!fs->tracer)
		return;
	fs->tr_mem = open_memstream(&fs->tr_text, &fs->tr_size);
	if (!fs->tr_mem)
		return;
	dp_renderer_init(&fs->tr_render,
			 dp_renderer_tracer(dp_tracer_name(fs->tracer)),
			 fs->tr_mem, fs->ncpus);
	fs->tr_render.tracer = &fs->tr_opts;
	dp_render_begin(&fs->tr_render);
	/* the header is the trace file's (buffer.c), not a line */
	fflush(fs->tr_mem);
	rewind(fs->tr_mem);
}

static int apply(struct dp_fs *fs, const struct dp_tracer *t)
{
	struct dp_funclist l = { 0 };
	char *program = NULL;
	int ret = 0;

	if (t) {
		ret = select_funcs(fs, t, &l, &program);
		if (!ret && !l.n)
			ret = -EINVAL;
		if (!ret && l.n > DP_FUNCSEL_LIMIT)
			ret = -E2BIG;
	}
	if (ret) {
		dp_fs_funclist_free(&l);
		free(program);
		return ret;
	}
	remove_events(fs);
	fs->tracer = t;
	fs->tr_nfuncs = l.n;
	if (t)
		ret = add_events(fs, t, program, &l);
	if (ret)
		fs->tracer = NULL;
	/* the libraries loaded since may have the functions they name */
	if (!ret && is_fgraph(t))
		dp_fs_graph_sync(fs);
	dp_fs_funclist_free(&l);
	free(program);
	dp_fs_update_profile(fs);
	dp_fs_buf_clear(fs);
	pthread_mutex_lock(&fs->buf_lock);
	renderer_reset(fs);
	pthread_mutex_unlock(&fs->buf_lock);
	return dp_fs_rearm(fs) ? -EIO : ret;
}

int dp_fs_tracer_write(struct dp_fs *fs, const char *buf, size_t len)
{
	const struct dp_tracer *t;
	char name[64];

	while (len && strchr(" \t\n", buf[len - 1]))
		len--;
	if (!len || len >= sizeof(name))
		return -EINVAL;
	memcpy(name, buf, len);
	name[len] = '\0';
	if (dp_tracer_by_name(name, &t) || (t && fs->top))
		return -EINVAL;
	if (t == fs->tracer)
		return 0;
	return apply(fs, t);
}

void dp_fs_tracer_print(const struct dp_fs *fs, FILE *out)
{
	fprintf(out, "%s\n", dp_tracer_name(fs->tracer));
}

bool dp_fs_rule_matches(struct dp_fs *fs, const struct dp_funcrule *r)
{
	const struct dp_funcsel one = { (struct dp_funcrule *)r, 1 };

	return dp_fs_funcs_count(fs, &one) != 0;
}

int dp_fs_rules_check(struct dp_fs *fs, const struct dp_funcsel *s,
		      size_t from)
{
	for (size_t i = from; i < s->n; i++)
		if (!s->v[i].neg && !dp_fs_rule_matches(fs, &s->v[i]))
			return -EINVAL;
	return 0;
}

/* set_ftrace_filter, set_ftrace_notrace: each write adds rules (a `>`
 * cleared them first); a tracer in use is put on the new selection. */
int dp_fs_funcsel_write(struct dp_fs *fs, bool notrace, const char *buf,
			size_t len)
{
	struct dp_funcsel *s = notrace ? &fs->ftrace_notrace :
					 &fs->ftrace_filter;
	char *text = strndup(buf, len), err[256];
	size_t before = s->n;
	int ret;

	if (!text)
		return -ENOMEM;
	/* FUNC:COMMAND words first (fcmds.c), the rules of the rest */
	ret = dp_fs_fcmd_take(fs, notrace, text);
	if (!ret)
		ret = dp_funcsel_add(s, text, err, sizeof(err));
	free(text);
	if (!ret)
		ret = dp_fs_rules_check(fs, s, before);
	if (!ret && fs->tracer && s->n > before)
		ret = apply(fs, fs->tracer);
	if (ret)
		dp_funcsel_truncate(s, before);	/* the rules as they were */
	return ret;
}

int dp_fs_tracer_graph_changed(struct dp_fs *fs)
{
	struct dp_funclist l = { 0 };
	char *program = NULL;
	bool same;

	if (!is_fgraph(fs->tracer) || dp_fs_sel_some(&fs->ftrace_filter))
		return 0;
	same = select_funcs(fs, fs->tracer, &l, &program) ||
	       l.n == fs->tr_nfuncs;
	dp_fs_funclist_free(&l);
	free(program);
	return same ? 0 : apply(fs, fs->tracer);
}

int dp_fs_funcsel_truncate(struct dp_fs *fs, bool notrace)
{
	dp_funcsel_free(notrace ? &fs->ftrace_notrace : &fs->ftrace_filter);
	return fs->tracer ? apply(fs, fs->tracer) : 0;
}

/* What the kernel shows: the functions selected, or, with no rule that
 * selects any, the line saying that all are. */
void dp_fs_funcsel_print(struct dp_fs *fs, bool notrace, FILE *out)
{
	dp_fs_sel_print(fs, notrace ? &fs->ftrace_notrace : &fs->ftrace_filter,
			notrace, out);
}

void dp_fs_sel_print(struct dp_fs *fs, const struct dp_funcsel *s,
		     bool notrace, FILE *out)
{
	bool some = false;

	for (size_t i = 0; i < s->n; i++)
		some |= !s->v[i].neg;
	if (some)
		dp_fs_list_selected(fs, s, out);
	else if (!notrace)
		fputs("#### all functions enabled ####\n", out);
	/* the function commands after the functions, as t_probe_show() */
	if (!notrace)
		dp_fs_fcmd_print(fs, out);
}

/* The tracer's events, for the session child: armed raw, their lines
 * made here. */
void dp_fs_tracer_mark(struct dp_fs *fs, struct dp_event *ev)
{
	if (!dp_fs_tracer_event(fs, ev))
		return;
	ev->enabled = false;
	ev->soft = ev->triggered = true;
}

/* A record of event @id (a reader thread): the tracer's lines of it. */
void dp_fs_tracer_record(struct dp_fs *fs, unsigned id, const void *rec,
			 size_t len, const struct dp_rec_meta *meta)
{
	const struct dp_event *ev;

	pthread_mutex_lock(&fs->buf_lock);
	ev = NULL;
	for (unsigned i = 0; i < fs->ntr_events; i++)
		if (fs->tr_events[i]->id == id)
			ev = fs->tr_events[i];
	if (!fs->tr_mem || !ev || !fs->tracing_on)
		goto out;
	rewind(fs->tr_mem);
	if (dp_render_event(&fs->tr_render, ev, rec, len, meta,
			    dp_fs_symbolizer(fs)) || fflush(fs->tr_mem))
		goto out;
	/* each line an entry of the buffer, as trace_pipe takes them */
	for (size_t at = 0; at < fs->tr_size;) {
		char *nl = memchr(fs->tr_text + at, '\n', fs->tr_size - at);
		size_t l = nl ? (size_t)(nl - (fs->tr_text + at)) + 1 :
				fs->tr_size - at;

		dp_fs_ring_add_locked(fs, fs->live, meta->cpu,
				      fs->tr_text + at, l);
		at += l;
	}
out:
	pthread_mutex_unlock(&fs->buf_lock);
}

void dp_fs_tracer_fini(struct dp_fs *fs)
{
	fs->tracer = NULL;
	renderer_reset(fs);
	dp_funcsel_free(&fs->ftrace_filter);
	dp_funcsel_free(&fs->ftrace_notrace);
	dp_fs_graph_fini(fs);
	dp_fs_fcmd_fini(fs);
}
