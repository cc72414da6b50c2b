// SPDX-License-Identifier: GPL-2.0
/*
 * tracefs: where it is, reading and writing its files, and the kernel's
 * error_log entry for a refused write.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "engine/kernel/internal.h"

#define TRACEFS_MAGIC_NR	0x74726163
#define DEFAULT_TRACEFS		"/sys/kernel/tracing"

static bool is_tracefs(const char *dir)
{
	struct statfs sf;

	return !statfs(dir, &sf) && (unsigned long)sf.f_type == TRACEFS_MAGIC_NR;
}

int dp_tfs_find(struct dp_tfs *t, char *why, size_t whylen)
{
	const char *env = getenv("DPROBE_TRACEFS");
	struct stat st;

	if (geteuid()) {
		snprintf(why, whylen, "the kernel engine needs root (tracefs "
			 "and uprobe_events are root-only); run as root or use "
			 "--engine agent");
		return -EPERM;
	}
	if (env && *env) {
		/* a test's stand-in: taken as it is, never mounted over */
		if (stat(env, &st) || !S_ISDIR(st.st_mode)) {
			snprintf(why, whylen, "no tracefs at %s ($DPROBE_TRACEFS"
				 "): set it to where tracefs is mounted, or "
				 "unset it", env);
			return -ENOENT;
		}
		snprintf(t->root, sizeof(t->root), "%s", env);
		return 0;
	}
	snprintf(t->root, sizeof(t->root), "%s", DEFAULT_TRACEFS);
	if (is_tracefs(t->root))
		return 0;
	/* what `mount -t tracefs nodev /sys/kernel/tracing` does */
	if (mount("nodev", t->root, "tracefs", 0, NULL) || !is_tracefs(t->root)) {
		snprintf(why, whylen, "tracefs is not mounted and mounting it "
			 "failed (%s); mount it with `mount -t tracefs nodev "
			 DEFAULT_TRACEFS "` (a kernel built with "
			 "CONFIG_TRACING is needed)", strerror(errno));
		return -ENOENT;
	}
	return 0;
}

/*
 * The kernel's internal error numbers (include/linux/errno.h) leak out of
 * some tracefs writes; libc knows no words for them ("Unknown error
 * 524").  ENOTSUPP is what uprobes answer for an instruction they will
 * not probe.
 */
static const char *const kernel_errno[] = {
	[512 - 512] = "interrupted, to be restarted (ERESTARTSYS)",
	[513 - 512] = "interrupted, to be restarted (ERESTARTNOINTR)",
	[514 - 512] = "interrupted, to be restarted (ERESTARTNOHAND)",
	[515 - 512] = "no such ioctl command (ENOIOCTLCMD)",
	[516 - 512] = "interrupted, to be restarted (ERESTART_RESTARTBLOCK)",
	[517 - 512] = "driver not ready yet (EPROBE_DEFER)",
	[518 - 512] = "stale open (EOPENSTALE)",
	[519 - 512] = "no such parameter (ENOPARAM)",
	[521 - 512] = "illegal handle (EBADHANDLE)",
	[522 - 512] = "update not synchronized (ENOTSYNC)",
	[523 - 512] = "bad cookie (EBADCOOKIE)",
	[524 - 512] = "not supported by the kernel here (ENOTSUPP)",
	[525 - 512] = "buffer or request too small (ETOOSMALL)",
	[526 - 512] = "server fault (ESERVERFAULT)",
	[527 - 512] = "type not supported (EBADTYPE)",
	[528 - 512] = "request delayed, try again (EJUKEBOX)",
	[529 - 512] = "queued, will complete later (EIOCBQUEUED)",
	[530 - 512] = "conflict with recalled state (ERECALLCONFLICT)",
	[531 - 512] = "no grace period (ENOGRACE)",
};

const char *dp_kstrerror(int err)
{
	if (err < 0)
		err = -err;
	if (err == EOPNOTSUPP)
		return "operation not supported (EOPNOTSUPP)";
	if (err >= 512 && err < 512 + (int)(sizeof(kernel_errno) /
					    sizeof(kernel_errno[0])) &&
	    kernel_errno[err - 512])
		return kernel_errno[err - 512];
	return strerror(err);
}

int dp_tfs_path(const struct dp_tfs *t, const char *rel, char *buf,
		size_t len)
{
	int n = snprintf(buf, len, "%s/%s", t->root, rel);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

bool dp_tfs_exists(const struct dp_tfs *t, const char *rel)
{
	char p[PATH_MAX];

	return !dp_tfs_path(t, rel, p, sizeof(p)) && !access(p, F_OK);
}

static int write_flags(const struct dp_tfs *t, const char *rel, const char *s,
		       int flags)
{
	char p[PATH_MAX];
	size_t n = strlen(s);
	ssize_t w;
	int fd, err;

	if (dp_tfs_path(t, rel, p, sizeof(p)))
		return -ENAMETOOLONG;
	fd = open(p, O_WRONLY | O_CLOEXEC | flags);
	if (fd < 0)
		return -errno;
	/* one write(): the kernel parses each write as a command */
	w = write(fd, s, n);
	err = w < 0 ? -errno : (size_t)w != n ? -EIO : 0;
	close(fd);
	return err;
}

int dp_tfs_write(const struct dp_tfs *t, const char *rel, const char *s)
{
	return write_flags(t, rel, s, O_TRUNC);
}

int dp_tfs_append(const struct dp_tfs *t, const char *rel, const char *s)
{
	return write_flags(t, rel, s, O_APPEND);
}

int dp_tfs_read(const struct dp_tfs *t, const char *rel, char **buf,
		size_t *len)
{
	char p[PATH_MAX], *b = NULL, *nb;
	size_t n = 0, cap = 0;
	ssize_t r;
	int fd;

	if (dp_tfs_path(t, rel, p, sizeof(p)))
		return -ENAMETOOLONG;
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* tracefs files report size 0: read until EOF */
	for (;;) {
		if (cap - n < 4097) {
			cap = cap ? 2 * cap : 16384;
			nb = realloc(b, cap);
			if (!nb) {
				free(b);
				close(fd);
				return -ENOMEM;
			}
			b = nb;
		}
		r = read(fd, b + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			r = -errno;
			free(b);
			close(fd);
			return (int)r;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	close(fd);
	b[n] = '\0';
	*buf = b;
	if (len)
		*len = n;
	return 0;
}

/*
 * error_log entries are "[ts] SUBSYS: error: MSG\n  Command: CMD\n
 * CARET\n".  Only the entry about our own command is shown, never a
 * stranger's that happened to come last.
 */
void dp_tfs_error_log(const struct dp_tfs *t, const char *cmd, char *out,
		      size_t len)
{
	char *log, *p, *entry, *best = NULL, *end;
	size_t clen = strlen(cmd);

	out[0] = '\0';
	if (dp_tfs_read(t, "error_log", &log, NULL))
		return;
	for (p = log; (p = strstr(p, "  Command: ")); p++) {
		if (strncmp(p + 11, cmd, clen) || p[11 + clen] != '\n')
			continue;
		/* the entry starts at the line before */
		for (entry = p - 1; entry > log && entry[-1] != '\n'; entry--)
			;
		best = entry;
	}
	if (best) {
		/* the caret line ends the entry */
		end = strchr(best, '\n');
		end = end ? strchr(end + 1, '\n') : NULL;
		end = end ? strchr(end + 1, '\n') : NULL;
		if (end)
			*end = '\0';
		if (best[0] == '[' && (p = strstr(best, "] ")))
			best = p + 2;
		snprintf(out, len, "%s", best);
	}
	free(log);
}
