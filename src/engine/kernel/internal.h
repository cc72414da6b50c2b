/* SPDX-License-Identifier: GPL-2.0 */
/* Private to src/engine/kernel/: tracefs access, instances, definitions,
 * the ring-buffer page parser and the symbolizer. */
#ifndef DPROBE_ENGINE_KERNEL_INTERNAL_H
#define DPROBE_ENGINE_KERNEL_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "engine/kernel/kernel.h"
#include "event/event.h"
#include "event/kformat.h"

/* ---- tracefs.c ---------------------------------------------------------- */

struct dp_tfs {
	char root[PATH_MAX];
};

/*
 * Find tracefs ($DPROBE_TRACEFS, else /sys/kernel/tracing, mounted there
 * if it is not) as root.  0, or -errno with one sentence in @why.
 */
int dp_tfs_find(struct dp_tfs *t, char *why, size_t whylen);
/* Refuse to follow processes from inside a pid namespace (session.c). */
int dp_kcheck_pidns(char *why, size_t whylen);
int dp_tfs_path(const struct dp_tfs *t, const char *rel, char *buf,
		size_t len);
bool dp_tfs_exists(const struct dp_tfs *t, const char *rel);
/* Replace the file's content (O_TRUNC): 0 or -errno. */
int dp_tfs_write(const struct dp_tfs *t, const char *rel, const char *s);
/* Append (O_APPEND): what *_events need, as O_TRUNC clears them all. */
int dp_tfs_append(const struct dp_tfs *t, const char *rel, const char *s);
/* The whole file, NUL-terminated, malloc'd: 0 or -errno. */
int dp_tfs_read(const struct dp_tfs *t, const char *rel, char **buf,
		size_t *len);
/* strerror() that also has words for the kernel's internal errnos
 * (524 ENOTSUPP, ...), which a tracefs write may return. */
const char *dp_kstrerror(int err);
#define DP_ENOTSUPP	524	/* the kernel's, not libc's ENOTSUP (95) */
/*
 * The last error_log entry whose Command is @cmd, without its timestamp,
 * into @out ("" if none).
 */
void dp_tfs_error_log(const struct dp_tfs *t, const char *cmd, char *out,
		      size_t len);

/* ---- instance.c --------------------------------------------------------- */

#define DP_KINST_PREFIX		"dprobe."
#define DP_KGROUP_PREFIX	"dprobe"

/* "instances/dprobe.PID": 0 or -errno. */
int dp_kinst_create(const struct dp_tfs *t, pid_t pid, char *rel,
		    size_t len);
/* Remove it (the kernel disables its events): 0, or -EBUSY while a
 * file of it is open, or -errno. */
int dp_kinst_remove(const struct dp_tfs *t, const char *rel);
/* dp_kernel_cleanup() with the reason for a failure in @why. */
int dp_kcleanup(FILE *report, char *why, size_t whylen);
/* Delete the event GROUP/EVENT from @file (uprobe_events, ...). */
int dp_kevent_delete(const struct dp_tfs *t, const char *file,
		     const char *group, const char *event);

/* ---- defs.c ------------------------------------------------------------- */

/* The kernel group of user group @ugroup for dprobe @pid. */
void dp_kgroup_name(pid_t pid, const char *ugroup, char *out, size_t len);
/* The pid of a dprobe group or instance name; 0 if it is not one. */
pid_t dp_kgroup_pid(const char *group);
pid_t dp_kinst_pid(const char *name);

struct dp_kdefs_ctx {
	pid_t pid;
	bool kernel;		/* --kernel: kernel symbol places */
	const char *binary;	/* places without MOD: */
	char *const *objs;	/* MOD: by basename or soname */
	size_t nobjs;
};

/*
 * The line written to the kernel for probe @p (malloc'd in *@line), and
 * which file takes it ("uprobe_events" or "kprobe_events").  *@path /
 * *@vaddr: the object and link-time address of a user place, for the
 * symbolizer (*@path malloc'd, NULL if not known).  0, or -errno with
 * @why filled.
 */
int dp_kdefs_line(const struct dp_kdefs_ctx *c, const struct dp_probe *p,
		  char **line, const char **file, char **path,
		  uint64_t *vaddr, char *why, size_t whylen);

/*
 * Compare the kernel's `format` text of an event with dprobe's layout of
 * @ev (every field's name, offset and size).  0, or -EPROTO with the
 * first difference in @why.
 */
int dp_kdefs_check_format(const struct dp_event *ev, const char *kformat,
			  char *why, size_t whylen);

/* dp_kformat_next() and struct dp_kfield: event/kformat.h */

/* ---- raw.c -------------------------------------------------------------- */

/* Page and event header layout, from events/header_page, header_event. */
struct dp_kraw_layout {
	unsigned ts_off, ts_size;
	unsigned commit_off, commit_size;
	unsigned data_off;
	size_t page_size;	/* data_off + the data field's size */
	unsigned delta_bits;	/* time_delta width (27) */
	unsigned max_data;	/* largest type_len of a data record (28) */
	unsigned padding, time_extend, time_stamp;	/* 29, 30, 31 */
};

/* What a 64-bit kernel of today has. */
void dp_kraw_layout_default(struct dp_kraw_layout *l);
/* Fill from the two files' text (either may be NULL: defaults). */
int dp_kraw_layout_parse(struct dp_kraw_layout *l, const char *header_page,
			 const char *header_event);

#define DP_KRAW_MISSED_EVENTS	(1UL << 31)
#define DP_KRAW_MISSED_STORED	(1UL << 30)
#define DP_KRAW_COMMIT_MASK	((1UL << 27) - 1)

struct dp_kraw_page {
	const struct dp_kraw_layout *l;
	const uint8_t *data;	/* the page's data area */
	size_t size;		/* committed bytes in it */
	size_t pos;
	uint64_t ts;		/* of the last entry read */
	bool missed;		/* events were lost before this page */
	bool nmissed_known;
	unsigned long nmissed;
};

struct dp_kraw_rec {
	const uint8_t *data;
	size_t len;		/* payload bytes (a multiple of 4) */
	uint64_t ts;
};

/* Open one page of @len bytes: 0, or -EINVAL for a malformed header. */
int dp_kraw_page_init(struct dp_kraw_page *pg, const struct dp_kraw_layout *l,
		      const void *buf, size_t len);
/* The next record: 1, 0 at the page's end, -EINVAL (corrupt; stop). */
int dp_kraw_next(struct dp_kraw_page *pg, struct dp_kraw_rec *r);

/* ---- sym.c -------------------------------------------------------------- */

struct dp_ksym;

struct dp_ksym *dp_ksym_new(bool kernel);
void dp_ksym_free(struct dp_ksym *s);
/* A user probe at link-time @vaddr of @path hit at run-time @addr in
 * process @tgid: learn where @path is loaded there. */
void dp_ksym_learn(struct dp_ksym *s, pid_t tgid, const char *path,
		   uint64_t vaddr, uint64_t addr);
/* The symbolizer for the records of @tgid that follow. */
void dp_ksym_symbolizer(struct dp_ksym *s, pid_t tgid,
			struct dp_symbolizer *out);

#endif
