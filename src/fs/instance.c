// SPDX-License-Identifier: GPL-2.0
/*
 * instances/: trace instances, as the kernel's instance_mkdir() and
 * instance_rmdir() make and remove them (kernel/trace/trace.c).
 *
 * An instance is a struct dp_fs of its own for everything the kernel
 * keeps per trace_array: the two buffers, tracing_on, buffer_size_kb,
 * error_log, trace_marker and events/ftrace/print, and the state of each
 * event in it (enable, filter, triggers, hist triggers; the kernel's
 * trace_event_file).  The events themselves are the top level's: the
 * instance's registry holds a copy of each (a clone) with its own
 * enable bit and filter and everything else taken from the top level's
 * event, brought up to date whenever a path in the instance is looked up
 * (fs->lock held).  control.c, trigger.c and hist.c work on an instance
 * as on the top level; the session children are the top level's
 * (dp_fs_rearm() and dp_fs_update_profile() go there).
 *
 * The session child sends the records of an event an instance wants raw
 * (FR_REC, as for triggers): the reader threads hand each one to every
 * instance here, where its triggers run and, enabled in it, its line goes
 * into the instance's buffer.  Only that instance's: the top level's line
 * comes from the child as before, for the top level's enable and filter.
 *
 * The list of instances changes under fs->lock and inst_lock; the reader
 * threads walk it under inst_lock alone.  An open file of an instance
 * holds it (inst_refs): rmdir is EBUSY then, as the kernel's tr->ref.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>

#include "event/filter.h"
#include "fs/internal.h"

#define INSTANCES	"instances"

/* An event enabled in an instance outside soft mode, for the readers. */
struct dp_fs_plain {
	unsigned id;
	const struct dp_event *ev;	/* the instance's clone */
	struct dp_filter *filter;	/* its filter, a copy */
};

/* The files an instance has of the top level's (init_tracer_tracefs()
 * and the events' set_event); not the *_events, profiles, README. */
bool dp_fs_inst_root_file(const struct dp_fs *fs, const char *name)
{
	static const char *const names[] = {
		"available_tracers", "buffer_size_kb", "buffer_subbuf_size_kb",
		"current_tracer",
		"error_log", "set_event", "set_ftrace_filter", "snapshot",
		"trace", "trace_clock",
		"trace_marker", "trace_marker_raw", "trace_options",
		"trace_pipe", "tracing_cpumask", "tracing_on",
	};

	if (!fs->top)
		return true;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

/* ---- the clones of the top level's events -------------------------------- */

static void clone_free(struct dp_event *c)
{
	dp_filter_free(c->filter);
	free(c->filter_text);
	free(c);
}

/* @c as @orig is now, with its own state kept. */
static void clone_update(struct dp_event *c, const struct dp_event *orig)
{
	struct dp_event t = *orig;

	t.enabled = c->enabled;
	t.filter = c->filter;
	t.filter_text = c->filter_text;
	t.soft = c->soft;
	t.triggered = c->triggered;
	t.next = c->next;
	/* the readers may be rendering with it: written only if changed */
	if (memcmp(&t, c, sizeof(t)))
		*c = t;
}

static struct dp_event *clone_of(struct dp_fs *inst,
				 const struct dp_event *orig)
{
	struct dp_event *c = dp_registry_find_id(&inst->reg, orig->id);

	return c && c->serial == orig->serial ? c : NULL;
}

/* A deleted event that was ever enabled in @inst clears its buffer, as
 * the kernel's event_remove() marks each trace array it was enabled in. */
static void forget(struct dp_fs *inst, unsigned id)
{
	for (size_t i = 0; i < inst->never; i++) {
		if (inst->ever_enabled[i] != id)
			continue;
		inst->ever_enabled[i] = inst->ever_enabled[--inst->never];
		dp_fs_buf_clear(inst);
		return;
	}
}

/*
 * The instance's events as the top level's are now, in their order: a
 * new event gets a clone, disabled and unfiltered; the clone of a deleted
 * one goes (never busy: the delete was refused while it was).
 */
static void sync_events(struct dp_fs *inst)
{
	struct dp_event *head = NULL, **tail = &head, *c, *next;
	const struct dp_event *ev;

	for (ev = inst->top->reg.events; ev; ev = ev->next) {
		struct dp_event **pp = &inst->reg.events;

		while (*pp && !((*pp)->id == ev->id &&
				(*pp)->serial == ev->serial))
			pp = &(*pp)->next;
		c = *pp;
		if (c) {
			*pp = c->next;	/* taken out of the old list */
		} else {
			c = malloc(sizeof(*c));
			if (!c)
				continue;
			*c = *ev;
			c->enabled = c->soft = c->triggered = false;
			c->filter = NULL;
			c->filter_text = NULL;
		}
		c->next = NULL;
		clone_update(c, ev);
		*tail = c;
		tail = &c->next;
	}
	for (c = inst->reg.events; c; c = next) {
		next = c->next;
		forget(inst, c->id);
		clone_free(c);
	}
	inst->reg.events = head;
	dp_registry_relinked(&inst->reg);
}

void dp_fs_inst_sync(struct dp_fs *fs)
{
	for (struct dp_fs *i = fs->insts; i; i = i->inst_next)
		sync_events(i);
}

/* ---- making and removing ----------------------------------------------- */

static struct dp_fs *find(struct dp_fs *fs, const char *name, size_t len)
{
	for (struct dp_fs *i = fs->insts; i; i = i->inst_next)
		if (strlen(i->inst_name) == len && !memcmp(i->inst_name, name, len))
			return i;
	return NULL;
}

static struct dp_fs *inst_new(struct dp_fs *top, const char *name)
{
	struct dp_fs *inst = calloc(1, sizeof(*inst));

	if (!inst || !(inst->inst_name = strdup(name)) ||
	    dp_fs_marker_init(inst)) {
		if (inst)
			free(inst->inst_name);
		free(inst);
		return NULL;
	}
	inst->top = top;
	inst->o = top->o;
	inst->ncpus = top->ncpus;
	inst->limit = (size_t)DP_FS_DEFAULT_KB << 10;
	inst->cpumask_bits = top->cpumask_bits;
	dp_fs_cpumask_all(inst->cpumask, inst->cpumask_bits);
	inst->tracing_on = true;
	inst->trace_flags = DP_FS_OPT_DEFAULT;
	dp_tracer_opts_init(&inst->tr_opts);
	pthread_mutex_init(&inst->lock, NULL);
	pthread_mutex_init(&inst->buf_lock, NULL);
	pthread_cond_init(&inst->buf_cond, NULL);
	dp_registry_init(&inst->reg);
	sync_events(inst);
	return inst;
}

static void plain_free(struct dp_fs_plain *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dp_filter_free(v[i].filter);
	free(v);
}

static void inst_free(struct dp_fs *inst)
{
	struct dp_event *c, *next;

	dp_fs_trigger_fini(inst);
	dp_fs_hist_fini(inst);
	dp_fs_fcmd_fini(inst);
	dp_funcsel_free(&inst->ftrace_filter);
	dp_fs_buf_fini(inst);
	dp_fs_log_clear(inst);
	dp_fs_marker_fini(inst);
	for (c = inst->reg.events; c; c = next) {
		next = c->next;
		clone_free(c);
	}
	dp_registry_relinked(&inst->reg);
	plain_free(inst->plain, inst->nplain);
	free(inst->ever_enabled);
	pthread_mutex_destroy(&inst->lock);
	pthread_mutex_destroy(&inst->buf_lock);
	pthread_cond_destroy(&inst->buf_cond);
	free(inst->inst_name);
	free(inst);
}

/* "instances/NAME" of @path, or NULL: *@len the name's length. */
static const char *inst_name(const char *path, size_t *len)
{
	size_t n = strlen(INSTANCES);

	path += strspn(path, "/");
	if (strncmp(path, INSTANCES, n) || path[n] != '/')
		return NULL;
	path += n;
	path += strspn(path, "/");
	*len = strcspn(path, "/");
	return *len ? path : NULL;
}

/* mkdir(2) at @path: only directly under instances/, as in tracefs. */
int dp_fs_inst_mkdir(struct dp_fs *fs, const char *path)
{
	struct dp_fs_path p;
	struct dp_fs *inst;
	const char *name;
	char buf[NAME_MAX + 1];
	size_t len;

	if (!dp_fs_lookup(fs, path, &p))
		return -EEXIST;
	name = inst_name(path, &len);
	if (!name || name[len + strspn(name + len, "/")])
		return -EPERM;
	if (len > NAME_MAX)
		return -ENAMETOOLONG;
	memcpy(buf, name, len);
	buf[len] = '\0';
	inst = inst_new(fs, buf);
	if (!inst)
		return -ENOMEM;
	pthread_mutex_lock(&fs->inst_lock);
	inst->inst_next = fs->insts;
	fs->insts = inst;
	pthread_mutex_unlock(&fs->inst_lock);
	return 0;
}

/* Does @inst make the session child arm anything? */
static bool wants_any(struct dp_fs *inst)
{
	if (dp_fs_fcmd_any(inst))
		return true;
	for (const struct dp_event *c = inst->reg.events; c; c = c->next)
		if (c->enabled || dp_fs_triggered(inst, c->id) ||
		    dp_fs_hist_on(inst, c->id))
			return true;
	return false;
}

/*
 * rmdir(2): an instance with no file open goes, its events' state, its
 * triggers and its buffers with it (__remove_instance()); elsewhere
 * EPERM, as tracefs has no rmdir but in instances/.
 */
int dp_fs_inst_rmdir(struct dp_fs *fs, const char *path)
{
	struct dp_fs_path p;
	struct dp_fs **pp, *inst;
	bool rearm;
	int ret = dp_fs_lookup(fs, path, &p);

	if (ret)
		return ret;
	if (!dp_fs_is_dir(p.kind))
		return -ENOTDIR;
	inst = p.tr;
	if (!inst || p.kind != F_ROOT_DIR)
		return -EPERM;
	if (inst->inst_refs)
		return -EBUSY;
	rearm = wants_any(inst);
	pthread_mutex_lock(&fs->inst_lock);
	for (pp = &fs->insts; *pp != inst; pp = &(*pp)->inst_next)
		;
	*pp = inst->inst_next;
	pthread_mutex_unlock(&fs->inst_lock);
	/* no reader sees it now: the child stops sending for it */
	if (rearm)
		dp_fs_rearm(fs);
	inst_free(inst);
	return 0;
}

void dp_fs_inst_fini(struct dp_fs *fs)
{
	while (fs->insts) {
		struct dp_fs *inst = fs->insts;

		fs->insts = inst->inst_next;
		inst_free(inst);
	}
}

/* ---- paths ------------------------------------------------------------- */

bool dp_fs_inst_path(const struct dp_fs *fs, const char *path)
{
	size_t n = strlen(INSTANCES);

	path += strspn(path, "/");
	return !fs->top && !strncmp(path, INSTANCES, n) &&
	       (!path[n] || path[n] == '/');
}

int dp_fs_inst_lookup(struct dp_fs *fs, const char *path,
		      struct dp_fs_path *p)
{
	struct dp_fs *inst;
	const char *name;
	size_t len;
	int ret;

	memset(p, 0, sizeof(*p));
	name = inst_name(path, &len);
	if (!name) {
		p->kind = F_INSTANCES_DIR;
		return 0;
	}
	inst = find(fs, name, len);
	if (!inst)
		return -ENOENT;
	sync_events(inst);
	ret = dp_fs_lookup(inst, name + len, p);
	p->tr = inst;
	return ret;
}

void dp_fs_inst_list(struct dp_fs *fs,
		     void (*fill)(void *priv, const char *name, bool dir),
		     void *priv)
{
	for (struct dp_fs *i = fs->insts; i; i = i->inst_next)
		fill(priv, i->inst_name, true);
}

/* ---- what the session child arms for the instances --------------------- */

bool dp_fs_inst_busy(struct dp_fs *fs, unsigned id)
{
	for (struct dp_fs *i = fs->insts; i; i = i->inst_next) {
		const struct dp_event *c = dp_registry_find_id(&i->reg, id);

		if (c && (c->enabled || dp_fs_triggered(i, id) ||
			  dp_fs_hist_on(i, id)))
			return true;
	}
	return false;
}

void dp_fs_inst_mark(struct dp_fs *fs, struct dp_event *ev)
{
	for (struct dp_fs *i = fs->insts; i; i = i->inst_next) {
		struct dp_event *c = clone_of(i, ev);

		if (!c)
			continue;
		dp_fs_trigger_mark(i, c);
		if (!c->enabled && !c->triggered)
			continue;
		/* its records raw; no line from the child unless the top
		 * level has it enabled */
		ev->triggered = true;
		ev->soft |= !ev->enabled;
	}
}

/* The events enabled in @inst outside soft mode, for the readers. */
static void sync_plain(struct dp_fs *inst)
{
	struct dp_fs_plain *v = NULL, *t;
	size_t n = 0, t_n;

	for (const struct dp_event *c = inst->reg.events; c; c = c->next) {
		if (!c->enabled || dp_fs_triggered(inst, c->id))
			continue;
		t = realloc(v, (n + 1) * sizeof(*v));
		if (!t)
			break;
		v = t;
		v[n].id = c->id;
		v[n].ev = c;
		v[n].filter = NULL;
		if (c->filter_text && c->filter) {
			struct dp_filter_error e = { 0 };

			v[n].filter = dp_filter_compile(c, c->filter_text, &e);
		}
		n++;
	}
	pthread_mutex_lock(&inst->buf_lock);
	t = inst->plain;
	inst->plain = v;
	v = t;
	t_n = inst->nplain;
	inst->nplain = n;
	pthread_mutex_unlock(&inst->buf_lock);
	plain_free(v, t_n);
}

int dp_fs_inst_rearm(struct dp_fs *inst)
{
	dp_fs_hist_sync(inst);
	sync_plain(inst);
	return dp_fs_rearm(inst->top);
}

/* ---- the records, in the reader threads -------------------------------- */

static void plain_record(struct dp_fs *inst, unsigned id, const void *rec,
			 size_t len, const struct dp_rec_meta *meta)
{
	pthread_mutex_lock(&inst->buf_lock);
	for (size_t i = 0; i < inst->nplain; i++) {
		const struct dp_fs_plain *e = &inst->plain[i];

		if (e->id != id)
			continue;
		if (inst->tracing_on &&
		    (!e->filter ||
		     dp_filter_match(e->filter, e->ev, rec, len, meta)))
			dp_fs_trigger_line_locked(inst, e->ev, rec, len, meta);
		break;
	}
	pthread_mutex_unlock(&inst->buf_lock);
}

void dp_fs_inst_record(struct dp_fs *fs, unsigned id, const void *rec,
		       size_t len, const struct dp_rec_meta *meta)
{
	pthread_mutex_lock(&fs->inst_lock);
	for (struct dp_fs *i = fs->insts; i; i = i->inst_next) {
		dp_fs_hist_add(i, id, rec, len, meta);
		dp_fs_trigger_record(i, id, rec, len, meta);
		plain_record(i, id, rec, len, meta);
		dp_fs_fcmd_record(i, id, rec, len, meta);
	}
	pthread_mutex_unlock(&fs->inst_lock);
}
