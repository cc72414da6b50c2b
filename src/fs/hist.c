// SPDX-License-Identifier: GPL-2.0
/*
 * Hist triggers in the mount: `hist:` lines in events/GROUP/EVENT/trigger
 * and their events/GROUP/EVENT/hist file (event/hist.h does the work).
 *
 * The histograms live here, in dprobe, under buf_lock: the reader thread
 * adds the records the session child sends raw (FR_REC) for events with a
 * hist trigger, the FUSE threads read and change them.  An event with a
 * hist trigger is armed even when it is not enabled, its records then
 * aggregated and not written to the trace buffer (the kernel's soft
 * mode); it is busy while a trigger is on it.  .sym keys are resolved in
 * the served process's maps.
 *
 * The triggers see each other (variables, references, name=) through one
 * struct dp_hist_env.  A synthetic event an action generates goes, in the
 * reader thread, to the triggers on it, then through its filter (as the
 * registry had it at the last rearm: dp_fs_hist_sync()) to the trace
 * buffer, once buf_lock is let go.  An event a trigger generates, and a
 * trigger whose variables another one reads, are busy.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "event/deliver.h"
#include "event/eprobe.h"
#include "event/filter.h"
#include "event/hist.h"
#include "fs/internal.h"
#include "output/output.h"
#include "sym/proc.h"

struct dp_fs_hist {
	unsigned id, serial;		/* the event's */
	struct dp_hist *h;
};

/* A synthetic event's state as the last rearm saw it. */
struct synth_state {
	unsigned id, serial;
	bool enabled;
	struct dp_filter *filter;
};

/* A trace line made under buf_lock, written once it is let go. */
struct pending {
	struct pending *next;
	unsigned id;
	int cpu;
	size_t len;
	char text[];
};

struct dp_fs_hctx {
	struct dp_fs *fs;
	struct dp_hist_env env;
	struct synth_state *ss;
	size_t nss;
	struct pending *head, **tail;
};

static void add_locked(struct dp_fs *fs, unsigned id, const void *rec,
		       size_t len, const struct dp_rec_meta *meta);
static const struct dp_symbolizer *symbolizer(struct dp_fs *fs);

/* Whether @ev has a stack field, whose frames its line names. */
static bool has_stack(const struct dp_event *ev)
{
	for (unsigned i = 0; ev->synth && i < ev->synth->nfields; i++)
		if (ev->synth->fields[i].is_stack)
			return true;
	return false;
}

static struct dp_hist *each(void *priv, size_t i)
{
	struct dp_fs_hctx *c = priv;

	return i < c->fs->nhists ? c->fs->hists[i].h : NULL;
}

/* @ev's trace line for @rec, written once buf_lock is let go. */
static void queue_line(struct dp_fs_hctx *c, const struct dp_event *ev,
		       const void *rec, size_t len,
		       const struct dp_rec_meta *meta)
{
	struct dp_trace_opts o = { .ncpus = 1 };
	struct pending *p;
	char *text = NULL;
	size_t n = 0;
	FILE *f;

	/* the frames are the served process's: named in its maps now,
	 * while it is there (the kernel's %pS at read time names kernel
	 * code, which does not go) */
	if (has_stack(ev))
		o.sym = symbolizer(c->fs);
	f = open_memstream(&text, &n);
	if (!f)
		return;
	if (dp_trace_line(f, ev, rec, len, meta, &o) | fclose(f) ||
	    !(p = malloc(sizeof(*p) + n))) {
		free(text);
		return;
	}
	p->next = NULL;
	p->id = ev->id;
	p->cpu = meta->cpu;
	p->len = n;
	memcpy(p->text, text, n);
	free(text);
	*c->tail = p;
	c->tail = &p->next;
}

/* An event probe's record on a synthetic event (dp_eprobe_fire()'s sink). */
static void eprobe_emit(void *priv, const struct dp_event *ev,
			const void *rec, size_t len,
			const struct dp_rec_meta *meta,
			const struct dp_symbolizer *sym)
{
	(void)sym;
	queue_line(priv, ev, rec, len, meta);
}

/*
 * A record of a synthetic event (buf_lock held): its triggers, the event
 * probes on it (they run here, where the event is made, as the session
 * child runs those on the events it records), then its trace line if it
 * is enabled and passes its filter.
 */
static void fire(void *priv, const struct dp_event *ev, const void *rec,
		 size_t len, const struct dp_rec_meta *meta)
{
	struct dp_fs_hctx *c = priv;
	const struct synth_state *st = NULL;

	add_locked(c->fs, ev->id, rec, len, meta);
	if (ev->neprobes) {
		struct dp_sink sink = { .emit = eprobe_emit, .priv = c };
		struct dp_stats stats = { 0 };
		struct dp_deliver d = { &sink, &stats, false };

		dp_eprobe_fire(&d, ev, rec, len, meta, NULL);
	}
	for (size_t i = 0; i < c->nss && !st; i++)
		if (c->ss[i].id == ev->id && c->ss[i].serial == ev->serial)
			st = &c->ss[i];
	if (!st || !st->enabled ||
	    (st->filter && !dp_filter_match(st->filter, ev, rec, len, meta)))
		return;
	queue_line(c, ev, rec, len, meta);
}

/* onmax()/onchange().snapshot() (buf_lock held). */
static void snapshot(void *priv)
{
	struct dp_fs_hctx *c = priv;

	dp_fs_snapshot_take(c->fs);
}

/* The context, made when first needed (buf_lock held). */
static struct dp_fs_hctx *hctx(struct dp_fs *fs)
{
	struct dp_fs_hctx *c = fs->hctx;

	if (c)
		return c;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->fs = fs;
	c->env = (struct dp_hist_env){ &fs->reg, each, fire, c, fs->marker,
				       snapshot };
	c->tail = &c->head;
	fs->hctx = c;
	return c;
}

static void states_free(struct dp_fs_hctx *c)
{
	for (size_t i = 0; i < c->nss; i++)
		dp_filter_free(c->ss[i].filter);
	free(c->ss);
	c->ss = NULL;
	c->nss = 0;
}

void dp_fs_hist_sync(struct dp_fs *fs)
{
	struct synth_state *v = NULL;
	struct dp_fs_hctx *c;
	size_t n = 0;

	for (const struct dp_event *ev = fs->reg.events; ev; ev = ev->next) {
		struct dp_filter_error fe = { 0 };
		struct synth_state *t;

		if (!ev->synth)
			continue;
		t = realloc(v, (n + 1) * sizeof(*v));
		if (!t)
			break;
		v = t;
		v[n] = (struct synth_state){ ev->id, ev->serial, ev->enabled,
					     NULL };
		if (ev->filter_text)
			v[n].filter = dp_filter_compile(ev, ev->filter_text,
							&fe);
		n++;
	}
	pthread_mutex_lock(&fs->buf_lock);
	c = hctx(fs);
	if (c) {
		states_free(c);
		c->ss = v;
		c->nss = n;
	} else {
		for (size_t i = 0; i < n; i++)
			dp_filter_free(v[i].filter);
		free(v);
	}
	pthread_mutex_unlock(&fs->buf_lock);
}

/* The histograms of @id, in the order written (buf_lock held). */
static size_t find_same(const struct dp_fs *fs, unsigned id,
			const struct dp_hist *like)
{
	for (size_t i = 0; i < fs->nhists; i++)
		if (fs->hists[i].id == id && dp_hist_same(fs->hists[i].h, like))
			return i;
	return (size_t)-1;
}

bool dp_fs_hist_stacks(struct dp_fs *fs, unsigned id)
{
	bool on = false;

	pthread_mutex_lock(&fs->buf_lock);
	for (size_t i = 0; i < fs->nhists && !on; i++)
		on = fs->hists[i].id == id &&
		     dp_hist_wants_stacks(fs->hists[i].h);
	pthread_mutex_unlock(&fs->buf_lock);
	return on;
}

bool dp_fs_hist_on(struct dp_fs *fs, unsigned id)
{
	bool on = false;

	pthread_mutex_lock(&fs->buf_lock);
	/* an event a trigger generates is busy as one with a trigger */
	for (size_t i = 0; i < fs->nhists && !on; i++)
		on = fs->hists[i].id == id ||
		     dp_hist_generates(fs->hists[i].h, id);
	pthread_mutex_unlock(&fs->buf_lock);
	return on;
}

static void log_error(struct dp_fs *fs, const struct dp_event *ev,
		      const char *text, const char *msg, unsigned pos)
{
	struct dp_hist_error e = { msg, pos };
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);

	if (!f)
		return;
	dp_hist_error_print(ev, text, -EINVAL, &e, f);
	if (fclose(f)) {
		free(s);
		return;
	}
	dp_fs_log_add(fs, s);
}

static int add(struct dp_fs *fs, const struct dp_event *ev, struct dp_hist *h)
{
	struct dp_fs_hist *v = realloc(fs->hists,
				       (fs->nhists + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	fs->hists = v;
	v[fs->nhists++] = (struct dp_fs_hist){ ev->id, ev->serial, h };
	/* a snapshot() action holds the snapshot buffer */
	if (dp_hist_snapshots(h))
		dp_fs_snapshot_arm_locked(fs);
	return 0;
}

static void remove_at(struct dp_fs *fs, size_t i)
{
	if (dp_hist_snapshots(fs->hists[i].h))
		dp_fs_snapshot_disarm_locked(fs);
	dp_hist_free(fs->hists[i].h);
	memmove(&fs->hists[i], &fs->hists[i + 1],
		(fs->nhists - i - 1) * sizeof(fs->hists[0]));
	fs->nhists--;
}

/*
 * A new trigger is added (paused with :pause); pause, cont and clear act
 * on the same trigger already there; "!" removes it.  As the kernel's
 * event_hist_trigger_parse() and hist_register_trigger().
 */
static int apply(struct dp_fs *fs, const struct dp_event *ev,
		 const char *text, struct dp_hist *h, bool del)
{
	enum dp_hist_cmd cmd = dp_hist_command(h);
	size_t i = find_same(fs, ev->id, h);
	bool have = i != (size_t)-1;

	if (del) {
		/* 6.12's event_hist_trigger_parse(): removing a trigger
		 * that is not there succeeds, doing nothing */
		if (!have)
			return 1;
		/* another trigger reads its variables */
		if (dp_hist_referenced(fs->hists[i].h))
			return -EBUSY;
		remove_at(fs, i);
		return 1;	/* @h is the caller's */
	}
	if (cmd == DP_HIST_PAUSE && have) {
		dp_hist_pause(fs->hists[i].h, true);
		return 1;
	}
	if ((cmd == DP_HIST_CONT || cmd == DP_HIST_CLEAR) && !have) {
		log_error(fs, ev, text, "Can't clear or continue a nonexistent "
			  "hist trigger", 0);
		return -ENOENT;
	}
	if (cmd == DP_HIST_CONT || cmd == DP_HIST_CLEAR) {
		if (cmd == DP_HIST_CLEAR)
			dp_hist_clear(fs->hists[i].h);
		else
			dp_hist_pause(fs->hists[i].h, false);
		return 1;
	}
	if (have) {
		log_error(fs, ev, text, "Hist trigger already exists", 0);
		return -EEXIST;
	}
	if (cmd == DP_HIST_PAUSE)
		dp_hist_pause(h, true);
	return add(fs, ev, h);
}

int dp_fs_hist_write(struct dp_fs *fs, const struct dp_event *ev,
		     const char *text)
{
	bool del = text[0] == '!';
	struct dp_fs_hctx *c;
	struct dp_hist_error e = { 0 };
	struct dp_hist *h = NULL;
	char *s = NULL;
	size_t n = 0;
	FILE *f;
	int ret;

	/* the other triggers do not change meanwhile (fs->lock), and the
	 * reader thread does not look at them */
	pthread_mutex_lock(&fs->buf_lock);
	c = hctx(fs);
	ret = c ? dp_hist_new_in(&c->env, ev, text + del, del, &h, &e) :
	      -ENOMEM;
	if (!ret) {
		ret = apply(fs, ev, text + del, h, del);
		if (ret)
			dp_hist_free(h);
		pthread_mutex_unlock(&fs->buf_lock);
		return ret < 0 ? ret : 0;
	}
	pthread_mutex_unlock(&fs->buf_lock);
	/* the kernel's error_log entries, when it has some: one each */
	for (unsigned i = 0; e.msg && i <= e.nprev; i++) {
		struct dp_hist_error one = { i < e.nprev ? e.prev_msg[i] : e.msg,
					     i < e.nprev ? e.prev_pos[i] : e.pos,
					     { NULL, NULL }, { 0, 0 }, 0 };

		if (!(f = open_memstream(&s, &n)))
			break;
		dp_hist_error_print(ev, text + del, ret, &one, f);
		if (!fclose(f))
			dp_fs_log_add(fs, s);
		else
			free(s);
		s = NULL;
	}
	return ret;
}

void dp_fs_hist_pause_locked(struct dp_fs *fs, unsigned id, bool paused)
{
	for (size_t i = 0; i < fs->nhists; i++)
		if (fs->hists[i].id == id)
			dp_hist_pause(fs->hists[i].h, paused);
}

void dp_fs_hist_remove_event(struct dp_fs *fs, unsigned id)
{
	pthread_mutex_lock(&fs->buf_lock);
	/* none goes while another trigger reads one's variables, as the
	 * kernel's hist_unreg_all() */
	for (size_t i = 0; i < fs->nhists; i++)
		if (fs->hists[i].id == id &&
		    dp_hist_referenced(fs->hists[i].h)) {
			pthread_mutex_unlock(&fs->buf_lock);
			return;
		}
	for (size_t i = fs->nhists; i-- > 0;)
		if (fs->hists[i].id == id)
			remove_at(fs, i);
	pthread_mutex_unlock(&fs->buf_lock);
}

void dp_fs_hist_print_triggers(struct dp_fs *fs, unsigned id, FILE *out)
{
	pthread_mutex_lock(&fs->buf_lock);
	for (size_t i = 0; i < fs->nhists; i++)
		if (fs->hists[i].id == id)
			dp_hist_print_trigger(fs->hists[i].h, out);
	pthread_mutex_unlock(&fs->buf_lock);
}

void dp_fs_hist_read(struct dp_fs *fs, unsigned id, FILE *out)
{
	unsigned n = 0;

	pthread_mutex_lock(&fs->buf_lock);
	for (size_t i = 0; i < fs->nhists; i++)
		if (fs->hists[i].id == id)
			dp_hist_print(fs->hists[i].h, n++, out);
	pthread_mutex_unlock(&fs->buf_lock);
}

/* The served process's symbols, opened when a .sym key or a stack first
 * needs them. */
static const struct dp_symbolizer *symbolizer(struct dp_fs *fs)
{
	char why[256];

	if (!fs->hist_proc && !fs->hist_proc_failed &&
	    dp_proc_open(fs->o->pid, &fs->hist_proc, why, sizeof(why)))
		fs->hist_proc_failed = true;
	if (!fs->hist_proc)
		return NULL;
	dp_proc_symbolizer(fs->hist_proc, &fs->hist_sym);
	return &fs->hist_sym;
}

/* The records of event @id to its triggers (buf_lock held). */
static void add_locked(struct dp_fs *fs, unsigned id, const void *rec,
		       size_t len, const struct dp_rec_meta *meta)
{
	for (size_t i = 0; i < fs->nhists; i++) {
		struct dp_hist *h = fs->hists[i].h;

		if (fs->hists[i].id == id)
			dp_hist_add(h, rec, len, meta,
				    dp_hist_wants_symbols(h) ? symbolizer(fs) :
				    NULL);
	}
}

void dp_fs_hist_add(struct dp_fs *fs, unsigned id, const void *rec,
		    size_t len, const struct dp_rec_meta *meta)
{
	struct pending *p = NULL, *next;

	pthread_mutex_lock(&fs->buf_lock);
	add_locked(fs, id, rec, len, meta);
	if (fs->hctx) {
		p = fs->hctx->head;
		fs->hctx->head = NULL;
		fs->hctx->tail = &fs->hctx->head;
	}
	pthread_mutex_unlock(&fs->buf_lock);
	/* the synthetic events' lines, as their session child would */
	for (; p; p = next) {
		next = p->next;
		dp_fs_buf_add(fs, p->id, p->cpu, p->text, p->len);
		free(p);
	}
}

void dp_fs_hist_fini(struct dp_fs *fs)
{
	while (fs->nhists)
		remove_at(fs, fs->nhists - 1);
	free(fs->hists);
	fs->hists = NULL;
	if (fs->hctx) {
		struct pending *p = fs->hctx->head, *next;

		for (; p; p = next) {
			next = p->next;
			free(p);
		}
		states_free(fs->hctx);
		free(fs->hctx);
		fs->hctx = NULL;
	}
	dp_proc_close(fs->hist_proc);
	fs->hist_proc = NULL;
}
