/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few helpers every module needs and none owns.  Header-only, so
 * that the agent (libdprobe.so, built without dprobe's library) uses
 * the same ones.
 */
#ifndef DPROBE_UTIL_H
#define DPROBE_UTIL_H

#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* What `dprobe --version` prints and the formats that name their writer
 * (OTLP's scope) say. */
#define DPROBE_VERSION "0.1.0"

/* The last component of @path ("/usr/lib/libc.so.6" -> "libc.so.6"). */
static inline const char *dp_base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/*
 * The why-buffer convention of dprobe's setup functions: a failing call
 * fills @why (@len bytes, may be NULL or 0: then nothing is written)
 * with one line saying what went wrong, and returns -errno.
 */
__attribute__((format(printf, 3, 0)))
static inline void dp_vsay(char *why, size_t len, const char *fmt, va_list ap)
{
	if (why && len)
		vsnprintf(why, len, fmt, ap);
}

__attribute__((format(printf, 3, 4)))
static inline void dp_say(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	dp_vsay(why, len, fmt, ap);
	va_end(ap);
}

/*
 * --quiet-target, in a launched target's child before it execs: its
 * stdout and stderr on /dev/null, so that nothing it prints mixes with
 * dprobe's events.  Returns a close-on-exec copy of the old stderr for
 * the child's own last words (an exec that failed), or -1: then stderr
 * itself (nothing was changed, or the copy could not be made).
 */
static inline int dp_child_quiet(void)
{
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	int err = fcntl(2, F_DUPFD_CLOEXEC, 3);

	if (null < 0) {
		if (err >= 0)
			close(err);
		return -1;
	}
	dup2(null, 1);
	dup2(null, 2);
	if (null > 2)
		close(null);
	return err;
}

#endif
