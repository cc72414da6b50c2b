// SPDX-License-Identifier: GPL-2.0
/*
 * Trigger commands in the mount (event/trigger.h does the parsing and the
 * calls): each event's triggers, the kernel's soft mode, and what the
 * triggers act on (tracing_on, the snapshot buffer, stack entries, other
 * events' soft-disabled bit, hist triggers' pause).
 *
 * Soft mode is the kernel's: an event with a trigger on it (any trigger,
 * hist too) or named by an enable_event, disable_event, enable_hist or
 * disable_hist trigger is armed whether it is enabled or not, and busy;
 * its `enable` reads "1*" or "0*", the star for soft mode, the digit for
 * its soft-disabled bit, which `echo 0/1 > enable` and the enable/disable
 * triggers flip.  When soft mode ends the event stays as that bit says.
 *
 * The session child sends every record of an event in soft mode raw
 * (FR_REC) and no line: a reader thread runs the triggers here, in the
 * kernel's order (trace_trigger_soft_disabled(), the reservation,
 * event_triggers_call() on the record, the soft-disabled bit and the
 * event's filter, the commit, event_triggers_post_call()), and writes the
 * event's line itself.  All of it under buf_lock: the state here changes
 * under fs->lock and buf_lock both.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "event/filter.h"
#include "event/trigger.h"
#include "fs/internal.h"
#include "output/output.h"
#include "sym/proc.h"

struct dp_fs_trig {
	unsigned id;
	struct dp_event *ev;
	struct dp_trigger_set set;
	bool soft_disabled;
	struct dp_filter *filter;	/* the event's own, a copy */
};

/* ---- the table (buf_lock held) ------------------------------------------- */

static struct dp_fs_trig *find(struct dp_fs *fs, unsigned id)
{
	for (size_t i = 0; i < fs->ntrigs; i++)
		if (fs->trigs[i].id == id)
			return &fs->trigs[i];
	return NULL;
}

bool dp_fs_triggered(struct dp_fs *fs, unsigned id)
{
	bool on;

	pthread_mutex_lock(&fs->buf_lock);
	on = find(fs, id) != NULL;
	pthread_mutex_unlock(&fs->buf_lock);
	return on;
}

static bool targeted(const struct dp_fs *fs, const struct dp_event *ev)
{
	if (dp_fs_fcmd_targets(fs, ev))
		return true;
	for (size_t i = 0; i < fs->ntrigs; i++)
		for (const struct dp_trigger *t = fs->trigs[i].set.head; t;
		     t = t->next)
			if (dp_trigger_has_target(t) && t->target == ev)
				return true;
	return false;
}

static struct dp_filter *copy_filter(const struct dp_event *ev)
{
	struct dp_filter_error e = { 0 };

	if (!ev->filter || !ev->filter_text)
		return NULL;
	return dp_filter_compile(ev, ev->filter_text, &e);
}

/* @ev enters soft mode, if it is not in it (fs->lock held). */
static int enter(struct dp_fs *fs, struct dp_event *ev)
{
	struct dp_fs_trig *v;
	int ret = 0;

	pthread_mutex_lock(&fs->buf_lock);
	if (find(fs, ev->id))
		goto out;
	v = realloc(fs->trigs, (fs->ntrigs + 1) * sizeof(*v));
	if (!v) {
		ret = -ENOMEM;
		goto out;
	}
	fs->trigs = v;
	/* enabled, it stays so; else armed soft-disabled */
	v[fs->ntrigs++] = (struct dp_fs_trig){
		.id = ev->id, .ev = ev,
		.soft_disabled = ev != fs->marker && !ev->enabled,
		.filter = copy_filter(ev),
	};
out:
	pthread_mutex_unlock(&fs->buf_lock);
	return ret;
}

/*
 * Soft mode as @ev's triggers now say (fs->lock held): leaving it, the
 * event is left enabled or not as its soft-disabled bit says.  True if
 * it changed.
 */
bool dp_fs_trigger_sync(struct dp_fs *fs, struct dp_event *ev)
{
	bool hist = dp_fs_hist_on(fs, ev->id), changed = false;
	struct dp_fs_trig *e;

	pthread_mutex_lock(&fs->buf_lock);
	e = find(fs, ev->id);
	if (e && !e->set.head && !hist && !targeted(fs, ev)) {
		if (ev != fs->marker)
			ev->enabled = !e->soft_disabled;
		dp_filter_free(e->filter);
		*e = fs->trigs[--fs->ntrigs];
		changed = true;
	}
	pthread_mutex_unlock(&fs->buf_lock);
	if (!e && (hist || targeted(fs, ev)))
		changed = !enter(fs, ev);
	return changed;
}

/*
 * The synthetic events after a hist write: one a removed trigger
 * generated may leave soft mode now (its own triggers may have gone
 * before, while it was still generated).  True if one changed.
 */
static bool sync_synth(struct dp_fs *fs)
{
	bool changed = false;

	for (struct dp_event *ev = fs->reg.events; ev; ev = ev->next)
		if (ev->synth)
			changed |= dp_fs_trigger_sync(fs, ev);
	return changed;
}

static const struct dp_event *find_target(void *priv, const char *sys,
					  const char *name)
{
	struct dp_fs *fs = priv;

	return dp_registry_find(&fs->reg, sys, name);
}

static void log_filter_error(struct dp_fs *fs, const char *text,
			     const struct dp_filter_error *e)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);

	if (!f)
		return;
	dp_filter_error_log_print(text, e, f);
	if (fclose(f)) {
		free(s);
		return;
	}
	dp_fs_log_add(fs, s);
}

/* The child arms @ev's (and @target's) records for the triggers, or no
 * longer: the marker's are not the child's. */
static int rearm(struct dp_fs *fs, struct dp_event *ev,
		 struct dp_event *target)
{
	return ev == fs->marker && !target ? 0 : dp_fs_rearm(fs);
}

static int remove_trigger(struct dp_fs *fs, struct dp_event *ev,
			  const struct dp_trigger *like)
{
	struct dp_trigger *old = NULL;
	struct dp_event *target = NULL;
	struct dp_fs_trig *e;
	bool changed;

	pthread_mutex_lock(&fs->buf_lock);
	e = find(fs, ev->id);
	if (e)
		old = dp_trigger_set_remove(&e->set, like);
	if (old && old->cmd == DP_TRIG_SNAPSHOT)
		dp_fs_snapshot_disarm_locked(fs);
	pthread_mutex_unlock(&fs->buf_lock);
	if (old && dp_trigger_has_target(old))
		target = (struct dp_event *)old->target;
	dp_trigger_free(old);
	changed = dp_fs_trigger_sync(fs, ev);
	if (target)
		changed |= dp_fs_trigger_sync(fs, target);
	return changed ? rearm(fs, ev, target) : 0;
}

int dp_fs_trigger_write(struct dp_fs *fs, struct dp_event *ev,
			const char *text)
{
	struct dp_filter_error fe;
	struct dp_trigger *t;
	struct dp_event *target;
	enum dp_trig_cmd cmd;
	char word[16], *ftext = NULL;
	bool remove;
	int ret;

	/* the hits the process made before this write meet the triggers
	 * as they were, as in the kernel, where they ran at the hit */
	if (ev != fs->marker && dp_fs_triggered(fs, ev->id))
		dp_fs_update_profile(fs);
	if (!dp_trigger_command(text, word, sizeof(word), &cmd)) {
		if (strcmp(word, "hist"))
			return -EINVAL;	/* the kernel logs nothing */
		ret = dp_fs_hist_write(fs, ev, text);
		if (!ret && (dp_fs_trigger_sync(fs, ev) | sync_synth(fs)))
			ret = rearm(fs, ev, NULL);
		return ret;
	}
	ret = dp_trigger_parse(ev, text, find_target, fs, &t, &remove, &fe,
			       &ftext);
	if (ret) {
		if (fe.err && ftext)
			log_filter_error(fs, ftext, &fe);
		free(ftext);
		return ret;
	}
	if (remove) {
		ret = remove_trigger(fs, ev, t);
		dp_trigger_free(t);
		return ret;
	}
	target = dp_trigger_has_target(t) ? (struct dp_event *)t->target :
		 NULL;
	/* the event, and the target of an enable_event, in soft mode */
	ret = enter(fs, ev);
	if (!ret && target)
		ret = enter(fs, target);
	if (!ret) {
		pthread_mutex_lock(&fs->buf_lock);
		ret = dp_trigger_set_add(&find(fs, ev->id)->set, t);
		if (!ret && t->cmd == DP_TRIG_SNAPSHOT)
			dp_fs_snapshot_arm_locked(fs);
		pthread_mutex_unlock(&fs->buf_lock);
	}
	if (ret)
		dp_trigger_free(t);
	dp_fs_trigger_sync(fs, ev);
	if (target)
		dp_fs_trigger_sync(fs, target);
	if (!ret)
		ret = rearm(fs, ev, target);
	return ret;
}

int dp_fs_trigger_truncate(struct dp_fs *fs, struct dp_event *ev)
{
	struct dp_trigger like = { .cmd = DP_TRIG_ENABLE_HIST };
	struct dp_event *targets[64];
	size_t n = 0;
	bool changed;
	struct dp_fs_trig *e;
	bool hist = dp_fs_hist_on(fs, ev->id);

	if (ev != fs->marker && dp_fs_triggered(fs, ev->id))
		dp_fs_update_profile(fs);
	if (hist)
		dp_fs_hist_remove_event(fs, ev->id);
	pthread_mutex_lock(&fs->buf_lock);
	e = find(fs, ev->id);
	for (struct dp_trigger **pp = e ? &e->set.head : NULL; pp && *pp;) {
		struct dp_trigger *t = *pp;

		if (dp_trigger_type(t) != dp_trigger_type(&like)) {
			pp = &t->next;
			continue;
		}
		*pp = t->next;
		if (n < sizeof(targets) / sizeof(targets[0]))
			targets[n++] = (struct dp_event *)t->target;
		dp_trigger_free(t);
	}
	pthread_mutex_unlock(&fs->buf_lock);
	changed = dp_fs_trigger_sync(fs, ev);
	for (size_t i = 0; i < n; i++)
		changed |= dp_fs_trigger_sync(fs, targets[i]);
	/* the synthetic events its hist triggers generated may leave soft
	 * mode (may be deleted) */
	if (hist)
		changed |= sync_synth(fs);
	return changed ? rearm(fs, ev, n ? targets[0] : NULL) : 0;
}

void dp_fs_trigger_print(struct dp_fs *fs, const struct dp_event *ev,
			 FILE *out)
{
	struct dp_fs_trig *e;
	bool any;

	pthread_mutex_lock(&fs->buf_lock);
	e = find(fs, ev->id);
	any = e && e->set.head;
	if (any)
		dp_trigger_set_print(&e->set, out);
	pthread_mutex_unlock(&fs->buf_lock);
	if (!any && !dp_fs_hist_on(fs, ev->id))
		fputs(dp_trigger_help, out);
	else
		dp_fs_hist_print_triggers(fs, ev->id, out);
}

void dp_fs_trigger_enable_print(struct dp_fs *fs, const struct dp_event *ev,
				FILE *out)
{
	struct dp_fs_trig *e;

	pthread_mutex_lock(&fs->buf_lock);
	e = find(fs, ev->id);
	if (e)
		fprintf(out, "%d*\n", !e->soft_disabled);
	else
		fprintf(out, "%d\n", ev->enabled);
	pthread_mutex_unlock(&fs->buf_lock);
}

void dp_fs_trigger_enabled(struct dp_fs *fs, struct dp_event *ev, bool on)
{
	struct dp_fs_trig *e;
	bool now;

	pthread_mutex_lock(&fs->buf_lock);
	e = find(fs, ev->id);
	now = e && e->soft_disabled != !on;
	pthread_mutex_unlock(&fs->buf_lock);
	if (!now)
		return;
	/* what the process did before the write is recorded or not as
	 * the bit said then */
	dp_fs_update_profile(fs);
	pthread_mutex_lock(&fs->buf_lock);
	e = find(fs, ev->id);
	if (e)
		e->soft_disabled = !on;
	pthread_mutex_unlock(&fs->buf_lock);
}

void dp_fs_trigger_filter_changed(struct dp_fs *fs, struct dp_event *ev)
{
	struct dp_filter *f = copy_filter(ev);
	struct dp_fs_trig *e;

	pthread_mutex_lock(&fs->buf_lock);
	e = find(fs, ev->id);
	if (e) {
		dp_filter_free(e->filter);
		e->filter = f;
		f = NULL;
	}
	pthread_mutex_unlock(&fs->buf_lock);
	dp_filter_free(f);
}

/* Whether @id has a stacktrace trigger. */
static bool stacktraced(struct dp_fs *fs, unsigned id)
{
	const struct dp_fs_trig *e;
	bool on = false;

	pthread_mutex_lock(&fs->buf_lock);
	e = find(fs, id);
	for (const struct dp_trigger *t = e ? e->set.head : NULL; t && !on;
	     t = t->next)
		on = t->cmd == DP_TRIG_STACKTRACE;
	pthread_mutex_unlock(&fs->buf_lock);
	return on;
}

void dp_fs_trigger_mark(struct dp_fs *fs, struct dp_event *ev)
{
	bool soft = dp_fs_triggered(fs, ev->id);

	ev->triggered = soft || dp_fs_hist_on(fs, ev->id);
	ev->soft = soft || (!ev->enabled && ev->triggered);
	/* its records carry the user stack for the triggers that show it
	 * (a stacktrace trigger, a common_stacktrace key) */
	ev->stack = ev->triggered && (stacktraced(fs, ev->id) ||
				      dp_fs_hist_stacks(fs, ev->id));
}

/* ---- running them (buf_lock held) ---------------------------------------- */


const struct dp_symbolizer *dp_fs_symbolizer(struct dp_fs *fs)
{
	char why[256];

	if (!fs->trig_proc && !fs->trig_proc_failed &&
	    dp_proc_open(fs->o->pid, &fs->trig_proc, why, sizeof(why)))
		fs->trig_proc_failed = true;
	if (!fs->trig_proc)
		return NULL;
	dp_proc_symbolizer(fs->trig_proc, &fs->trig_sym);
	return &fs->trig_sym;
}

static bool op_is_on(void *priv)
{
	return ((struct dp_fs_run *)priv)->fs->tracing_on;
}

static void op_set(void *priv, bool on)
{
	((struct dp_fs_run *)priv)->fs->tracing_on = on;
}

static void op_snapshot(void *priv)
{
	dp_fs_snapshot_take(((struct dp_fs_run *)priv)->fs);
}

/*
 * The frames dprobe knows of a record: its user stack when it has one
 * (the event is marked for it: dp_fs_trigger_mark()), else the probe's
 * own place, and for a return probe the place it returns to.  The
 * kernel's stack trace is the kernel's.
 */
static void op_stack(void *priv)
{
	struct dp_fs_run *r = priv;
	const struct dp_event *ev = r->ev;
	uint64_t ips[2];
	size_t n = 0;

	if (r->meta->stack && r->meta->nstack) {
		dp_fs_buf_stack_locked(r->fs, r->meta, r->meta->stack,
				       r->meta->nstack, dp_fs_symbolizer(r->fs));
		return;
	}
	if (ev != r->fs->marker && dp_event_placed(ev) &&
	    ev->kind != DP_KIND_TRACEPOINT) {
		if (ev->is_return && r->len >= DP_REC_RET_IP_OFF + 8) {
			ips[n++] = dp_rec_load(r->rec + DP_REC_FUNC_OFF, 8);
			ips[n++] = dp_rec_load(r->rec + DP_REC_RET_IP_OFF, 8);
		} else if (!ev->is_return && r->len >= DP_REC_IP_OFF + 8) {
			ips[n++] = dp_rec_load(r->rec + DP_REC_IP_OFF, 8);
		}
	}
	dp_fs_buf_stack_locked(r->fs, r->meta, ips, n,
			       n ? dp_fs_symbolizer(r->fs) : NULL);
}

static bool op_soft_disabled(void *priv, const struct dp_event *target)
{
	struct dp_fs_trig *e = find(((struct dp_fs_run *)priv)->fs, target->id);

	return e && e->soft_disabled;
}

static void op_set_soft(void *priv, const struct dp_event *target, bool off)
{
	struct dp_fs_trig *e = find(((struct dp_fs_run *)priv)->fs, target->id);

	if (e)
		e->soft_disabled = off;
}

static void op_hist_pause(void *priv, const struct dp_event *target,
			  bool paused)
{
	dp_fs_hist_pause_locked(((struct dp_fs_run *)priv)->fs, target->id, paused);
}

static void op_dump(void *priv, bool all_cpus)
{
	struct dp_fs_run *r = priv;

	r->fs->tracing_on = false;
	dp_fs_buf_dump_locked(r->fs, all_cpus ? -1 : r->meta->cpu, stderr);
}

const struct dp_trigger_ops dp_fs_trigger_ops = {
	.tracing_is_on = op_is_on,
	.tracing_set = op_set,
	.snapshot = op_snapshot,
	.stacktrace = op_stack,
	.soft_disabled = op_soft_disabled,
	.set_soft_disabled = op_set_soft,
	.hist_pause = op_hist_pause,
	.dump = op_dump,
};

static void add_line(struct dp_fs *fs, int which, const struct dp_event *ev,
		     const void *rec, size_t len,
		     const struct dp_rec_meta *meta)
{
	struct dp_trace_opts o = { .ncpus = 1 };
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);

	if (!f)
		return;
	o.sym = dp_fs_symbolizer(fs);
	if (dp_trace_line(f, ev, rec, len, meta, &o) || fclose(f)) {
		if (f)
			fclose(f);
		free(s);
		return;
	}
	dp_fs_ring_add_locked(fs, which, meta->cpu, s, n);
	free(s);
}

void dp_fs_trigger_record(struct dp_fs *fs, unsigned id, const void *rec,
			  size_t len, const struct dp_rec_meta *meta)
{
	bool hist = dp_fs_hist_on(fs, id), tm, cond, buffered, keep;
	struct dp_fs_trig *e;
	struct dp_fs_run r = { fs, NULL, rec, len, meta };
	const struct dp_event *ev;
	unsigned tt = 0;
	int where;

	pthread_mutex_lock(&fs->buf_lock);
	e = find(fs, id);
	if (!e)
		goto out;
	r.ev = e->ev;
	ev = e->ev;
	tm = e->set.head || hist;
	cond = hist || dp_trigger_set_cond(&e->set);
	/* trace_trigger_soft_disabled(): unconditional triggers first */
	if (tm && !cond) {
		dp_trigger_set_call(&e->set, ev, NULL, 0, meta, &dp_fs_trigger_ops, &r);
		if (e->soft_disabled)
			goto out;
	} else if (!tm && e->soft_disabled) {
		goto out;
	}
	/* the reservation: in the main buffer, which tracing_on closes
	 * (but for a conditional trigger's look at the record), or in a
	 * per-CPU one first when the event is filtered or soft-disabled */
	buffered = e->soft_disabled || e->filter;
	where = fs->live;
	if (!buffered && !fs->tracing_on) {
		if (!cond)
			goto out;
		where = -1;
	}
	if (cond)
		tt = dp_trigger_set_call(&e->set, ev, rec, len, meta, &dp_fs_trigger_ops, &r);
	keep = !e->soft_disabled &&
	       (!e->filter || dp_filter_match(e->filter, ev, rec, len, meta));
	if (keep && where >= 0 && (!buffered || fs->tracing_on))
		add_line(fs, where, ev, rec, len, meta);
	if (tt)
		dp_trigger_set_post_call(&e->set, tt, &dp_fs_trigger_ops, &r);
out:
	pthread_mutex_unlock(&fs->buf_lock);
}

int dp_fs_trigger_marker(struct dp_fs *fs, const void *rec, size_t len,
			 const struct dp_rec_meta *meta, const char *line,
			 size_t linelen)
{
	struct dp_fs_run r = { fs, NULL, rec, len, meta };
	struct dp_fs_trig *e;
	unsigned tt = 0;
	int where;
	bool on;

	pthread_mutex_lock(&fs->buf_lock);
	on = fs->tracing_on;
	pthread_mutex_unlock(&fs->buf_lock);
	/* the ring buffer refuses the reservation: "not open for write" */
	if (!on)
		return -EBADF;
	if (dp_fs_hist_on(fs, fs->marker->id))
		dp_fs_hist_add(fs, fs->marker->id, rec, len, meta);
	pthread_mutex_lock(&fs->buf_lock);
	where = fs->live;
	e = find(fs, fs->marker->id);
	r.ev = fs->marker;
	if (e)
		tt = dp_trigger_set_call(&e->set, fs->marker, rec, len, meta,
					 &dp_fs_trigger_ops, &r);
	dp_fs_ring_add_locked(fs, where, meta->cpu, line, linelen);
	if (tt)
		dp_trigger_set_post_call(&e->set, tt, &dp_fs_trigger_ops, &r);
	pthread_mutex_unlock(&fs->buf_lock);
	return 0;
}

void dp_fs_trigger_fini(struct dp_fs *fs)
{
	for (size_t i = 0; i < fs->ntrigs; i++) {
		dp_trigger_set_clear(&fs->trigs[i].set);
		dp_filter_free(fs->trigs[i].filter);
	}
	free(fs->trigs);
	fs->trigs = NULL;
	fs->ntrigs = 0;
	dp_proc_close(fs->trig_proc);
	fs->trig_proc = NULL;
}

void dp_fs_trigger_line_locked(struct dp_fs *fs, const struct dp_event *ev,
			       const void *rec, size_t len,
			       const struct dp_rec_meta *meta)
{
	add_line(fs, fs->live, ev, rec, len, meta);
}
