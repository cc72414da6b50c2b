// SPDX-License-Identifier: GPL-2.0
/*
 * set_ftrace_filter's function commands in the mount (event/fcmd.h has
 * the commands, their words, rules and listing).
 *
 * The kernel arms a probe on each function a command is on, whatever the
 * current tracer; here each such function is a site: a hidden event (no
 * file shows it, group `fcmd`) with one probe on its entry, made when its
 * first command comes and armed while it has one.  A site is kept when
 * its last command goes (until the mount ends): its event, enabled again
 * later, keeps its id, where a new one could take a deleted event's id
 * while the session child still knows the old one.  The session child arms
 * a site's event raw, as an event in soft mode, and the reader thread
 * runs the commands of the site on each record, with what event triggers
 * act on (trigger.c's dp_fs_trigger_ops: tracing_on, the snapshot, a
 * stack entry, another event's soft-disabled bit, the buffer dumped to
 * the mount's stderr); the record itself makes no line.  An enable_event
 * puts its event in soft mode as an enable_event trigger does.  A `>`
 * write clears the filter, not the commands, as in the kernel.
 *
 * The sites (and their events) are the top level's, made and read under
 * its fs->lock; each instance has commands of its own on them, which act
 * on the instance (its tracing_on, buffer, events), as the kernel's
 * per-instance function probes.  The commands change under fs->lock and
 * buf_lock both; the reader threads read them (and, from them, the
 * site's event) under buf_lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fs/internal.h"
#include "sym/proc.h"
#include "util/util.h"

#define FCMD_GROUP "fcmd"

/* The sites are the top level's, as the probes: an instance's commands
 * are on them too. */
static struct dp_fs *top_of(struct dp_fs *fs)
{
	return fs->top ? fs->top : fs;
}

struct dp_fs_fsite {
	struct dp_event *ev;		/* its hidden event */
	char *path;			/* the function: its file, */
	uint64_t vaddr;			/* its link-time address */
};

/* enable_event's SYS:EVENT, never a site's own */
static const struct dp_event *find_target(void *priv, const char *sys,
					  const char *name)
{
	struct dp_fs *fs = priv;
	const struct dp_event *ev = dp_registry_find(&fs->reg, sys, name);

	return ev && !ev->hidden ? ev : NULL;
}

static struct dp_fs_fsite *site_find(struct dp_fs *fs, const struct dp_func *f)
{
	for (size_t i = 0; i < fs->nfsites; i++)
		if (fs->fsites[i].vaddr == f->vaddr &&
		    !strcmp(fs->fsites[i].path, f->path))
			return &fs->fsites[i];
	return NULL;
}

static unsigned free_serial(struct dp_fs *fs)
{
	char name[32];

	do
		snprintf(name, sizeof(name), "f%u", fs->fsite_serial++);
	while (dp_registry_find(&fs->reg, FCMD_GROUP, name));
	return fs->fsite_serial - 1;
}

/* The site of @f, its event made if it has none; NULL if it cannot be. */
static struct dp_fs_fsite *site_of(struct dp_fs *fs, const struct dp_func *f,
				   const char *program)
{
	const char *mod = strcmp(f->path, program) ? f->path : NULL;
	struct dp_fs_fsite *s = site_find(fs, f), *v;
	char place[4096], *line = NULL, *path;
	struct dp_probe *p = NULL;

	if (s || dp_func_place(f, mod, mod ? strlen(mod) : 0, place,
			       sizeof(place)))
		return s;
	/* a name no kprobe_events line took (its line would append to
	 * that event) */
	if (asprintf(&line, "p:" FCMD_GROUP "/f%u %s", free_serial(fs),
		     place) < 0)
		return NULL;
	path = strdup(f->path);
	v = path ? realloc(fs->fsites, (fs->nfsites + 1) * sizeof(*v)) : NULL;
	if (v)
		fs->fsites = v;
	if (!v || dp_registry_apply(&fs->reg, line, &p, NULL) || !p) {
		free(path);
		free(line);
		return NULL;
	}
	free(line);
	p->event->builtin = p->event->hidden = true;
	s = &fs->fsites[fs->nfsites++];
	*s = (struct dp_fs_fsite){ p->event, path, f->vaddr };
	return s;
}

/* @req's command on function @f: 1 added, 0 there already, -errno. */
static int add_one(struct dp_fs *fs, const struct dp_fcmd_req *req,
		   const struct dp_func *f, const char *program)
{
	struct dp_fs_fsite *s = site_of(top_of(fs), f, program);
	const char *lib = strcmp(f->path, program) ? dp_base_name(f->path) :
						     NULL;
	int ret;

	if (!s)
		return 0;	/* a function no probe can be placed on */
	pthread_mutex_lock(&fs->buf_lock);
	ret = dp_fcmd_add(&fs->fcmds, s->ev->id, s->ev, f->name, lib, req);
	if (ret > 0 && req->trig.cmd == DP_TRIG_SNAPSHOT)
		dp_fs_snapshot_arm_locked(fs);
	pthread_mutex_unlock(&fs->buf_lock);
	return ret;
}

/* The functions @glob names, under each of their names. */
static int names_of(struct dp_fs *fs, const char *glob, struct dp_funclist *l,
		    struct dp_proc **p, const char ***paths)
{
	struct dp_funcrule rule = { .glob = (char *)glob };
	const struct dp_funcsel sel = { &rule, 1 };
	char err[256];
	size_t n;
	int ret = dp_fs_target_paths(fs, p, paths, &n);

	if (ret)
		return ret;
	ret = n ? dp_funcs_names(*paths, n, &sel, l, err, sizeof(err)) :
		  -ENOENT;
	if (!ret && l->n > DP_FUNCSEL_LIMIT)
		ret = -E2BIG;
	if (ret) {
		dp_funclist_free(l);
		free(*paths);
		dp_proc_close(*p);
	}
	return ret;
}

/* register_ftrace_function_probe(): EINVAL when no function was added. */
static int add_on(struct dp_fs *fs, const struct dp_fcmd_req *req)
{
	struct dp_funclist l = { 0 };
	const char **paths;
	struct dp_proc *p;
	int added = 0, ret = names_of(fs, req->glob, &l, &p, &paths);

	/* a glob that names no function is the kernel's EINVAL */
	if (ret)
		return ret == -E2BIG || ret == -ENOMEM ? ret : -EINVAL;
	for (size_t i = 0; !ret && i < l.n; i++) {
		ret = add_one(fs, req, &l.v[i], paths[0]);
		added += ret > 0;
		ret = ret < 0 ? ret : 0;
	}
	dp_funclist_free(&l);
	free(paths);
	dp_proc_close(p);
	return !ret && !added ? -EINVAL : ret;
}

static int remove_on(struct dp_fs *fs, const struct dp_fcmd_req *req)
{
	int ret;

	pthread_mutex_lock(&fs->buf_lock);
	ret = dp_fcmd_remove(&fs->fcmds, req, NULL, NULL);
	if (ret > 0 && req->trig.cmd == DP_TRIG_SNAPSHOT)
		dp_fs_snapshot_disarm_locked(fs);
	pthread_mutex_unlock(&fs->buf_lock);
	return ret < 0 ? ret : 0;
}

static int command(struct dp_fs *fs, const char *word)
{
	struct dp_fcmd_req req;
	int ret = dp_fcmd_parse(word, find_target, fs, &req);

	if (ret)
		return ret;
	/* the calls made before this write meet the commands as they
	 * were */
	if (top_of(fs)->nfsites)
		dp_fs_update_profile(fs);
	ret = req.remove ? remove_on(fs, &req) : add_on(fs, &req);
	if (!ret && req.trig.target)
		dp_fs_trigger_sync(fs, (struct dp_event *)req.trig.target);
	if (!ret && dp_fs_rearm(fs))
		ret = -EIO;
	dp_fcmd_req_free(&req);
	return ret;
}

int dp_fs_fcmd_take(struct dp_fs *fs, bool notrace, char *text)
{
	const char *sep = " \t\n";

	for (char *p = text + strspn(text, sep); *p; p += strspn(p, sep)) {
		size_t len = strcspn(p, sep);
		char c = p[len];
		bool cmd;
		int ret = 0;

		p[len] = '\0';
		cmd = dp_fcmd_is_command(p);
		/* the kernel's commands work on set_ftrace_filter only */
		if (cmd)
			ret = notrace ? -EINVAL : command(fs, p);
		p[len] = c;
		if (ret)
			return ret;
		if (cmd)
			memset(p, ' ', len);
		p += len;
	}
	return 0;
}

void dp_fs_fcmd_print(struct dp_fs *fs, FILE *out)
{
	pthread_mutex_lock(&fs->buf_lock);
	dp_fcmd_print(&fs->fcmds, out);
	pthread_mutex_unlock(&fs->buf_lock);
}

/* The top level and every instance: whether one has a command on
 * event @id's site; @stacks: a stacktrace command. */
static bool sites_want(struct dp_fs *fs, unsigned id, bool stacks)
{
	bool (*has)(const struct dp_fcmd_set *, unsigned) =
		stacks ? dp_fcmd_site_stacks : dp_fcmd_on_site;

	for (struct dp_fs *i = fs->insts; i; i = i->inst_next)
		if (has(&i->fcmds, id))
			return true;
	return has(&fs->fcmds, id);
}

void dp_fs_fcmd_mark(struct dp_fs *fs, struct dp_event *ev)
{
	if (!ev->hidden || !sites_want(fs, ev->id, false))
		return;
	ev->enabled = false;
	ev->soft = ev->triggered = true;
	ev->stack = sites_want(fs, ev->id, true);
}

void dp_fs_fcmd_record(struct dp_fs *fs, unsigned id, const void *rec,
		       size_t len, const struct dp_rec_meta *meta)
{
	struct dp_fs_run r = { fs, NULL, rec, len, meta };

	pthread_mutex_lock(&fs->buf_lock);
	r.ev = dp_fcmd_site_event(&fs->fcmds, id);
	if (r.ev)
		dp_fcmd_run(&fs->fcmds, id, &dp_fs_trigger_ops, &r);
	pthread_mutex_unlock(&fs->buf_lock);
}

bool dp_fs_fcmd_targets(const struct dp_fs *fs, const struct dp_event *ev)
{
	return dp_fcmd_targets(&fs->fcmds, ev);
}

bool dp_fs_fcmd_any(const struct dp_fs *fs)
{
	return fs->fcmds.n != 0;
}

void dp_fs_fcmd_fini(struct dp_fs *fs)
{
	dp_fcmd_set_free(&fs->fcmds);
	for (size_t i = 0; i < fs->nfsites; i++)
		free(fs->fsites[i].path);
	free(fs->fsites);
	fs->fsites = NULL;
	fs->nfsites = 0;
}
