// SPDX-License-Identifier: GPL-2.0
/*
 * --format tracedat (what `dprobe record` writes): trace-cmd's trace.dat,
 * the records copied unformatted into ring buffer pages as they come
 * (record/tracedat.h), the file written whole when tracing ends.  On a
 * terminal, a status line on stderr says how it goes: events, lost,
 * megabytes and the rate, twice a second.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/renderer.h"
#include "record/tracedat.h"

struct tdat_out {
	struct dp_tdat_writer *w;
	uint64_t lost;			/* the engine's, as reported */
	bool status;			/* stderr is a terminal */
	double t0, last;
	unsigned since;			/* records since the last clock read */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The file @out writes to (the spill file goes beside it, as its .part,
 * on the same file system); NULL if not a regular file (a pipe). */
static char *out_path(FILE *out)
{
	char link[64], path[PATH_MAX];
	struct stat st;
	ssize_t n;

	if (fstat(fileno(out), &st) || !S_ISREG(st.st_mode))
		return NULL;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fileno(out));
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0 || path[0] != '/')
		return NULL;
	path[n] = 0;
	return strdup(path);
}

static void tdat_begin(struct dp_renderer *r)
{
	struct tdat_out *t = calloc(1, sizeof(*t));
	char *path = out_path(r->out);

	r->priv = t;
	if (!t)
		return;
	t->w = dp_tdat_writer_new(path, r->ncpus);
	if (!t->w)
		perror("dprobe: the recording's page file");
	if (t->w && r->compress &&
	    dp_tdat_writer_compress(t->w, DP_TDAT_ZSTD_LEVEL)) {
		perror("dprobe: zstd");
		dp_tdat_writer_free(t->w);
		t->w = NULL;
	}
	free(path);
	t->status = isatty(STDERR_FILENO);
	t->t0 = t->last = now();
}

static void status(struct tdat_out *t, bool force)
{
	uint64_t ev, lost, bytes;
	double tn;

	if (!t->status || !t->w)
		return;
	tn = now();
	if (!force && tn - t->last < 0.5)
		return;
	t->last = tn;
	dp_tdat_counts(t->w, &ev, &lost, &bytes);
	fprintf(stderr, "\rdprobe: %" PRIu64 " events, %" PRIu64 " lost, "
		"%.1f MB, %.2f M events/s\033[K", ev, lost + t->lost,
		(double)bytes / 1e6, tn > t->t0 ? (double)ev / (tn - t->t0) / 1e6 : 0);
}

static int tdat_event(struct dp_renderer *r, const struct dp_event *ev,
		      const void *rec, size_t len,
		      const struct dp_rec_meta *meta,
		      const struct dp_symbolizer *sym)
{
	struct tdat_out *t = r->priv;

	if (!t || !t->w)
		return -1;
	/* the clock is read once in a while, not per record */
	if (t->status && ++t->since == 4096) {
		t->since = 0;
		status(t, false);
	}
	return dp_tdat_record(t->w, ev, rec, len, meta, sym);
}

static void tdat_lost(struct dp_renderer *r, int cpu, unsigned long n)
{
	struct tdat_out *t = r->priv;

	if (!t || !t->w)
		return;
	if (n != DP_LOST_UNKNOWN)
		t->lost += n;
	dp_tdat_lost(t->w, cpu, n);
}

/* The engine is idle: a moment to update the status line. */
static void tdat_flush(struct dp_renderer *r)
{
	struct tdat_out *t = r->priv;

	if (t)
		status(t, false);
}

static void tdat_end(struct dp_renderer *r)
{
	struct tdat_out *t = r->priv;
	uint64_t ev, lost, bytes;

	if (!t)
		return;
	if (t->status)
		fputs("\r\033[K", stderr);
	if (t->w) {
		dp_tdat_counts(t->w, &ev, &lost, &bytes);
		if (dp_tdat_finish(t->w, r->out))
			fprintf(stderr, "dprobe: the recording could not be "
				"written whole (%s): it is cut, and readers "
				"read what it holds\n", strerror(errno));
		if (lost)
			fprintf(stderr, "dprobe: %" PRIu64 " records were not "
				"recorded (longer than a page, or after a "
				"write error)\n", lost);
		fprintf(stderr, "dprobe: recorded %" PRIu64 " events, %.1f MB "
			"of pages%s\n", ev, (double)bytes / 1e6,
			r->compress ? " compressed" : "");
		dp_tdat_writer_free(t->w);
	}
	free(t);
	r->priv = NULL;
}

/* Another process writes the recording: nothing is written or said. */
static void tdat_discard(struct dp_renderer *r)
{
	struct tdat_out *t = r->priv;

	if (t)
		dp_tdat_writer_free(t->w);
	free(t);
	r->priv = NULL;
}

const struct dp_renderer_ops dp_render_tracedat = {
	.discard = tdat_discard,
	.name = "tracedat",
	.begin = tdat_begin,
	.event = tdat_event,
	.lost = tdat_lost,
	.flush = tdat_flush,
	.end = tdat_end,
	.binary = true,
};
