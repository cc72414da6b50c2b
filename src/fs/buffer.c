// SPDX-License-Identifier: GPL-2.0
/*
 * The mounted file system's trace buffer, error log and triggers.
 *
 * The buffer holds rendered `trace` lines, oldest first, at most
 * buffer_size_kb of text; a new line pushes the oldest out, as the
 * kernel's ring buffer does in its default overwrite mode.  `trace` reads
 * it without consuming, `trace_pipe` consumes it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fs/internal.h"
#include "output/output.h"

static void drop_head(struct dp_fs *fs)
{
	struct dp_fs_line *l = fs->head;

	fs->head = l->next;
	if (!fs->head)
		fs->tail = NULL;
	fs->bytes -= l->len;
	fs->entries--;
	free(l);
}

static unsigned trigger_mask_locked(const struct dp_fs *fs, unsigned id)
{
	for (unsigned i = 0; i < fs->ntrig; i++)
		if (fs->trig[i].id == id)
			return fs->trig[i].mask;
	return 0;
}

unsigned dp_fs_trigger_mask(struct dp_fs *fs, unsigned id)
{
	unsigned m;

	pthread_mutex_lock(&fs->buf_lock);
	m = trigger_mask_locked(fs, id);
	pthread_mutex_unlock(&fs->buf_lock);
	return m;
}

bool dp_fs_triggered(struct dp_fs *fs, unsigned id)
{
	return dp_fs_trigger_mask(fs, id) || dp_fs_hist_on(fs, id);
}

int dp_fs_trigger_set(struct dp_fs *fs, unsigned id, unsigned mask)
{
	int ret = 0;
	unsigned i;

	pthread_mutex_lock(&fs->buf_lock);
	for (i = 0; i < fs->ntrig && fs->trig[i].id != id; i++)
		;
	if (i == fs->ntrig && mask) {
		if (fs->ntrig == DP_FS_MAX_TRIGGERS)
			ret = -ENOSPC;
		else
			fs->trig[fs->ntrig++] = (struct dp_fs_trigger){ id, mask };
	} else if (i < fs->ntrig && mask) {
		fs->trig[i].mask = mask;
	} else if (i < fs->ntrig) {
		fs->trig[i] = fs->trig[--fs->ntrig];
	}
	pthread_mutex_unlock(&fs->buf_lock);
	return ret;
}

/*
 * A traceon/traceoff trigger runs before its event is recorded, as the
 * kernel runs unfiltered triggers: traceoff's own event is not recorded,
 * traceon's is.
 */
void dp_fs_buf_add(struct dp_fs *fs, unsigned id, const char *text,
		   size_t len)
{
	struct dp_fs_line *l;
	unsigned mask;

	pthread_mutex_lock(&fs->buf_lock);
	mask = trigger_mask_locked(fs, id);
	if (mask & DP_TRIG_TRACEOFF)
		fs->tracing_on = false;
	if (mask & DP_TRIG_TRACEON)
		fs->tracing_on = true;
	if (!fs->tracing_on || !len)
		goto out;
	l = malloc(sizeof(*l) + len);
	if (!l)
		goto out;
	l->next = NULL;
	l->len = len;
	memcpy(l->text, text, len);
	if (fs->tail)
		fs->tail->next = l;
	else
		fs->head = l;
	fs->tail = l;
	fs->bytes += len;
	fs->entries++;
	fs->written++;
	while (fs->bytes > fs->limit && fs->head != fs->tail)
		drop_head(fs);
	pthread_cond_broadcast(&fs->buf_cond);
out:
	pthread_mutex_unlock(&fs->buf_lock);
}

void dp_fs_buf_clear(struct dp_fs *fs)
{
	pthread_mutex_lock(&fs->buf_lock);
	while (fs->head)
		drop_head(fs);
	fs->written = 0;
	pthread_mutex_unlock(&fs->buf_lock);
}

void dp_fs_buf_set_limit(struct dp_fs *fs, size_t bytes)
{
	pthread_mutex_lock(&fs->buf_lock);
	fs->limit = bytes;
	while (fs->bytes > fs->limit && fs->head)
		drop_head(fs);
	pthread_mutex_unlock(&fs->buf_lock);
}

void dp_fs_buf_render(struct dp_fs *fs, FILE *out)
{
	pthread_mutex_lock(&fs->buf_lock);
	dp_trace_header(out, (unsigned long)fs->entries, fs->written,
			fs->ncpus);
	for (const struct dp_fs_line *l = fs->head; l; l = l->next)
		fwrite(l->text, 1, l->len, out);
	pthread_mutex_unlock(&fs->buf_lock);
}

/* Whole lines into @dst; the first one in part if it alone is too long. */
static size_t take_lines(struct dp_fs *fs, char *dst, size_t size)
{
	size_t n = 0;

	while (fs->head && n + fs->head->len <= size) {
		memcpy(dst + n, fs->head->text, fs->head->len);
		n += fs->head->len;
		drop_head(fs);
	}
	if (!n && fs->head) {
		struct dp_fs_line *l = fs->head;

		memcpy(dst, l->text, size);
		memmove(l->text, l->text + size, l->len - size);
		l->len -= size;
		fs->bytes -= size;
		n = size;
	}
	return n;
}

ssize_t dp_fs_buf_consume(struct dp_fs *fs, char *dst, size_t size,
			  bool (*stop)(void *priv), void *priv)
{
	struct timespec until;
	ssize_t n = -EINTR;
	int old;

	if (!size)
		return 0;
	/*
	 * libfuse cancels its workers at unmount: never be cancelled inside
	 * the wait, holding buf_lock; @stop ends the wait instead.
	 */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	pthread_mutex_lock(&fs->buf_lock);
	while (!fs->head) {
		if (stop(priv))
			goto out;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 100 * 1000 * 1000;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&fs->buf_cond, &fs->buf_lock, &until);
	}
	n = (ssize_t)take_lines(fs, dst, size);
out:
	pthread_mutex_unlock(&fs->buf_lock);
	pthread_setcancelstate(old, NULL);
	return n;
}

/* Each entry gets the kernel's "[seconds.micros] " (time since boot). */
void dp_fs_log_add(struct dp_fs *fs, char *text)
{
	struct timespec now;
	char *entry;

	if (!text)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (asprintf(&entry, "[%5llu.%06lu] %s", (unsigned long long)now.tv_sec,
		     (unsigned long)now.tv_nsec / 1000, text) < 0) {
		free(text);
		return;
	}
	free(text);
	if (fs->nlog == DP_FS_LOG_MAX) {
		free(fs->log[0]);
		memmove(&fs->log[0], &fs->log[1],
			(DP_FS_LOG_MAX - 1) * sizeof(fs->log[0]));
		fs->nlog--;
	}
	fs->log[fs->nlog++] = entry;
}

void dp_fs_log_clear(struct dp_fs *fs)
{
	for (unsigned i = 0; i < fs->nlog; i++)
		free(fs->log[i]);
	fs->nlog = 0;
}
