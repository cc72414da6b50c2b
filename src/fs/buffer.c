// SPDX-License-Identifier: GPL-2.0
/*
 * The mounted file system's trace buffer, error log and triggers.
 *
 * The buffer holds rendered `trace` lines, oldest first, at most
 * buffer_size_kb of text; a new line pushes the oldest out, as the
 * kernel's ring buffer does in its default overwrite mode (with
 * `nooverwrite`, the new line is dropped instead).  `trace` reads
 * it without consuming, `trace_pipe` consumes it.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fs/internal.h"
#include "output/tracer.h"
#include "output/output.h"

static void drop_head(struct dp_fs_ring *r)
{
	struct dp_fs_line *l = r->head;

	r->head = l->next;
	if (!r->head)
		r->tail = NULL;
	r->bytes -= l->len;
	r->entries--;
	free(l);
}

static void ring_clear(struct dp_fs_ring *r)
{
	while (r->head)
		drop_head(r);
	r->written = 0;
}

void dp_fs_ring_add_locked(struct dp_fs *fs, int which, int cpu,
			   const char *text, size_t len)
{
	struct dp_fs_ring *r = &fs->ring[which];
	struct dp_fs_line *l;

	if (!len || !dp_fs_cpu_traced(fs, cpu))
		return;
	/* nooverwrite: a full buffer keeps what it has */
	if (!(fs->trace_flags & DP_FS_OPT_OVERWRITE) &&
	    r->bytes + len > fs->limit)
		return;
	l = malloc(sizeof(*l) + len);
	if (!l)
		return;
	l->next = NULL;
	l->len = len;
	l->cpu = cpu;
	memcpy(l->text, text, len);
	if (r->tail)
		r->tail->next = l;
	else
		r->head = l;
	r->tail = l;
	r->bytes += len;
	r->entries++;
	r->written++;
	while (r->bytes > fs->limit && r->head != r->tail)
		drop_head(r);
	if (which == fs->live)
		pthread_cond_broadcast(&fs->buf_cond);
}

/*
 * The dump and cpudump function commands (ftrace_dump()): the main
 * buffer's lines, those of @cpu or all (@cpu < 0), printed to @out (the
 * mount's stderr: the console) and consumed, between the kernel's
 * markers.
 */
void dp_fs_buf_dump_locked(struct dp_fs *fs, int cpu, FILE *out)
{
	struct dp_fs_ring *r = &fs->ring[fs->live];
	struct dp_fs_line **pp = &r->head, *l;
	size_t n = 0;

	if (fs->top)
		fprintf(out, "Dumping ftrace instance %s buffer:\n",
			fs->inst_name);
	else
		fputs("Dumping ftrace buffer:\n", out);
	while ((l = *pp)) {
		if (cpu >= 0 && l->cpu != cpu) {
			pp = &l->next;
			continue;
		}
		fputs(n++ ? "" : "---------------------------------\n", out);
		fwrite(l->text, 1, l->len, out);
		*pp = l->next;
		r->tail = r->tail == l ? NULL : r->tail;
		r->bytes -= l->len;
		r->entries--;
		free(l);
	}
	/* the last line kept is the tail again */
	for (l = r->head; l && !r->tail; l = l->next)
		r->tail = l->next ? NULL : l;
	fputs(n ? "---------------------------------\n" :
		  "   (ftrace buffer empty)\n", out);
	fflush(out);
}

/* A line of an event without triggers: in the buffer if tracing is on
 * (the triggered ones go through trigger.c). */
void dp_fs_buf_add(struct dp_fs *fs, unsigned id, int cpu, const char *text,
		   size_t len)
{
	(void)id;
	pthread_mutex_lock(&fs->buf_lock);
	if (fs->tracing_on)
		dp_fs_ring_add_locked(fs, fs->live, cpu, text, len);
	pthread_mutex_unlock(&fs->buf_lock);
}

void dp_fs_buf_clear(struct dp_fs *fs)
{
	pthread_mutex_lock(&fs->buf_lock);
	ring_clear(&fs->ring[fs->live]);
	pthread_mutex_unlock(&fs->buf_lock);
}

void dp_fs_buf_fini(struct dp_fs *fs)
{
	pthread_mutex_lock(&fs->buf_lock);
	ring_clear(&fs->ring[0]);
	ring_clear(&fs->ring[1]);
	pthread_mutex_unlock(&fs->buf_lock);
}

void dp_fs_buf_set_limit(struct dp_fs *fs, size_t bytes)
{
	pthread_mutex_lock(&fs->buf_lock);
	fs->limit = bytes;
	for (int i = 0; i < 2; i++)
		while (fs->ring[i].bytes > fs->limit && fs->ring[i].head)
			drop_head(&fs->ring[i]);
	pthread_mutex_unlock(&fs->buf_lock);
}

static void render_ring(const struct dp_fs *fs, const struct dp_fs_ring *r,
			FILE *out)
{
	if (fs->tracer && !strcmp(dp_tracer_name(fs->tracer), "function_graph"))
		dp_fgraph_header(out, fs->tr_opts.flags);
	else
		dp_trace_header_of(out, dp_tracer_name(fs->tracer),
				   (unsigned long)r->entries, r->written,
				   fs->ncpus);
	for (const struct dp_fs_line *l = r->head; l; l = l->next)
		fwrite(l->text, 1, l->len, out);
}

void dp_fs_buf_render(struct dp_fs *fs, FILE *out)
{
	pthread_mutex_lock(&fs->buf_lock);
	render_ring(fs, &fs->ring[fs->live], out);
	pthread_mutex_unlock(&fs->buf_lock);
}

/* Whole lines into @dst; the first one in part if it alone is too long. */
static size_t take_lines(struct dp_fs_ring *r, char *dst, size_t size)
{
	size_t n = 0;

	while (r->head && n + r->head->len <= size) {
		memcpy(dst + n, r->head->text, r->head->len);
		n += r->head->len;
		drop_head(r);
	}
	if (!n && r->head) {
		struct dp_fs_line *l = r->head;

		memcpy(dst, l->text, size);
		memmove(l->text, l->text + size, l->len - size);
		l->len -= size;
		r->bytes -= size;
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
	while (!fs->ring[fs->live].head) {
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
	n = (ssize_t)take_lines(&fs->ring[fs->live], dst, size);
out:
	pthread_mutex_unlock(&fs->buf_lock);
	pthread_setcancelstate(old, NULL);
	return n;
}

/* ---- the snapshot buffer ------------------------------------------------- */

static const char snapshot_help[] =
	"# Snapshot commands:\n"
	"# echo 0 > snapshot : Clears and frees snapshot buffer\n"
	"# echo 1 > snapshot : Allocates snapshot buffer, if not already allocated.\n"
	"#                      Takes a snapshot of the main buffer.\n"
	"# echo 2 > snapshot : Clears snapshot buffer (but does not allocate or free)\n"
	"#                      (Doesn't have to be '2' works with any number that\n"
	"#                       is not a '0' or '1')\n";

/*
 * The `snapshot` file: the kernel's s_show() for the max buffer: its
 * "# tracer:" lines, then, empty, the help (allocated or freed), else the
 * header and the lines.
 */
void dp_fs_snapshot_render(struct dp_fs *fs, FILE *out)
{
	const struct dp_fs_ring *r;

	pthread_mutex_lock(&fs->buf_lock);
	r = &fs->ring[!fs->live];
	if (!fs->snap_alloc || !r->head) {
		fputs("# tracer: nop\n#\n", out);
		fputs(fs->snap_alloc ? "#\n# * Snapshot is allocated *\n#\n" :
		      "#\n# * Snapshot is freed *\n#\n", out);
		fputs(snapshot_help, out);
	} else {
		render_ring(fs, r, out);
	}
	pthread_mutex_unlock(&fs->buf_lock);
}

/* The two buffers change places: the main one becomes the snapshot. */
static void swap_locked(struct dp_fs *fs)
{
	fs->live = !fs->live;
	pthread_cond_broadcast(&fs->buf_cond);
}

int dp_fs_snapshot_write(struct dp_fs *fs, unsigned long v)
{
	pthread_mutex_lock(&fs->buf_lock);
	switch (v) {
	case 0:
		if (fs->snap_alloc) {
			ring_clear(&fs->ring[!fs->live]);
			fs->snap_alloc = false;
		}
		break;
	case 1:
		fs->snap_alloc = true;
		swap_locked(fs);
		break;
	default:
		if (fs->snap_alloc)
			ring_clear(&fs->ring[!fs->live]);
		break;
	}
	pthread_mutex_unlock(&fs->buf_lock);
	return 0;
}

void dp_fs_snapshot_arm_locked(struct dp_fs *fs)
{
	fs->snap_refs++;
	fs->snap_alloc = true;
}

void dp_fs_snapshot_disarm_locked(struct dp_fs *fs)
{
	if (fs->snap_refs)
		fs->snap_refs--;
}

/*
 * The kernel's tracing_snapshot_instance(): swap, or, without a snapshot
 * buffer, say so in the trace and stop tracing.
 */
int dp_fs_snapshot_take(struct dp_fs *fs)
{
	static const char *const msg[] = {
		"*** SNAPSHOT NOT ALLOCATED ***\n",
		"*** stopping trace here!   ***\n",
	};

	if (fs->snap_alloc) {
		swap_locked(fs);
		return 0;
	}
	for (int i = 0; i < 2 && fs->tracing_on; i++) {
		struct dp_rec_meta meta;
		char *s = NULL;
		size_t n = 0;
		FILE *f = open_memstream(&s, &n);

		if (!f)
			break;
		dp_fs_now_meta(&meta, NULL);
		dp_trace_context(f, &meta);
		fprintf(f, "tracing_snapshot_instance_cond: %s", msg[i]);
		if (!fclose(f))
			dp_fs_ring_add_locked(fs, fs->live, meta.cpu, s, n);
		free(s);
	}
	fs->tracing_on = false;
	return -ENOENT;
}

/* ---- stack entries ------------------------------------------------------- */

/*
 * A `<stack trace>` entry (the kernel's TRACE_STACK, as trace_stack_print()
 * prints it with the default options: one " => SYMBOL" line per frame, no
 * offsets), for a record of @meta, into the main buffer if tracing is on.
 */
void dp_fs_buf_stack_locked(struct dp_fs *fs, const struct dp_rec_meta *meta,
			    const uint64_t *ips, size_t n,
			    const struct dp_symbolizer *sym)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f;

	if (!fs->tracing_on || !(f = open_memstream(&s, &len)))
		return;
	dp_trace_context(f, meta);
	fputs("<stack trace>\n", f);
	for (size_t i = 0; i < n; i++) {
		const char *name;
		uint64_t off, size;

		if (sym && sym->lookup &&
		    !sym->lookup(sym->priv, ips[i], &name, &off, &size))
			fprintf(f, " => %s\n", name);
		else
			fprintf(f, " => 0x%" PRIx64 "\n", ips[i]);
	}
	if (!fclose(f))
		dp_fs_ring_add_locked(fs, fs->live, meta->cpu, s, len);
	free(s);
}

/* Now, for a line dprobe makes itself (a marker write, the snapshot
 * messages): the writer's pid and comm, this CPU, CLOCK_MONOTONIC. */
void dp_fs_now_meta(struct dp_rec_meta *meta, const char *comm)
{
	struct timespec now;
	int cpu = sched_getcpu();

	clock_gettime(CLOCK_MONOTONIC, &now);
	*meta = (struct dp_rec_meta){
		.ts_ns = (uint64_t)now.tv_sec * 1000000000ull +
			 (uint64_t)now.tv_nsec,
		.cpu = cpu < 0 ? 0 : cpu, .pid = getpid(), .tgid = getpid(),
		.comm = comm,
	};
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
