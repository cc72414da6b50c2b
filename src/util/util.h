/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few helpers every module needs and none owns.  Header-only, so
 * that the agent (libdprobe.so, built without dprobe's library) uses
 * the same ones.
 */
#ifndef DPROBE_UTIL_H
#define DPROBE_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

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

#endif
