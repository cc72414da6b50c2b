// SPDX-License-Identifier: GPL-2.0
/*
 * trace_options and options/: the kernel's trace options that the mount
 * honours, each a row of one of two tables.
 *
 * The general ones (trace.h's TRACE_FLAGS, in their order) are those the
 * mount's buffer and tracers do something with: print-parent (the
 * function tracer's " <-caller"), overwrite (a full buffer drops its
 * oldest line, or, off, the new one), markers (trace_marker writes,
 * refused when off) and stacktrace (off only: no stack after every
 * event yet).  The tracer's are function_graph's (output/tracer.h's
 * table: the renderer's flags).
 *
 * As in the kernel: trace_options lists every general option, `name` or
 * `noname`, then the current tracer's; a write sets one, `name` or
 * `noname`, the tracer's only while that tracer is current; options/
 * holds a file per general option and, at the top level, per option of
 * every tracer (function_graph's even while another is current), which
 * takes 0 or 1.  An option a name does not name is EINVAL.  Each takes
 * effect at once, for the lines made from then on (the kernel formats
 * its lines when they are read, so its options change the old lines too).
 */
#include <errno.h>
#include <string.h>

#include "fs/internal.h"
#include "lang/kstrto.h"

struct fs_opt {
	const char *name;
	unsigned bit;		/* DP_FS_OPT_* */
	bool fixed;		/* only its default value is taken */
};

static const struct fs_opt general[] = {
	{ "print-parent", DP_FS_OPT_PRINT_PARENT, false },
	{ "overwrite", DP_FS_OPT_OVERWRITE, false },
	{ "markers", DP_FS_OPT_MARKERS, false },
	{ "stacktrace", DP_FS_OPT_STACKTRACE, true },
};

#define NGENERAL (sizeof(general) / sizeof(general[0]))

/* Where an option is: a general row, or a row of function_graph's. */
struct opt_ref {
	const struct fs_opt *g;
	const struct dp_trace_option *t;
};

static bool fgraph_current(const struct dp_fs *fs)
{
	return fs->tracer &&
	       !strcmp(dp_tracer_name(fs->tracer), "function_graph");
}

/* @name's row: the tracer's too when @tracer_rows. */
static int find(const char *name, bool tracer_rows, struct opt_ref *ref)
{
	const struct dp_trace_option *t;
	size_t n;

	*ref = (struct opt_ref){ 0 };
	for (size_t i = 0; i < NGENERAL; i++)
		if (!strcmp(general[i].name, name)) {
			ref->g = &general[i];
			return 0;
		}
	t = dp_trace_options(&n);
	for (size_t i = 0; tracer_rows && i < n; i++)
		if (!strcmp(t[i].name, name)) {
			ref->t = &t[i];
			return 0;
		}
	return -EINVAL;
}

static bool get(struct dp_fs *fs, const struct opt_ref *ref)
{
	bool on;

	pthread_mutex_lock(&fs->buf_lock);
	on = ref->g ? fs->trace_flags & ref->g->bit :
		      fs->tr_opts.flags & ref->t->flag;
	pthread_mutex_unlock(&fs->buf_lock);
	return on;
}

static int set(struct dp_fs *fs, const struct opt_ref *ref, bool on)
{
	unsigned *flags = ref->g ? &fs->trace_flags : &fs->tr_opts.flags;
	unsigned bit = ref->g ? ref->g->bit : ref->t->flag;

	if (ref->g && ref->g->fixed)
		return on == !!(DP_FS_OPT_DEFAULT & bit) ? 0 : -EINVAL;
	pthread_mutex_lock(&fs->buf_lock);
	*flags = on ? *flags | bit : *flags & ~bit;
	/* the renderer's copy of the one general option it reads */
	fs->tr_opts.flags = (fs->tr_opts.flags & ~DP_TR_PRINT_PARENT) |
			    (fs->trace_flags & DP_FS_OPT_PRINT_PARENT ?
			     DP_TR_PRINT_PARENT : 0);
	pthread_mutex_unlock(&fs->buf_lock);
	return 0;
}

bool dp_fs_option_exists(const struct dp_fs *fs, const char *name)
{
	struct opt_ref ref;

	return !find(name, !fs->top, &ref);
}

void dp_fs_options_list(struct dp_fs *fs,
			void (*fill)(void *priv, const char *name, bool dir),
			void *priv)
{
	const struct dp_trace_option *t;
	size_t n;

	for (size_t i = 0; i < NGENERAL; i++)
		fill(priv, general[i].name, false);
	t = dp_trace_options(&n);
	for (size_t i = 0; !fs->top && i < n; i++)
		fill(priv, t[i].name, false);
}

void dp_fs_option_print(struct dp_fs *fs, const char *name, FILE *out)
{
	struct opt_ref ref;

	if (!find(name, !fs->top, &ref))
		fprintf(out, "%d\n", get(fs, &ref));
}

/* options/NAME: 0 or 1, as the kernel's trace_options_write(). */
int dp_fs_option_write(struct dp_fs *fs, const char *name, const char *buf,
		       size_t len)
{
	struct opt_ref ref;
	char tmp[32];
	uint64_t v;

	if (!len || len >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, buf, len);
	tmp[len] = '\0';
	if (dp_kstrtoull(tmp, 10, &v) || v > 1 || find(name, !fs->top, &ref))
		return -EINVAL;
	return set(fs, &ref, v);
}

void dp_fs_trace_options_print(struct dp_fs *fs, FILE *out)
{
	for (size_t i = 0; i < NGENERAL; i++) {
		struct opt_ref ref = { .g = &general[i] };

		fprintf(out, "%s%s\n", get(fs, &ref) ? "" : "no",
			general[i].name);
	}
	if (fgraph_current(fs)) {
		pthread_mutex_lock(&fs->buf_lock);
		dp_trace_options_list(out, fs->tr_opts.flags);
		pthread_mutex_unlock(&fs->buf_lock);
	}
}

/* trace_options: one `[no]NAME` a write, blanks around it dropped, less
 * than 64 bytes (trace_set_options()). */
int dp_fs_trace_options_write(struct dp_fs *fs, const char *buf, size_t len)
{
	struct opt_ref ref;
	char tmp[64], *s;
	bool neg;

	if (len >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, buf, len);
	tmp[len] = '\0';
	s = tmp + strspn(tmp, " \t\n");
	len = strlen(s);
	while (len && strchr(" \t\n", s[len - 1]))
		s[--len] = '\0';
	neg = !strncmp(s, "no", 2);
	if (find(neg ? s + 2 : s, fgraph_current(fs), &ref))
		return -EINVAL;
	return set(fs, &ref, !neg);
}
