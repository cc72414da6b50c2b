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
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "event/hist.h"
#include "fs/internal.h"
#include "sym/proc.h"

struct dp_fs_hist {
	unsigned id, serial;		/* the event's */
	struct dp_hist *h;
};

/* The histograms of @id, in the order written (buf_lock held). */
static size_t find_same(const struct dp_fs *fs, unsigned id,
			const struct dp_hist *like)
{
	for (size_t i = 0; i < fs->nhists; i++)
		if (fs->hists[i].id == id && dp_hist_same(fs->hists[i].h, like))
			return i;
	return (size_t)-1;
}

bool dp_fs_hist_on(struct dp_fs *fs, unsigned id)
{
	bool on = false;

	pthread_mutex_lock(&fs->buf_lock);
	for (size_t i = 0; i < fs->nhists && !on; i++)
		on = fs->hists[i].id == id;
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
	return 0;
}

static void remove_at(struct dp_fs *fs, size_t i)
{
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
		if (!have)
			return -ENOENT;
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
	struct dp_hist_error e;
	struct dp_hist *h = NULL;
	char *s = NULL;
	size_t n = 0;
	FILE *f;
	int ret = dp_hist_new(ev, text + del, &h, &e);

	if (ret) {
		/* the kernel's error_log entry, when it has one */
		if (e.msg && (f = open_memstream(&s, &n))) {
			dp_hist_error_print(ev, text + del, ret, &e, f);
			if (!fclose(f))
				dp_fs_log_add(fs, s);
			else
				free(s);
		}
		return ret;
	}
	pthread_mutex_lock(&fs->buf_lock);
	ret = apply(fs, ev, text + del, h, del);
	pthread_mutex_unlock(&fs->buf_lock);
	if (ret)
		dp_hist_free(h);
	return ret < 0 ? ret : 0;
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

/* The served process's symbols, opened when a .sym key first needs them. */
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

void dp_fs_hist_add(struct dp_fs *fs, unsigned id, const void *rec,
		    size_t len, const struct dp_rec_meta *meta)
{
	pthread_mutex_lock(&fs->buf_lock);
	for (size_t i = 0; i < fs->nhists; i++) {
		struct dp_hist *h = fs->hists[i].h;

		if (fs->hists[i].id == id)
			dp_hist_add(h, rec, len, meta,
				    dp_hist_wants_symbols(h) ? symbolizer(fs) :
				    NULL);
	}
	pthread_mutex_unlock(&fs->buf_lock);
}

void dp_fs_hist_fini(struct dp_fs *fs)
{
	while (fs->nhists)
		remove_at(fs, fs->nhists - 1);
	free(fs->hists);
	fs->hists = NULL;
	dp_proc_close(fs->hist_proc);
	fs->hist_proc = NULL;
}
